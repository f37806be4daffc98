//! OpenAPI 3.0, 3.1 and Swagger 2.0 (YAML or JSON) to AIR, and refined AIR back into the
//! original document.
//!
//! * `document`, `tree`, `yaml`, `json` — the description parsed into a located tree
//!   ([`Document`]): every node knows its byte range in the text as read.
//! * `import`, `parameters`, `responses`, `schema`, `refs` — the walk: operations,
//!   parameters, bodies flattened to field paths, errors from 4xx/5xx responses, local
//!   `$ref`s with cycle detection; each AIR element records the JSON Pointer it came from.
//!   Nothing is invented: units, sensitivity and retryability come only from the [`ext`]
//!   extensions.
//! * `export`, `splice`, `render` — refined values written back by splicing the original
//!   text at the located nodes, then re-parsed and compared with the intended result.
//! * `summary` — the plan grouped per operation, for `detect --spec`.
//!
//! Invariant: import is a pure function of the document's text; export changes only the
//! refined nodes (and the provenance list), so with no refinements it returns the input
//! byte for byte.

mod document;
mod error;
mod export;
pub mod ext;
mod import;
mod json;
mod parameters;
pub mod pointer;
mod refs;
mod render;
mod responses;
mod schema;
mod splice;
mod summary;
mod tree;
mod yaml;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

pub use document::{Document, Format};
pub use error::OpenApiError;
pub use export::{Edit, EditAction, Exported, export};
pub use summary::{OperationSummary, SkillCount, summarize};

use crate::air::Air;
use ext::Attr;

/// The description's version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Version {
    #[serde(rename = "2.0")]
    Swagger2,
    #[serde(rename = "3.0")]
    OpenApi30,
    #[serde(rename = "3.1")]
    OpenApi31,
}

impl Version {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Version::Swagger2 => "Swagger 2.0",
            Version::OpenApi30 => "OpenAPI 3.0",
            Version::OpenApi31 => "OpenAPI 3.1",
        }
    }
}

/// Something in the document that was deliberately not imported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Note {
    pub pointer: String,
    pub message: String,
}

/// Where an AIR element lives in the document: the node refinements are written at, and
/// the node that states each attribute it already has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Site {
    /// The element's own node (a parameter's list item, a property's schema, a response
    /// under `responses`), which may be a `$ref`.
    pub use_site: String,
    /// Attribute → pointer of the object whose key states it (the use site, or a `$ref`
    /// target it inherits from).
    pub sources: BTreeMap<Attr, String>,
}

/// An imported description.
#[derive(Debug, Clone)]
pub struct Imported {
    pub air: Air,
    pub notes: Vec<Note>,
    pub version: Version,
    /// Target key → site.
    pub(crate) sites: BTreeMap<String, Site>,
}

/// Imports a parsed description.
///
/// # Errors
///
/// `OpenApiError::Invalid`, naming the JSON Pointer, when the root is not an object, the
/// `openapi`/`swagger` version is missing or unsupported, `info`, its title or its version
/// is missing, or an element cannot be mapped to AIR (a path not starting with `/`, a tag
/// without a `name`, a parameter without its `name` or `in`, a malformed `$ref`, a response
/// key that is not a status code, a value of the wrong type).
pub fn import(doc: &Document) -> Result<Imported, OpenApiError> {
    import::import(doc)
}

/// Reads, parses and imports the description at `path`.
///
/// # Errors
///
/// Whatever [`Document::load`] or [`import`] refuses: `OpenApiError::Read`,
/// `OpenApiError::Syntax` or `OpenApiError::Invalid`.
pub fn import_file(path: &Path) -> Result<(Document, Imported), OpenApiError> {
    let doc = Document::load(path)?;
    let imported = import(&doc)?;
    Ok((doc, imported))
}
