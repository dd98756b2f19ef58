//! TLS for every HTTP client Plugboard builds: rustls with ring's cryptography.
//!
//! reqwest is built without a crypto provider of its own (its default, aws-lc, adds thousands
//! of start-up relocations and a CPU feature probe to every run of the CLI, HTTP or not), so a
//! provider must be installed before the first client is built. [`http_client_builder`] does
//! that; build every `reqwest::Client` through it.

use std::sync::Once;

/// A `reqwest` client builder, after making sure ring is the process's TLS crypto provider
/// (unless the embedding program installed another one first, which is then kept).
pub fn http_client_builder() -> reqwest::ClientBuilder {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Fails only when a provider is installed already: that one serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_clients_with_a_provider_installed() {
        let client = http_client_builder().build();
        assert!(client.is_ok(), "{client:?}");
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}
