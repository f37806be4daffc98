//! The `x-anvil-*` extensions: how a description states what OpenAPI has no keyword for,
//! so that import invents nothing and export writes refinements back.
//!
//! | extension | on | value |
//! |---|---|---|
//! | `x-anvil-unit` | a Schema (property) or Parameter | a unit from the vocabulary (`ms`, `s`, `MiB`, `minor_unit`, …) |
//! | `x-anvil-sensitivity` | a Schema (property) or Parameter | `none`, `pii`, `secret` or `financial` |
//! | `x-anvil-retryable` | a Response | `true` or `false` |
//! | `x-anvil-provenance` | the root | records written by `air export`, one per applied case |
//!
//! Invariant: a value that is present but outside its vocabulary is an error naming its
//! pointer, never silently dropped.

use serde_json::Value;

use super::error::OpenApiError;
use super::pointer;
use super::tree::Node;
use crate::skill::vocab;

pub const UNIT: &str = "x-anvil-unit";
pub const SENSITIVITY: &str = "x-anvil-sensitivity";
pub const RETRYABLE: &str = "x-anvil-retryable";
pub const PROVENANCE: &str = "x-anvil-provenance";

/// A refinable AIR attribute and the document key that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Attr {
    Description,
    Unit,
    Sensitivity,
    Retryable,
}

impl Attr {
    /// The AIR attribute name (as in a proposal's `set`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Attr::Description => "description",
            Attr::Unit => "unit",
            Attr::Sensitivity => "sensitivity",
            Attr::Retryable => "retryable",
        }
    }

    /// The key in the OpenAPI document.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Attr::Description => "description",
            Attr::Unit => UNIT,
            Attr::Sensitivity => SENSITIVITY,
            Attr::Retryable => RETRYABLE,
        }
    }
}

/// Reads `attr` from `node` (found in the layer at `at`), checking its vocabulary.
pub(crate) fn read(
    file: &str,
    attr: Attr,
    node: &Node,
    at: &str,
) -> Result<Option<Value>, OpenApiError> {
    let invalid = |message: String| OpenApiError::Invalid {
        file: file.to_string(),
        pointer: pointer::push(at, attr.key()),
        message,
    };
    if node.is_null() {
        return Ok(None);
    }
    match attr {
        Attr::Description => node
            .as_str()
            .map(|s| Some(Value::String(s.to_string())))
            .ok_or_else(|| {
                invalid(format!(
                    "a description must be a string, found {}",
                    node.kind_name()
                ))
            }),
        Attr::Unit | Attr::Sensitivity => {
            let allowed: &[&str] = if attr == Attr::Unit {
                vocab::UNITS
            } else {
                vocab::SENSITIVITY
            };
            match node.as_str() {
                Some(s) if allowed.contains(&s) => Ok(Some(Value::String(s.to_string()))),
                Some(s) => Err(invalid(format!(
                    "`{s}` is not one of: {}",
                    allowed.join(", ")
                ))),
                None => Err(invalid(format!(
                    "{} must be a string, found {}",
                    attr.key(),
                    node.kind_name()
                ))),
            }
        }
        Attr::Retryable => node.as_bool().map(|b| Some(Value::Bool(b))).ok_or_else(|| {
            invalid(format!(
                "{RETRYABLE} must be true or false, found {}",
                node.kind_name()
            ))
        }),
    }
}
