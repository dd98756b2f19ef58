//! A server is outside input: one that lists more tools than anyone can use is cut off with a
//! warning, not followed into hundreds of MiB.

use serde_json::Value;

use crate::run_stdio::add_fixture;
use crate::support::{Home, stdout};

#[test]
fn a_server_listing_too_many_tools_is_cut_off_with_a_warning() {
    let home = Home::new();
    add_fixture(
        &home,
        "many",
        &["--tools", "12000", "--page-size", "2500"],
        None,
    );
    let out = home.run(&["test", "many", "--json"]);
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result["ok"], true, "{result}");
    let tools = result["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 5000, "tools kept");
    let warnings = result["warnings"].to_string();
    assert!(
        warnings.contains("tools/list was cut off at 5000 items"),
        "{warnings}"
    );
}
