//! Strict deserialisation that names the path of the offending value.
//!
//! serde's own errors say *what* is wrong; this adds *where*, so a rejection of an agent's
//! document or an AIR names the field (`operations[0].fields[2].colour`). Every struct must
//! be a JSON object, never serde's positional array form (see [`objects`]).

mod objects;

use std::cell::RefCell;

use objects::Objects;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A deserialisation failure with the JSON path of the offending key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at `{}`: {}", self.path, self.message)
    }
}

/// Deserialises `value` into `T`, reporting the path of the first error. For an unknown
/// field the path ends with the unknown key itself.
///
/// # Errors
///
/// The first place `value` does not fit `T`, with its JSON path.
pub fn deserialize<T: DeserializeOwned>(value: Value) -> Result<T, PathError> {
    // The tracked deserialiser costs about twice the plain one; a valid document (nearly
    // every one) takes the plain path, and only a refusal is replayed to find its path.
    if let Ok(typed) = T::deserialize(Objects(&value)) {
        return Ok(typed);
    }
    serde_path_to_error::deserialize::<_, T>(Objects(value)).map_err(|err| {
        let mut path = err.path().to_string();
        let message = err.inner().to_string();
        // serde_path_to_error already ends the path with the unknown key in some positions
        // and not in others; append it only where it is missing.
        if let Some(key) = unknown_field_name(&message)
            && path != key
            && !path.ends_with(&format!(".{key}"))
        {
            path = if path == "." || path.is_empty() {
                key.to_string()
            } else {
                format!("{path}.{key}")
            };
        }
        if path.is_empty() {
            path = ".".into();
        }
        PathError { path, message }
    })
}

/// Deserialises JSON text into `T` with path-carrying errors.
///
/// # Errors
///
/// Text that is not JSON, or the first place it does not fit `T`, with its path.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, PathError> {
    // A document with no repeated key that fits `T` is read straight into `T`, without the
    // intermediate `Value` (building it was about two thirds of reading case.json on every
    // rail). Anything else takes the path below, which finds and names what is wrong, so a
    // refusal is exactly what it always was.
    if !repeats_a_key(text)
        && let Ok(typed) = typed_from_str::<T>(text)
    {
        return Ok(typed);
    }
    deserialize(parse(text)?)
}

/// `serde_json::from_str`, with every struct required to be an object ([`Objects`]).
fn typed_from_str<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let typed = T::deserialize(Objects(&mut de))?;
    de.end()?;
    Ok(typed)
}

/// Whether `text` is not JSON or repeats a key in one of its objects: a walk that builds
/// nothing but the set of keys of the object it is in. `false` means [`parse`] accepts the text.
fn repeats_a_key(text: &str) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    serde::de::DeserializeSeed::deserialize(Distinct, &mut de)
        .and_then(|()| de.end())
        .is_err()
}

/// A JSON value whose objects each name a key once; it keeps nothing.
struct Distinct;

impl<'de> serde::de::DeserializeSeed<'de> for Distinct {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Distinct {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Distinct)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key_seed(KeyText)? {
            if !seen.insert(key) {
                return Err(serde::de::Error::custom(DUPLICATE));
            }
            map.next_value_seed(Distinct)?;
        }
        Ok(())
    }
}

/// An object key's text, borrowed from the document unless it holds an escape.
struct KeyText;

impl<'de> serde::de::DeserializeSeed<'de> for KeyText {
    type Value = std::borrow::Cow<'de, str>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeyText {
    type Value = std::borrow::Cow<'de, str>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object key")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(std::borrow::Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(std::borrow::Cow::Owned(v.to_string()))
    }
}

/// Reads a versioned document from `file`: a regular file of at most the cap in force for
/// `limit`, then [`parse_versioned`]. The error is a message to prefix with the file.
///
/// # Errors
///
/// A file that is not regular, over the cap, unreadable, or any error of
/// [`parse_versioned`].
pub fn read_versioned<T: DeserializeOwned>(
    file: &std::path::Path,
    format: &str,
    version: u32,
    limit: crate::limits::Limit,
) -> Result<T, String> {
    let bytes = crate::limits::read_capped(file, limit).map_err(|e| format!("cannot read: {e}"))?;
    parse_versioned(&bytes, format, version)
}

/// Parses a versioned document: JSON with no repeated key, `format` equal to `format` and
/// `formatVersion` to `version`, then the strict type (unknown keys named by path).
///
/// # Errors
///
/// Text that is not JSON, a repeated key, a missing or different `format`, a missing, newer
/// or older `formatVersion`, or the first place the document does not fit `T`.
pub fn parse_versioned<T: DeserializeOwned>(
    bytes: &[u8],
    format: &str,
    version: u32,
) -> Result<T, String> {
    let value = parse_slice(bytes).map_err(|e| {
        if e.path == "." {
            e.message
        } else {
            e.to_string()
        }
    })?;
    match value.get("format").and_then(Value::as_str) {
        Some(f) if f == format => {}
        Some(f) => return Err(format!("format is `{f}`, expected `{format}`")),
        None => return Err(format!("missing `format: \"{format}\"`")),
    }
    match value.get("formatVersion").and_then(Value::as_u64) {
        Some(v) if v == u64::from(version) => {}
        Some(v) => {
            return Err(format!(
                "{format} version {v} is not supported; this build reads version {version}"
            ));
        }
        None => return Err("missing integer `formatVersion`".into()),
    }
    deserialize(value).map_err(|e| format!("at `{}`: {}", e.path, e.message))
}

/// Parses JSON text into a [`Value`], refusing a key that appears twice in one object
/// (`serde_json` keeps the last silently: two readers of one document could then disagree
/// on what it says). The error names the duplicated key's path.
///
/// # Errors
///
/// Text that is not JSON, or a key repeated in one object (its path named).
pub fn parse(text: &str) -> Result<Value, PathError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let stack = RefCell::new(Vec::new());
    let value = serde::de::DeserializeSeed::deserialize(Strict { stack: &stack }, &mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| {
            let message = e.to_string();
            match message.strip_prefix(DUPLICATE) {
                Some(rest) => {
                    let path = rest.split(" at line ").next().unwrap_or(rest).to_string();
                    PathError {
                        message: format!("duplicate key `{path}` (each key may appear once)"),
                        path,
                    }
                }
                None => PathError {
                    path: ".".into(),
                    message: format!("not valid JSON: {message}"),
                },
            }
        })?;
    Ok(value)
}

/// Parses JSON bytes like [`parse`] (they must be UTF-8).
///
/// # Errors
///
/// Bytes that are not UTF-8, or any error of [`parse`].
pub fn parse_slice(bytes: &[u8]) -> Result<Value, PathError> {
    let text = std::str::from_utf8(bytes).map_err(|e| PathError {
        path: ".".into(),
        message: format!("not valid JSON: not UTF-8 ({e})"),
    })?;
    parse(text)
}

const DUPLICATE: &str = "duplicate key: ";

/// One step of the path to the value being built.
enum Step {
    Key(String),
    Index(usize),
}

/// Renders a path (`a.b[1].c`) from its steps.
fn render(steps: &[Step]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Key(k) if out.is_empty() => out.push_str(k),
            Step::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Builds a [`Value`] refusing duplicate keys. The path is kept as a stack of steps shared
/// by the nested seeds and rendered only for a refusal: formatting it for every value was
/// most of the cost of reading a run's documents.
struct Strict<'a> {
    stack: &'a RefCell<Vec<Step>>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        serde::de::DeserializeSeed::deserialize(self, d)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        loop {
            self.stack.borrow_mut().push(Step::Index(out.len()));
            let next = seq.next_element_seed(Strict { stack: self.stack });
            self.stack.borrow_mut().pop();
            match next? {
                Some(v) => out.push(v),
                None => break,
            }
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let duplicate = out.contains_key(&key);
            self.stack.borrow_mut().push(Step::Key(key));
            if duplicate {
                let path = render(&self.stack.borrow());
                return Err(serde::de::Error::custom(format!("{DUPLICATE}{path}")));
            }
            let value = map.next_value_seed(Strict { stack: self.stack });
            let popped = self.stack.borrow_mut().pop();
            let (Some(Step::Key(key)), value) = (popped, value?) else {
                return Err(serde::de::Error::custom("the path stack lost its step"));
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

fn unknown_field_name(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    rest.split_once('`').map(|(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duplicate_key_is_refused_with_its_path() {
        let e = parse(r#"{"a": {"b": [1, {"c": 1, "c": 2}]}}"#).unwrap_err();
        assert_eq!(e.path, "a.b[1].c");
        assert!(e.message.contains("duplicate key"), "{e}");
        let e = parse(r#"{"x": 1, "x": 1}"#).unwrap_err();
        assert_eq!(e.path, "x");
    }

    #[test]
    fn repeats_a_key_agrees_with_parse() {
        let many: String = (0..40).map(|i| format!(r#""k{i}": {i},"#)).collect();
        for text in [
            r#"{"a": 1, "b": {"a": 2}, "c": [{"a": 1}, {"a": 2}]}"#,
            r#"{"a": 1, "a": 1}"#,
            r#"{"a": {"b": [1, {"c": 1, "c": 2}]}}"#,
            r#"{"\u0061": 1, "a": 2}"#,
            r#"{"\u0061": 1, "b": 2}"#,
            "[1, 2",
            "{} trailing",
            "",
            &format!("{{{many} \"k39\": 0}}"),
            &format!("{{{many} \"z\": 0}}"),
        ] {
            assert_eq!(repeats_a_key(text), parse(text).is_err(), "{text}");
        }
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Doc {
        a: u32,
        #[serde(default)]
        b: Option<Value>,
    }

    #[test]
    fn from_str_reads_and_refuses_as_the_value_path_does() {
        let slow = |t: &str| parse(t).and_then(deserialize::<Doc>);
        for text in [
            r#"{"a": 1}"#,
            r#"{"a": 1, "b": {"x": [1, "y"]}}"#,
            r#"{"a": 1, "b": {"x": 1, "x": 2}}"#,
            r#"{"a": 1, "a": 2}"#,
            r#"{"a": -1}"#,
            r#"{"a": 1.0}"#,
            r#"{"a": 1, "c": 2}"#,
            r#"{"b": null}"#,
            "{",
        ] {
            assert_eq!(from_str::<Doc>(text), slow(text), "{text}");
        }
        assert_eq!(
            from_str::<Doc>(r#"{"a": 7, "b": {"x": 1, "x": 2}}"#)
                .unwrap_err()
                .path,
            "b.x"
        );
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        inner: Doc,
        list: Vec<u32>,
        pair: (u32, String),
        #[serde(default)]
        kind: Option<Kind>,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Kind {
        Plain,
        Shaped { a: u32 },
    }

    /// serde's JSON readers take a struct as a positional array of its fields too; a
    /// strict document never does (the schemas say `type: object`), at any depth and on
    /// both paths, while real arrays and tuples are read as before.
    #[test]
    fn a_struct_as_a_positional_array_is_refused_at_its_path() {
        let ok = r#"{"inner": {"a": 1}, "list": [1, 2], "pair": [3, "x"], "kind": {"shaped": {"a": 2}}}"#;
        let read = from_str::<Outer>(ok).unwrap();
        assert_eq!(read.list, vec![1, 2]);
        assert_eq!(read.pair, (3, "x".to_string()));
        assert_eq!(read.kind, Some(Kind::Shaped { a: 2 }));
        assert_eq!(
            from_str::<Outer>(
                r#"{"inner": {"a": 1}, "list": [], "pair": [1, ""], "kind": "plain"}"#
            )
            .unwrap()
            .kind,
            Some(Kind::Plain)
        );
        // A struct variant: serde_json's `Value` refuses the array itself ("expected struct
        // variant"); its text reader does not, and the adapter does.
        for (text, path, expected) in [
            (r#"[[1, null], [1], [1, "x"]]"#, ".", "expected an object"),
            (
                r#"{"inner": [1, null], "list": [], "pair": [1, ""]}"#,
                "inner",
                "expected an object",
            ),
            (
                r#"{"inner": {"a": 1}, "list": [], "pair": [1, ""], "kind": {"shaped": [2]}}"#,
                "kind.shaped",
                "expected",
            ),
        ] {
            for e in [
                from_str::<Outer>(text).unwrap_err(),
                deserialize::<Outer>(serde_json::from_str(text).unwrap()).unwrap_err(),
            ] {
                assert_eq!(e.path, path, "{text}: {e}");
                assert!(e.message.contains(expected), "{text}: {e}");
            }
            // Through the text reader, the adapter's own refusal names what is expected.
            let mut de = serde_json::Deserializer::from_str(text);
            let adapted: Result<Outer, _> = serde::Deserialize::deserialize(Objects(&mut de));
            assert!(
                adapted
                    .unwrap_err()
                    .to_string()
                    .contains("expected an object"),
                "{text}"
            );
        }
    }

    #[test]
    fn parse_agrees_with_serde_json_on_documents_without_duplicates() {
        let text = r#"{"a": [1, -2, 3.5, "s", null, true, {"b": {}}], "z": 18446744073709551615}"#;
        assert_eq!(
            parse(text).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        assert!(parse("{} trailing").is_err());
        assert!(
            parse("{")
                .unwrap_err()
                .message
                .starts_with("not valid JSON")
        );
    }
}
