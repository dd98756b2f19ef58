//! The form engine on each keyword family, on hostile schemas, and its validation paths.

use serde_json::{Value, json};

use super::args::apply_pairs;
use super::*;

fn root_kind(schema: Value) -> NodeKind {
    compile(&schema).root.kind
}

fn props(form: &Form) -> &[Property] {
    match &form.root.kind {
        NodeKind::Object { properties, .. } => properties,
        other => panic!("not an object: {other:?}"),
    }
}

fn prop<'a>(form: &'a Form, key: &str) -> &'a FormNode {
    &props(form).iter().find(|p| p.key == key).expect(key).node
}

#[test]
fn scalar_types_with_bounds_formats_and_patterns() {
    let form = compile(&json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 2, "maxLength": 8, "pattern": "^[a-z]+$"},
            "site": {"type": "string", "format": "uri"},
            "mail": {"type": "string", "format": "email"},
            "day": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"},
            "count": {"type": "integer", "minimum": 1, "maximum": 10, "multipleOf": 1},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "old": {"type": "number", "minimum": 5, "exclusiveMinimum": true},
            "on": {"type": "boolean", "default": true}
        },
        "required": ["name"]
    }));
    assert_eq!(
        prop(&form, "name").kind,
        NodeKind::String {
            format: None,
            min_length: Some(2),
            max_length: Some(8),
            pattern: Some("^[a-z]+$".into())
        }
    );
    for (key, format) in [
        ("site", "uri"),
        ("mail", "email"),
        ("day", "date"),
        ("at", "date-time"),
    ] {
        assert!(
            matches!(&prop(&form, key).kind, NodeKind::String { format: Some(f), .. } if f == format),
            "{key}"
        );
    }
    assert!(matches!(
        prop(&form, "count").kind,
        NodeKind::Number {
            integer: true,
            minimum: Some(1.0),
            maximum: Some(10.0),
            ..
        }
    ));
    assert!(matches!(
        prop(&form, "ratio").kind,
        NodeKind::Number {
            integer: false,
            exclusive_minimum: Some(0.0),
            exclusive_maximum: Some(1.0),
            ..
        }
    ));
    assert!(matches!(
        prop(&form, "old").kind,
        NodeKind::Number {
            minimum: None,
            exclusive_minimum: Some(5.0),
            ..
        }
    ));
    assert_eq!(prop(&form, "on").default, Some(json!(true)));
    assert!(props(&form)[0].required && !props(&form)[1].required);
}

#[test]
fn unions_with_null_are_nullable_fields() {
    assert!(compile(&json!({"type": ["string", "null"]})).root.nullable);
    let pydantic =
        compile(&json!({"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}));
    assert!(pydantic.root.nullable);
    assert!(matches!(
        pydantic.root.kind,
        NodeKind::Number { integer: true, .. }
    ));
    assert_eq!(pydantic.root.default, Some(Value::Null));
    let enumerated = compile(&json!({"enum": ["a", null]}));
    assert!(enumerated.root.nullable);
    assert!(matches!(&enumerated.root.kind, NodeKind::Enum { options } if options.len() == 1));
    // Several concrete types: a choice of each.
    match root_kind(json!({"type": ["string", "number", "null"]})) {
        NodeKind::Choice { variants, .. } => {
            let labels: Vec<&str> = variants.iter().map(|v| v.label.as_str()).collect();
            assert_eq!(labels, ["string", "number"]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn nested_objects_and_arrays_of_objects() {
    let form = compile(&json!({
        "type": "object",
        "properties": {
            "owner": {"type": "object", "properties": {"login": {"type": "string"}}, "required": ["login"]},
            "rows": {
                "type": "array", "minItems": 1, "maxItems": 5, "uniqueItems": true,
                "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}
            },
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}]},
            "old_pair": {"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "boolean"}}
        }
    }));
    let owner = prop(&form, "owner");
    assert!(owner.property("login").unwrap().required);
    match &prop(&form, "rows").kind {
        NodeKind::Array {
            items,
            min_items,
            max_items,
            unique_items,
            ..
        } => {
            assert_eq!(
                (*min_items, *max_items, *unique_items),
                (Some(1), Some(5), true)
            );
            assert!(items.property("qty").is_some());
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&prop(&form, "pair").kind, NodeKind::Array { prefix, .. } if prefix.len() == 2)
    );
    match &prop(&form, "old_pair").kind {
        NodeKind::Array { prefix, items, .. } => {
            assert_eq!(prefix.len(), 1);
            assert_eq!(items.kind, NodeKind::Boolean);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn enums_consts_and_titled_choices() {
    match root_kind(json!({"enum": ["a", "b"], "enumNames": ["Alpha", "Beta"]})) {
        NodeKind::Enum { options } => assert_eq!(options[1].label, "Beta"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        root_kind(json!({"const": 3})),
        NodeKind::Const { value: json!(3) }
    );
    // The elicitation spec's titled single select.
    match root_kind(
        json!({"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}, {"const": "h2", "title": "Batman"}]}),
    ) {
        NodeKind::Enum { options } => {
            assert_eq!(options[0].value, json!("h1"));
            assert_eq!(options[0].label, "Superman");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn one_of_objects_is_a_choice_discriminated_by_a_const_property() {
    let form = compile(&json!({
        "oneOf": [
            {"type": "object", "title": "By email", "properties": {"kind": {"const": "email"}, "to": {"type": "string", "format": "email"}}, "required": ["kind", "to"]},
            {"type": "object", "properties": {"kind": {"const": "sms"}, "number": {"type": "string"}}, "required": ["kind"]}
        ]
    }));
    match &form.root.kind {
        NodeKind::Choice {
            variants,
            discriminator,
            exclusive,
        } => {
            assert_eq!(discriminator.as_deref(), Some("kind"));
            assert!(*exclusive);
            assert_eq!(variants[0].label, "By email");
            assert_eq!(variants[1].label, "sms");
            assert_eq!(variants[1].tag, Some(json!("sms")));
        }
        other => panic!("{other:?}"),
    }
    // anyOf without a discriminator: labels from the types.
    match root_kind(
        json!({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}),
    ) {
        NodeKind::Choice {
            variants,
            discriminator: None,
            exclusive: false,
        } => assert_eq!(variants[1].label, "list"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn all_of_is_merged_and_refs_are_followed() {
    let form = compile(&json!({
        "$defs": {
            "Named": {"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]},
            "Aged": {"properties": {"age": {"type": "integer", "minimum": 0}}}
        },
        "allOf": [
            {"$ref": "#/$defs/Named"},
            {"$ref": "#/$defs/Aged"},
            {"properties": {"name": {"maxLength": 20}}, "required": ["age"]}
        ]
    }));
    let keys: Vec<&str> = props(&form).iter().map(|p| p.key.as_str()).collect();
    assert_eq!(keys, ["name", "age"]);
    assert!(props(&form).iter().all(|p| p.required));
    assert!(matches!(
        prop(&form, "name").kind,
        NodeKind::String {
            min_length: Some(1),
            max_length: Some(20),
            ..
        }
    ));
    // `definitions` and `$ref` with a sibling description.
    let form = compile(&json!({
        "definitions": {"Id": {"type": "integer"}},
        "properties": {"id": {"$ref": "#/definitions/Id", "description": "The id"}}
    }));
    assert_eq!(prop(&form, "id").description.as_deref(), Some("The id"));
    assert!(matches!(
        prop(&form, "id").kind,
        NodeKind::Number { integer: true, .. }
    ));
    // An anchor.
    let form = compile(
        &json!({"$defs": {"x": {"$anchor": "thing", "type": "boolean"}}, "properties": {"t": {"$ref": "#thing"}}}),
    );
    assert_eq!(prop(&form, "t").kind, NodeKind::Boolean);
}

#[test]
fn a_ref_cycle_becomes_a_definition_the_form_expands_on_demand() {
    let form = compile(&json!({
        "$defs": {"Node": {"type": "object", "properties": {
            "label": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
        }}},
        "$ref": "#/$defs/Node"
    }));
    let children = prop(&form, "children");
    match &children.kind {
        NodeKind::Array { items, .. } => {
            assert_eq!(
                items.kind,
                NodeKind::Ref {
                    target: "#/$defs/Node".into()
                }
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(form.defs["#/$defs/Node"].property("children").is_some());
    // A schema that is nothing but a reference to itself.
    let form = compile(&json!({"$ref": "#"}));
    assert_eq!(form.root.kind, NodeKind::Ref { target: "#".into() });
}

#[test]
fn additional_properties_are_a_key_value_editor() {
    match root_kind(json!({"type": "object", "additionalProperties": {"type": "integer"}})) {
        NodeKind::Object {
            additional: Some(node),
            properties,
            ..
        } => {
            assert!(properties.is_empty());
            assert!(matches!(node.kind, NodeKind::Number { integer: true, .. }));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        root_kind(
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false})
        ),
        NodeKind::Object {
            additional: None,
            ..
        }
    ));
    assert!(matches!(
        root_kind(json!({"type": "object"})),
        NodeKind::Object {
            additional: Some(_),
            ..
        }
    ));
    // An empty `properties`: a tool that takes no arguments, not a key/value editor.
    assert!(matches!(
        root_kind(json!({"type": "object", "properties": {}})),
        NodeKind::Object {
            additional: None,
            ..
        }
    ));
}

#[test]
fn defaults_examples_and_unknown_keywords() {
    let form = compile(&json!({
        "type": "object",
        "x-vendor": {"anything": [1, 2]},
        "properties": {
            "q": {"type": "string", "examples": ["cats", "dogs"], "default": "cats", "frobnicate": true, "deprecated": true},
            "weird": {"type": "spaceship"},
            "nothing": {},
            "never": false
        }
    }));
    let q = prop(&form, "q");
    assert_eq!(q.examples, [json!("cats"), json!("dogs")]);
    assert_eq!(q.default, Some(json!("cats")));
    assert!(q.deprecated);
    assert_eq!(prop(&form, "weird").kind, NodeKind::Json);
    assert_eq!(prop(&form, "nothing").kind, NodeKind::Json);
    assert_eq!(prop(&form, "never").kind, NodeKind::Json);
    // Schemas that are not objects at all.
    for schema in [
        json!(true),
        json!(null),
        json!(42),
        json!("string"),
        json!([]),
    ] {
        assert_eq!(compile(&schema).root.kind, NodeKind::Json);
    }
    // A remote reference is not fetched.
    let form = compile(&json!({"$ref": "https://example.com/schema.json"}));
    assert_eq!(form.root.kind, NodeKind::Json);
    assert!(form.notes[0].contains("not a reference inside this schema"));
}

#[test]
fn hostile_schemas_are_bounded() {
    // 200 levels of nesting.
    let mut deep = json!({"type": "string"});
    for _ in 0..200 {
        deep = json!({"type": "object", "properties": {"next": deep}});
    }
    let form = compile(&deep);
    assert!(form.notes.iter().any(|n| n.contains("nested deeper")));
    // 10,000 enum values are all offered; 10,001 are typed in.
    let values: Vec<Value> = (0..10_000).map(|i| json!(format!("v{i}"))).collect();
    match root_kind(json!({"enum": values})) {
        NodeKind::Enum { options } => assert_eq!(options.len(), 10_000),
        other => panic!("{other:?}"),
    }
    let values: Vec<Value> = (0..10_001).map(|i| json!(format!("v{i}"))).collect();
    let form = compile(&json!({"type": "string", "enum": values}));
    assert!(matches!(form.root.kind, NodeKind::String { .. }));
    // Mutual recursion through allOf, and allOf referring to itself.
    let form = compile(&json!({
        "$defs": {"A": {"allOf": [{"$ref": "#/$defs/B"}]}, "B": {"allOf": [{"$ref": "#/$defs/A"}]}},
        "$ref": "#/$defs/A"
    }));
    assert!(!form.notes.is_empty());
    let form = compile(&json!({"allOf": [{"$ref": "#"}], "type": "object"}));
    assert!(matches!(form.root.kind, NodeKind::Object { .. }));
    // Very wide: more fields than the form shows.
    let wide: serde_json::Map<String, Value> = (0..25_000)
        .map(|i| (format!("f{i}"), json!({"type": "string"})))
        .collect();
    let form = compile(&json!({"type": "object", "properties": wide}));
    assert!(form.notes.iter().any(|n| n.contains("more than")));
}

#[test]
fn validation_names_the_field_and_never_the_value() {
    let schema = json!({
        "type": "object",
        "properties": {
            "rows": {"type": "array", "items": {"type": "object", "properties": {"qty": {"type": "integer", "minimum": 1}}, "required": ["qty"]}},
            "mail": {"type": "string", "format": "email"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"}
        },
        "required": ["rows"],
        "additionalProperties": false
    });
    let validator = Validator::new(&schema);
    assert!(validator.schema_problem().is_none());
    assert!(validator.issues(&json!({"rows": [{"qty": 2}]})).is_empty());
    let issues = validator.issues(&json!({
        "rows": [{"qty": 2}, {"qty": 0}, {}],
        "mail": "hunter2-not-an-email",
        "code": "abc",
        "extra": 1
    }));
    let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
    for path in ["rows[1].qty", "rows[2].qty", "mail", "code", "extra"] {
        assert!(paths.contains(&path), "{path} in {issues:#?}");
    }
    assert_eq!(
        issues
            .iter()
            .find(|i| i.path == "rows[1].qty")
            .unwrap()
            .pointer,
        "/rows/1/qty"
    );
    for issue in &issues {
        assert!(!issue.message.contains("hunter2"), "{issue:?}");
    }
    let missing = validator.issues(&json!({}));
    assert_eq!(missing[0].path, "rows");
    assert_eq!(missing[0].message, "is required");
    assert_eq!(validator.issues(&json!([]))[0].path, "");
}

#[test]
fn a_value_fitting_no_variant_is_explained_by_the_closest_one() {
    let validator = Validator::new(&json!({
        "type": "object",
        "properties": {"delivery": {"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "pickup"}, "store": {"type": "string"}}, "required": ["kind", "store"]},
            {"type": "object", "properties": {"kind": {"const": "ship"}, "address": {"type": "string", "minLength": 5}}, "required": ["kind", "address"]}
        ]}}
    }));
    let issues = validator.issues(&json!({"delivery": {"kind": "ship", "address": "x"}}));
    assert_eq!(issues.len(), 1, "{issues:#?}");
    assert_eq!(issues[0].path, "delivery.address");
    let issues = validator.issues(&json!({"delivery": {"kind": "ship"}}));
    assert_eq!(issues[0].path, "delivery.address");
    assert_eq!(issues[0].message, "is required");
}

#[test]
fn validation_of_hostile_schemas() {
    // A catastrophic pattern is stopped by the backtracking limit, not run forever.
    let validator = Validator::new(&json!({"type": "string", "pattern": "^(a+)+$"}));
    let started = std::time::Instant::now();
    let _ = validator.issues(&json!(format!("{}!", "a".repeat(64))));
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // A self-referencing schema validates finite values.
    let validator =
        Validator::new(&json!({"type": "object", "properties": {"next": {"$ref": "#"}}}));
    assert!(validator.issues(&json!({"next": {"next": {}}})).is_empty());
    assert_eq!(validator.issues(&json!({"next": 3}))[0].path, "next");
    // 10,000 enum values: the message stays short.
    let values: Vec<Value> = (0..10_000).map(|i| json!(format!("value-{i}"))).collect();
    let validator = Validator::new(&json!({"enum": values}));
    let issues = validator.issues(&json!("nope"));
    assert!(
        issues[0].message.chars().count() <= 241,
        "{}",
        issues[0].message.len()
    );
    // A schema that is not valid JSON Schema is reported, not a panic.
    let validator = Validator::new(&json!({"type": 12}));
    assert!(validator.schema_problem().is_some());
    assert!(validator.issues(&json!("x")).is_empty());
}

#[test]
fn readable_paths() {
    assert_eq!(readable_path(""), "");
    assert_eq!(readable_path("/a/0/b"), "a[0].b");
    assert_eq!(readable_path("/0"), "[0]");
    assert_eq!(readable_path("/a~1b/c~0d"), "a/b.c~d");
}

#[test]
fn command_line_values_are_read_by_the_schema() {
    let form = compile(&json!({
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "n": {"type": "integer"},
            "x": {"type": "number"},
            "flag": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "opt": {"type": ["string", "null"]},
            "color": {"enum": ["red", "green"]},
            "filter": {"type": "object", "properties": {"min": {"type": "number"}, "names": {"type": "array", "items": {"type": "string"}}}},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
        }
    }));
    let value = apply_pairs(
        &form,
        json!({"text": "base", "n": 1}),
        &[
            "text=123".into(),
            "n=42".into(),
            "x=1.5".into(),
            "flag=yes".into(),
            "tags=[\"a\",\"b\"]".into(),
            "opt=null".into(),
            "color=green".into(),
            "filter.min=2".into(),
            "filter.names.0=ada".into(),
            "either=plain words".into(),
            "unknown={\"k\":1}".into(),
            "eq=a=b".into(),
        ],
    )
    .unwrap();
    assert_eq!(
        value,
        json!({
            "text": "123", "n": 42, "x": 1.5, "flag": true, "tags": ["a", "b"], "opt": null,
            "color": "green", "filter": {"min": 2, "names": ["ada"]}, "either": "plain words",
            "unknown": {"k": 1}, "eq": "a=b"
        })
    );
    for (pair, why) in [
        ("n=4.5", "whole number"),
        ("x=abc", "not a number"),
        ("flag=maybe", "true or false"),
        ("color=blue", "not one of red, green"),
        ("tags=a,b", "not JSON"),
        ("novalue", "KEY=VALUE"),
        ("a..b=1", "not a field name"),
        ("text.inner=1", "has no fields"),
        ("filter.names.3=x", "set index 0 first"),
    ] {
        let err = apply_pairs(&form, json!({}), &[pair.into()]).unwrap_err();
        assert!(err.contains(why), "{pair}: {err}");
    }
    assert!(apply_pairs(&form, json!([1]), &[]).is_err());
}
