//! Tool annotations read for what they are: hints the server gives about its own tools,
//! untrusted (a server can claim anything). Absent hints take the MCP spec's defaults, which
//! assume the worst: not read-only, destructive, not idempotent, open world. So a tool without
//! annotations is shown as "may change things".

use serde::Serialize;
use serde_json::Value;

/// A class of tools for bulk changes (`--disable-annotated`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Annotated {
    /// May delete or overwrite (`destructiveHint`, true unless said otherwise, for tools that
    /// are not read-only).
    Destructive,
    /// Reaches outside systems (`openWorldHint`, true unless said otherwise).
    OpenWorld,
    /// Not marked read-only (`readOnlyHint` not true): may change things.
    NotReadOnly,
}

impl Annotated {
    pub fn from_id(id: &str) -> Option<Annotated> {
        match id {
            "destructive" => Some(Annotated::Destructive),
            "open-world" => Some(Annotated::OpenWorld),
            "not-read-only" => Some(Annotated::NotReadOnly),
            _ => None,
        }
    }
}

/// What a tool's annotations say, with the spec's defaults for what they leave out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Hints {
    /// Whether the server sent any of the four hints at all.
    pub annotated: bool,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl Hints {
    pub fn of(annotations: Option<&Value>) -> Hints {
        let hint = |key: &str| {
            annotations
                .and_then(|a| a.get(key))
                .and_then(Value::as_bool)
        };
        let read_only = hint("readOnlyHint");
        let destructive = hint("destructiveHint");
        let idempotent = hint("idempotentHint");
        let open_world = hint("openWorldHint");
        let read_only_value = read_only.unwrap_or(false);
        Hints {
            annotated: [read_only, destructive, idempotent, open_world]
                .iter()
                .any(Option::is_some),
            read_only: read_only_value,
            // Destructive and idempotent mean something only for tools that change things.
            destructive: !read_only_value && destructive.unwrap_or(true),
            idempotent: read_only_value || idempotent.unwrap_or(false),
            open_world: open_world.unwrap_or(true),
        }
    }

    /// Not claimed read-only: the tool may change things.
    pub fn may_change(&self) -> bool {
        !self.read_only
    }

    pub fn is(&self, class: Annotated) -> bool {
        match class {
            Annotated::Destructive => self.destructive,
            Annotated::OpenWorld => self.open_world,
            Annotated::NotReadOnly => self.may_change(),
        }
    }

    /// A short label: `read-only`, `may change things`, `destructive`, plus `open world`; a
    /// tool without annotations is `may change things (no annotations)`.
    pub fn label(&self) -> String {
        if !self.annotated {
            return "may change things (no annotations)".into();
        }
        let mut parts = vec![if self.read_only {
            "read-only"
        } else if self.destructive {
            "destructive"
        } else {
            "may change things"
        }];
        if self.open_world {
            parts.push("open world");
        }
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_hints_assume_the_worst() {
        let none = Hints::of(None);
        assert!(!none.annotated && none.may_change() && none.destructive && none.open_world);
        assert_eq!(none.label(), "may change things (no annotations)");
        assert!(none.is(Annotated::NotReadOnly));
        let read = Hints::of(Some(&json!({"readOnlyHint": true, "openWorldHint": false})));
        assert!(read.read_only && !read.destructive && !read.open_world && read.idempotent);
        assert_eq!(read.label(), "read-only");
        let write = Hints::of(Some(
            &json!({"readOnlyHint": false, "destructiveHint": false}),
        ));
        assert!(write.may_change() && !write.destructive);
        assert_eq!(write.label(), "may change things, open world");
        assert!(!write.is(Annotated::Destructive));
        // Junk is not a claim.
        let junk = Hints::of(Some(&json!({"readOnlyHint": "yes"})));
        assert!(!junk.annotated && junk.may_change());
    }

    #[test]
    fn classes_have_ids() {
        for id in ["destructive", "open-world", "not-read-only"] {
            assert!(Annotated::from_id(id).is_some());
        }
        assert!(Annotated::from_id("readonly").is_none());
    }
}
