//! Why an OpenAPI description was refused, or an export could not be made. Every variant
//! about the document's content names the JSON Pointer of the offending node.

use super::pointer::show;
use crate::air::AirError;

#[derive(Debug, thiserror::Error)]
pub enum OpenApiError {
    #[error("cannot read `{file}`: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("`{file}` is not valid {format} (line {line}, column {column}): {message}")]
    Syntax {
        file: String,
        format: &'static str,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("`{file}` at `{}`: {message}", show(pointer))]
    Invalid {
        file: String,
        pointer: String,
        message: String,
    },
    #[error("cannot load the refined AIR: {0}")]
    RefinedAir(#[source] AirError),
    #[error("refined AIR does not match `{file}` at `{target}`: {message}")]
    Mismatch {
        file: String,
        target: String,
        message: String,
    },
    #[error(
        "refusing to export `{file}`: the edited text would differ at `{}` beyond the refinements ({message})",
        show(pointer)
    )]
    Unfaithful {
        file: String,
        pointer: String,
        message: String,
    },
    #[error("cannot write `{file}`: {source}")]
    Write {
        file: String,
        #[source]
        source: std::io::Error,
    },
}

impl OpenApiError {
    /// A short stable name for `--json` error documents.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            OpenApiError::Read { .. } => "read_failed",
            OpenApiError::Syntax { .. } => "syntax",
            OpenApiError::Invalid { .. } => "invalid_document",
            OpenApiError::RefinedAir(_) => "invalid_air",
            OpenApiError::Mismatch { .. } => "air_mismatch",
            OpenApiError::Unfaithful { .. } => "unfaithful_export",
            OpenApiError::Write { .. } => "write_failed",
        }
    }

    /// The JSON Pointer the error names, when it names one.
    #[must_use]
    pub fn pointer(&self) -> Option<&str> {
        match self {
            OpenApiError::Invalid { pointer, .. } | OpenApiError::Unfaithful { pointer, .. } => {
                Some(pointer)
            }
            _ => None,
        }
    }
}
