//! Fetching a bundle a registry names: over https only (redirects too), into a file, with its
//! SHA-256 computed on the way and compared with the registry's `fileSha256` — a package
//! without one is refused before anything is downloaded, a mismatch is refused and the file
//! deleted. A local file gets the same digest, so a policy can recognise a published bundle.

use std::io::{Read, Write};
use std::path::Path;

use futures::StreamExt;
use sha2::{Digest, Sha256};

/// The largest bundle Plugboard downloads.
pub const MAX_DOWNLOAD: u64 = 512 << 20;

/// Why a bundle was not fetched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    #[error(
        "the registry gives no fileSha256 for the bundle {url}: without it its content cannot be checked, so it is not downloaded"
    )]
    NoDigest { url: String },
    #[error("the registry's fileSha256 for {url} is not a SHA-256 in hex (`{digest}`)")]
    BadDigest { url: String, digest: String },
    #[error("the bundle URL {url} is not https: bundles are downloaded over https only")]
    NotHttps { url: String },
    #[error("downloading {url} failed: {detail}")]
    Download { url: String, detail: String },
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("the bundle at {url} is larger than {limit} bytes: not downloaded")]
    TooLarge { url: String, limit: u64 },
    #[error(
        "the bundle downloaded from {url} does not match the registry's fileSha256 (expected \
         {expected}, got {actual}): it was deleted and nothing was installed"
    )]
    Mismatch {
        url: String,
        expected: String,
        actual: String,
    },
    #[error("writing the downloaded bundle failed: {0}")]
    Io(#[from] std::io::Error),
}

/// The SHA-256 of a file, in lower-case hex.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A registry `fileSha256`, checked and lower-cased.
pub fn expected_digest(url: &str, digest: Option<&str>) -> Result<String, FetchError> {
    let digest = digest
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .ok_or_else(|| FetchError::NoDigest { url: url.into() })?;
    if digest.len() != 64 || !digest.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(FetchError::BadDigest {
            url: url.into(),
            digest: digest.into(),
        });
    }
    Ok(digest.to_ascii_lowercase())
}

fn https_only(url: &str) -> Result<url::Url, FetchError> {
    let parsed = url::Url::parse(url).map_err(|e| FetchError::Download {
        url: url.into(),
        detail: format!("not a URL ({e})"),
    })?;
    if parsed.scheme() != "https" {
        return Err(FetchError::NotHttps { url: url.into() });
    }
    Ok(parsed)
}

/// Download `url` into `to`, checking it against `digest` (the registry's `fileSha256`). On
/// any failure `to` is removed.
pub async fn download(url: &str, digest: Option<&str>, to: &Path) -> Result<(), FetchError> {
    let expected = expected_digest(url, digest)?;
    let parsed = https_only(url)?;
    let result = fetch_into(url, parsed, &expected, to).await;
    if result.is_err() {
        let _ = std::fs::remove_file(to);
    }
    result
}

async fn fetch_into(
    url: &str,
    parsed: url::Url,
    expected: &str,
    to: &Path,
) -> Result<(), FetchError> {
    let fail = |detail: String| FetchError::Download {
        url: url.into(),
        detail,
    };
    let client = crate::tls::http_client_builder()
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            if attempt.previous().len() >= 10 {
                attempt.error("more than 10 redirects")
            } else if attempt.url().scheme() != "https" {
                attempt.error("a redirect away from https")
            } else {
                attempt.follow()
            }
        }))
        .connect_timeout(std::time::Duration::from_secs(20))
        .build()
        .map_err(|e| fail(e.to_string()))?;
    let response = client.get(parsed).send().await.map_err(|e| {
        let mut detail = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            detail.push_str(&format!(": {s}"));
            source = s.source();
        }
        fail(detail)
    })?;
    let status = response.status();
    if !status.is_success() {
        return Err(FetchError::Status {
            url: url.into(),
            status: status.as_u16(),
        });
    }
    if response.content_length().is_some_and(|n| n > MAX_DOWNLOAD) {
        return Err(FetchError::TooLarge {
            url: url.into(),
            limit: MAX_DOWNLOAD,
        });
    }
    let mut file = std::fs::File::create(to)?;
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| fail(e.to_string()))?;
        size += chunk.len() as u64;
        if size > MAX_DOWNLOAD {
            return Err(FetchError::TooLarge {
                url: url.into(),
                limit: MAX_DOWNLOAD,
            });
        }
        hasher.update(&chunk);
        file.write_all(&chunk)?;
    }
    file.sync_all()?;
    let actual = hex(&hasher.finalize());
    if actual != expected {
        return Err(FetchError::Mismatch {
            url: url.into(),
            expected: expected.into(),
            actual,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_and_schemes_are_checked_before_any_download() {
        assert!(matches!(
            expected_digest("u", None),
            Err(FetchError::NoDigest { .. })
        ));
        assert!(matches!(
            expected_digest("u", Some(" ")),
            Err(FetchError::NoDigest { .. })
        ));
        assert!(matches!(
            expected_digest("u", Some("abc")),
            Err(FetchError::BadDigest { .. })
        ));
        let d = "A".repeat(64);
        assert_eq!(expected_digest("u", Some(&d)).unwrap(), "a".repeat(64));
        assert!(matches!(
            https_only("http://127.0.0.1/x.mcpb"),
            Err(FetchError::NotHttps { .. })
        ));
        assert!(https_only("https://example.com/x.mcpb").is_ok());
    }

    #[test]
    fn file_digest() {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), b"abc").unwrap();
        assert_eq!(
            sha256_file(f.path()).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
