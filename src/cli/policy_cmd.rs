//! `plugboard policy`: the organisation policy in force, and what it means here.

use serde::Serialize;

use super::CliError;
use super::output::print_json;
use crate::policy::{self, PolicyState, Refusal};

#[derive(Serialize)]
struct Shown {
    #[serde(flatten)]
    state: PolicyState,
    in_force: bool,
    summary: String,
}

pub fn show(json: bool) -> Result<(), CliError> {
    let state = policy::current();
    if json {
        return print_json(&Shown {
            in_force: state.in_force(),
            summary: state.summary(),
            state,
        });
    }
    println!("{}", state.summary());
    if let PolicyState::InForce(p) = &state {
        if p.registries.is_some() {
            println!(
                "The registry list is fixed by it: `plugboard registry add|remove` are refused."
            );
        }
        if p.only_registry_servers {
            println!(
                "Curated, custom, imported and local-bundle installs are refused unless the server \
                 is published in those registries."
            );
        }
    }
    if state.in_force() {
        println!("It is set by your organisation; Plugboard cannot lift it.");
    }
    Ok(())
}

impl From<Refusal> for CliError {
    /// A refused install is a configuration matter (exit 2): nothing was changed.
    fn from(refusal: Refusal) -> Self {
        CliError::usage(format!("refused: {refusal}"))
    }
}
