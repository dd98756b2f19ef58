//! The form a JSON Schema becomes: a tree of [`FormNode`]s the app renders field by field and
//! the CLI reads `--arg` values with. It is a view of the schema, never the judge of a value:
//! validation is the exact schema's ([`super::validate`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A compiled schema: the root node, and the nodes of recursive definitions that
/// [`NodeKind::Ref`] points at (expanded by the form only when the user adds one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Form {
    pub root: FormNode,
    pub defs: BTreeMap<String, FormNode>,
    /// What the form could not show as fields (remote `$ref`s, limits reached); the raw JSON
    /// editor still edits everything.
    pub notes: Vec<String>,
}

/// One field of a form, with what every kind of field can carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct FormNode {
    pub title: Option<String>,
    pub description: Option<String>,
    pub default: Option<Value>,
    pub examples: Vec<Value>,
    /// `null` is allowed too (`type: [T, "null"]`, or a union with `{"type": "null"}`).
    pub nullable: bool,
    pub read_only: bool,
    pub deprecated: bool,
    pub kind: NodeKind,
}

/// What a field edits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum NodeKind {
    String {
        /// `uri`, `email`, `date`, `date-time`, … as the schema says.
        format: Option<String>,
        min_length: Option<u32>,
        max_length: Option<u32>,
        pattern: Option<String>,
    },
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
        exclusive_minimum: Option<f64>,
        exclusive_maximum: Option<f64>,
        multiple_of: Option<f64>,
    },
    Boolean,
    Null,
    /// One of fixed values (`enum`, or a `oneOf` of titled `const`s).
    Enum {
        options: Vec<EnumOption>,
    },
    /// Exactly this value.
    Const {
        value: Value,
    },
    Object {
        properties: Vec<Property>,
        /// Keys beyond `properties` are allowed, with values of this form (a key/value editor).
        additional: Option<Box<FormNode>>,
        min_properties: Option<u32>,
        max_properties: Option<u32>,
    },
    Array {
        items: Box<FormNode>,
        /// Positional items before `items` (`prefixItems`, or draft 7's `items: [...]`).
        prefix: Vec<FormNode>,
        min_items: Option<u32>,
        max_items: Option<u32>,
        unique_items: bool,
    },
    /// `oneOf` / `anyOf` (or several types): the user picks a variant.
    Choice {
        variants: Vec<Variant>,
        /// The property whose `const` tells the object variants apart, when there is one.
        discriminator: Option<String>,
        /// `oneOf`: exactly one variant must match; `anyOf`: at least one.
        exclusive: bool,
    },
    /// A recursive definition, by its key in [`Form::defs`].
    Ref {
        target: String,
    },
    /// Anything (or a part the form cannot show as fields): edited as JSON.
    Json,
}

/// A value of an [`NodeKind::Enum`], with the label to show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct EnumOption {
    pub value: Value,
    pub label: String,
}

/// A property of an object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Property {
    pub key: String,
    pub required: bool,
    pub node: FormNode,
}

/// A variant of a [`NodeKind::Choice`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Variant {
    pub label: String,
    /// The discriminator's value in this variant.
    pub tag: Option<Value>,
    pub node: FormNode,
}

impl FormNode {
    /// A node of `kind` with nothing else said.
    pub fn of(kind: NodeKind) -> FormNode {
        FormNode {
            title: None,
            description: None,
            default: None,
            examples: vec![],
            nullable: false,
            read_only: false,
            deprecated: false,
            kind,
        }
    }

    /// A raw JSON field.
    pub fn json() -> FormNode {
        FormNode::of(NodeKind::Json)
    }

    /// The property `key` of an object node.
    pub fn property(&self, key: &str) -> Option<&Property> {
        match &self.kind {
            NodeKind::Object { properties, .. } => properties.iter().find(|p| p.key == key),
            _ => None,
        }
    }
}
