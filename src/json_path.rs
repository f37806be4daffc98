//! Strict deserialisation that names the path of the offending value.
//!
//! serde's own errors say *what* is wrong; this adds *where*, so a rejection of an agent's
//! document or an AIR names the field (`operations[0].fields[2].colour`).

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
pub fn deserialize<T: DeserializeOwned>(value: Value) -> Result<T, PathError> {
    serde_path_to_error::deserialize::<_, T>(value).map_err(|err| {
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
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, PathError> {
    let value: Value = serde_json::from_str(text).map_err(|e| PathError {
        path: ".".into(),
        message: format!("not valid JSON: {e}"),
    })?;
    deserialize(value)
}

fn unknown_field_name(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    rest.split_once('`').map(|(name, _)| name)
}
