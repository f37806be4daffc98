//! Canonical JSON and content hashing.
//!
//! Every hash the engine records (AIR hash, policy hash, case.json hash, evidence content
//! hashes) goes through this module, so "the same document" means one thing everywhere:
//! object keys sorted, no insignificant whitespace, `serde_json` number formatting.

mod finite;

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A [`Value`] serialised with every object's keys in sorted order, without building a
/// second, sorted tree (rebuilding every object map was most of the cost of a policy hash,
/// which every rail takes).
struct Sorted<'a>(&'a Value);

impl Serialize for Sorted<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self.0 {
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                // A map's keys are distinct, so an unstable sort gives the one order.
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                let mut out = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    out.serialize_entry(k, &Sorted(v))?;
                }
                out.end()
            }
            Value::Array(items) => s.collect_seq(items.iter().map(Sorted)),
            other => other.serialize(s),
        }
    }
}

/// `value` as a [`Value`], for [`Sorted`].
fn to_value<T: Serialize + ?Sized>(value: &T) -> Value {
    // Serialising our own types into a Value cannot fail: they have string keys only.
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Canonical JSON text of any serialisable value.
pub fn canonical_json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(&Sorted(&to_value(value))).unwrap_or_default()
}

/// Feeds what is written to a sha256 state: hashing without keeping the text.
struct HashWriter<'a>(&'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
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
    use std::io::Write;
    let mut hasher = Sha256::new();
    let mut buffered = std::io::BufWriter::with_capacity(8192, HashWriter(&mut hasher));
    // Writing into a hasher cannot fail.
    let _ = serde_json::to_writer(&mut buffered, &Sorted(&to_value(value)));
    let _ = buffered.flush();
    drop(buffered);
    streamed_hash(hasher)
}

/// sha256 of `value` as JSON, or `None` when it holds a NaN or an infinity (JSON writes
/// each as `null`, so two values differing only there would share a digest) or cannot be
/// serialised: a memo key for a value whose serialisation is otherwise injective (two
/// values with one serialisation are equal for every use of them).
pub fn json_digest<T: Serialize + ?Sized>(value: &T) -> Option<[u8; 32]> {
    use std::io::Write;
    if !finite::holds_only_finite_floats(value) {
        return None;
    }
    let mut hasher = Sha256::new();
    let mut buffered = std::io::BufWriter::with_capacity(8192, HashWriter(&mut hasher));
    serde_json::to_writer(&mut buffered, value).ok()?;
    buffered.flush().ok()?;
    drop(buffered);
    Some(hasher.finalize().into())
}

/// sha256 of raw bytes, as `sha256:<hex>`.
#[must_use]
pub fn bytes_hash(bytes: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(bytes))
}

/// What [`bytes_hash`] gives for bytes whose sha256 is `digest`.
#[must_use]
pub fn digest_hash(digest: &[u8; 32]) -> String {
    format!("sha256:{}", hex(digest))
}

/// What [`bytes_hash`] gives for the bytes fed to `hasher`: for bytes read in pieces.
pub(crate) fn streamed_hash(hasher: Sha256) -> String {
    format!("sha256:{}", hex(&hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The reference: `value` with every object's keys sorted, recursively, as a new tree.
    fn canonicalize(value: &Value) -> Value {
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
    fn canonical_text_and_hash_are_those_of_the_canonicalized_value() {
        let v = json!({"z": [{"b": "\u{e9}\n", "a": 1.5}, -3, null], "a": {"d": true, "c": {}},
            "\u{1}": "x", "B": 18446744073709551615u64});
        let expected = serde_json::to_string(&canonicalize(&v)).unwrap();
        assert_eq!(canonical_json(&v), expected);
        assert_eq!(
            canonical_hash(&v),
            format!("sha256:{}", sha256_hex(expected.as_bytes()))
        );
        // Longer than the hashing writer's buffer.
        let big = json!({"k": "x".repeat(20_000), "a": [1, 2, 3]});
        let expected = serde_json::to_string(&canonicalize(&big)).unwrap();
        assert_eq!(
            canonical_hash(&big),
            format!("sha256:{}", sha256_hex(expected.as_bytes()))
        );
    }

    /// JSON writes NaN and both infinities as `null`: a value holding one has no digest,
    /// and equal values have one.
    #[test]
    fn a_value_with_a_non_finite_float_has_no_json_digest() {
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(serde_json::to_string(&v).unwrap(), "null", "why");
            assert_eq!(json_digest(&Some(v)), None);
            assert_eq!(json_digest(&("k", vec![(1, v)])), None);
        }
        assert!(json_digest(&None::<f64>).is_some());
        assert_eq!(
            json_digest(&json!({"a": [1.5]})),
            json_digest(&json!({"a": [1.5]}))
        );
        assert_ne!(
            json_digest(&json!({"a": "1"})),
            json_digest(&json!({"a": 1}))
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
