//! Arguments typed on a command line, read by the form: `--arg K=V` sets field `K` (a dotted
//! path reaches into objects and arrays: `filter.tags.0=x`) to `V` read as the field's type —
//! a number for a number, `true`/`false` for a boolean, JSON for an object, an array or a
//! union, the text itself for a string. What does not fit says which field and why.

use serde_json::{Map, Value};

use super::node::{Form, FormNode, NodeKind};

/// Set every `KEY=VALUE` of `pairs` into `base` (an object; `{}` when none was given).
pub fn apply_pairs(form: &Form, base: Value, pairs: &[String]) -> Result<Value, String> {
    let mut value = match base {
        Value::Object(map) => Value::Object(map),
        Value::Null => Value::Object(Map::new()),
        other => {
            return Err(format!(
                "the arguments must be a JSON object, not {}",
                type_name(&other)
            ));
        }
    };
    for pair in pairs {
        let (key, raw) = pair
            .split_once('=')
            .ok_or_else(|| format!("`--arg {pair}` is not KEY=VALUE"))?;
        let path: Vec<&str> = key.split('.').collect();
        if path.iter().any(|s| s.is_empty()) {
            return Err(format!("`--arg {pair}`: `{key}` is not a field name"));
        }
        let node =
            node_at(form, &form.root, &path).map_err(|why| format!("`--arg {key}`: {why}"))?;
        let parsed = parse_value(form, node, raw).map_err(|why| format!("`--arg {key}`: {why}"))?;
        set_at(&mut value, &path, parsed).map_err(|why| format!("`--arg {key}`: {why}"))?;
    }
    Ok(value)
}

/// The form node at `path` under `node`: `None` where the form does not know the field, an
/// error where the path goes into a field that has no fields.
fn node_at<'a>(
    form: &'a Form,
    node: &'a FormNode,
    path: &[&str],
) -> Result<Option<&'a FormNode>, String> {
    let node = follow(form, node);
    let Some((first, rest)) = path.split_first() else {
        return Ok(Some(node));
    };
    let child = match &node.kind {
        NodeKind::Object {
            properties,
            additional,
            ..
        } => properties
            .iter()
            .find(|p| p.key == *first)
            .map(|p| &p.node)
            .or(additional.as_deref()),
        NodeKind::Array { items, prefix, .. } => match first.parse::<usize>() {
            Ok(index) => prefix.get(index).or(Some(items)),
            Err(_) => return Err(format!("`{first}` is not an index of the list")),
        },
        NodeKind::String { .. }
        | NodeKind::Number { .. }
        | NodeKind::Boolean
        | NodeKind::Null
        | NodeKind::Enum { .. }
        | NodeKind::Const { .. } => {
            return Err(format!(
                "`{first}` is inside a plain value, which has no fields"
            ));
        }
        NodeKind::Choice { .. } | NodeKind::Ref { .. } | NodeKind::Json => None,
    };
    match child {
        Some(child) => node_at(form, child, rest),
        None => Ok(None),
    }
}

/// `node`, or the definition a [`NodeKind::Ref`] points at.
fn follow<'a>(form: &'a Form, node: &'a FormNode) -> &'a FormNode {
    match &node.kind {
        NodeKind::Ref { target } => form.defs.get(target).unwrap_or(node),
        _ => node,
    }
}

/// `raw` read as a value for `node` (a field the form does not know: JSON if it parses as
/// JSON, else the text).
fn parse_value(form: &Form, node: Option<&FormNode>, raw: &str) -> Result<Value, String> {
    let Some(node) = node.map(|n| follow(form, n)) else {
        return Ok(json_or_text(raw));
    };
    if node.nullable && raw == "null" {
        return Ok(Value::Null);
    }
    match &node.kind {
        NodeKind::String { .. } => Ok(Value::String(raw.to_string())),
        NodeKind::Number { integer, .. } => {
            let number: serde_json::Number = raw
                .trim()
                .parse()
                .map_err(|_| format!("`{raw}` is not a number"))?;
            if *integer && number.as_i64().is_none() && number.as_u64().is_none() {
                return Err(format!("`{raw}` is not a whole number"));
            }
            Ok(Value::Number(number))
        }
        NodeKind::Boolean => match raw.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "y" | "1" | "on" => Ok(Value::Bool(true)),
            "false" | "no" | "n" | "0" | "off" => Ok(Value::Bool(false)),
            _ => Err(format!("`{raw}` is not true or false")),
        },
        NodeKind::Null => match raw {
            "null" | "" => Ok(Value::Null),
            _ => Err(format!("only null is allowed, not `{raw}`")),
        },
        NodeKind::Enum { options } => {
            let json = serde_json::from_str::<Value>(raw).ok();
            options
                .iter()
                .find(|o| {
                    o.value.as_str() == Some(raw)
                        || json.as_ref() == Some(&o.value)
                        || o.label == raw
                })
                .map(|o| o.value.clone())
                .ok_or_else(|| {
                    let shown: Vec<String> = options
                        .iter()
                        .take(12)
                        .map(|o| match &o.value {
                            Value::String(s) => s.clone(),
                            v => v.to_string(),
                        })
                        .collect();
                    let more = if options.len() > 12 { ", …" } else { "" };
                    format!("`{raw}` is not one of {}{more}", shown.join(", "))
                })
        }
        NodeKind::Const { value } => {
            let parsed = json_or_text(raw);
            if &parsed == value {
                Ok(parsed)
            } else {
                Err(format!("only {value} is allowed"))
            }
        }
        NodeKind::Object { .. } | NodeKind::Array { .. } => {
            serde_json::from_str(raw).map_err(|e| format!("`{raw}` is not JSON ({e})"))
        }
        NodeKind::Choice { variants, .. } => match serde_json::from_str::<Value>(raw) {
            Ok(value) => Ok(value),
            Err(_)
                if variants
                    .iter()
                    .any(|v| matches!(follow(form, &v.node).kind, NodeKind::String { .. })) =>
            {
                Ok(Value::String(raw.to_string()))
            }
            Err(e) => Err(format!("`{raw}` is not JSON ({e})")),
        },
        NodeKind::Ref { .. } | NodeKind::Json => Ok(json_or_text(raw)),
    }
}

fn json_or_text(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// Put `new` at `path` inside `value`, making objects (or arrays, for numeric segments) on
/// the way.
fn set_at(value: &mut Value, path: &[&str], new: Value) -> Result<(), String> {
    let Some((first, rest)) = path.split_first() else {
        *value = new;
        return Ok(());
    };
    let index: Option<usize> = first.parse().ok();
    if value.is_null() {
        *value = if index.is_some() {
            Value::Array(vec![])
        } else {
            Value::Object(Map::new())
        };
    }
    match value {
        Value::Object(map) => {
            let slot = map.entry(first.to_string()).or_insert(Value::Null);
            set_at(slot, rest, new)
        }
        Value::Array(items) => {
            let index = index.ok_or_else(|| format!("`{first}` is not an index of the list"))?;
            if index > items.len() {
                return Err(format!(
                    "the list has {} item(s); set index {} first",
                    items.len(),
                    items.len()
                ));
            }
            if index == items.len() {
                items.push(Value::Null);
            }
            set_at(&mut items[index], rest, new)
        }
        other => Err(format!(
            "`{first}` is inside {}, which has no fields",
            type_name(other)
        )),
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
