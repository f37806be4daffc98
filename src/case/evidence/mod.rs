//! Evidence ingestion: the engine, never the agent, reads, classifies, hashes and freezes the
//! excerpts that claims cite (DESIGN §5, §7 step 2; case-framework seed §5).
//!
//! Invariant: every local [`EvidenceArtifact`] holds exactly the bytes the engine read at a
//! canonical, in-repository coordinate, its `contentHash` is the hash of those bytes, its
//! kind is decided from the inspect scopes (or derived: `comment`), and its id derives from
//! the coordinate `{kind, revision, path, startLine, endLine, contentHash}` — never from the
//! content alone. External excerpts are caller-supplied and therefore always `unverified`.
//! `verification.status` is the one truth about verification. These functions are pure
//! with respect to the run: they read the repository and write nothing.

use std::io;
use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::canon::{bytes_hash, canonical_json, sha256_hex};
use crate::skill::{EvidenceKind, Scope};

mod glob;
mod path;
mod source;
#[cfg(test)]
mod tests;
mod text;
pub(crate) mod walk;

pub use path::resolve_path;
pub use text::is_comment_only;

use path::{canonical_root, check_text, resolve_under};
pub use source::Source;
use text::LineIndex;

pub const EVIDENCE_FORMAT: &str = "anvil-evidence";
pub const EVIDENCE_FORMAT_VERSION: u32 = 1;

/// The largest file the engine reads as evidence. Larger files are refused rather than
/// loaded whole into memory and frozen into `evidence.json`.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The reason recorded on every external artifact.
pub const EXTERNAL_UNVERIFIED_REASON: &str =
    "external excerpt supplied by the caller; not independently confirmed";

/// The verifier recorded on every local artifact: this engine, at this version.
#[must_use]
pub fn local_verifier() -> String {
    format!("anvil-bench/{}", env!("CARGO_PKG_VERSION"))
}

/// The `output/evidence.json` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EvidenceDoc {
    pub format: String,
    pub format_version: u32,
    pub artifacts: Vec<EvidenceArtifact>,
}

impl EvidenceDoc {
    /// The bytes of every artifact's excerpt: about the size of the document.
    #[must_use]
    pub fn excerpt_bytes(&self) -> usize {
        self.artifacts.iter().map(|a| a.excerpt.len()).sum()
    }

    /// A document with no artifacts.
    #[must_use]
    pub fn empty() -> Self {
        EvidenceDoc {
            format: EVIDENCE_FORMAT.to_string(),
            format_version: EVIDENCE_FORMAT_VERSION,
            artifacts: Vec::new(),
        }
    }

    /// The artifact with this id.
    #[must_use]
    pub fn get(&self, id: &str) -> Option<&EvidenceArtifact> {
        self.artifacts.iter().find(|a| a.id == id)
    }

    /// Adds `artifact` unless an artifact with its id is already present (the same
    /// coordinate with the same bytes); the existing one is kept unchanged. Returns whether
    /// it was added.
    pub fn insert(&mut self, artifact: EvidenceArtifact) -> bool {
        if self.get(&artifact.id).is_some() {
            return false;
        }
        self.artifacts.push(artifact);
        true
    }

    /// Refuses a document of another format or version.
    ///
    /// # Errors
    ///
    /// `EvidenceError::UnsupportedFormat` when the document's `format` or `formatVersion`
    /// is not the evidence format this engine writes.
    pub fn check_format(&self) -> Result<(), EvidenceError> {
        if self.format != EVIDENCE_FORMAT || self.format_version != EVIDENCE_FORMAT_VERSION {
            return Err(EvidenceError::UnsupportedFormat {
                format: self.format.clone(),
                version: self.format_version,
            });
        }
        Ok(())
    }
}

/// One frozen excerpt. Local artifacts carry `revision`, `path`, `startLine` and `endLine`;
/// external ones carry `source`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EvidenceArtifact {
    /// `ev-` + the first 24 hex characters of the sha256 of the canonical coordinate.
    pub id: String,
    /// Local: `repo:<path>#L<start>-L<end>`; external: the uri the caller gave.
    pub uri: String,
    pub kind: EvidenceKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Canonical repository-relative path, `/`-separated, symlinks resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// 1-based, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    /// 1-based, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// `sha256:<hex>` of the excerpt bytes.
    pub content_hash: String,
    /// Exactly the bytes read: the lines `startLine..=endLine` with their line endings.
    pub excerpt: String,
    pub acquired_at: String,
    pub verification: Verification,
}

impl EvidenceArtifact {
    /// True for an artifact read from the repository (it has a path coordinate).
    #[must_use]
    pub fn is_local(&self) -> bool {
        self.kind != EvidenceKind::External && self.path.is_some()
    }

    #[must_use]
    pub fn is_verified(&self) -> bool {
        matches!(self.verification, Verification::Verified { .. })
    }

    /// The id this artifact's recorded coordinate derives, or `None` when the coordinate is
    /// incomplete (a local artifact missing its path or lines, an external one its source).
    #[must_use]
    pub fn expected_id(&self) -> Option<String> {
        if self.kind == EvidenceKind::External {
            Some(external_id(
                self.source.as_deref()?,
                &self.uri,
                &self.content_hash,
            ))
        } else {
            Some(local_id(
                self.kind,
                self.revision.as_deref()?,
                self.path.as_deref()?,
                self.start_line?,
                self.end_line?,
                &self.content_hash,
            ))
        }
    }
}

/// How far an artifact can be trusted. The only record of verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
pub enum Verification {
    /// The engine read and hashed the exact bytes itself.
    Verified { verifier: String },
    /// The bytes were supplied by the caller.
    Unverified { reason: String },
}

/// A request to read a local coordinate. No range means the whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceRequest {
    pub path: String,
    pub start_line: Option<u32>,
    pub end_line: Option<u32>,
}

/// Why evidence was refused. Each names the input it refused.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    #[error("evidence path is empty")]
    EmptyPath,
    #[error("evidence path `{path}` is absolute; give a path relative to the repository")]
    AbsolutePath { path: String },
    #[error("evidence path `{path}` escapes the repository through `..`")]
    PathEscape { path: String },
    #[error(
        "evidence path `{path}` goes through symlink `{link}`, which resolves to `{}` outside the repository",
        target.display()
    )]
    SymlinkEscape {
        path: String,
        link: String,
        target: PathBuf,
    },
    #[error("evidence path `{path}` does not exist in the repository")]
    MissingFile { path: String },
    #[error("evidence path `{path}` is {what}, not a regular file")]
    NotAFile { path: String, what: &'static str },
    #[error("evidence path `{path}` resolves to a name that is not UTF-8")]
    NonUtf8Path { path: String },
    #[error("`{path}` matches no inspect scope, so it is not admissible evidence")]
    OutOfScope { path: String },
    #[error(
        "`{what}` is {kind} evidence, which this skill does not admit; admissible kinds: {admissible}"
    )]
    InadmissibleKind {
        what: String,
        kind: EvidenceKind,
        admissible: String,
    },
    #[error("`{path}` is {size} bytes; evidence files are limited to {limit} bytes")]
    FileTooLarge { path: String, size: u64, limit: u64 },
    #[error("`{path}` is a binary file (it contains a NUL byte at offset {offset})")]
    BinaryFile { path: String, offset: usize },
    #[error("`{path}` is not UTF-8 text (invalid byte at offset {offset})")]
    NotUtf8 { path: String, offset: usize },
    #[error("`{path}` is empty; there is nothing to cite")]
    EmptyFile { path: String },
    #[error("line range {range} of `{path}` is invalid: {reason}")]
    InvalidRange {
        path: String,
        range: String,
        reason: String,
    },
    #[error("`{path}` changed while the engine was reading it; try again")]
    ConcurrentChange { path: String },
    #[error("external evidence `{uri}` from `{source_name}` has an empty excerpt")]
    EmptyExcerpt { source_name: String, uri: String },
    #[error("external evidence is invalid: {reason}")]
    InvalidExternal { reason: String },
    #[error(
        "the external excerpt is binary (it contains a NUL byte at offset {offset}); evidence is text"
    )]
    BinaryExcerpt { offset: usize },
    #[error("evidence `{id}` no longer matches the repository: {uri} was {expected}, now {actual}")]
    SourceChanged {
        id: String,
        uri: String,
        expected: String,
        actual: String,
    },
    #[error("evidence `{id}` is external; there is no repository coordinate to re-read")]
    NotLocal { id: String },
    #[error("evidence `{id}` is inconsistent: {reason}")]
    InconsistentArtifact { id: String, reason: String },
    #[error(
        "evidence document is {format} v{version}; expected {EVIDENCE_FORMAT} v{EVIDENCE_FORMAT_VERSION}"
    )]
    UnsupportedFormat { format: String, version: u32 },
    #[error("`{path}` is inside the cases directory; the engine's own files are never evidence")]
    InsideCasesDir { path: String },
    #[error(
        "`{path}` is not committed at revision {revision}; only committed files are evidence — commit it and open a new case"
    )]
    NotCommitted { path: String, revision: String },
    #[error(
        "`{path}` did not exist when the case was opened; only what the repository held then is evidence"
    )]
    NotAtOpen { path: String },
    #[error(
        "`{path}` changed since the case was opened; only what the repository held then is evidence"
    )]
    ChangedSinceOpen { path: String },
    #[error("the repository cannot be read at the case's revision: {reason}")]
    Repository { reason: String },
    #[error("cannot {action} `{}`: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl EvidenceError {
    /// A stable, machine-readable name for this kind of refusal.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            EvidenceError::EmptyPath => "empty_path",
            EvidenceError::AbsolutePath { .. } => "absolute_path",
            EvidenceError::PathEscape { .. } => "path_escape",
            EvidenceError::SymlinkEscape { .. } => "symlink_escape",
            EvidenceError::MissingFile { .. } => "missing_file",
            EvidenceError::NotAFile { .. } => "not_a_file",
            EvidenceError::NonUtf8Path { .. } => "non_utf8_path",
            EvidenceError::OutOfScope { .. } => "out_of_scope",
            EvidenceError::InadmissibleKind { .. } => "inadmissible_kind",
            EvidenceError::FileTooLarge { .. } => "file_too_large",
            EvidenceError::BinaryFile { .. } => "binary_file",
            EvidenceError::NotUtf8 { .. } => "not_utf8",
            EvidenceError::EmptyFile { .. } => "empty_file",
            EvidenceError::InvalidRange { .. } => "invalid_range",
            EvidenceError::ConcurrentChange { .. } => "concurrent_change",
            EvidenceError::EmptyExcerpt { .. } => "empty_excerpt",
            EvidenceError::InvalidExternal { .. } => "invalid_external",
            EvidenceError::BinaryExcerpt { .. } => "binary_file",
            EvidenceError::SourceChanged { .. } => "source_changed",
            EvidenceError::NotLocal { .. } => "not_local",
            EvidenceError::InconsistentArtifact { .. } => "inconsistent_artifact",
            EvidenceError::UnsupportedFormat { .. } => "unsupported_format",
            EvidenceError::InsideCasesDir { .. } => "inside_cases_dir",
            EvidenceError::NotCommitted { .. } => "not_committed",
            EvidenceError::NotAtOpen { .. } => "not_at_open",
            EvidenceError::ChangedSinceOpen { .. } => "changed_since_open",
            EvidenceError::Repository { .. } => "repository",
            EvidenceError::Io { .. } => "io",
        }
    }

    fn io(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> EvidenceError {
        let path = path.to_path_buf();
        move |source| EvidenceError::Io {
            action,
            path,
            source,
        }
    }
}

/// Reads, classifies, hashes and returns an artifact for `req`; writes nothing.
///
/// `source` is the repository as the case opened it (R-GATE-3): the bytes come from it,
/// and its revision is recorded in the artifact; `now` is the
/// acquisition timestamp recorded verbatim.
///
/// # Errors
///
/// `EvidenceError::InvalidRange` when only one of `startLine`/`endLine` is given or the
/// range lies outside the file; the path refusals of [`resolve_path`]; `OutOfScope` when no
/// scope classifies the path; `InadmissibleKind` when the kind the scope (or a comment-only
/// excerpt) yields is not in `admissible`; and the read refusals of `source` and of the
/// text check (`file_too_large`, `binary_file`, `not_utf8`, `empty_file`, `not_committed`,
/// `changed_since_open`, ...).
pub fn acquire(
    repo_root: &Path,
    source: &Source,
    scopes: &[Scope],
    admissible: &[EvidenceKind],
    req: &EvidenceRequest,
    now: &str,
) -> Result<EvidenceArtifact, EvidenceError> {
    // A half-given range is refused before touching the filesystem.
    match (req.start_line, req.end_line) {
        (Some(start), None) => {
            return Err(EvidenceError::InvalidRange {
                path: req.path.clone(),
                range: format!("L{start}-"),
                reason: "startLine is given without endLine".into(),
            });
        }
        (None, Some(end)) => {
            return Err(EvidenceError::InvalidRange {
                path: req.path.clone(),
                range: format!("-L{end}"),
                reason: "endLine is given without startLine".into(),
            });
        }
        _ => {}
    }

    let root = canonical_root(repo_root)?;
    let (rel, abs) = resolve_under(&root, &req.path)?;

    let scope_kind =
        classify(scopes, &rel).ok_or_else(|| EvidenceError::OutOfScope { path: rel.clone() })?;
    // Refuse early when no kind this scope can yield is admissible. An implementation
    // scope may still yield `comment`, so its final kind is checked after reading.
    let possible: &[EvidenceKind] = if scope_kind == EvidenceKind::Implementation {
        &[EvidenceKind::Implementation, EvidenceKind::Comment]
    } else {
        std::slice::from_ref(&scope_kind)
    };
    if !possible.iter().any(|k| admissible.contains(k)) {
        return Err(inadmissible(&rel, scope_kind, admissible));
    }

    let (bytes, file_hash) = source.read(&root, &abs, &rel)?;
    let text = check_text(bytes, &rel)?;
    // The whole file is the excerpt as read, not a copy of it (16 MiB files are citable),
    // and its hash, when the read took one, is the excerpt's; only a range needs the
    // lines indexed.
    let (start, end, part) = match (req.start_line, req.end_line) {
        (Some(start), Some(end)) => {
            let lines = LineIndex::new(&text);
            lines.check_range(&rel, start, end)?;
            let part = lines.excerpt(start, end);
            let part = (part.len() < text.len()).then(|| part.to_string());
            (start, end, part)
        }
        _ => (1, text::line_count_u32(&text), None),
    };
    let (excerpt, known_hash) = match part {
        Some(part) => (part, None),
        None => (text, file_hash),
    };

    let kind = if scope_kind == EvidenceKind::Implementation && is_comment_only(&excerpt) {
        EvidenceKind::Comment
    } else {
        scope_kind
    };
    if !admissible.contains(&kind) {
        return Err(inadmissible(&rel, kind, admissible));
    }

    let content_hash = known_hash.unwrap_or_else(|| bytes_hash(excerpt.as_bytes()));
    let revision = source.revision();
    let id = local_id(kind, revision, &rel, start, end, &content_hash);
    Ok(EvidenceArtifact {
        id,
        uri: local_uri(&rel, start, end),
        kind,
        revision: Some(revision.to_string()),
        path: Some(rel),
        start_line: Some(start),
        end_line: Some(end),
        source: None,
        content_hash,
        excerpt,
        acquired_at: now.to_string(),
        verification: Verification::Verified {
            verifier: local_verifier(),
        },
    })
}

/// Records a caller-supplied excerpt from outside the repository. It is always kind
/// `external` and `unverified`.
///
/// # Errors
///
/// `EvidenceError::InvalidExternal` when `source` or `uri` is blank, `EmptyExcerpt` when
/// `excerpt` is blank, and `InadmissibleKind` when `external` is not in `admissible`.
pub fn acquire_external(
    source: &str,
    uri: &str,
    excerpt: &str,
    admissible: &[EvidenceKind],
    now: &str,
) -> Result<EvidenceArtifact, EvidenceError> {
    if source.trim().is_empty() {
        return Err(EvidenceError::InvalidExternal {
            reason: format!("the source name is empty (uri `{uri}`)"),
        });
    }
    if uri.trim().is_empty() {
        return Err(EvidenceError::InvalidExternal {
            reason: format!("the uri is empty (source `{source}`)"),
        });
    }
    if excerpt.trim().is_empty() {
        return Err(EvidenceError::EmptyExcerpt {
            source_name: source.to_string(),
            uri: uri.to_string(),
        });
    }
    // The same rule as for a repository file: a NUL byte makes it binary, not text.
    if let Some(offset) = excerpt.bytes().position(|b| b == 0) {
        return Err(EvidenceError::BinaryExcerpt { offset });
    }
    if !admissible.contains(&EvidenceKind::External) {
        return Err(inadmissible(uri, EvidenceKind::External, admissible));
    }
    let content_hash = bytes_hash(excerpt.as_bytes());
    Ok(EvidenceArtifact {
        id: external_id(source, uri, &content_hash),
        uri: uri.to_string(),
        kind: EvidenceKind::External,
        revision: None,
        path: None,
        start_line: None,
        end_line: None,
        source: Some(source.to_string()),
        content_hash,
        excerpt: excerpt.to_string(),
        acquired_at: now.to_string(),
        verification: Verification::Unverified {
            reason: EXTERNAL_UNVERIFIED_REASON.to_string(),
        },
    })
}

/// Re-reads a local artifact's coordinate and checks that the bytes there are still its
/// excerpt.
///
/// # Errors
///
/// `EvidenceError::SourceChanged` when the bytes at the coordinate changed, the path now
/// resolves to another file, is no longer UTF-8, or no longer has the artifact's lines;
/// `MissingFile` and the other path refusals of [`resolve_path`] when the file is gone or
/// unsafe to read; `InconsistentArtifact` when the artifact does not agree with itself (a
/// local coordinate, its content hash, its id or its revision); and `NotLocal` for an
/// external artifact, which has nothing to re-read (callers skip those with
/// [`EvidenceArtifact::is_local`]).
pub fn reverify(
    repo_root: &Path,
    source: &Source,
    artifact: &EvidenceArtifact,
) -> Result<(), EvidenceError> {
    let id = &artifact.id;
    if !artifact.is_local() {
        return Err(EvidenceError::NotLocal { id: id.clone() });
    }
    let inconsistent = |reason: String| EvidenceError::InconsistentArtifact {
        id: id.clone(),
        reason,
    };
    let (Some(path), Some(start), Some(end)) =
        (&artifact.path, artifact.start_line, artifact.end_line)
    else {
        return Err(inconsistent(
            "a local artifact needs path, startLine and endLine".into(),
        ));
    };
    let recorded = bytes_hash(artifact.excerpt.as_bytes());
    if recorded != artifact.content_hash {
        return Err(inconsistent(format!(
            "its contentHash {} is not the hash of its excerpt ({recorded})",
            artifact.content_hash
        )));
    }
    if artifact.expected_id().as_deref() != Some(id.as_str()) {
        return Err(inconsistent(
            "its id does not derive from its coordinate".into(),
        ));
    }

    if artifact.revision.as_deref() != Some(source.revision()) {
        return Err(inconsistent(format!(
            "it was read at revision {}, but the case is at {}",
            artifact.revision.as_deref().unwrap_or("(none)"),
            source.revision()
        )));
    }
    let root = canonical_root(repo_root)?;
    let (rel, abs) = resolve_under(&root, path)?;
    let changed = |actual: String| EvidenceError::SourceChanged {
        id: id.clone(),
        uri: artifact.uri.clone(),
        expected: artifact.content_hash.clone(),
        actual,
    };
    if rel != *path {
        return Err(changed(format!("resolved to another file, `{rel}`")));
    }
    let (bytes, file_hash) = source.read(&root, &abs, &rel)?;
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Err(changed(format!("{} (no longer UTF-8)", bytes_hash(&bytes))));
    };
    let count = text::line_count(text);
    let end_at = end as usize;
    if start == 0 || start > end || end_at > count {
        return Err(changed(format!("absent (the file now has {count} lines)")));
    }
    let now = if start == 1 && end_at == count {
        text
    } else {
        LineIndex::new(text).excerpt(start, end)
    };
    let actual = match file_hash {
        Some(hash) if now.len() == bytes.len() => hash,
        _ => bytes_hash(now.as_bytes()),
    };
    if actual != artifact.content_hash {
        return Err(changed(actual));
    }
    Ok(())
}

/// Classifies a repository-relative, `/`-separated path by the inspect scopes: the first
/// scope whose glob matches wins; `None` means inadmissible. Globs match whole paths and
/// `*` does not cross `/` (use `**` for that). A glob that does not compile matches nothing.
#[must_use]
pub fn classify(scopes: &[Scope], rel_path: &str) -> Option<EvidenceKind> {
    scopes
        .iter()
        .find(|s| glob::matches(&s.glob, rel_path))
        .map(|s| s.kind)
}

/// The in-scope regular files under `repo` (relative, `/`-separated, with their sizes),
/// in path order, at most `limit`: no symlink followed, `.git` and every directory holding
/// a run (a `case.json` beside a `lifecycle.json`) skipped. Other files of a cases dir
/// inside the repository are listed; the case's [`Source`] refuses them when read.
pub fn in_scope_files(repo: &Path, scopes: &[Scope], limit: usize) -> Vec<(String, u64)> {
    let classifier = Classifier::new(scopes);
    let mut out = Vec::new();
    let mut stack = vec![(repo.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        if dir.join("case.json").is_file() && dir.join("lifecycle.json").is_file() {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.file_name()));
        for entry in entries {
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && name != ".git" {
                stack.push((entry.path(), rel));
            } else if kind.is_file() && classifier.classify(&rel).is_some() {
                out.push((rel, entry.metadata().map_or(0, |m| m.len())));
                if out.len() >= limit {
                    out.sort();
                    return out;
                }
            }
        }
    }
    out.sort();
    out
}

/// [`classify`] for walks over many paths: its first [`LIGHT_PATHS`] paths are matched
/// glob by glob as [`classify`] does, and past them the scopes' globs are compiled into one
/// `GlobSet` (once per process for each scope list), which costs more to build and less per
/// path. Both classify every path alike (a test holds it).
#[derive(Clone)]
pub struct Classifier {
    /// Shared by clones: what they ask counts towards one switch to one set.
    state: std::sync::Arc<ClassifierState>,
}

struct ClassifierState {
    scopes: Vec<Scope>,
    asked: std::sync::atomic::AtomicUsize,
    compiled: std::sync::OnceLock<std::sync::Arc<Compiled>>,
}

/// How many paths a [`Classifier`] matches glob by glob before it builds its `GlobSet`: a
/// rail's walk over a small repository never needs the set.
const LIGHT_PATHS: usize = 128;

/// A compiled scope list: the glob set and the kind of each glob in it, by index (scopes
/// whose glob does not compile are left out: they match nothing). No set when the globs,
/// each within the size limits, are over them together: then each path is matched glob by
/// glob, so a glob matches the same paths whatever list it is in.
struct Compiled {
    set: Option<globset::GlobSet>,
    kinds: Vec<EvidenceKind>,
}

impl Classifier {
    #[must_use]
    pub fn new(scopes: &[Scope]) -> Classifier {
        Classifier {
            state: std::sync::Arc::new(ClassifierState {
                scopes: scopes.to_vec(),
                asked: Default::default(),
                compiled: Default::default(),
            }),
        }
    }

    /// The scope list's `GlobSet`, compiled once per process for each list (the battery,
    /// the MCP server and the test suites open many cases with the same policy).
    fn glob_set(scopes: &[Scope]) -> std::sync::Arc<Compiled> {
        static SETS: crate::memo::Memo<Vec<Scope>, std::sync::Arc<Compiled>> =
            crate::memo::Memo::new(64);
        SETS.get_or(scopes.to_vec(), || {
            std::sync::Arc::new(Classifier::compile(scopes))
        })
    }

    fn compile(scopes: &[Scope]) -> Compiled {
        let mut builder = globset::GlobSetBuilder::new();
        let mut kinds = Vec::new();
        for scope in scopes {
            if let Ok(glob) = GlobBuilder::new(&scope.glob)
                .literal_separator(true)
                .build()
            {
                builder.add(glob);
                kinds.push(scope.kind);
            }
        }
        Compiled {
            set: builder.build().ok(),
            kinds,
        }
    }

    /// The kind of the first scope matching `rel_path`, if any.
    #[must_use]
    pub fn classify(&self, rel_path: &str) -> Option<EvidenceKind> {
        use std::sync::atomic::Ordering;
        let state = &self.state;
        if state.compiled.get().is_none()
            && state.asked.fetch_add(1, Ordering::Relaxed) < LIGHT_PATHS
        {
            return classify(&state.scopes, rel_path);
        }
        self.by_glob_set(rel_path)
    }

    /// [`Classifier::classify`] by the scope list's `GlobSet`.
    fn by_glob_set(&self, rel_path: &str) -> Option<EvidenceKind> {
        let state = &self.state;
        let compiled = state
            .compiled
            .get_or_init(|| Classifier::glob_set(&state.scopes));
        let Some(set) = &compiled.set else {
            return classify(&state.scopes, rel_path);
        };
        let first = set.matches(rel_path).into_iter().min()?;
        compiled.kinds.get(first).copied()
    }
}

fn inadmissible(what: &str, kind: EvidenceKind, admissible: &[EvidenceKind]) -> EvidenceError {
    let list = if admissible.is_empty() {
        "none".to_string()
    } else {
        admissible
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    EvidenceError::InadmissibleKind {
        what: what.to_string(),
        kind,
        admissible: list,
    }
}

fn local_uri(rel: &str, start: u32, end: u32) -> String {
    format!("repo:{rel}#L{start}-L{end}")
}

fn artifact_id(coordinate: &serde_json::Value) -> String {
    let hex = sha256_hex(canonical_json(coordinate).as_bytes());
    format!("ev-{}", &hex[..24])
}

fn local_id(
    kind: EvidenceKind,
    revision: &str,
    path: &str,
    start: u32,
    end: u32,
    content_hash: &str,
) -> String {
    artifact_id(&json!({
        "kind": kind,
        "revision": revision,
        "path": path,
        "startLine": start,
        "endLine": end,
        "contentHash": content_hash,
    }))
}

fn external_id(source: &str, uri: &str, content_hash: &str) -> String {
    artifact_id(&json!({
        "kind": EvidenceKind::External,
        "source": source,
        "uri": uri,
        "contentHash": content_hash,
    }))
}
