//! The AIR v1 document: types, loading (JSON or YAML) and structural validation.
//!
//! Invariant: an [`Air`] value that exists has passed [`Air::validate`]; unknown keys were
//! rejected with the path of the offending key.
//!
//! The optional members an import from OpenAPI adds (`source`, `pointer`, `format`, `enum`,
//! `nullable`, `composition`) are skipped when absent, so the canonical hash of a document
//! without them is the hash it always had.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::target::{Location, TargetKey, is_field_name, is_segment_id};
use crate::limits::{self, Limit, LimitError};
use crate::skill::vocab;

pub const AIR_VERSION: u32 = 1;

/// What a run recorded of its AIR file at open: the file's path, the sha256 of the bytes
/// read (`sha256:` hex) and the canonical hash of the AIR they held.
#[derive(Debug, Clone, Copy)]
pub struct KnownAir<'a> {
    pub path: &'a Path,
    pub bytes_hash: &'a str,
    pub air_hash: &'a str,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Air {
    pub air_version: u32,
    pub service: Service,
    pub operations: Vec<Operation>,
    #[serde(default)]
    pub capabilities: Vec<Capability>,
    /// Where applied values came from: one entry per application by `case close --apply`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provenance: Vec<Provenance>,
    /// The document this AIR was imported from (`air import`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<AirSource>,
}

/// The API description an AIR was imported from: its kind, version and content hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AirSource {
    /// `openapi` or `swagger`.
    pub format: String,
    /// The document's own version string (`3.1.0`, `2.0`).
    pub version: String,
    /// `sha256:` of the document's bytes.
    pub sha256: String,
}

/// How a schema combines alternatives; the alternatives' fields are named under
/// `oneOf[i]` / `anyOf[i]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Composition {
    #[serde(rename = "oneOf")]
    OneOf,
    #[serde(rename = "anyOf")]
    AnyOf,
}

impl Composition {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Composition::OneOf => "oneOf",
            Composition::AnyOf => "anyOf",
        }
    }
}

/// A record of one applied patch: which case and run, which artifacts ground it, which
/// approval tier let it through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Provenance {
    pub target: String,
    pub set: serde_json::Map<String, Value>,
    pub case_key: String,
    pub run_id: String,
    pub artifact_ids: Vec<String>,
    pub tier: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
    pub applied_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Service {
    pub id: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Operation {
    pub id: String,
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub fields: Vec<Field>,
    #[serde(default)]
    pub errors: Vec<ErrorDef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inferred: Vec<String>,
    /// The JSON Pointer (RFC 6901) of the source node, when imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Field {
    pub location: Location,
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    #[serde(default)]
    pub required: bool,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub unit: Option<String>,
    #[serde(default)]
    pub sensitivity: Option<String>,
    /// Values that a heuristic set and nothing has proven yet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inferred: Vec<String>,
    /// The schema's `format` (for an array, its items'), when stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The schema's `enum` (or `const`; for an array, its items'), when stated.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<Value>>,
    /// The schema admits `null` (`nullable: true`, or `null` among its types).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nullable: bool,
    /// The schema is a `oneOf` or `anyOf`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composition: Option<Composition>,
    /// The JSON Pointer of the source node, when imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ErrorDef {
    pub code: String,
    pub status: u16,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub retryable: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inferred: Vec<String>,
    /// The JSON Pointer of the source node, when imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Capability {
    pub id: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub operation_ids: Vec<String>,
    /// The JSON Pointer of the source node, when imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
}

/// Why an AIR document was refused. `path` is the JSON path of the offending value.
#[derive(Debug, thiserror::Error)]
pub enum AirError {
    #[error("cannot read AIR `{file}`: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("AIR `{file}` is not valid {format}: {message}")]
    Syntax {
        file: String,
        format: &'static str,
        message: String,
    },
    #[error("AIR `{file}` at `{path}`: {message}")]
    Invalid {
        file: String,
        path: String,
        message: String,
    },
    #[error("AIR `{file}`: {source}")]
    Limit {
        file: String,
        #[source]
        source: LimitError,
    },
}

const METHODS: [&str; 8] = [
    "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE",
];
const FIELD_INFERABLE: [&str; 3] = ["description", "unit", "sensitivity"];
const ERROR_INFERABLE: [&str; 1] = ["retryable"];
const OPERATION_INFERABLE: [&str; 1] = ["description"];

impl Air {
    /// Loads an AIR document from a `.json`, `.yaml` or `.yml` file: a regular file (never
    /// a symlink, FIFO or device) of at most [`Limit::DocBytes`].
    ///
    /// # Errors
    ///
    /// `AirError::Read` when `path` is not a regular file, cannot be read or is larger than
    /// `Limit::DocBytes` (or that limit cannot be resolved); `AirError::Syntax` when the
    /// bytes are not UTF-8 or not valid JSON/YAML; otherwise whatever [`Air::from_value`]
    /// refuses.
    pub fn load(path: &Path) -> Result<Air, AirError> {
        let (bytes, is_yaml) = Air::read(path)?;
        Air::from_bytes(bytes, is_yaml, &path.display().to_string())
    }

    /// The canonical hash of the AIR at `path`, as [`Air::load`] then [`Air::hash`] give
    /// it. The hash is a pure function of the file's bytes and format, so inside one
    /// process it is remembered under their sha256: every rail re-checks the AIR hash.
    ///
    /// # Errors
    ///
    /// What [`Air::load`] refuses.
    pub fn hash_file(path: &Path) -> Result<String, AirError> {
        let (bytes, is_yaml) = Air::read(path)?;
        Air::hash_bytes(bytes, is_yaml, path)
    }

    /// [`Air::load`], with the sha256 of the bytes it parsed (`sha256:` hex, as
    /// [`crate::canon::bytes_hash`]): what open records, so that a later check of the same
    /// bytes needs no parse ([`Air::hash_file_known`]).
    ///
    /// # Errors
    ///
    /// What [`Air::load`] refuses.
    pub fn load_hashed(path: &Path) -> Result<(Air, String), AirError> {
        let (bytes, is_yaml) = Air::read(path)?;
        let bytes_hash = crate::canon::bytes_hash(&bytes);
        let air = Air::from_bytes(bytes, is_yaml, &path.display().to_string())?;
        Ok((air, bytes_hash))
    }

    /// [`Air::hash_file`], answered from `known` without parsing when the file holds the
    /// bytes open read, in the same format: those bytes gave `known.air_hash`. Any other
    /// bytes (an edit, or reformatting that may keep the AIR) are parsed and hashed. A
    /// rail checks the AIR on every call, and parsing a 5,000-operation AIR is most of a
    /// second's worth of rails.
    ///
    /// # Errors
    ///
    /// What [`Air::load`] refuses.
    pub fn hash_file_known(path: &Path, known: &KnownAir<'_>) -> Result<String, AirError> {
        let (bytes, is_yaml) = Air::read(path)?;
        if is_yaml == Air::is_yaml_path(known.path)
            && crate::canon::bytes_hash(&bytes) == known.bytes_hash
        {
            return Ok(known.air_hash.to_string());
        }
        Air::hash_bytes(bytes, is_yaml, path)
    }

    /// The AIR hash of `bytes` read from `path`, remembered in the process under their
    /// sha256 and format.
    fn hash_bytes(bytes: Vec<u8>, is_yaml: bool, path: &Path) -> Result<String, AirError> {
        use sha2::{Digest, Sha256};
        static HASHES: crate::memo::Memo<[u8; 32], String> = crate::memo::Memo::new(1024);
        let mut digest = Sha256::new();
        digest.update([u8::from(is_yaml)]);
        digest.update(&bytes);
        HASHES.try_get_or(digest.finalize().into(), || {
            Ok(Air::from_bytes(bytes, is_yaml, &path.display().to_string())?.hash())
        })
    }

    /// The file's bytes (capped), and whether it is YAML by its extension.
    fn read(path: &Path) -> Result<(Vec<u8>, bool), AirError> {
        let bytes = limits::read_capped(path, Limit::DocBytes).map_err(|e| AirError::Read {
            file: path.display().to_string(),
            source: e.into(),
        })?;
        Ok((bytes, Air::is_yaml_path(path)))
    }

    /// Whether `path` names a YAML document (by its extension).
    fn is_yaml_path(path: &Path) -> bool {
        matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        )
    }

    fn from_bytes(bytes: Vec<u8>, is_yaml: bool, file: &str) -> Result<Air, AirError> {
        let text = String::from_utf8(bytes).map_err(|e| AirError::Syntax {
            file: file.to_string(),
            format: if is_yaml { "YAML" } else { "JSON" },
            message: format!("not UTF-8 ({})", e.utf8_error()),
        })?;
        Air::parse(&text, is_yaml, file)
    }

    /// Parses AIR text. `file` names the document in errors.
    ///
    /// # Errors
    ///
    /// `AirError::Syntax` when `text` is not valid YAML (`yaml`) or JSON; otherwise
    /// whatever [`Air::from_value`] refuses.
    pub fn parse(text: &str, yaml: bool, file: &str) -> Result<Air, AirError> {
        let value: Value = if yaml {
            serde_yaml_ng::from_str(text).map_err(|e| AirError::Syntax {
                file: file.to_string(),
                format: "YAML",
                message: e.to_string(),
            })?
        } else {
            crate::json_path::parse(text).map_err(|e| AirError::Syntax {
                file: file.to_string(),
                format: "JSON",
                message: if e.path == "." {
                    e.message
                } else {
                    e.to_string()
                },
            })?
        };
        Air::from_value(value, file)
    }

    /// Converts an already-parsed JSON value, rejecting unknown keys with their path. Text
    /// over [`Limit::AirTextBytes`] is refused first, so no error message or case document
    /// ever carries it.
    ///
    /// # Errors
    ///
    /// `AirError::Limit` when `Limit::AirTextBytes` cannot be resolved; `AirError::Invalid`
    /// when a string is longer than that limit, `airVersion` is not this build's version, a
    /// key is unknown or a value has the wrong shape (named by its path), or
    /// [`Air::validate`] refuses the document.
    pub fn from_value(value: Value, file: &str) -> Result<Air, AirError> {
        check_text(&value, file)?;
        if let Some(v) = value.get("airVersion").and_then(Value::as_u64)
            && v != u64::from(AIR_VERSION)
        {
            return Err(AirError::Invalid {
                file: file.to_string(),
                path: "airVersion".into(),
                message: format!(
                    "unsupported AIR version {v}; this build reads version {AIR_VERSION}"
                ),
            });
        }
        let air: Air = crate::json_path::deserialize(value).map_err(|e| AirError::Invalid {
            file: file.to_string(),
            path: e.path,
            message: e.message,
        })?;
        air.validate(file)?;
        Ok(air)
    }

    /// Structural rules serde cannot express: unique ids, key-safe ids, vocabularies, and
    /// no text over [`Limit::AirTextBytes`].
    ///
    /// # Errors
    ///
    /// `AirError::Limit` when `Limit::AirTextBytes` cannot be resolved;
    /// `AirError::Invalid`, naming the path, for text over that limit, a wrong
    /// `airVersion`, an empty, malformed or duplicate operation id, field name, error code
    /// or capability id, an unknown HTTP method, unit or sensitivity, a status outside
    /// 100..=599, an `inferred` entry that is not inferable or whose value is absent, or a
    /// capability naming an unknown operation.
    pub fn validate(&self, file: &str) -> Result<(), AirError> {
        let bad = |path: String, message: String| AirError::Invalid {
            file: file.to_string(),
            path,
            message,
        };
        check_text(&serde_json::to_value(self).unwrap_or(Value::Null), file)?;
        if self.air_version != AIR_VERSION {
            return Err(bad(
                "airVersion".into(),
                format!("unsupported AIR version {}", self.air_version),
            ));
        }
        let mut ops = BTreeSet::new();
        for (i, op) in self.operations.iter().enumerate() {
            check_operation(op, &format!("operations[{i}]"), &mut ops, &bad)?;
        }
        check_capabilities(&self.capabilities, &ops, &bad)
    }

    /// The AIR hash: sha256 over the canonical JSON of the document.
    #[must_use]
    pub fn hash(&self) -> String {
        crate::canon::canonical_hash(self)
    }

    #[must_use]
    pub fn operation(&self, id: &str) -> Option<&Operation> {
        self.operations.iter().find(|o| o.id == id)
    }

    /// True when the AIR holds the thing `key` names.
    #[must_use]
    pub fn contains(&self, key: &TargetKey) -> bool {
        match key {
            TargetKey::Capability { id } => self.capabilities.iter().any(|c| c.id == id),
            TargetKey::Operation { op } => self.operation(op).is_some(),
            TargetKey::Field { op, location, name } => self
                .operation(op)
                .is_some_and(|o| o.field(*location, name).is_some()),
            TargetKey::Error { op, code } => self
                .operation(op)
                .is_some_and(|o| o.errors.iter().any(|e| e.code == code)),
        }
    }
}

impl Operation {
    #[must_use]
    pub fn field(&self, location: Location, name: &str) -> Option<&Field> {
        self.fields
            .iter()
            .find(|f| f.location == location && f.name == name)
    }
}

/// Checks the operation at `at` (its id, recorded in `ops`; its method; its `inferred`
/// list), then each of its fields and then each of its errors, stopping at the first fault.
fn check_operation<'a>(
    op: &'a Operation,
    at: &str,
    ops: &mut BTreeSet<&'a str>,
    bad: &impl Fn(String, String) -> AirError,
) -> Result<(), AirError> {
    unique_id("operation id", &op.id, &format!("{at}.id"), ops, bad)?;
    if !METHODS.contains(&op.method.as_str()) {
        return Err(bad(
            format!("{at}.method"),
            format!("unknown HTTP method `{}`", op.method),
        ));
    }
    check_inferred(
        &op.inferred,
        &OPERATION_INFERABLE,
        &format!("{at}.inferred"),
        |name| (name == "description").then_some(op.description.is_some()),
    )
    .map_err(|m| bad(format!("{at}.inferred"), m))?;
    let mut fields = BTreeSet::new();
    for (j, field) in op.fields.iter().enumerate() {
        check_field(field, &format!("{at}.fields[{j}]"), &mut fields, bad)?;
    }
    let mut codes = BTreeSet::new();
    for (j, error) in op.errors.iter().enumerate() {
        check_error(error, &format!("{at}.errors[{j}]"), &mut codes, bad)?;
    }
    Ok(())
}

/// Checks that `id` (the `what` at `path`) is key-safe and not already in `seen`, where it
/// is then recorded.
fn unique_id<'a>(
    what: &str,
    id: &'a str,
    path: &str,
    seen: &mut BTreeSet<&'a str>,
    bad: &impl Fn(String, String) -> AirError,
) -> Result<(), AirError> {
    if !is_segment_id(id) {
        return Err(bad(
            path.to_string(),
            format!("{what} `{id}` must be non-empty [A-Za-z0-9_-]"),
        ));
    }
    if !seen.insert(id) {
        return Err(bad(path.to_string(), format!("duplicate {what} `{id}`")));
    }
    Ok(())
}

/// Checks the field at `at`: a well-formed name not already in `fields` for its location
/// (where it is then recorded), a unit and sensitivity from the vocabularies, and its
/// `inferred` list.
fn check_field<'a>(
    field: &'a Field,
    at: &str,
    fields: &mut BTreeSet<(Location, &'a str)>,
    bad: &impl Fn(String, String) -> AirError,
) -> Result<(), AirError> {
    if !is_field_name(&field.name) {
        return Err(bad(
            format!("{at}.name"),
            format!(
                "field name `{}` must be dotted non-empty segments without whitespace",
                field.name
            ),
        ));
    }
    if !fields.insert((field.location, field.name.as_str())) {
        return Err(bad(
            format!("{at}.name"),
            format!("duplicate field `{}` in {}", field.name, field.location),
        ));
    }
    if let Some(unit) = &field.unit
        && !vocab::UNITS.contains(&unit.as_str())
    {
        return Err(bad(
            format!("{at}.unit"),
            format!("`{unit}` is not in the unit vocabulary"),
        ));
    }
    if let Some(s) = &field.sensitivity
        && !vocab::SENSITIVITY.contains(&s.as_str())
    {
        return Err(bad(
            format!("{at}.sensitivity"),
            format!("`{s}` is not one of none, pii, secret, financial"),
        ));
    }
    check_inferred(&field.inferred, &FIELD_INFERABLE, "", |name| match name {
        "description" => Some(field.description.is_some()),
        "unit" => Some(field.unit.is_some()),
        "sensitivity" => Some(field.sensitivity.is_some()),
        _ => None,
    })
    .map_err(|m| bad(format!("{at}.inferred"), m))
}

/// Checks the error at `at`: a key-safe code not already in `codes` (where it is then
/// recorded), a status in 100..=599, and its `inferred` list.
fn check_error<'a>(
    error: &'a ErrorDef,
    at: &str,
    codes: &mut BTreeSet<&'a str>,
    bad: &impl Fn(String, String) -> AirError,
) -> Result<(), AirError> {
    unique_id("error code", &error.code, &format!("{at}.code"), codes, bad)?;
    if !(100..=599).contains(&error.status) {
        return Err(bad(
            format!("{at}.status"),
            format!("HTTP status {} is outside 100..=599", error.status),
        ));
    }
    check_inferred(&error.inferred, &ERROR_INFERABLE, "", |name| {
        (name == "retryable").then_some(error.retryable.is_some())
    })
    .map_err(|m| bad(format!("{at}.inferred"), m))
}

/// Checks each capability: a key-safe id, unique among capabilities, naming only
/// operations in `ops`.
fn check_capabilities(
    capabilities: &[Capability],
    ops: &BTreeSet<&str>,
    bad: &impl Fn(String, String) -> AirError,
) -> Result<(), AirError> {
    let mut caps = BTreeSet::new();
    for (i, cap) in capabilities.iter().enumerate() {
        let at = format!("capabilities[{i}]");
        unique_id(
            "capability id",
            &cap.id,
            &format!("{at}.id"),
            &mut caps,
            bad,
        )?;
        for (j, op) in cap.operation_ids.iter().enumerate() {
            if !ops.contains(op.as_str()) {
                return Err(bad(
                    format!("{at}.operationIds[{j}]"),
                    format!("unknown operation `{op}`"),
                ));
            }
        }
    }
    Ok(())
}

/// Refuses any string (value or key) in `value` longer than [`Limit::AirTextBytes`], naming
/// its path. Iterative, so the depth of `value` is no concern of the caller's.
fn check_text(value: &Value, file: &str) -> Result<(), AirError> {
    let cap = Limit::AirTextBytes
        .value()
        .map_err(|source| AirError::Limit {
            file: file.to_string(),
            source,
        })?;
    // Depth-first; `path` holds the segments down to the value being looked at.
    let mut path: Vec<Segment> = Vec::new();
    let mut stack = vec![(0usize, Segment::Root, value)];
    while let Some((depth, segment, v)) = stack.pop() {
        path.truncate(depth);
        path.push(segment);
        let too_long = |len: usize| len as u64 > cap;
        let over = |path: &[Segment], len: usize| AirError::Invalid {
            file: file.to_string(),
            path: render_path(path),
            message: Limit::AirTextBytes
                .exceeded(cap, Some(len as u64))
                .to_string(),
        };
        match v {
            Value::String(s) if too_long(s.len()) => return Err(over(&path, s.len())),
            Value::Array(items) => stack.extend(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (depth + 1, Segment::Index(i), x)),
            ),
            Value::Object(map) => {
                for (k, x) in map {
                    if too_long(k.len()) {
                        path.push(Segment::Key(k));
                        return Err(over(&path, k.len()));
                    }
                    stack.push((depth + 1, Segment::Key(k), x));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Segment<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

/// `operations[0].fields[2].description`; a key is shown by its first 40 characters.
fn render_path(path: &[Segment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Root => {}
            Segment::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
            Segment::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.extend(k.chars().take(40));
                if k.chars().nth(40).is_some() {
                    out.push('…');
                }
            }
        }
    }
    if out.is_empty() { ".".into() } else { out }
}

fn check_inferred(
    inferred: &[String],
    allowed: &[&str],
    _at: &str,
    is_set: impl Fn(&str) -> Option<bool>,
) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    for name in inferred {
        if !allowed.contains(&name.as_str()) {
            return Err(format!(
                "`{name}` cannot be inferred here; allowed: {}",
                allowed.join(", ")
            ));
        }
        if !seen.insert(name) {
            return Err(format!("`{name}` is listed twice"));
        }
        if is_set(name) != Some(true) {
            return Err(format!("`{name}` is listed as inferred but has no value"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn air_with_description(text: &str) -> String {
        serde_json::json!({"airVersion": 1, "service": {"id": "s", "version": "1"},
            "operations": [{"id": "op", "method": "GET", "path": "/", "fields": [
                {"location": "input.body", "name": "x", "type": "string", "description": text}]}]})
        .to_string()
    }

    /// `hash_file` is `load` then `hash`, for the bytes the file holds now: an edit is
    /// seen, and a file `load` refuses is refused alike.
    #[test]
    fn hash_file_is_the_loaded_airs_hash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("air.json");
        for text in ["first", "second", "first"] {
            std::fs::write(&path, air_with_description(text)).unwrap();
            let loaded = Air::load(&path).unwrap().hash();
            assert_eq!(Air::hash_file(&path).unwrap(), loaded, "{text}");
            assert_eq!(Air::hash_file(&path).unwrap(), loaded, "{text}, remembered");
        }
        let [a, b] = ["a", "b"].map(|t| {
            std::fs::write(&path, air_with_description(t)).unwrap();
            Air::hash_file(&path).unwrap()
        });
        assert_ne!(a, b);
        std::fs::write(&path, b"{ not json").unwrap();
        let refused = Air::hash_file(&path).unwrap_err().to_string();
        assert_eq!(refused, Air::load(&path).unwrap_err().to_string());
    }

    /// Bytes open hashed are answered from its record, without a parse (the recorded AIR
    /// hash here is a stand-in no parse could give); other bytes, or the same bytes in
    /// the other format, are parsed and hashed.
    #[test]
    fn hash_file_known_answers_recorded_bytes_from_the_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("air.json");
        std::fs::write(&path, air_with_description("first")).unwrap();
        let (air, bytes_hash) = Air::load_hashed(&path).unwrap();
        assert_eq!(
            bytes_hash,
            crate::canon::bytes_hash(&std::fs::read(&path).unwrap())
        );
        let known = KnownAir {
            path: &path,
            bytes_hash: &bytes_hash,
            air_hash: "recorded",
        };
        assert_eq!(Air::hash_file_known(&path, &known).unwrap(), "recorded");
        // The same bytes elsewhere are the same AIR.
        let copy = dir.path().join("copy.json");
        std::fs::copy(&path, &copy).unwrap();
        assert_eq!(Air::hash_file_known(&copy, &known).unwrap(), "recorded");
        // The same bytes read as YAML are parsed.
        let yaml = dir.path().join("air.yaml");
        std::fs::copy(&path, &yaml).unwrap();
        assert_eq!(Air::hash_file_known(&yaml, &known).unwrap(), air.hash());
        // An edit is parsed, and refused as `load` refuses it.
        std::fs::write(&path, air_with_description("second")).unwrap();
        assert_eq!(
            Air::hash_file_known(&path, &known).unwrap(),
            Air::load(&path).unwrap().hash()
        );
        std::fs::write(&path, b"{ not json").unwrap();
        assert_eq!(
            Air::hash_file_known(&path, &known).unwrap_err().to_string(),
            Air::load(&path).unwrap_err().to_string()
        );
    }

    #[test]
    fn text_over_the_cap_is_refused_naming_its_path_and_the_cap() {
        let cap = usize::try_from(Limit::AirTextBytes.default_value()).unwrap();
        Air::parse(&air_with_description(&"d".repeat(cap)), false, "a.json").unwrap();
        let e = Air::parse(&air_with_description(&"d".repeat(cap + 1)), false, "a.json")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("at `operations[0].fields[0].description`")
                && e.contains("AIR_TEXT_BYTES")
                && e.contains("ANVIL_MAX_AIR_TEXT_BYTES"),
            "{e}"
        );
        // An over-long key is named by its beginning, not echoed whole.
        let key = "k".repeat(cap + 1);
        let e = Air::parse(&format!("{{\"{key}\": 1}}"), false, "a.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("AIR_TEXT_BYTES") && e.len() < 400, "{e}");
    }

    #[test]
    fn an_imported_air_is_held_to_the_text_cap_too() {
        let mut air = Air::parse(&air_with_description("short"), false, "a.json").unwrap();
        air.operations[0].description =
            Some("d".repeat(usize::try_from(Limit::AirTextBytes.default_value()).unwrap() + 1));
        let e = air.validate("a.json").unwrap_err().to_string();
        assert!(e.contains("at `operations[0].description`"), "{e}");
    }
}
