//! The secret names of a credential Plugboard stores for a server it builds itself (a custom
//! server from the command line or the app, an imported one): the same input gives the same
//! names whichever front end it came through.

/// A bearer token (`Authorization: Bearer …`).
pub const BEARER_TOKEN: &str = "BEARER_TOKEN";
/// An API key sent in a header of the user's choice.
pub const API_KEY: &str = "API_KEY";
/// The password of HTTP basic authentication.
pub const PASSWORD: &str = "PASSWORD";
/// A custom OAuth server's client secret.
pub const OAUTH_CLIENT_SECRET: &str = "OAUTH_CLIENT_SECRET";

/// `preferred`, or `preferred_2`, `preferred_3`, … when that name is taken by another secret
/// of the same server (an env or header secret the user named so).
pub fn unused_name(preferred: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(preferred) {
        return preferred.to_string();
    }
    (2..)
        .map(|n| format!("{preferred}_{n}"))
        .find(|name| !taken(name))
        .expect("some suffix is free")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_name_gets_the_next_free_suffix() {
        assert_eq!(unused_name(BEARER_TOKEN, |_| false), "BEARER_TOKEN");
        let taken = ["BEARER_TOKEN", "BEARER_TOKEN_2"];
        assert_eq!(
            unused_name(BEARER_TOKEN, |n| taken.contains(&n)),
            "BEARER_TOKEN_3"
        );
    }
}
