//! The app answering gateways' "may this call run?" when their client cannot ask: while the
//! app runs it keeps its place at the gateways' question desk ([`Api::listen_for_gateway_questions`]),
//! announces each new question on the desktop, and its window shows the open ones with
//! Allow and Deny ([`Api::gateway_questions`], [`Api::answer_gateway_question`]). The desk
//! itself is [`crate::gateway::app_asks`].

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::{Api, ApiError, ErrorCode};
use crate::clock::now_ms;
use crate::gateway::app_asks::{self, AnswerError, AppDesk, AppQuestion};

/// How often the app looks for new questions (and, while another app holds the desk, for it
/// to become free).
const LOOK_EVERY: Duration = Duration::from_millis(500);

/// A gateway's open question.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct GatewayQuestionView {
    pub id: String,
    pub profile: String,
    /// The app that made the call, as it named itself.
    pub client: Option<String>,
    pub server: String,
    pub tool: String,
    pub namespaced: String,
    /// Not declared read-only by its server.
    pub side_effects: bool,
    /// The call's arguments as JSON (secrets redacted).
    pub arguments: String,
    /// Until the gateway stops waiting and refuses the call.
    pub seconds_left: u32,
}

fn view(q: AppQuestion) -> GatewayQuestionView {
    let left = q.expires_at_ms.saturating_sub(now_ms()) / 1000;
    GatewayQuestionView {
        id: q.id,
        profile: q.profile,
        client: q.client,
        server: q.server,
        tool: q.tool,
        namespaced: q.namespaced,
        side_effects: q.side_effects,
        arguments: q.arguments,
        seconds_left: u32::try_from(left).unwrap_or(u32::MAX),
    }
}

/// What the desktop shows for a new question: a summary and a body.
pub fn announcement(q: &GatewayQuestionView) -> (String, String) {
    let who = q.client.as_deref().unwrap_or("An app");
    let summary = format!("{who} wants to run {}", q.namespaced);
    let body = format!(
        "Through gateway profile `{}`{}. Answer in Plugboard within {} s, or it does not run.",
        q.profile,
        if q.side_effects {
            "; the tool may change things"
        } else {
            ""
        },
        q.seconds_left
    );
    (summary, body)
}

impl Api {
    /// The questions gateways wait on now, oldest first.
    pub fn gateway_questions(&self) -> Vec<GatewayQuestionView> {
        app_asks::open_questions(self.servers.config().dir())
            .into_iter()
            .map(view)
            .collect()
    }

    /// Answer question `id`: the call runs when `allow`, else the model is told the user
    /// declined.
    pub fn answer_gateway_question(&self, id: &str, allow: bool) -> Result<(), ApiError> {
        app_asks::answer(self.servers.config().dir(), id, allow).map_err(|e| {
            let message = e.to_string();
            match e {
                AnswerError::NotOpen => ApiError::new(ErrorCode::NotFound, message),
                _ => ApiError::new(ErrorCode::Io, message),
            }
        })
    }

    /// For the app's whole life (a thread): hold its place at the gateways' desk (waiting while
    /// another Plugboard window holds it) and call `announce` once for each new question.
    pub fn listen_for_gateway_questions(
        self: &Arc<Self>,
        announce: impl Fn(&GatewayQuestionView) + Send + 'static,
    ) {
        let api = Arc::clone(self);
        std::thread::spawn(move || {
            let dir = api.servers.config().dir().to_owned();
            let _desk = loop {
                match AppDesk::try_open(&dir) {
                    Ok(Some(desk)) => break desk,
                    // Another window answers; take over when it closes.
                    Ok(None) => std::thread::sleep(LOOK_EVERY * 4),
                    Err(e) => {
                        eprintln!(
                            "plugboard: gateways cannot ask this app ({e}); calls that need an answer are refused"
                        );
                        return;
                    }
                }
            };
            let mut announced = HashSet::new();
            loop {
                let open = api.gateway_questions();
                for q in &open {
                    if announced.insert(q.id.clone()) {
                        announce(q);
                    }
                }
                announced.retain(|id| open.iter().any(|q| &q.id == id));
                std::thread::sleep(LOOK_EVERY);
            }
        });
    }
}

/// Show `summary` and `body` as a desktop notification (the freedesktop notification service on
/// the session bus). Where there is none, nothing is shown: the window still asks.
pub fn notify_desktop(summary: &str, body: &str) -> Result<(), String> {
    let bus = zbus::blocking::Connection::session().map_err(|e| e.to_string())?;
    notify_on(&bus, summary, body)
}

/// [`notify_desktop`] on `bus`.
fn notify_on(bus: &zbus::blocking::Connection, summary: &str, body: &str) -> Result<(), String> {
    let hints: std::collections::HashMap<&str, zbus::zvariant::Value<'_>> =
        [("urgency", zbus::zvariant::Value::U8(2))].into();
    bus.call_method(
        Some("org.freedesktop.Notifications"),
        "/org/freedesktop/Notifications",
        Some("org.freedesktop.Notifications"),
        "Notify",
        &(
            "Plugboard",
            0u32,
            "dialog-question",
            summary,
            body,
            Vec::<&str>::new(),
            hints,
            -1i32,
        ),
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::io::BufRead;
    use std::sync::mpsc;

    use zbus::zvariant::OwnedValue;

    /// A desktop's notification service that keeps what it is shown.
    struct Desktop {
        shown: mpsc::Sender<(String, String, String, u8)>,
    }

    #[zbus::interface(name = "org.freedesktop.Notifications")]
    impl Desktop {
        #[allow(clippy::too_many_arguments)]
        fn notify(
            &self,
            app_name: String,
            _replaces_id: u32,
            _app_icon: String,
            summary: String,
            body: String,
            _actions: Vec<String>,
            hints: HashMap<String, OwnedValue>,
            _expire_timeout: i32,
        ) -> u32 {
            let urgency = hints
                .get("urgency")
                .and_then(|v| u8::try_from(v).ok())
                .unwrap_or(0);
            let _ = self.shown.send((app_name, summary, body, urgency));
            1
        }
    }

    #[test]
    fn a_question_is_shown_by_the_desktop_s_notification_service() {
        // A bus of our own, with a notification service on it.
        let mut daemon = std::process::Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("dbus-daemon (Debian's dbus-daemon package) is needed for this test");
        let mut address = String::new();
        std::io::BufReader::new(daemon.stdout.take().unwrap())
            .read_line(&mut address)
            .unwrap();
        let (shown, seen) = mpsc::channel();
        let outcome = (|| {
            let _service = zbus::blocking::connection::Builder::address(address.trim())?
                .name("org.freedesktop.Notifications")?
                .serve_at("/org/freedesktop/Notifications", Desktop { shown })?
                .build()?;
            let app = zbus::blocking::connection::Builder::address(address.trim())?.build()?;
            let question = super::GatewayQuestionView {
                id: "0".repeat(32),
                profile: "work".into(),
                client: Some("Cursor".into()),
                server: "files".into(),
                tool: "delete".into(),
                namespaced: "files__delete".into(),
                side_effects: true,
                arguments: "{}".into(),
                seconds_left: 119,
            };
            let (summary, body) = super::announcement(&question);
            super::notify_on(&app, &summary, &body).map_err(zbus::Error::Failure)?;
            Ok::<_, zbus::Error>(seen.recv_timeout(std::time::Duration::from_secs(10)))
        })();
        let _ = daemon.kill();
        let _ = daemon.wait();
        let (app, summary, body, urgency) = outcome.unwrap().unwrap();
        assert_eq!(app, "Plugboard");
        assert_eq!(summary, "Cursor wants to run files__delete");
        assert!(
            body.contains("`work`") && body.contains("may change things"),
            "{body}"
        );
        assert!(body.contains("119 s"), "{body}");
        assert_eq!(urgency, 2, "critical: the call waits on it");
    }
}
