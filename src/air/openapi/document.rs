//! The located document: an OpenAPI description read and parsed, as JSON or YAML, into a
//! located tree (`tree`), with the text it was parsed from.
//!
//! Invariant: `Document::text` is the file's text exactly as read; every offset in its tree
//! indexes into it.

use super::error::OpenApiError;
use super::tree::{BuildError, Node};
use super::{json, yaml};
use crate::limits::Limit;

/// The syntax a document is written in; export writes the same one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

/// A parsed OpenAPI description with its text.
#[derive(Debug, Clone)]
pub struct Document {
    pub(crate) file: String,
    pub(crate) text: String,
    pub(crate) format: Format,
    pub(crate) root: Node,
}

impl Document {
    /// Reads and parses `path`: a regular file (never a symlink, FIFO or device) of at
    /// most [`Limit::DocBytes`].
    ///
    /// # Errors
    ///
    /// `OpenApiError::Read` when `path` is not a regular file, cannot be read or is over
    /// `Limit::DocBytes`; `OpenApiError::Syntax` when the bytes are not UTF-8; otherwise
    /// whatever [`Document::parse`] refuses.
    pub fn load(path: &std::path::Path) -> Result<Document, OpenApiError> {
        let file = path.display().to_string();
        let bytes =
            crate::limits::read_capped(path, crate::limits::Limit::DocBytes).map_err(|e| {
                OpenApiError::Read {
                    file: file.clone(),
                    source: e.into(),
                }
            })?;
        let text = String::from_utf8(bytes).map_err(|e| OpenApiError::Syntax {
            file: file.clone(),
            format: "UTF-8",
            line: 1,
            column: 1,
            message: format!("not UTF-8 text: {e}"),
        })?;
        Document::parse(text, &file)
    }

    /// Parses `text`: JSON when it opens with `{` or `[` (a `.yaml`/`.yml` file that is not
    /// valid JSON is then read as YAML), YAML otherwise. `file` names the document in
    /// errors.
    ///
    /// # Errors
    ///
    /// `OpenApiError::Syntax`, with the line and column, when `text` is neither valid JSON
    /// nor valid YAML in the format chosen above (for JSON-looking text the JSON error is
    /// reported); `OpenApiError::Invalid`, with the JSON Pointer, for a duplicate key, a
    /// non-scalar YAML mapping key, nesting that is too deep or YAML aliases that repeat more
    /// than [`Limit::YamlAliasNodes`] nodes; `OpenApiError::Read` for an invalid override of
    /// that cap.
    pub fn parse(text: String, file: &str) -> Result<Document, OpenApiError> {
        let alias_cap = Limit::YamlAliasNodes
            .value()
            .map_err(|e| OpenApiError::Read {
                file: file.to_string(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
            })?;
        let body = text.trim_start_matches('\u{feff}').trim_start();
        let looks_json = body.starts_with('{') || body.starts_with('[');
        let attempt = |format: Format| match format {
            Format::Json => json::parse(&text),
            Format::Yaml => yaml::parse(&text, alias_cap),
        };
        let (format, result) = if looks_json {
            // Text that opens like JSON is JSON, unless the file says it is YAML (a YAML
            // flow mapping at the top): then a JSON error does not stand.
            let yaml_named = file.ends_with(".yaml") || file.ends_with(".yml");
            match attempt(Format::Json) {
                Ok(root) => (Format::Json, Ok(root)),
                Err(json_err) if yaml_named => match attempt(Format::Yaml) {
                    Ok(root) => (Format::Yaml, Ok(root)),
                    Err(_) => (Format::Json, Err(json_err)),
                },
                Err(json_err) => (Format::Json, Err(json_err)),
            }
        } else {
            (Format::Yaml, attempt(Format::Yaml))
        };
        let root = result.map_err(|e| build_error(e, &text, file, format))?;
        Ok(Document {
            file: file.to_string(),
            text,
            format,
            root,
        })
    }

    #[must_use]
    pub fn format(&self) -> Format {
        self.format
    }

    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    #[must_use]
    pub fn file(&self) -> &str {
        &self.file
    }
}

fn build_error(e: BuildError, text: &str, file: &str, format: Format) -> OpenApiError {
    match e {
        BuildError::Syntax { offset, message } => {
            let (line, column) = line_col(text, offset);
            OpenApiError::Syntax {
                file: file.to_string(),
                format: match format {
                    Format::Json => "JSON",
                    Format::Yaml => "YAML",
                },
                line,
                column,
                message,
            }
        }
        BuildError::Invalid { pointer, message } => OpenApiError::Invalid {
            file: file.to_string(),
            pointer,
            message,
        },
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..floor_boundary(text, offset)];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn floor_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}
