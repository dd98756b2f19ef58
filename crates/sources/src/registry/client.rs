//! The registry's HTTP API, as a client: `GET /v0.1/servers` (cursor, limit, updated_since,
//! version=latest, search), `/servers/{name}/versions` and `/servers/{name}/versions/{v}`, with
//! names and versions URL-encoded. A registry without `/v0.1` (a 404 there) is read through
//! `/v0`. Every failure is classified (DNS, TLS, refused, timeout, an HTTP status, an answer that
//! is not a listing) so one registry's problem is reported as that registry's, with what to do.
//! A row that cannot be read is skipped and counted, never fatal.

use std::time::Duration;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Serialize;
use serde_json::Value;

use super::model::RegistryRow;
use crate::connect::{HttpFault, NetKind, http::network_fault};

/// The largest page the API serves.
pub const PAGE_LIMIT: u32 = 100;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest answer read (a page of 100 rows is well under 1 MB).
const MAX_BODY: usize = 32 * 1024 * 1024;

/// The API version a registry is read through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ApiVersion {
    #[serde(rename = "v0.1")]
    V0_1,
    #[serde(rename = "v0")]
    V0,
}

impl ApiVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            ApiVersion::V0_1 => "v0.1",
            ApiVersion::V0 => "v0",
        }
    }

    pub fn parse(text: &str) -> Option<ApiVersion> {
        match text {
            "v0.1" => Some(ApiVersion::V0_1),
            "v0" => Some(ApiVersion::V0),
            _ => None,
        }
    }
}

/// Why a request to a registry failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    #[error("{detail}")]
    Network { kind: NetKind, detail: String },
    #[error("the registry answered {status} to {url}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Status {
        status: u16,
        url: String,
        body: String,
    },
    #[error("{what} was not found in the registry")]
    NotFound { what: String },
    #[error("the registry's answer to {url} is not a server listing: {detail}")]
    Malformed { url: String, detail: String },
}

impl FetchError {
    /// A stable code: `dns`, `tls`, `refused`, `timeout`, `network`, `http`, `not_found`,
    /// `malformed`.
    pub fn code(&self) -> &'static str {
        match self {
            FetchError::Network { kind, .. } => match kind {
                NetKind::Dns => "dns",
                NetKind::Tls => "tls",
                NetKind::Refused => "refused",
                NetKind::Timeout => "timeout",
                _ => "network",
            },
            FetchError::Status { .. } => "http",
            FetchError::NotFound { .. } => "not_found",
            FetchError::Malformed { .. } => "malformed",
        }
    }

    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            FetchError::Network {
                kind: NetKind::Dns, ..
            } => "the registry's host name does not resolve: check the URL and your network \
                 (offline? a proxy?); the cached listing is still used"
                .into(),
            FetchError::Network {
                kind: NetKind::Tls, ..
            } => "the TLS connection failed (certificate not trusted?): if a proxy re-signs \
                 traffic, point SSL_CERT_FILE at its CA bundle; the cached listing is still used"
                .into(),
            FetchError::Network {
                kind: NetKind::Refused,
                ..
            } => "nothing listens at that address: is the registry running, is the port right?"
                .into(),
            FetchError::Network { .. } => {
                "check your network connection and try again; the cached listing is still used"
                    .into()
            }
            FetchError::Status { status, .. } if *status >= 500 => {
                "the registry has a problem right now: try again later".into()
            }
            FetchError::Status { status: 429, .. } => {
                "the registry limits requests: wait a minute and sync again".into()
            }
            FetchError::Status { .. } | FetchError::Malformed { .. } => {
                "is this the base URL of an MCP registry? It must serve /v0.1/servers".into()
            }
            FetchError::NotFound { .. } => {
                "check the name (`plugboard catalog --source registry WORDS` searches)".into()
            }
        }
    }

    /// Worth trying once more: network trouble, 5xx, 429.
    fn transient(&self) -> bool {
        match self {
            FetchError::Network { kind, .. } => {
                matches!(kind, NetKind::Timeout | NetKind::Other | NetKind::Refused)
            }
            FetchError::Status { status, .. } => *status >= 500 || *status == 429,
            _ => false,
        }
    }
}

/// A page of a listing.
#[derive(Debug, Default)]
pub struct Page {
    pub rows: Vec<RegistryRow>,
    /// Why each unreadable row was skipped.
    pub malformed: Vec<String>,
    pub next_cursor: Option<String>,
}

/// What to list.
#[derive(Clone, Debug, Default)]
pub struct ListQuery {
    pub cursor: Option<String>,
    pub limit: Option<u32>,
    pub updated_since: Option<String>,
    pub latest_only: bool,
    pub search: Option<String>,
}

/// One registry's API.
#[derive(Clone, Debug)]
pub struct RegistryClient {
    http: reqwest::Client,
    base: String,
    api: ApiVersion,
}

impl RegistryClient {
    /// A client of the registry at `base` (normalised, see `sources::normalise_url`), read
    /// through `api` until a 404 says otherwise.
    pub fn new(base: &str, api: ApiVersion) -> Result<RegistryClient, FetchError> {
        let http = crate::tls::http_client_builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .user_agent(concat!("plugboard/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| FetchError::Network {
                kind: NetKind::Other,
                detail: format!("no HTTP client: {e}"),
            })?;
        Ok(RegistryClient {
            http,
            base: base.trim_end_matches('/').to_owned(),
            api,
        })
    }

    pub fn api(&self) -> ApiVersion {
        self.api
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{}/{path}", self.base, self.api.as_str())
    }

    /// One page of `/servers`. The first 404 from `/v0.1` switches this client to `/v0`.
    pub async fn list(&mut self, query: &ListQuery) -> Result<Page, FetchError> {
        match self.list_once(query).await {
            Err(FetchError::Status { status: 404, .. }) if self.api == ApiVersion::V0_1 => {
                self.api = ApiVersion::V0;
                self.list_once(query).await
            }
            other => other,
        }
    }

    async fn list_once(&self, query: &ListQuery) -> Result<Page, FetchError> {
        let mut url = url::Url::parse(&self.url("servers")).map_err(|e| FetchError::Malformed {
            url: self.base.clone(),
            detail: e.to_string(),
        })?;
        {
            let mut pairs = url.query_pairs_mut();
            pairs.append_pair("limit", &query.limit.unwrap_or(PAGE_LIMIT).to_string());
            if let Some(cursor) = &query.cursor {
                pairs.append_pair("cursor", cursor);
            }
            if let Some(since) = &query.updated_since {
                pairs.append_pair("updated_since", since);
            }
            if query.latest_only {
                pairs.append_pair("version", "latest");
            }
            if let Some(search) = &query.search {
                pairs.append_pair("search", search);
            }
        }
        let body = self.get_with_retry(url.as_str()).await?;
        parse_listing(url.as_str(), &body)
    }

    /// Every version of `name` (`/servers/{name}/versions`).
    pub async fn versions(&self, name: &str) -> Result<Page, FetchError> {
        let url = self.url(&format!("servers/{}/versions", encode(name)));
        match self.get_with_retry(&url).await {
            Ok(body) => parse_listing(&url, &body),
            Err(FetchError::Status { status: 404, .. }) => Err(FetchError::NotFound {
                what: format!("server `{name}`"),
            }),
            Err(e) => Err(e),
        }
    }

    /// One version of `name` (`latest` for the latest).
    pub async fn version(&self, name: &str, version: &str) -> Result<RegistryRow, FetchError> {
        let url = self.url(&format!(
            "servers/{}/versions/{}",
            encode(name),
            encode(version)
        ));
        let body = match self.get_with_retry(&url).await {
            Ok(body) => body,
            Err(FetchError::Status { status: 404, .. }) => {
                return Err(FetchError::NotFound {
                    what: format!("version {version} of `{name}`"),
                });
            }
            Err(e) => return Err(e),
        };
        let value: Value = serde_json::from_slice(&body).map_err(|e| FetchError::Malformed {
            url: url.clone(),
            detail: e.to_string(),
        })?;
        RegistryRow::from_value(&value).map_err(|detail| FetchError::Malformed { url, detail })
    }

    async fn get_with_retry(&self, url: &str) -> Result<Vec<u8>, FetchError> {
        let mut delay = Duration::from_millis(300);
        let mut attempt = 0;
        loop {
            match self.get(url).await {
                Err(e) if e.transient() && attempt < 2 => {
                    attempt += 1;
                    tokio::time::sleep(delay).await;
                    delay *= 4;
                }
                other => return other,
            }
        }
    }

    async fn get(&self, url: &str) -> Result<Vec<u8>, FetchError> {
        let network = |e: reqwest::Error| match network_fault(&e) {
            // A TLS failure the connection layer files under "other": a plain-HTTP answer to
            // the handshake, an alert from the peer.
            HttpFault::Network {
                kind: NetKind::Other,
                detail,
                ..
            } if ["corrupt message", "invalidcontenttype", "alert", "peer"]
                .iter()
                .any(|w| detail.to_ascii_lowercase().contains(w)) =>
            {
                FetchError::Network {
                    kind: NetKind::Tls,
                    detail,
                }
            }
            HttpFault::Network { kind, detail, .. } => FetchError::Network { kind, detail },
            other => FetchError::Network {
                kind: NetKind::Other,
                detail: format!("{other:?}"),
            },
        };
        let mut response = self
            .http
            .get(url)
            .header("Accept", "application/json")
            .send()
            .await
            .map_err(network)?;
        let status = response.status().as_u16();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(network)? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(FetchError::Malformed {
                    url: url.to_owned(),
                    detail: format!("the answer is larger than {} MB", MAX_BODY >> 20),
                });
            }
            body.extend_from_slice(&chunk);
        }
        if !(200..300).contains(&status) {
            let excerpt: String = String::from_utf8_lossy(&body).chars().take(200).collect();
            return Err(FetchError::Status {
                status,
                url: url.to_owned(),
                body: excerpt.trim().to_owned(),
            });
        }
        Ok(body)
    }
}

/// Everything but RFC 3986's unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A name or version as one URL path segment (`/` included).
pub fn encode(segment: &str) -> String {
    utf8_percent_encode(segment, SEGMENT).to_string()
}

/// A `{"servers": [...], "metadata": {"nextCursor": ...}}` answer. Rows that cannot be read
/// are counted in `malformed`; an answer that is not a listing at all is an error.
pub fn parse_listing(url: &str, body: &[u8]) -> Result<Page, FetchError> {
    let malformed = |detail: String| FetchError::Malformed {
        url: url.to_owned(),
        detail,
    };
    let value: Value = serde_json::from_slice(body).map_err(|e| malformed(e.to_string()))?;
    let servers = value
        .get("servers")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("it has no `servers` array".into()))?;
    let mut page = Page::default();
    for (i, row) in servers.iter().enumerate() {
        match RegistryRow::from_value(row) {
            Ok(row) => page.rows.push(row),
            Err(why) => page.malformed.push(format!("row {i}: {why}")),
        }
    }
    let metadata = value.get("metadata");
    page.next_cursor = metadata
        .and_then(|m| m.get("nextCursor").or_else(|| m.get("next_cursor")))
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_owned);
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_keep_good_rows_and_count_bad_ones() {
        let body = br#"{"servers": [
            {"server": {"name": "a/b", "version": "1.0.0"}},
            {"server": {"name": "a/c"}},
            "junk"
        ], "metadata": {"nextCursor": "a/b:1.0.0", "count": 3}}"#;
        let page = parse_listing("u", body).unwrap();
        assert_eq!(page.rows.len(), 1);
        assert_eq!(page.malformed.len(), 2);
        assert_eq!(page.next_cursor.as_deref(), Some("a/b:1.0.0"));
        assert_eq!(
            parse_listing("u", b"<html>").unwrap_err().code(),
            "malformed"
        );
        assert_eq!(parse_listing("u", b"{}").unwrap_err().code(), "malformed");
        assert_eq!(encode("io.github.x/y z+1"), "io.github.x%2Fy%20z%2B1");
    }
}
