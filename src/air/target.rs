//! Target keys: the semantic coordinate a case may act on.
//!
//! `op.<op>`, `op.<op>.<location>.<name>`, `op.<op>.error.<CODE>`, `cap.<id>`. Operation,
//! error and capability ids never contain a dot, so every key parses one way only.

use std::fmt;
use std::str::FromStr;

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use crate::skill::TargetKind;

/// Where a field lives in an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Location {
    #[serde(rename = "input.path")]
    InputPath,
    #[serde(rename = "input.query")]
    InputQuery,
    #[serde(rename = "input.header")]
    InputHeader,
    #[serde(rename = "input.cookie")]
    InputCookie,
    #[serde(rename = "input.body")]
    InputBody,
    #[serde(rename = "output.body")]
    OutputBody,
}

impl Location {
    pub const ALL: [Location; 6] = [
        Location::InputPath,
        Location::InputQuery,
        Location::InputHeader,
        Location::InputCookie,
        Location::InputBody,
        Location::OutputBody,
    ];

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Location::InputPath => "input.path",
            Location::InputQuery => "input.query",
            Location::InputHeader => "input.header",
            Location::InputCookie => "input.cookie",
            Location::InputBody => "input.body",
            Location::OutputBody => "output.body",
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A validated target key. Construct with [`TargetKey::from_str`] or the typed constructors.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
///
/// Its ids and names are [`CompactString`]s: held inline up to 24 bytes, so the keys of a
/// large plan (one per deficient target, ~100k for 5,000 operations) cost no allocation each.
pub enum TargetKey {
    Operation {
        op: CompactString,
    },
    Field {
        op: CompactString,
        location: Location,
        name: CompactString,
    },
    Error {
        op: CompactString,
        code: CompactString,
    },
    Capability {
        id: CompactString,
    },
}

/// Why a string is not a target key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed target key `{key}`: {reason}")]
pub struct TargetKeyError {
    pub key: String,
    pub reason: String,
}

/// True for ids that may appear as one segment of a key: non-empty, `[A-Za-z0-9_-]` only.
#[must_use]
pub fn is_segment_id(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// True for a field name: non-empty dotted segments, no whitespace or control characters.
#[must_use]
pub fn is_field_name(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|seg| !seg.is_empty())
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

impl TargetKey {
    #[must_use]
    pub fn kind(&self) -> TargetKind {
        match self {
            TargetKey::Operation { .. } => TargetKind::Operation,
            TargetKey::Field { .. } => TargetKind::Field,
            TargetKey::Error { .. } => TargetKind::Error,
            TargetKey::Capability { .. } => TargetKind::Capability,
        }
    }

    /// The operation this key belongs to, if any.
    #[must_use]
    pub fn operation(&self) -> Option<&str> {
        match self {
            TargetKey::Operation { op }
            | TargetKey::Field { op, .. }
            | TargetKey::Error { op, .. } => Some(op),
            TargetKey::Capability { .. } => None,
        }
    }
}

impl fmt::Display for TargetKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetKey::Operation { op } => write!(f, "op.{op}"),
            TargetKey::Field { op, location, name } => write!(f, "op.{op}.{location}.{name}"),
            TargetKey::Error { op, code } => write!(f, "op.{op}.error.{code}"),
            TargetKey::Capability { id } => write!(f, "cap.{id}"),
        }
    }
}

impl FromStr for TargetKey {
    type Err = TargetKeyError;

    fn from_str(key: &str) -> Result<Self, Self::Err> {
        let fail = |reason: &str| TargetKeyError {
            key: key.to_string(),
            reason: reason.to_string(),
        };
        if let Some(id) = key.strip_prefix("cap.") {
            if !is_segment_id(id) {
                return Err(fail("capability id must be non-empty [A-Za-z0-9_-]"));
            }
            return Ok(TargetKey::Capability { id: id.into() });
        }
        let Some(rest) = key.strip_prefix("op.") else {
            return Err(fail(
                "unknown kind: a target key starts with `op.` or `cap.`",
            ));
        };
        let (op, tail) = match rest.split_once('.') {
            Some((op, tail)) => (op, Some(tail)),
            None => (rest, None),
        };
        if !is_segment_id(op) {
            return Err(fail("operation id must be non-empty [A-Za-z0-9_-]"));
        }
        let op = CompactString::from(op);
        let Some(tail) = tail else {
            return Ok(TargetKey::Operation { op });
        };
        if let Some(code) = tail.strip_prefix("error.") {
            if !is_segment_id(code) {
                return Err(fail("error code must be non-empty [A-Za-z0-9_-]"));
            }
            return Ok(TargetKey::Error {
                op,
                code: code.into(),
            });
        }
        for location in Location::ALL {
            if let Some(name) = tail
                .strip_prefix(location.as_str())
                .and_then(|n| n.strip_prefix('.'))
            {
                if !is_field_name(name) {
                    return Err(fail("field name is missing or malformed"));
                }
                return Ok(TargetKey::Field {
                    op,
                    location,
                    name: name.into(),
                });
            }
        }
        Err(fail(
            "after the operation comes `error.<CODE>` or a location (input.path, input.query, input.header, input.cookie, input.body, output.body) and a field name",
        ))
    }
}

impl Serialize for TargetKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TargetKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips() {
        for key in [
            "op.get_user",
            "op.get_user.input.body.email",
            "op.get_user.output.body.address.city",
            "op.create_payment.error.CARD_DECLINED",
            "cap.refunds",
        ] {
            let parsed: TargetKey = key.parse().unwrap();
            assert_eq!(parsed.to_string(), key);
        }
    }

    #[test]
    fn malformed_keys_are_rejected() {
        for key in [
            "",
            "field.x",
            "op.",
            "op.a.input.body",
            "op.a.input.body.",
            "op.a.error.",
            "op.a.nowhere.x",
            "cap.",
            "op.a b",
            "op.a.input.body.x..y",
        ] {
            assert!(
                key.parse::<TargetKey>().is_err(),
                "{key} should be rejected"
            );
        }
    }
}
