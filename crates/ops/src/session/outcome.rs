//! Results by kind, as the app shows them and the CLI prints them: text; images and audio
//! with their declared and actual type and decoded size (the data only up to
//! [`MEDIA_CAP`]); resource links and embedded resources; a tool's `structuredContent`
//! checked against its `outputSchema` (a mismatch is reported, not hidden); `isError` kept as
//! the tool's own error. Built from the result's JSON, so content rmcp has no type for still
//! shows (as JSON).

use base64::Engine;
use serde::Serialize;
use serde_json::Value;

use crate::schema::{FieldIssue, Validator};

/// Media larger than this (decoded) is described, not carried.
pub const MEDIA_CAP: u64 = 8 * 1024 * 1024;

/// One piece of content of a result or prompt message.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentItem {
    Text {
        text: String,
    },
    Image {
        media: Media,
    },
    Audio {
        media: Media,
    },
    ResourceLink {
        uri: String,
        name: Option<String>,
        title: Option<String>,
        description: Option<String>,
        mime_type: Option<String>,
        size: Option<f64>,
    },
    /// An embedded resource.
    Resource {
        resource: ResourceContent,
    },
    /// Content of a type Plugboard does not know, as the server sent it.
    Other {
        json: Value,
    },
}

/// An image or audio clip.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct Media {
    /// The type the server declared.
    pub mime_type: String,
    /// The type its bytes show (`image/png`, …), when they show one.
    pub detected: Option<String>,
    /// Decoded size in bytes.
    pub bytes: f64,
    /// Base64 data, when it is valid and at most [`MEDIA_CAP`] bytes.
    pub data: Option<String>,
    /// Why there is no data, or what is wrong with it.
    pub note: Option<String>,
}

/// One resource's contents (read, or embedded in a result).
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ResourceContent {
    pub uri: String,
    pub mime_type: Option<String>,
    pub text: Option<String>,
    /// A binary resource.
    pub blob: Option<Media>,
}

impl ResourceContent {
    /// Its bytes: the text as it is, or the blob decoded.
    pub fn bytes(&self) -> Result<Vec<u8>, String> {
        use base64::Engine;
        match (&self.text, &self.blob) {
            (Some(text), _) => Ok(text.as_bytes().to_vec()),
            (None, Some(media)) => {
                let data = media
                    .data
                    .as_deref()
                    .ok_or_else(|| media.note.clone().unwrap_or_else(|| "no data".into()))?;
                base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .map_err(|e| format!("its data is not base64: {e}"))
            }
            (None, None) => Err("it has no content".into()),
        }
    }
}

/// `structuredContent` and how it compares with the tool's `outputSchema`.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct Structured {
    pub value: Option<Value>,
    /// `valid`, `invalid` (see `issues`), `missing` (a schema but no structured content),
    /// or `unchecked` (no schema, an error result, or an unusable schema: see `note`).
    pub check: String,
    pub issues: Vec<FieldIssue>,
    pub note: Option<String>,
}

/// The content list of a result.
pub fn content_items(content: Option<&Value>) -> Vec<ContentItem> {
    match content {
        Some(Value::Array(items)) => items.iter().map(content_item).collect(),
        _ => vec![],
    }
}

fn text_of(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn content_item(item: &Value) -> ContentItem {
    match item.get("type").and_then(Value::as_str) {
        Some("text") => ContentItem::Text {
            text: text_of(item, "text").unwrap_or_default(),
        },
        Some("image") => ContentItem::Image {
            media: media(item, "data"),
        },
        Some("audio") => ContentItem::Audio {
            media: media(item, "data"),
        },
        Some("resource_link") => ContentItem::ResourceLink {
            uri: text_of(item, "uri").unwrap_or_default(),
            name: text_of(item, "name"),
            title: text_of(item, "title"),
            description: text_of(item, "description"),
            mime_type: text_of(item, "mimeType"),
            size: item.get("size").and_then(Value::as_f64),
        },
        Some("resource") => match item.get("resource") {
            Some(resource) => ContentItem::Resource {
                resource: resource_content(resource),
            },
            None => ContentItem::Other { json: item.clone() },
        },
        _ => ContentItem::Other { json: item.clone() },
    }
}

/// A resource's contents (`{uri, mimeType, text}` or `{uri, mimeType, blob}`).
pub fn resource_content(resource: &Value) -> ResourceContent {
    ResourceContent {
        uri: text_of(resource, "uri").unwrap_or_default(),
        mime_type: text_of(resource, "mimeType"),
        text: text_of(resource, "text"),
        blob: resource
            .get("blob")
            .is_some()
            .then(|| media(resource, "blob")),
    }
}

/// The media in `item[key]` (base64), checked and measured.
fn media(item: &Value, key: &str) -> Media {
    let mime_type = text_of(item, "mimeType").unwrap_or_default();
    let encoded = item.get(key).and_then(Value::as_str).unwrap_or("");
    let compact: String = encoded
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    match base64::engine::general_purpose::STANDARD.decode(compact.as_bytes()) {
        Ok(bytes) => {
            let size = bytes.len() as u64;
            let detected = sniff(&bytes).map(str::to_owned);
            let mismatch = detected
                .as_deref()
                .filter(|d| !mime_type.is_empty() && !same_type(d, &mime_type))
                .map(|d| format!("the data is {d}, not the declared {mime_type}"));
            let too_big = size > MEDIA_CAP;
            Media {
                mime_type,
                detected,
                bytes: size as f64,
                data: (!too_big).then_some(compact),
                note: if too_big {
                    Some(format!(
                        "{size} bytes: larger than the {} MiB Plugboard shows",
                        MEDIA_CAP / (1024 * 1024)
                    ))
                } else {
                    mismatch
                },
            }
        }
        Err(e) => Media {
            mime_type,
            detected: None,
            bytes: 0.0,
            data: None,
            note: Some(format!("the data is not valid base64 ({e})")),
        },
    }
}

fn same_type(a: &str, b: &str) -> bool {
    let base = |t: &str| {
        t.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    };
    let (a, b) = (base(a), base(b));
    a == b || (a == "image/jpeg" && b == "image/jpg") || (a == "audio/mpeg" && b == "audio/mp3")
}

/// The type the first bytes show.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    let starts = |magic: &[u8]| bytes.starts_with(magic);
    let riff = |kind: &[u8]| bytes.len() >= 12 && starts(b"RIFF") && &bytes[8..12] == kind;
    Some(if starts(b"\x89PNG\r\n\x1a\n") {
        "image/png"
    } else if starts(&[0xFF, 0xD8, 0xFF]) {
        "image/jpeg"
    } else if starts(b"GIF87a") || starts(b"GIF89a") {
        "image/gif"
    } else if riff(b"WEBP") {
        "image/webp"
    } else if starts(b"BM") && bytes.len() > 14 {
        "image/bmp"
    } else if riff(b"WAVE") {
        "audio/wav"
    } else if starts(b"OggS") {
        "audio/ogg"
    } else if starts(b"fLaC") {
        "audio/flac"
    } else if starts(b"ID3") || starts(&[0xFF, 0xFB]) || starts(&[0xFF, 0xF3]) {
        "audio/mpeg"
    } else {
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(256)]).to_ascii_lowercase();
        if head.trim_start().starts_with("<svg") || head.contains("<svg") {
            "image/svg+xml"
        } else {
            return None;
        }
    })
}

/// `structuredContent` of a result checked against the tool's `outputSchema`.
pub fn structured(
    result: &Value,
    output_schema: Option<&Value>,
    is_error: bool,
) -> Option<Structured> {
    let value = result.get("structuredContent").cloned();
    let unchecked = |value: Option<Value>, note: &str| Structured {
        value,
        check: "unchecked".into(),
        issues: vec![],
        note: Some(note.to_string()),
    };
    match (value, output_schema) {
        (None, None) => None,
        (Some(value), None) => Some(unchecked(
            Some(value),
            "the tool declares no output schema to check it against",
        )),
        (value, Some(_)) if is_error => value.map(|v| {
            unchecked(
                Some(v),
                "not checked: the tool reported an error, which need not follow its output schema",
            )
        }),
        (None, Some(_)) => Some(Structured {
            value: None,
            check: "missing".into(),
            issues: vec![],
            note: Some(
                "the tool declares an output schema but returned no structuredContent".into(),
            ),
        }),
        (Some(value), Some(schema)) => {
            let validator = Validator::new(schema);
            if let Some(problem) = validator.schema_problem() {
                return Some(unchecked(
                    Some(value),
                    &format!("the tool's output schema is not usable JSON Schema: {problem}"),
                ));
            }
            let issues = validator.issues(&value);
            Some(Structured {
                value: Some(value),
                check: if issues.is_empty() {
                    "valid"
                } else {
                    "invalid"
                }
                .into(),
                issues,
                note: None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

    #[test]
    fn content_by_kind() {
        let items = content_items(Some(&json!([
            {"type": "text", "text": "hi"},
            {"type": "image", "mimeType": "image/png", "data": PNG_1X1},
            {"type": "image", "mimeType": "image/jpeg", "data": PNG_1X1},
            {"type": "audio", "mimeType": "audio/wav", "data": "!!!"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"},
            {"type": "resource", "resource": {"uri": "demo://x", "mimeType": "text/plain", "text": "body"}},
            {"type": "resource", "resource": {"uri": "demo://y", "blob": "aGVsbG8="}},
            {"type": "hologram", "depth": 3}
        ])));
        assert_eq!(items[0], ContentItem::Text { text: "hi".into() });
        match &items[1] {
            ContentItem::Image { media } => {
                assert_eq!(media.detected.as_deref(), Some("image/png"));
                assert_eq!(media.bytes, 70.0);
                assert!(media.data.is_some() && media.note.is_none());
            }
            other => panic!("{other:?}"),
        }
        match &items[2] {
            ContentItem::Image { media } => {
                assert!(media.note.as_deref().unwrap().contains("not the declared"))
            }
            other => panic!("{other:?}"),
        }
        match &items[3] {
            ContentItem::Audio { media } => {
                assert!(media.note.as_deref().unwrap().contains("base64"))
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&items[4], ContentItem::ResourceLink { uri, .. } if uri == "file:///a.txt")
        );
        assert!(
            matches!(&items[5], ContentItem::Resource { resource } if resource.text.as_deref() == Some("body"))
        );
        assert!(
            matches!(&items[6], ContentItem::Resource { resource } if resource.blob.as_ref().unwrap().bytes == 5.0)
        );
        assert!(matches!(&items[7], ContentItem::Other { .. }));
    }

    #[test]
    fn media_over_the_cap_is_described_not_carried() {
        let big =
            base64::engine::general_purpose::STANDARD.encode(vec![0u8; MEDIA_CAP as usize + 1]);
        let items = content_items(Some(
            &json!([{"type": "image", "mimeType": "image/png", "data": big}]),
        ));
        match &items[0] {
            ContentItem::Image { media } => {
                assert!(media.data.is_none());
                assert!(media.note.as_deref().unwrap().contains("larger than"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn structured_content_is_checked_against_the_output_schema() {
        let schema =
            json!({"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]});
        let ok = structured(
            &json!({"structuredContent": {"t": 3}}),
            Some(&schema),
            false,
        )
        .unwrap();
        assert_eq!(ok.check, "valid");
        let bad = structured(
            &json!({"structuredContent": {"t": "hot"}}),
            Some(&schema),
            false,
        )
        .unwrap();
        assert_eq!(bad.check, "invalid");
        assert_eq!(bad.issues[0].path, "t");
        let missing = structured(&json!({"content": []}), Some(&schema), false).unwrap();
        assert_eq!(missing.check, "missing");
        assert!(structured(&json!({}), None, false).is_none());
        let error = structured(
            &json!({"structuredContent": {"t": "x"}}),
            Some(&schema),
            true,
        )
        .unwrap();
        assert_eq!(error.check, "unchecked");
        let unusable = structured(
            &json!({"structuredContent": {}}),
            Some(&json!({"type": 5})),
            false,
        )
        .unwrap();
        assert!(unusable.note.unwrap().contains("not usable"));
    }
}
