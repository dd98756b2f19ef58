//! JSON Schema (2020-12, and the drafts tool schemas still use) → [`Form`].
//!
//! Local `$ref`s are followed (JSON pointers, `$anchor`s; a reference back into a definition
//! being expanded becomes a [`NodeKind::Ref`] into [`Form::defs`]), `allOf` is merged,
//! `oneOf`/`anyOf` and multi-type unions become choices (discriminated by a `const` property
//! where the variants have one), unions with `null` make the field nullable, and unknown
//! keywords are ignored. Hostile schemas are bounded: nesting deeper than [`MAX_DEPTH`], more
//! than [`MAX_NODES`] fields or more than [`MAX_ENUM`] enum values fall back to JSON editing
//! with a note, never to an error.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde_json::{Map, Value};

use super::node::{EnumOption, Form, FormNode, NodeKind, Property, Variant};

/// Fields nested deeper than this are edited as JSON.
pub const MAX_DEPTH: usize = 32;
/// At most this many fields per form; the rest is edited as JSON.
pub const MAX_NODES: usize = 20_000;
/// Enums with more values are typed in (and still validated).
pub const MAX_ENUM: usize = 10_000;
/// `allOf`s (and `$ref`s inside them) merged within one another at most this deep.
const MAX_MERGE_DEPTH: usize = 16;

/// The form of `schema`.
pub fn compile(schema: &Value) -> Form {
    let mut compiler = Compiler {
        root: schema,
        defs: BTreeMap::new(),
        notes: vec![],
        expanding: vec![],
        recursive: HashSet::new(),
        nodes: 0,
    };
    let root = compiler.node(schema, 0);
    Form {
        root,
        defs: compiler.defs,
        notes: compiler.notes,
    }
}

struct Compiler<'a> {
    root: &'a Value,
    defs: BTreeMap<String, FormNode>,
    notes: Vec<String>,
    /// The `$ref` targets being expanded, outermost first.
    expanding: Vec<String>,
    /// Targets referred to from inside themselves.
    recursive: HashSet<String>,
    nodes: usize,
}

impl<'a> Compiler<'a> {
    fn note(&mut self, note: impl Into<String>) {
        let note = note.into();
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    fn node(&mut self, schema: &Value, depth: usize) -> FormNode {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            self.note(format!(
                "the schema has more than {MAX_NODES} fields; the rest is edited as JSON"
            ));
            return FormNode::json();
        }
        if depth > MAX_DEPTH {
            self.note(format!(
                "parts nested deeper than {MAX_DEPTH} levels are edited as JSON"
            ));
            return FormNode::json();
        }
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(false) => {
                self.note("a part of the schema allows no value at all");
                return FormNode::json();
            }
            _ => return FormNode::json(),
        };
        if let Some(reference) = ref_of(map) {
            return self.reference(map, reference, depth);
        }
        if map.contains_key("allOf") {
            let merged = self.merged(map, 0);
            return self.plain(&merged, depth);
        }
        self.plain(map, depth)
    }

    /// A schema with a `$ref` (and maybe siblings, which 2020-12 applies alongside it).
    fn reference(&mut self, map: &Map<String, Value>, reference: &str, depth: usize) -> FormNode {
        let Some((key, target)) = resolve(self.root, reference) else {
            self.note(format!(
                "`{reference}` is not a reference inside this schema; that part is edited as JSON"
            ));
            let mut node = FormNode::json();
            annotate(&mut node, map);
            return node;
        };
        if self.expanding.contains(&key) {
            self.recursive.insert(key.clone());
            let mut node = FormNode::of(NodeKind::Ref { target: key });
            annotate(&mut node, map);
            return node;
        }
        let siblings: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "$ref" | "$dynamicRef"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        self.expanding.push(key.clone());
        let node = if siblings.keys().any(|k| is_assertion(k)) {
            let combined = Value::Object(Map::from_iter([(
                "allOf".to_string(),
                Value::Array(vec![target.clone(), Value::Object(siblings.clone())]),
            )]));
            self.node(&combined, depth)
        } else {
            let mut node = self.node(target, depth);
            annotate(&mut node, &siblings);
            node
        };
        self.expanding.pop();
        if self.recursive.contains(&key) && !self.defs.contains_key(&key) {
            self.defs.insert(key, node.clone());
        }
        node
    }

    /// `map` with its `allOf` merged in (members' own `$ref`s and `allOf`s included).
    fn merged(&mut self, map: &Map<String, Value>, level: usize) -> Map<String, Value> {
        let mut out: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| k.as_str() != "allOf")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let Some(Value::Array(members)) = map.get("allOf") else {
            return out;
        };
        if level >= MAX_MERGE_DEPTH {
            self.note("`allOf`s nested too deeply were not merged into the form");
            return out;
        }
        for member in members {
            let Some(member) = self.flattened(member, level + 1) else {
                continue;
            };
            merge_into(&mut out, &member);
        }
        out
    }

    /// A member of an `allOf`, its `$ref` followed and its own `allOf` merged.
    fn flattened(&mut self, member: &Value, level: usize) -> Option<Map<String, Value>> {
        let map = member.as_object()?;
        if level >= MAX_MERGE_DEPTH {
            self.note("`allOf`s nested too deeply were not merged into the form");
            return None;
        }
        let mut map = map.clone();
        if let Some(reference) = ref_of(&map).map(str::to_owned) {
            match resolve(self.root, &reference) {
                Some((_, target)) => {
                    map.remove("$ref");
                    map.remove("$dynamicRef");
                    if let Some(target) = self.flattened(target, level + 1) {
                        let mut base = target;
                        merge_into(&mut base, &map);
                        map = base;
                    }
                }
                None => {
                    self.note(format!(
                        "`{reference}` is not a reference inside this schema; it was not merged"
                    ));
                    map.remove("$ref");
                }
            }
        }
        if map.contains_key("allOf") {
            map = self.merged(&map, level);
        }
        Some(map)
    }

    /// A schema without `$ref` or `allOf` at its top.
    fn plain(&mut self, map: &Map<String, Value>, depth: usize) -> FormNode {
        let mut node = self.kind_of(map, depth);
        annotate(&mut node, map);
        node
    }

    fn kind_of(&mut self, map: &Map<String, Value>, depth: usize) -> FormNode {
        if let Some(value) = map.get("const") {
            return FormNode::of(NodeKind::Const {
                value: value.clone(),
            });
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            return self.enumeration(map, values);
        }
        for (keyword, exclusive) in [("oneOf", true), ("anyOf", false)] {
            if let Some(Value::Array(variants)) = map.get(keyword) {
                return self.union(map, keyword, variants, exclusive, depth);
            }
        }
        let types = types_of(map);
        let nullable = types.iter().any(|t| t == "null");
        let concrete: Vec<&str> = types
            .iter()
            .map(String::as_str)
            .filter(|t| *t != "null")
            .collect();
        let mut node = match concrete.as_slice() {
            [] if nullable => FormNode::of(NodeKind::Null),
            [] => self.untyped(map, depth),
            [one] => self.typed(map, one, depth),
            several => {
                let variants = several
                    .iter()
                    .map(|t| Variant {
                        label: (*t).to_string(),
                        tag: None,
                        node: self.typed(map, t, depth + 1),
                    })
                    .collect();
                FormNode::of(NodeKind::Choice {
                    variants,
                    discriminator: None,
                    exclusive: true,
                })
            }
        };
        if nullable && !matches!(node.kind, NodeKind::Null) {
            node.nullable = true;
        }
        node
    }

    /// No `type`: what the other keywords say it is.
    fn untyped(&mut self, map: &Map<String, Value>, depth: usize) -> FormNode {
        let has = |keys: &[&str]| keys.iter().any(|k| map.contains_key(*k));
        let kind = if has(&[
            "properties",
            "additionalProperties",
            "patternProperties",
            "required",
            "minProperties",
            "maxProperties",
        ]) {
            "object"
        } else if has(&[
            "items",
            "prefixItems",
            "minItems",
            "maxItems",
            "uniqueItems",
        ]) {
            "array"
        } else if has(&["minLength", "maxLength", "pattern", "format"]) {
            "string"
        } else if has(&[
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        ]) {
            "number"
        } else {
            return FormNode::json();
        };
        self.typed(map, kind, depth)
    }

    fn typed(&mut self, map: &Map<String, Value>, kind: &str, depth: usize) -> FormNode {
        FormNode::of(match kind {
            "string" => NodeKind::String {
                format: str_of(map, "format"),
                min_length: u32_of(map, "minLength"),
                max_length: u32_of(map, "maxLength"),
                pattern: str_of(map, "pattern"),
            },
            "number" | "integer" => {
                let mut minimum = f64_of(map, "minimum");
                let mut maximum = f64_of(map, "maximum");
                let mut exclusive_minimum = f64_of(map, "exclusiveMinimum");
                let mut exclusive_maximum = f64_of(map, "exclusiveMaximum");
                // Draft 4: `exclusiveMinimum: true` makes `minimum` exclusive.
                if map.get("exclusiveMinimum") == Some(&Value::Bool(true)) {
                    exclusive_minimum = minimum.take();
                }
                if map.get("exclusiveMaximum") == Some(&Value::Bool(true)) {
                    exclusive_maximum = maximum.take();
                }
                NodeKind::Number {
                    integer: kind == "integer",
                    minimum,
                    maximum,
                    exclusive_minimum,
                    exclusive_maximum,
                    multiple_of: f64_of(map, "multipleOf"),
                }
            }
            "boolean" => NodeKind::Boolean,
            "null" => NodeKind::Null,
            "object" => return self.object(map, depth),
            "array" => return self.array(map, depth),
            _ => NodeKind::Json,
        })
    }

    fn object(&mut self, map: &Map<String, Value>, depth: usize) -> FormNode {
        let required: BTreeSet<&str> = match map.get("required") {
            Some(Value::Array(keys)) => keys.iter().filter_map(Value::as_str).collect(),
            _ => BTreeSet::new(),
        };
        let mut properties = vec![];
        if let Some(Value::Object(props)) = map.get("properties") {
            for (key, schema) in props {
                let node = self.node(schema, depth + 1);
                properties.push(Property {
                    key: key.clone(),
                    required: required.contains(key.as_str()),
                    node,
                });
            }
        }
        for key in &required {
            if !properties.iter().any(|p| p.key == *key) {
                properties.push(Property {
                    key: (*key).to_string(),
                    required: true,
                    node: FormNode::json(),
                });
            }
        }
        let additional = match map.get("additionalProperties") {
            Some(Value::Bool(false)) => None,
            Some(Value::Object(schema)) => Some(Box::new(
                self.node(&Value::Object(schema.clone()), depth + 1),
            )),
            Some(_) => Some(Box::new(FormNode::json())),
            None => match map.get("patternProperties") {
                Some(Value::Object(patterns)) => {
                    self.note(
                        "keys matching `patternProperties` are edited with a key/value editor",
                    );
                    let first = patterns
                        .values()
                        .next()
                        .cloned()
                        .unwrap_or(Value::Bool(true));
                    Some(Box::new(self.node(&first, depth + 1)))
                }
                // A free-form object (no `properties` at all): any keys. With listed
                // properties, only those are offered; an empty list (`"properties": {}`) is a
                // tool that takes no arguments.
                _ if properties.is_empty() && !map.contains_key("properties") => {
                    Some(Box::new(FormNode::json()))
                }
                _ => None,
            },
        };
        FormNode::of(NodeKind::Object {
            properties,
            additional,
            min_properties: u32_of(map, "minProperties"),
            max_properties: u32_of(map, "maxProperties"),
        })
    }

    fn array(&mut self, map: &Map<String, Value>, depth: usize) -> FormNode {
        let mut prefix = vec![];
        if let Some(Value::Array(items)) = map.get("prefixItems") {
            for item in items {
                prefix.push(self.node(item, depth + 1));
            }
        }
        let items = match map.get("items") {
            // Draft 7 tuples: `items: [...]`, then `additionalItems`.
            Some(Value::Array(tuple)) => {
                for item in tuple {
                    prefix.push(self.node(item, depth + 1));
                }
                match map.get("additionalItems") {
                    Some(schema @ Value::Object(_)) => self.node(schema, depth + 1),
                    _ => FormNode::json(),
                }
            }
            Some(schema) => self.node(schema, depth + 1),
            None => FormNode::json(),
        };
        FormNode::of(NodeKind::Array {
            items: Box::new(items),
            prefix,
            min_items: u32_of(map, "minItems"),
            max_items: u32_of(map, "maxItems"),
            unique_items: map.get("uniqueItems") == Some(&Value::Bool(true)),
        })
    }

    fn enumeration(&mut self, map: &Map<String, Value>, values: &[Value]) -> FormNode {
        let nullable = values.iter().any(Value::is_null);
        let values: Vec<&Value> = values.iter().filter(|v| !v.is_null()).collect();
        if values.len() > MAX_ENUM {
            self.note(format!(
                "a field allows {} fixed values, too many to list; type the value",
                values.len()
            ));
            let mut node = self.untyped_or_string(map);
            node.nullable = nullable;
            return node;
        }
        let names: Option<Vec<&str>> = match map.get("enumNames") {
            Some(Value::Array(names)) if names.len() == values.len() => {
                names.iter().map(Value::as_str).collect()
            }
            _ => None,
        };
        let options = values
            .iter()
            .enumerate()
            .map(|(i, value)| EnumOption {
                value: (*value).clone(),
                label: names
                    .as_ref()
                    .map(|n| n[i].to_string())
                    .unwrap_or_else(|| label_of_value(value)),
            })
            .collect();
        let mut node = FormNode::of(NodeKind::Enum { options });
        node.nullable = nullable;
        node
    }

    fn untyped_or_string(&mut self, map: &Map<String, Value>) -> FormNode {
        match types_of(map).iter().find(|t| *t != "null") {
            Some(t) if t != "string" => FormNode::json(),
            _ => FormNode::of(NodeKind::String {
                format: None,
                min_length: None,
                max_length: None,
                pattern: None,
            }),
        }
    }

    fn union(
        &mut self,
        map: &Map<String, Value>,
        keyword: &str,
        variants: &[Value],
        exclusive: bool,
        depth: usize,
    ) -> FormNode {
        // What the union's siblings say applies to every variant.
        let shared: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| {
                k.as_str() != keyword
                    && !matches!(k.as_str(), "oneOf" | "anyOf")
                    && !is_annotation(k)
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut nullable = false;
        let mut kept = vec![];
        for variant in variants {
            if is_null_schema(variant) {
                nullable = true;
            } else {
                kept.push(variant);
            }
        }
        let with_shared = |variant: &Value| -> Value {
            if shared.is_empty() {
                return variant.clone();
            }
            Value::Object(Map::from_iter([(
                "allOf".to_string(),
                Value::Array(vec![Value::Object(shared.clone()), variant.clone()]),
            )]))
        };
        let mut node = match kept.as_slice() {
            [] => FormNode::of(NodeKind::Null),
            [one] => self.node(&with_shared(one), depth),
            _ if kept.iter().all(|v| const_of(self.root, v).is_some()) => {
                let options = kept
                    .iter()
                    .map(|v| {
                        let value = const_of(self.root, v).expect("checked");
                        let label = v
                            .get("title")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                            .unwrap_or_else(|| label_of_value(&value));
                        EnumOption { value, label }
                    })
                    .collect();
                FormNode::of(NodeKind::Enum { options })
            }
            _ => {
                let nodes: Vec<FormNode> = kept
                    .iter()
                    .map(|v| self.node(&with_shared(v), depth + 1))
                    .collect();
                let discriminator = discriminator_of(&nodes);
                let variants = nodes
                    .into_iter()
                    .zip(&kept)
                    .enumerate()
                    .map(|(i, (node, schema))| {
                        let tag = discriminator
                            .as_deref()
                            .and_then(|key| fixed_value(&node.property(key)?.node));
                        Variant {
                            label: variant_label(schema, &node, tag.as_ref(), i),
                            tag,
                            node,
                        }
                    })
                    .collect();
                FormNode::of(NodeKind::Choice {
                    variants,
                    discriminator,
                    exclusive,
                })
            }
        };
        if nullable && !matches!(node.kind, NodeKind::Null) {
            node.nullable = true;
        }
        node
    }
}

/// The `$ref` (or `$dynamicRef`) of a schema object.
fn ref_of(map: &Map<String, Value>) -> Option<&str> {
    map.get("$ref")
        .or_else(|| map.get("$dynamicRef"))
        .and_then(Value::as_str)
}

/// Title, description, default, examples and flags from `map` onto `node` (what is already
/// there is kept: the referring schema's own words win).
fn annotate(node: &mut FormNode, map: &Map<String, Value>) {
    if let Some(title) = str_of(map, "title") {
        node.title = Some(title);
    }
    if let Some(description) = str_of(map, "description") {
        node.description = Some(description);
    }
    if let Some(default) = map.get("default") {
        node.default = Some(default.clone());
    }
    match map.get("examples") {
        Some(Value::Array(examples)) => node.examples = examples.iter().take(20).cloned().collect(),
        Some(other) => node.examples = vec![other.clone()],
        None => {
            if let Some(example) = map.get("example") {
                node.examples = vec![example.clone()];
            }
        }
    }
    if map.get("readOnly") == Some(&Value::Bool(true)) {
        node.read_only = true;
    }
    if map.get("deprecated") == Some(&Value::Bool(true)) {
        node.deprecated = true;
    }
}

fn is_annotation(key: &str) -> bool {
    matches!(
        key,
        "title"
            | "description"
            | "default"
            | "examples"
            | "example"
            | "readOnly"
            | "writeOnly"
            | "deprecated"
            | "$comment"
            | "$schema"
            | "$id"
            | "$anchor"
            | "$defs"
            | "definitions"
    )
}

/// Whether `key` constrains values (so a `$ref` beside it must be merged with it).
fn is_assertion(key: &str) -> bool {
    !is_annotation(key) && !key.starts_with("x-")
}

fn types_of(map: &Map<String, Value>) -> Vec<String> {
    match map.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => vec![],
    }
}

fn str_of(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn f64_of(map: &Map<String, Value>, key: &str) -> Option<f64> {
    map.get(key).and_then(Value::as_f64)
}

fn u32_of(map: &Map<String, Value>, key: &str) -> Option<u32> {
    map.get(key)
        .and_then(Value::as_u64)
        .map(|n| n.min(u32::MAX as u64) as u32)
}

fn is_null_schema(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => {
            map.get("type") == Some(&Value::String("null".into()))
                || map.get("const") == Some(&Value::Null)
        }
        _ => false,
    }
}

/// The single value a schema allows (`const`, or an `enum` of one), following a `$ref`.
fn const_of(root: &Value, schema: &Value) -> Option<Value> {
    let map = schema.as_object()?;
    if let Some(reference) = ref_of(map) {
        return const_of(root, resolve(root, reference)?.1);
    }
    if let Some(value) = map.get("const") {
        return Some(value.clone());
    }
    match map.get("enum") {
        Some(Value::Array(values)) if values.len() == 1 => Some(values[0].clone()),
        _ => None,
    }
}

/// The single value a compiled node allows.
fn fixed_value(node: &FormNode) -> Option<Value> {
    match &node.kind {
        NodeKind::Const { value } => Some(value.clone()),
        NodeKind::Enum { options } if options.len() == 1 => Some(options[0].value.clone()),
        _ => None,
    }
}

/// The property whose fixed value differs in every object variant, if one does.
fn discriminator_of(nodes: &[FormNode]) -> Option<String> {
    let first = nodes.first()?;
    let NodeKind::Object { properties, .. } = &first.kind else {
        return None;
    };
    properties
        .iter()
        .filter(|p| fixed_value(&p.node).is_some())
        .map(|p| p.key.clone())
        .find(|key| {
            let mut seen = vec![];
            nodes.iter().all(
                |node| match node.property(key).and_then(|p| fixed_value(&p.node)) {
                    Some(value) if !seen.contains(&value) => {
                        seen.push(value);
                        true
                    }
                    _ => false,
                },
            )
        })
}

fn variant_label(schema: &Value, node: &FormNode, tag: Option<&Value>, index: usize) -> String {
    if let Some(title) = schema.get("title").and_then(Value::as_str) {
        return title.to_string();
    }
    if let Some(tag) = tag {
        return label_of_value(tag);
    }
    if let Some(title) = &node.title {
        return title.clone();
    }
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str)
        && let Some(name) = reference.rsplit('/').next().filter(|n| !n.is_empty())
    {
        return name.to_string();
    }
    match &node.kind {
        NodeKind::String { .. } => "text".into(),
        NodeKind::Number { integer: true, .. } => "integer".into(),
        NodeKind::Number { .. } => "number".into(),
        NodeKind::Boolean => "true/false".into(),
        NodeKind::Array { .. } => "list".into(),
        NodeKind::Object { .. } => format!("object {}", index + 1),
        _ => format!("option {}", index + 1),
    }
}

fn label_of_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Merge schema `b` into `a` (an `allOf` of the two), keyword by keyword. Exactness is not
/// needed here: values are validated against the original schema.
fn merge_into(a: &mut Map<String, Value>, b: &Map<String, Value>) {
    for (key, bv) in b {
        let Some(av) = a.get_mut(key) else {
            a.insert(key.clone(), bv.clone());
            continue;
        };
        match key.as_str() {
            "properties" => {
                if let (Value::Object(ap), Value::Object(bp)) = (av, bv) {
                    for (name, schema) in bp {
                        match ap.get_mut(name) {
                            Some(existing) => {
                                *existing = Value::Object(Map::from_iter([(
                                    "allOf".to_string(),
                                    Value::Array(vec![existing.clone(), schema.clone()]),
                                )]))
                            }
                            None => {
                                ap.insert(name.clone(), schema.clone());
                            }
                        }
                    }
                }
            }
            "required" => {
                if let (Value::Array(ar), Value::Array(br)) = (av, bv) {
                    for key in br {
                        if !ar.contains(key) {
                            ar.push(key.clone());
                        }
                    }
                }
            }
            "type" => {
                let at: Vec<Value> = as_list(av);
                let common: Vec<Value> = as_list(bv)
                    .into_iter()
                    .filter(|t| {
                        at.contains(t)
                            || (t == "integer" && at.contains(&Value::String("number".into())))
                    })
                    .collect();
                if !common.is_empty() {
                    *av = if common.len() == 1 {
                        common[0].clone()
                    } else {
                        Value::Array(common)
                    };
                }
            }
            "enum" => {
                if let (Value::Array(ae), Value::Array(be)) = (&*av, bv) {
                    let common: Vec<Value> =
                        ae.iter().filter(|v| be.contains(v)).cloned().collect();
                    *av = Value::Array(common);
                }
            }
            "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties" => {
                if let (Some(x), Some(y)) = (av.as_f64(), bv.as_f64())
                    && y > x
                {
                    *av = bv.clone();
                }
            }
            "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties" => {
                if let (Some(x), Some(y)) = (av.as_f64(), bv.as_f64())
                    && y < x
                {
                    *av = bv.clone();
                }
            }
            "additionalProperties" | "items" => {
                if *av == Value::Bool(false) || *bv == Value::Bool(false) {
                    *av = Value::Bool(false);
                } else if bv.is_object() && av.is_object() {
                    *av = Value::Object(Map::from_iter([(
                        "allOf".to_string(),
                        Value::Array(vec![av.clone(), bv.clone()]),
                    )]));
                }
            }
            "uniqueItems" if *bv == Value::Bool(true) => {
                *av = Value::Bool(true);
            }
            // Anything else: the first schema's word stands.
            _ => {}
        }
    }
}

fn as_list(value: &Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items.clone(),
        other => vec![other.clone()],
    }
}

/// A reference inside `root`: `#`, a JSON pointer (`#/$defs/x`), or an anchor (`#name`).
/// Returns the key to remember the target by, and the target. Other documents are never
/// fetched.
pub(super) fn resolve<'a>(root: &'a Value, reference: &str) -> Option<(String, &'a Value)> {
    let fragment = match reference.split_once('#') {
        Some(("", fragment)) => fragment,
        Some((base, fragment)) if root.get("$id").and_then(Value::as_str) == Some(base) => fragment,
        _ => return None,
    };
    let decoded = percent_encoding::percent_decode_str(fragment)
        .decode_utf8()
        .ok()?
        .into_owned();
    if decoded.is_empty() {
        return Some(("#".into(), root));
    }
    if decoded.starts_with('/') {
        let pointer = decoded.clone();
        return root
            .pointer(&pointer)
            .map(|target| (format!("#{pointer}"), target));
    }
    let found = find_anchor(root, &decoded, 0)?;
    Some((format!("#{decoded}"), found))
}

fn find_anchor<'a>(schema: &'a Value, anchor: &str, depth: usize) -> Option<&'a Value> {
    if depth > 64 {
        return None;
    }
    match schema {
        Value::Object(map) => {
            let named = |key: &str| map.get(key).and_then(Value::as_str);
            if named("$anchor") == Some(anchor)
                || named("$dynamicAnchor") == Some(anchor)
                || named("$id").and_then(|id| id.strip_prefix('#')) == Some(anchor)
            {
                return Some(schema);
            }
            map.values().find_map(|v| find_anchor(v, anchor, depth + 1))
        }
        Value::Array(items) => items.iter().find_map(|v| find_anchor(v, anchor, depth + 1)),
        _ => None,
    }
}
