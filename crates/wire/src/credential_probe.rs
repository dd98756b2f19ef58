//! What a credential probe is: one read-only tool call, declared by a catalog entry, whose
//! result tells whether the credentials work. Below both the launch (`resolve`, which carries
//! it) and the staged test (`probe`, which runs and judges it).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A read-only tool call that proves the credentials work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CredentialProbe {
    pub tool: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_error: Option<AuthErrorMatch>,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// When the probe's text result is JSON, the value at `pointer` being one of `values` means the
/// credentials were rejected.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthErrorMatch {
    pub pointer: String,
    pub values: Vec<String>,
}
