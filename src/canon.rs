//! Canonical JSON and content hashing.
//!
//! Every hash the engine records (AIR hash, policy hash, case.json hash, evidence content
//! hashes) goes through this module, so "the same document" means one thing everywhere:
//! object keys sorted, no insignificant whitespace, `serde_json` number formatting.

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Returns `value` with every object's keys sorted, recursively.
pub fn canonicalize(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), canonicalize(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonicalize).collect()),
        other => other.clone(),
    }
}

/// Canonical JSON text of any serialisable value.
pub fn canonical_json<T: Serialize + ?Sized>(value: &T) -> String {
    // Serialising our own types into a Value cannot fail: they have string keys only.
    let value = serde_json::to_value(value).unwrap_or(Value::Null);
    serde_json::to_string(&canonicalize(&value)).unwrap_or_default()
}

/// Lowercase hex sha256 of `bytes`.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    let mut out = String::with_capacity(2 * digest.len());
    for byte in digest {
        out.push(char::from_digit(u32::from(byte >> 4), 16).unwrap_or('0'));
        out.push(char::from_digit(u32::from(byte & 0x0f), 16).unwrap_or('0'));
    }
    out
}

/// sha256 of the canonical JSON of `value`, as `sha256:<hex>`.
pub fn canonical_hash<T: Serialize + ?Sized>(value: &T) -> String {
    format!("sha256:{}", sha256_hex(canonical_json(value).as_bytes()))
}

/// sha256 of raw bytes, as `sha256:<hex>`.
#[must_use]
pub fn bytes_hash(bytes: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(bytes))
}

/// What [`bytes_hash`] gives for the bytes fed to `hasher`: for bytes read in pieces.
pub(crate) fn streamed_hash(hasher: Sha256) -> String {
    format!("sha256:{}", hex(&hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_change_the_canonical_form() {
        let a = json!({"b": 1, "a": {"y": [1, {"q": 1, "p": 2}], "x": null}});
        let b: Value =
            serde_json::from_str(r#"{ "a": {"x": null, "y": [1, {"p": 2, "q": 1}]}, "b": 1 }"#)
                .unwrap();
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":null,"y":[1,{"p":2,"q":1}]},"b":1}"#
        );
    }

    #[test]
    fn sha256_matches_a_known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
