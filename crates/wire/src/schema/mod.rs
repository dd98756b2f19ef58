//! The JSON Schema form engine: one reading of JSON Schema 2020-12 for tool inputs and
//! elicitation requests, shared by the app (which renders the [`Form`]) and the CLI (which
//! reads `--arg K=V` by it and validates with it).
//!
//! - [`compile`]: schema → [`Form`] (local `$ref`s with cycles, `allOf` merged, unions as
//!   choices discriminated by `const` properties, nullable types, bounds, formats, patterns;
//!   unknown keywords ignored; hostile schemas bounded);
//! - [`validate`]: the exact schema's verdict with the `jsonschema` crate, each problem
//!   naming its field ([`FieldIssue`]);
//! - [`args`]: command-line values read as the form's types.
//!
//! The form is a view for editing; only [`Validator`] decides whether a value is valid.

pub mod args;
pub mod compile;
pub mod node;
pub mod validate;

pub use compile::compile;
pub use node::{EnumOption, Form, FormNode, NodeKind, Property, Variant};
pub use validate::{FieldIssue, Validator, readable_path};

#[cfg(test)]
mod tests;
