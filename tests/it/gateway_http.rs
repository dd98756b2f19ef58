//! The gateway over streamable HTTP (`plugboard serve --http`) as clients and hostile local
//! pages meet it: only the profile's bearer token from the loopback origin gets in (a DNS
//! rebinding page, another origin, no token or another token are refused before anything is
//! read), a legacy client gets a session, a modern one is served without, the official
//! TypeScript SDK client connects over HTTP with its `ask` answered on the stream, and the
//! gateway stops on SIGTERM with no server left.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::gateway::{assert_the_sdk_client_saw, sdk_plan};
use crate::run_stdio::add_fixture;
use crate::support::fixture::assert_no_process_left;
use crate::support::{Home, assert_code, repo_root, require_keyring, stdout};

/// `plugboard serve --http 127.0.0.1:0 --profile PROFILE`, its URL and its headers.
struct Gateway {
    child: Child,
    url: String,
    authorization: String,
}

impl Gateway {
    fn start(home: &Home, profile: &str) -> Gateway {
        let out = home.run(&["serve", "--profile", profile, "--print-headers"]);
        assert_code(&out, 0);
        let headers: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
        let authorization = headers["Authorization"].as_str().unwrap().to_owned();
        let mut child = home
            .cmd(&["serve", "--profile", profile, "--http", "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let url = loop {
            let mut line = String::new();
            assert!(
                stderr.read_line(&mut line).unwrap() > 0,
                "the gateway ended"
            );
            if let Some(at) = line.find("http://") {
                let url: String = line[at..]
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .collect();
                break url;
            }
        };
        // Keep reading its stderr, so that it never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut stderr.into_inner(), &mut std::io::sink()));
        Gateway {
            child,
            url,
            authorization,
        }
    }

    /// SIGTERM, and the exit status.
    fn stop(mut self) -> std::process::ExitStatus {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        for _ in 0..100 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        panic!("the gateway did not stop within 10 s of SIGTERM");
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client() -> reqwest::Client {
    plugboard::tls::http_client_builder().build().unwrap()
}

/// POST `message` with `headers`; the status, the session header and the body as JSON.
async fn post(
    url: &str,
    headers: &[(&str, &str)],
    message: &Value,
) -> (u16, Option<String>, Value) {
    let mut request = client()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .body(message.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    (
        status,
        session,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "curl-like", "version": "1"}}})
}

fn profile_of(home: &Home, profile: &str, servers: &[&str]) -> Vec<String> {
    let mut create = vec!["profile", "create", profile];
    let mut markers = vec![];
    for server in servers {
        markers.push(add_fixture(home, server, &[], None));
        create.extend(["--server", server]);
    }
    assert_code(&home.run(&create), 0);
    markers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_token_from_the_loopback_origin_gets_in() {
    require_keyring();
    let home = Home::new();
    let markers = profile_of(&home, "http-guard", &["alpha"]);
    let gateway = Gateway::start(&home, "http-guard");
    let url = gateway.url.clone();
    let port = url::Url::parse(&url).unwrap().port().unwrap();
    let token = gateway.authorization.as_str();
    assert!(token.starts_with("Bearer pbg_"), "{token}");

    // Refused before anything is read: no token, another token, a rebinding page's Host,
    // another origin.
    let evil_host = format!("evil.example:{port}");
    for (headers, expected) in [
        (vec![], 401),
        (vec![("Authorization", "Bearer pbg_not-the-token")], 401),
        (
            vec![("Authorization", token), ("Host", evil_host.as_str())],
            403,
        ),
        (
            vec![("Authorization", token), ("Origin", "https://evil.example")],
            403,
        ),
    ] {
        let (status, session, body) = post(&url, &headers, &initialize()).await;
        assert_eq!(status, expected, "{headers:?}: {body}");
        assert_eq!(session, None);
    }

    // A legacy client: a session, namespaced tools, a call.
    let auth = [("Authorization", token)];
    let (status, session, answer) = post(&url, &auth, &initialize()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["result"]["serverInfo"]["name"], "plugboard",
        "{answer}"
    );
    let session = session.expect("a session id");
    let in_session = [
        ("Authorization", token),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let (status, _, _) = post(
        &url,
        &in_session,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(status, 202);
    let (_, _, listed) = post(
        &url,
        &in_session,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    assert!(listed.to_string().contains("alpha__echo"), "{listed}");
    // Another client comes in meanwhile: each call is recorded as its own client's.
    let mut second = initialize();
    second["params"]["clientInfo"]["name"] = json!("second-client");
    let (status, other_session, _) = post(&url, &auth, &second).await;
    assert_eq!(status, 200);
    assert_ne!(other_session.as_deref(), Some(session.as_str()));
    let (_, _, called) = post(&url, &in_session, &json!({"jsonrpc": "2.0", "id": 3,
        "method": "tools/call", "params": {"name": "alpha__echo", "arguments": {"message": "over http"}}}))
    .await;
    assert_eq!(
        called["result"]["content"][0]["text"], "over http",
        "{called}"
    );

    let out = home.run(&["activity", "--json"]);
    let records: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(records[0]["client"], "curl-like", "{records}");
    assert_eq!(records[0]["tool"], "echo", "{records}");

    // Without its session a legacy request is refused; an unknown session is not found.
    let list = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"});
    assert_eq!(post(&url, &auth, &list).await.0, 400);
    let unknown = [("Authorization", token), ("Mcp-Session-Id", "0123")];
    assert_eq!(post(&url, &unknown, &list).await.0, 404);

    // A modern client needs no session: each request says who it is.
    let (status, no_session, discovered) = post(
        &url,
        &auth,
        &json!({"jsonrpc": "2.0", "id": 5, "method": "server/discover", "params": {}}),
    )
    .await;
    assert_eq!(status, 200, "{discovered}");
    assert_eq!(no_session, None);
    assert!(
        discovered["result"]["supportedVersions"].is_array(),
        "{discovered}"
    );

    // Ending the session.
    let ended = client()
        .delete(&url)
        .header("Authorization", token)
        .header("Mcp-Session-Id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status().as_u16(), 204);
    assert_eq!(post(&url, &in_session, &list).await.0, 404);

    // Clients that go away without DELETE leave sessions behind: past 64, a new one ends the
    // one unused the longest (here the second client's) instead of being refused.
    let mut sessions = vec![];
    for _ in 0..64 {
        let (status, opened, _) = post(&url, &auth, &initialize()).await;
        assert_eq!(status, 200);
        sessions.push(opened.unwrap());
    }
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
    for (sid, expected) in [
        (sessions[63].as_str(), 200),
        (sessions[0].as_str(), 200),
        (other_session.as_deref().unwrap(), 404),
    ] {
        let headers = [("Authorization", token), ("Mcp-Session-Id", sid)];
        assert_eq!(post(&url, &headers, &ping).await.0, expected, "{sid}");
    }

    assert!(gateway.stop().success());
    for marker in &markers {
        assert_no_process_left(marker);
    }

    // Never on another address than loopback.
    let out = home.run(&["serve", "--profile", "http-guard", "--http", "0.0.0.0:0"]);
    assert_code(&out, 2);
}

/// What `node tests/peers/ts_client.mjs` reports after making the calls of `plan` to
/// `gateway` over the SDK's streamable HTTP transport, with the gateway's token.
fn typescript_client_over_http(gateway: &Gateway, plan: &Value) -> Value {
    let mut client = std::process::Command::new("node");
    client.arg(repo_root().join("tests/peers/ts_client.mjs"));
    peer_over_http(client, gateway, plan)
}

/// Run a peer client (`client`, its script given) with `plan` against `gateway`'s URL, with
/// the gateway's bearer token in `MCP_CLIENT_HEADERS`; what it reported.
fn peer_over_http(mut client: std::process::Command, gateway: &Gateway, plan: &Value) -> Value {
    let out = client
        .arg(plan.to_string())
        .args(["--url", &gateway.url])
        .env(
            "MCP_CLIENT_HEADERS",
            json!({"Authorization": gateway.authorization}).to_string(),
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_code(&out, 0);
    serde_json::from_str(stdout(&out).trim()).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)))
}

/// The official TypeScript SDK client over its streamable HTTP transport: the profile's tools,
/// a call, an `ask` answered through its elicitation handler (the question reaches it on a
/// stream of the HTTP endpoint), a denied call refused.
#[test]
fn the_typescript_sdk_client_uses_the_gateway_over_http() {
    require_keyring();
    let home = Home::new();
    profile_of(&home, "http-sdk", &["alpha", "beta"]);
    let rules = [
        "profile",
        "edit",
        "http-sdk",
        "--ask",
        "alpha__add",
        "--deny",
        "beta__add",
    ];
    assert_code(&home.run(&rules), 0);
    let gateway = Gateway::start(&home, "http-sdk");
    let seen = typescript_client_over_http(&gateway, &sdk_plan("from typescript over http"));
    assert_the_sdk_client_saw(&seen, "from typescript over http");
    assert!(gateway.stop().success());
}

/// The Python SDK's client (2.x) in the modern era over streamable HTTP, through the gateway
/// to server-everything: the server's requests for roots and a completion reach it inside its
/// calls' answers on its POSTs, and the server gets what it gives.
#[test]
fn the_python_sdk_client_gives_roots_and_completions_over_http_in_the_modern_era() {
    require_keyring();
    let home = Home::new();
    crate::gateway::profile_of_everything(&home, "py-http");
    let gateway = Gateway::start(&home, "py-http");
    let mut client = std::process::Command::new(repo_root().join(".tools/peers-venv/bin/python"));
    client.arg(repo_root().join("tests/peers/python_tools_client.py"));
    let seen = peer_over_http(client, &gateway, &crate::gateway::python_roots_plan());
    crate::gateway::assert_the_python_client_gave_roots_and_a_completion(&seen);
    assert!(gateway.stop().success());
}

/// The TypeScript SDK client over HTTP to server-everything: the server's log messages reach
/// it on the endpoint's streams, and the server gets the roots and the completion it gives
/// when asked through one.
#[test]
fn the_typescript_sdk_client_hears_logs_and_gives_roots_and_completions_over_http() {
    require_keyring();
    let home = Home::new();
    crate::gateway::profile_of_everything(&home, "http-everything");
    let gateway = Gateway::start(&home, "http-everything");
    let seen = typescript_client_over_http(&gateway, &crate::gateway::logs_and_roots_plan());
    crate::gateway::assert_the_sdk_client_heard_logs_and_gave_roots(&seen);
    assert!(gateway.stop().success());
}

/// A local process that opens connections and never finishes a request does not keep them:
/// each is closed once its headers are late.
#[test]
fn a_connection_that_never_sends_its_request_is_closed() {
    use std::io::{Read, Write};
    require_keyring();
    let home = Home::new();
    profile_of(&home, "http-idle", &["alpha"]);
    let gateway = Gateway::start(&home, "http-idle");
    let address = url::Url::parse(&gateway.url).unwrap();
    let address = format!("127.0.0.1:{}", address.port().unwrap());
    let mut idle = std::net::TcpStream::connect(address).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    idle.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    let mut answer = vec![];
    let read = idle.read_to_end(&mut answer);
    assert!(read.is_ok(), "still open after 30 s: {read:?}");
    assert!(gateway.stop().success());
}

/// `export --profile P --http ADDR` for a client with headers helpers (Claude Code) writes one
/// HTTP entry whose helper asks Plugboard for the token, so no token is in the client's file;
/// what that helper prints gets the client into the running gateway; a client without headers
/// helpers is refused (the token would have to be in its file), and the entry is Plugboard's
/// own for import and for the next export.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_code_entry_reaches_the_http_gateway_with_a_token_from_its_helper() {
    require_keyring();
    let home = Home::new();
    profile_of(&home, "team", &["alpha"]);
    let gateway = Gateway::start(&home, "team");
    let address = gateway
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claude.json");
    std::fs::write(
        &file,
        r#"{"numStartups": 3, "mcpServers": {"mine": {"type": "stdio", "command": "my-server"}}}"#,
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let export = |client: &str, file: &str, http: bool| {
        let mut args = vec![
            "export",
            "--client",
            client,
            "--file",
            file,
            "--profile",
            "team",
            "--write",
        ];
        if http {
            args.extend(["--http", address.as_str()]);
        }
        home.run(&args)
    };
    let out = export("claude-code", path, true);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains(&format!("--http {address}` running")),
        "{}",
        stdout(&out)
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["numStartups"], 3);
    let entry = &doc["mcpServers"]["plugboard-team"];
    assert_eq!(entry["type"], "http", "{entry}");
    assert_eq!(entry["url"], gateway.url.as_str());
    let token = gateway.authorization.trim_start_matches("Bearer ");
    assert!(
        !std::fs::read_to_string(&file).unwrap().contains(token),
        "the token is in the client's file"
    );

    // What Claude Code does: run the helper through a shell, send what it printed.
    let helper = entry["headersHelper"].as_str().unwrap();
    let printed = std::process::Command::new("sh")
        .args(["-c", helper])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(printed.status.success(), "{printed:?}");
    let headers: Value = serde_json::from_slice(&printed.stdout).unwrap();
    let authorization = headers["Authorization"].as_str().unwrap();
    assert_eq!(authorization, gateway.authorization);
    let (status, _, answer) = post(
        &gateway.url,
        &[("Authorization", authorization)],
        &initialize(),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");

    // Import knows it for Plugboard's gateway.
    let out = home.run(&[
        "import",
        "--file",
        path,
        "--format",
        "claude-code",
        "--dry-run",
    ]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("plugboard-team: skipped, it is Plugboard's gateway"),
        "{}",
        stdout(&out)
    );

    // A client that cannot run a headers helper: refused, nothing written.
    let cursor = dir.path().join("cursor.json");
    let out = export("cursor", cursor.to_str().unwrap(), true);
    assert_code(&out, 2);
    assert!(
        crate::support::stderr(&out).contains("cannot get a server's headers from a command"),
        "{}",
        crate::support::stderr(&out)
    );
    assert!(!cursor.exists());

    // The next export without --http puts the stdio gateway in its place.
    assert_code(&export("claude-code", path, false), 0);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let servers = doc["mcpServers"].as_object().unwrap();
    assert_eq!(
        servers.keys().collect::<Vec<_>>(),
        ["mine", "plugboard-team"]
    );
    assert_eq!(
        servers["plugboard-team"]["args"],
        json!(["serve", "--profile", "team"])
    );
    assert!(gateway.stop().success());
}

/// A client that accepts both gets a quick call's answer as plain JSON (nothing else comes for
/// it), and a call whose server asks a question first as an event stream: the question, then,
/// once the client answered it with a POST of its own, the call's result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_is_streamed_only_when_something_comes_before_its_answer() {
    require_keyring();
    let home = Home::new();
    let mut markers = vec![add_fixture(&home, "plain", &[], None)];
    markers.push(add_fixture(
        &home,
        "asker",
        &["--misbehave", "input-required"],
        None,
    ));
    assert_code(
        &home.run(&[
            "profile", "create", "streams", "--server", "plain", "--server", "asker",
        ]),
        0,
    );
    let gateway = Gateway::start(&home, "streams");
    let url = gateway.url.clone();
    let token = gateway.authorization.clone();
    let mut open = initialize();
    open["params"]["capabilities"] = json!({"elicitation": {}});
    let (status, session, answer) = post(&url, &[("Authorization", &token)], &open).await;
    assert_eq!(status, 200, "{answer}");
    let session = session.expect("a session id");
    let both = |message: &Value| {
        client()
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("Authorization", &token)
            .header("Mcp-Session-Id", &session)
            .body(message.to_string())
    };
    let call = |id: u64, tool: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {"message": "hi"}}})
    };

    let quick = both(&call(2, "plain__echo")).send().await.unwrap();
    assert_eq!(
        quick.headers()["content-type"],
        "application/json",
        "nothing came before the answer"
    );
    let answer: Value = quick.json().await.unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "hi", "{answer}");

    let mut asked = both(&call(3, "asker__echo")).send().await.unwrap();
    assert_eq!(asked.headers()["content-type"], "text/event-stream");
    let mut events = String::new();
    let next_event = |events: &mut String| -> Option<Value> {
        let end = events.find("\n\n")?;
        let event: String = events.drain(..end + 2).collect();
        let data = event.lines().find_map(|l| l.strip_prefix("data: "))?;
        Some(serde_json::from_str(data).unwrap())
    };
    let mut read_event = async || loop {
        if let Some(event) = next_event(&mut events) {
            return event;
        }
        let chunk = tokio::time::timeout(Duration::from_secs(20), asked.chunk())
            .await
            .expect("an event within 20 s")
            .unwrap()
            .expect("the stream stays open until the answer");
        events.push_str(std::str::from_utf8(&chunk).unwrap());
    };
    let question = read_event().await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    let reply = json!({"jsonrpc": "2.0", "id": question["id"],
        "result": {"action": "accept", "content": {"confirmed": true}}});
    let accepted = both(&reply).send().await.unwrap();
    assert_eq!(accepted.status().as_u16(), 202);
    let result = read_event().await;
    assert_eq!(result["id"], 3, "{result}");
    assert_eq!(result["result"]["content"][0]["text"], "hi", "{result}");

    assert!(gateway.stop().success());
    for marker in &markers {
        assert_no_process_left(marker);
    }
}

/// A `tools/call` of a 2026-07-28 client named `client`, declaring `capabilities`.
fn modern_call(id: u64, client: &str, capabilities: Value, tool: &str, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
    "name": tool, "arguments": {"message": message},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }}})
}

/// Two clients of the 2026-07-28 era at once, each request saying who sent it: the same request
/// id from both never mixes their answers, and a server's question during one client's call
/// is judged by what that client declared, not by the other's request that came meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_modern_clients_at_once_get_their_own_answers_and_questions() {
    require_keyring();
    let home = Home::new();
    let mut markers = vec![add_fixture(&home, "slow", &["--call-delay", "1500"], None)];
    // Asks its caller to confirm each call, 800 ms after the call came.
    markers.push(add_fixture(
        &home,
        "asker",
        &["--misbehave", "input-required", "--call-delay", "800"],
        None,
    ));
    assert_code(
        &home.run(&[
            "profile", "create", "both", "--server", "slow", "--server", "asker",
        ]),
        0,
    );
    let gateway = Gateway::start(&home, "both");
    let (url, token) = (gateway.url.clone(), gateway.authorization.clone());
    let mut list = modern_call(1, "lister", json!({}), "", "");
    list["method"] = json!("tools/list");
    list["params"] = json!({"_meta": list["params"]["_meta"]});
    let (status, _, listed) = post(&url, &[("Authorization", &token)], &list).await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(
        listed["result"]["tools"].as_array().unwrap().len(),
        6,
        "{listed}"
    );

    // The clients number their requests alike, then apart; the one whose server asks declared
    // elicitation, then not.
    for (a_id, b_id, a_answers) in [(1, 1, true), (2, 3, true), (4, 5, false)] {
        // One client calls the server that will ask it something; 300 ms later another, which
        // declared the opposite, calls the slow server.
        let declares = |yes: bool| {
            if yes {
                json!({"elicitation": {}})
            } else {
                json!({})
            }
        };
        let asked = modern_call(
            a_id,
            "client-a",
            declares(a_answers),
            "asker__echo",
            "from a",
        );
        let (asked_url, asked_token, retry) = (url.clone(), token.clone(), asked.clone());
        let asking = tokio::spawn(async move {
            post(&asked_url, &[("Authorization", &asked_token)], &asked).await
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        let slow_call = modern_call(
            b_id,
            "client-b",
            declares(!a_answers),
            "slow__echo",
            "from b",
        );
        let (status, _, answer) = post(&url, &[("Authorization", &token)], &slow_call).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["id"], b_id, "{answer}");
        assert_eq!(answer["result"]["content"][0]["text"], "from b", "{answer}");

        let (status, _, answer) = asking.await.unwrap();
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["id"], a_id, "{answer}");
        if !a_answers {
            assert_ne!(
                answer["result"]["resultType"], "input_required",
                "a client that declared no elicitation is put no question: {answer}"
            );
            assert_eq!(
                answer["result"]["content"][0]["text"], "the call was not confirmed",
                "the server's question was declined for it: {answer}"
            );
            continue;
        }
        assert_eq!(
            answer["result"]["resultType"], "input_required",
            "the client that declared elicitation is put its server's question: {answer}"
        );
        let requests = answer["result"]["inputRequests"].as_object().unwrap();
        let (key, question) = requests.iter().next().unwrap();
        assert_eq!(question["method"], "elicitation/create", "{answer}");
        let mut retry = retry;
        retry["id"] = json!(a_id + 100);
        retry["params"]["requestState"] = answer["result"]["requestState"].clone();
        retry["params"]["inputResponses"] =
            json!({key: {"action": "accept", "content": {"confirmed": true}}});
        let (status, _, answer) = post(&url, &[("Authorization", &token)], &retry).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["result"]["content"][0]["text"], "from a", "{answer}");
    }

    let out = home.run(&["activity", "--json"]);
    let records: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let callers = |server: &str| -> Vec<Value> {
        records
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["server"] == server)
            .map(|r| r["client"].clone())
            .collect()
    };
    assert_eq!(
        callers("asker"),
        [json!("client-a"), json!("client-a"), json!("client-a")],
        "{records}"
    );
    assert_eq!(
        callers("slow"),
        [json!("client-b"), json!("client-b"), json!("client-b")],
        "{records}"
    );

    assert!(gateway.stop().success());
    for marker in &markers {
        assert_no_process_left(marker);
    }
}
