//! Reading and writing a run's output documents, and tamper detection on frozen files.
//!
//! Invariant: a frozen file whose bytes no longer hash to the value recorded in
//! lifecycle.json is never read as if it were valid: every rail refuses with a tamper
//! error naming it.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::error::CaseError;
use super::evidence::EvidenceDoc;
use super::lifecycle::Lifecycle;
use super::proposal::DocError;
use super::research::ClaimsDoc;

pub use super::layout::{
    CLAIMS_JSON, CRITIQUE_JSON, EVIDENCE_JSON, MAX_RUN_FILE_BYTES, PROPOSAL_JSON, RESULT_JSON,
    TESTS_JSON,
};

/// Reads a strict JSON document from the run; `None` when the file does not exist. The
/// agent may have written it: a symlink, FIFO, device or directory is refused, never
/// followed or opened (R-GATE-3's rule for everything the agent could have touched).
///
/// # Errors
///
/// `CaseError::Io` when the file cannot be read (a symlink, FIFO, device or directory
/// included), and `CaseError::Document` of kind `syntax` (not UTF-8 or not JSON),
/// `unknown_field` or `shape` when it does not parse strictly as `T`.
pub fn read_doc<T: DeserializeOwned>(run_dir: &Path, rel: &str) -> Result<Option<T>, CaseError> {
    let path = run_dir.join(rel);
    let bytes = match super::commit::read(run_dir, rel, MAX_RUN_FILE_BYTES) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(None),
        Err(e) => return Err(CaseError::io("read", path)(e)),
    };
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| DocError::new(rel, ".", super::proposal::DocErrorKind::Syntax, "not UTF-8"))?;
    let doc = crate::json_path::from_str(text).map_err(|e| {
        let kind = if e.message.starts_with("unknown field") {
            super::proposal::DocErrorKind::UnknownField
        } else if e.message.starts_with("not valid JSON") {
            super::proposal::DocErrorKind::Syntax
        } else {
            super::proposal::DocErrorKind::Shape
        };
        DocError::new(rel, &e.path, kind, e.message)
    })?;
    Ok(Some(doc))
}

/// Writes a document into the run (staged when a rail is executing; see `case::commit`).
///
/// # Errors
///
/// `CaseError::Io` when the parent directory cannot be created or the file cannot be
/// written (or staged), including through a symlink, and `Corrupt` if `doc` cannot be
/// serialised.
pub fn write_doc<T: Serialize>(run_dir: &Path, rel: &str, doc: &T) -> Result<(), CaseError> {
    write_doc_streamed(run_dir, rel, doc, false)
}

/// Writes `doc` as evidence.json. A document whose excerpts hold a megabyte or more (a
/// whole cited document) is serialised straight into the staged file, overlapped with
/// its hashing and writing, never held whole in memory: its escaping and writing were
/// most of an add-evidence of a 16 MiB file.
///
/// # Errors
///
/// The errors of [`write_doc`].
pub fn write_evidence(run_dir: &Path, doc: &EvidenceDoc) -> Result<(), CaseError> {
    const STREAMED_FROM: usize = 1 << 20;
    write_doc_streamed(
        run_dir,
        EVIDENCE_JSON,
        doc,
        doc.excerpt_bytes() >= STREAMED_FROM,
    )
}

/// [`write_doc`], serialised into one buffer, or, when `streamed`, through
/// [`super::commit::write_streamed`].
fn write_doc_streamed<T: Serialize>(
    run_dir: &Path,
    rel: &str,
    doc: &T,
    streamed: bool,
) -> Result<(), CaseError> {
    let path = run_dir.join(rel);
    if let Some(parent) = path.parent() {
        // Nothing to do when it exists (the usual case: open made output/).
        std::fs::create_dir_all(parent).map_err(CaseError::io("create", parent))?;
    }
    if streamed {
        return super::commit::write_streamed(run_dir, rel, |sink| {
            serde_json::to_writer_pretty(&mut *sink, doc).map_err(std::io::Error::other)?;
            sink.write_all(b"\n")
        })
        .map_err(CaseError::io("write", path));
    }
    let mut text = serde_json::to_string_pretty(doc).map_err(|e| CaseError::Corrupt {
        file: path.clone(),
        field: ".".into(),
        reason: e.to_string(),
    })?;
    text.push('\n');
    super::commit::write(run_dir, rel, text.as_bytes()).map_err(CaseError::io("write", path))
}

/// The run's evidence.json, strictly parsed and of this engine's format; an empty
/// document when the file does not exist yet.
///
/// # Errors
///
/// The errors of [`read_doc`], and `CaseError::Evidence` of kind `unsupported_format` when
/// evidence.json is of another format or version.
pub fn evidence(run_dir: &Path) -> Result<EvidenceDoc, CaseError> {
    let doc: EvidenceDoc = read_doc(run_dir, EVIDENCE_JSON)?.unwrap_or_else(EvidenceDoc::empty);
    doc.check_format()?;
    Ok(doc)
}

/// The run's claims.json, strictly parsed and of this engine's format; an empty document
/// when the file does not exist yet.
///
/// # Errors
///
/// The errors of [`read_doc`], and `CaseError::Document` of kind `format` when claims.json
/// is of another format or version.
pub fn claims(run_dir: &Path) -> Result<ClaimsDoc, CaseError> {
    let doc: ClaimsDoc = read_doc(run_dir, CLAIMS_JSON)?.unwrap_or_else(ClaimsDoc::empty);
    if doc.format != super::research::CLAIMS_FORMAT
        || doc.format_version != super::research::CLAIMS_FORMAT_VERSION
    {
        return Err(DocError::new(
            CLAIMS_JSON,
            "formatVersion",
            super::proposal::DocErrorKind::Format,
            format!(
                "expected {} v{}",
                super::research::CLAIMS_FORMAT,
                super::research::CLAIMS_FORMAT_VERSION
            ),
        )
        .into());
    }
    Ok(doc)
}

/// `sha256:` of a run file's bytes, or `None` when absent.
///
/// # Errors
///
/// `CaseError::Io` when the file exists but cannot be read: reached through a symlink, not
/// a regular file, larger than the run-file cap, or unreadable.
pub fn file_hash(run_dir: &Path, rel: &str) -> Result<Option<String>, CaseError> {
    let path = run_dir.join(rel);
    super::commit::read(run_dir, rel, MAX_RUN_FILE_BYTES)
        .map(|b| b.map(|b| crate::canon::bytes_hash(&b)))
        .map_err(CaseError::io("read", path))
}

/// Records the current hash of `rel` as frozen.
///
/// # Errors
///
/// `CaseError::Rail` of kind `missing_output` when `rel` does not exist, and `Io` when it
/// cannot be read.
pub fn freeze(run_dir: &Path, lifecycle: &mut Lifecycle, rel: &str) -> Result<(), CaseError> {
    let hash = file_hash(run_dir, rel)?.ok_or_else(|| CaseError::Rail {
        rail: "freeze",
        kind: "missing_output",
        reason: format!("`{rel}` does not exist"),
    })?;
    lifecycle.frozen.insert(rel.to_string(), hash);
    Ok(())
}

/// Refuses when any frozen file changed or disappeared.
///
/// # Errors
///
/// `CaseError::Tamper` naming the first frozen file whose hash changed, or that was deleted
/// or replaced by a symlink or special file; other read failures are returned as they are.
pub fn check_frozen(run_dir: &Path, lifecycle: &Lifecycle) -> Result<(), CaseError> {
    for (rel, frozen) in &lifecycle.frozen {
        let now = match file_hash(run_dir, rel) {
            Ok(Some(hash)) => hash,
            Ok(None) => "(deleted)".into(),
            // Swapped for a symlink or a special file: tampering as much as an edit.
            Err(CaseError::Io { source, .. }) => format!("(unreadable: {source})"),
            Err(e) => return Err(e),
        };
        if &now != frozen {
            return Err(CaseError::Tamper {
                file: rel.clone(),
                frozen: frozen.clone(),
                now,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_of_another_format_or_version_are_refused() {
        let run = tempfile::tempdir().unwrap();
        std::fs::create_dir(run.path().join("output")).unwrap();
        let write = |format: &str, version: u32| {
            let doc = serde_json::json!({"format": format, "formatVersion": version, "claims": []});
            std::fs::write(run.path().join(CLAIMS_JSON), doc.to_string()).unwrap();
        };
        write(super::super::research::CLAIMS_FORMAT, 1);
        assert!(claims(run.path()).is_ok());
        for (format, version) in [("anvil-claims", 2), ("anvil-other", 1)] {
            write(format, version);
            let e = claims(run.path()).expect_err("another format or version was read");
            assert!(
                e.to_string().contains("expected anvil-claims v1"),
                "{format} v{version}: {e}"
            );
        }
    }

    /// evidence.json is the same bytes whether its excerpts are small (one buffer) or
    /// large (streamed through the staged file's writer): pretty JSON and a newline, every
    /// character that JSON escapes escaped, inside a rail and outside one.
    #[test]
    fn evidence_is_written_the_same_whether_streamed_or_not() {
        use super::super::evidence::acquire_external;
        use crate::skill::EvidenceKind;
        let line = "a \"quoted\" \\ back\tslash, \u{1}\u{1f} ctrl, é ünïcode ✓ 🚀\r\n";
        let doc_of = |excerpt: &str| {
            let mut doc = EvidenceDoc::empty();
            for n in 0..2 {
                let kinds = [EvidenceKind::External];
                let uri = format!("https://example.com/{n}");
                doc.insert(acquire_external("docs", &uri, excerpt, &kinds, "now").unwrap());
            }
            doc
        };
        let small = doc_of(line);
        let large = doc_of(&line.repeat((3 << 20) / line.len()));
        assert!(small.excerpt_bytes() < 1 << 20 && large.excerpt_bytes() > 2 << 20);
        for doc in [small, large] {
            let expected = serde_json::to_string_pretty(&doc).unwrap() + "\n";
            let run = tempfile::tempdir().unwrap();
            write_evidence(run.path(), &doc).unwrap();
            let written = std::fs::read(run.path().join(EVIDENCE_JSON)).unwrap();
            assert!(written == expected.as_bytes(), "outside a rail");
            super::super::commit::begin(run.path(), 1);
            write_evidence(run.path(), &doc).unwrap();
            let staged = super::super::commit::end();
            let (pending, hash) = &staged[EVIDENCE_JSON];
            let written = std::fs::read(pending).unwrap();
            assert!(written == expected.as_bytes(), "staged");
            assert_eq!(*hash, crate::canon::bytes_hash(expected.as_bytes()));
            assert_eq!(evidence(run.path()).unwrap().artifacts.len(), 2);
        }
    }
}
