//! The client a test connection is: Plugboard's identity with the capabilities Plugboard
//! supports (roots, sampling, elicitation in form and URL mode), so that a server lists every
//! tool it offers to such a client, the ones it offers only to capable clients included (they
//! can then be switched on or off like any other). During a test nobody is there to answer:
//! an elicitation is declined; rmcp's own answers refuse a sampling request and give an empty
//! roots list.

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ErrorData,
};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, RoleClient};
use serde_json::json;

/// What Plugboard offers a server: what a session (Try it, `run`, the gateway) answers.
pub fn plugboard_capabilities() -> ClientCapabilities {
    serde_json::from_value(json!({
        "roots": {"listChanged": true},
        "sampling": {},
        "elicitation": {"form": {}, "url": {}}
    }))
    .expect("a valid capabilities object")
}

/// The handler of a test connection.
#[derive(Clone, Copy, Debug, Default)]
pub struct TestClient;

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let mut info = super::client_config();
        info.capabilities = plugboard_capabilities();
        info
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(ElicitResult::new(ElicitationAction::Decline))
    }
}
