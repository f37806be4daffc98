//! Loading an existing run directory: its canonical case document and views on disk.

use std::path::{Path, PathBuf};

use super::doc::{CASE_FORMAT, CASE_FORMAT_VERSION, CaseDoc};
use super::error::CaseError;

pub use super::layout::{
    CASE_JSON, JOURNAL, LIFECYCLE_JSON, OUTPUT_DIR, SOURCE_JSON, WORKSPACE_DIR,
};

/// A run directory with its parsed `case.json`.
#[derive(Debug, Clone)]
pub struct Run {
    pub dir: PathBuf,
    pub doc: CaseDoc,
    /// sha256 of case.json's bytes, as `sha256:<hex>`.
    pub case_hash: String,
}

impl Run {
    /// Opens the run at `dir`, refusing anything that is not a complete run.
    pub(super) fn load(dir: &Path) -> Result<Run, CaseError> {
        let not_run = |reason: &str| CaseError::NotARun {
            path: dir.to_path_buf(),
            reason: reason.to_string(),
        };
        if !dir.is_dir() {
            return Err(not_run("no such directory"));
        }
        let case_path = dir.join(CASE_JSON);
        // Never through a symlink: a parse error could quote the target back.
        let bytes = match crate::fsio::read_regular(&case_path, super::layout::MAX_RUN_FILE_BYTES) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(not_run("it has no case.json"));
            }
            Err(e) => return Err(CaseError::io("read", &case_path)(e)),
        };
        let text = std::str::from_utf8(&bytes).map_err(|_| CaseError::Corrupt {
            file: case_path.clone(),
            field: ".".into(),
            reason: "not UTF-8".into(),
        })?;
        let doc: CaseDoc = crate::json_path::from_str(text).map_err(|e| CaseError::Corrupt {
            file: case_path.clone(),
            field: e.path,
            reason: e.message,
        })?;
        if doc.format != CASE_FORMAT || doc.format_version != CASE_FORMAT_VERSION {
            return Err(CaseError::Corrupt {
                file: case_path,
                field: "formatVersion".into(),
                reason: format!(
                    "expected {CASE_FORMAT} v{CASE_FORMAT_VERSION}, found {} v{}",
                    doc.format, doc.format_version
                ),
            });
        }
        // Canonicalise first: `.` (how an agent names its own run) has no file name.
        let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let name = real.file_name().map(|n| n.to_string_lossy().into_owned());
        if name.as_deref() != Some(doc.identity.run_id.to_string().as_str()) {
            return Err(not_run("its directory name is not its run id"));
        }
        Ok(Run {
            dir: dir.to_path_buf(),
            case_hash: crate::canon::bytes_hash(&bytes),
            doc,
        })
    }

    #[must_use]
    pub fn output(&self, name: &str) -> PathBuf {
        self.dir.join(OUTPUT_DIR).join(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run opened on the bundled example; the temporary directory holds it.
    fn opened() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        crate::demo::write_example(dir.path()).unwrap();
        let req = crate::case::OpenRequest::new(
            dir.path().join("air.json"),
            dir.path().join("repo"),
            "annotate-unit",
            "op.create_payment.input.body.capture_timeout",
            dir.path().join("cases"),
            "test",
        );
        let run = crate::case::open(&req).unwrap().run_dir;
        (dir, run)
    }

    #[test]
    fn a_directory_without_case_json_is_not_a_run() {
        let dir = tempfile::tempdir().unwrap();
        match Run::load(dir.path()) {
            Err(CaseError::NotARun { reason, .. }) => assert_eq!(reason, "it has no case.json"),
            other => panic!("expected not_a_run, got {other:?}"),
        }
    }

    #[test]
    fn a_case_json_of_another_format_or_version_is_refused() {
        let (_dir, run) = opened();
        assert!(Run::load(&run).is_ok());
        let path = run.join(CASE_JSON);
        let original: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for (field, value) in [
            ("formatVersion", serde_json::json!(CASE_FORMAT_VERSION + 1)),
            ("format", serde_json::json!("anvil-case-other")),
        ] {
            let mut doc = original.clone();
            doc[field] = value;
            std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
            match Run::load(&run) {
                Err(CaseError::Corrupt { field: f, .. }) => assert_eq!(f, "formatVersion"),
                other => panic!("{field} changed: expected corrupt, got {other:?}"),
            }
        }
    }
}
