//! The database snapshots a case declares (`databaseSnapshots` in case.json): found at open
//! as the files inside an inspect scope named `*.snapshot.json` ([`SNAPSHOT_SUFFIX`]), or
//! named one by one, each recorded with its sha256 at open. The tools read only these.
//!
//! Invariant: a declared snapshot is a regular file inside the repository and a scope; its
//! hash is of the bytes read at open.

use std::path::Path;

use super::doc::DeclaredSnapshot;
use super::error::CaseError;
use super::evidence::walk::{WalkError, scoped_files};
use super::evidence::{self, Classifier};
use crate::limits::{Limit, read_capped};
use crate::skill::Scope;

/// The name ending that makes a scoped file a database snapshot.
pub const SNAPSHOT_SUFFIX: &str = ".snapshot.json";

/// Whether a scoped path declares a snapshot.
pub(crate) fn is_snapshot_path(rel: &str) -> bool {
    rel.ends_with(SNAPSHOT_SUFFIX)
}

/// The snapshots the case declares: the named ones (each must exist inside a scope), or
/// every `*.snapshot.json` in scope; each with its sha256 now.
pub(crate) fn declare(
    repo: &Path,
    scopes: &[Scope],
    named: &[String],
) -> Result<Vec<DeclaredSnapshot>, CaseError> {
    let bad = |path: &str, reason: String| CaseError::BadSnapshot {
        path: path.to_string(),
        reason,
    };
    if named.is_empty() {
        return discover(repo, scopes).map_err(|e| bad(".", e.to_string()));
    }
    let mut out = Vec::new();
    for path in named {
        let (rel, abs) =
            evidence::resolve_path(repo, path).map_err(|e| bad(path, e.to_string()))?;
        if evidence::classify(scopes, &rel).is_none() {
            return Err(bad(path, "it matches no inspect scope".into()));
        }
        let bytes = crate::fsio::read_regular(&abs, evidence::MAX_FILE_BYTES)
            .map_err(|e| bad(path, e.to_string()))?;
        if !out.iter().any(|s: &DeclaredSnapshot| s.path == rel) {
            out.push(DeclaredSnapshot {
                path: rel,
                sha256: crate::canon::bytes_hash(&bytes),
            });
        }
    }
    Ok(out)
}

/// The snapshots a case declares when none is named: every `*.snapshot.json` inside the
/// inspect scopes, with its sha256 now.
fn discover(repo_root: &Path, scopes: &[Scope]) -> Result<Vec<DeclaredSnapshot>, WalkError> {
    let root = std::fs::canonicalize(repo_root)
        .map_err(WalkError::at("resolve the repository", repo_root))?;
    let mut out = Vec::new();
    for f in scoped_files(&root, &Classifier::new(scopes))?
        .into_iter()
        .filter(|f| is_snapshot_path(&f.rel))
    {
        let bytes = read_capped(&f.abs, Limit::DocBytes)
            .map_err(|e| WalkError::at("read", &f.abs)(e.into()))?;
        out.push(DeclaredSnapshot {
            path: f.rel,
            sha256: crate::canon::bytes_hash(&bytes),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::EvidenceKind;

    #[test]
    fn named_snapshots_are_declared_once_each_with_their_hash() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join("db")).unwrap();
        std::fs::write(repo.path().join("db/a.snapshot.json"), b"{\"rows\": []}").unwrap();
        std::fs::write(repo.path().join("db/b.snapshot.json"), b"{\"rows\": [1]}").unwrap();
        let scopes = [Scope {
            glob: "db/*".into(),
            kind: EvidenceKind::Doc,
        }];
        let named = [
            "db/a.snapshot.json".to_string(),
            "db/b.snapshot.json".to_string(),
            "db/a.snapshot.json".to_string(),
        ];
        let declared = declare(repo.path(), &scopes, &named).unwrap();
        assert_eq!(
            declared,
            [
                DeclaredSnapshot {
                    path: "db/a.snapshot.json".into(),
                    sha256: crate::canon::bytes_hash(b"{\"rows\": []}"),
                },
                DeclaredSnapshot {
                    path: "db/b.snapshot.json".into(),
                    sha256: crate::canon::bytes_hash(b"{\"rows\": [1]}"),
                },
            ]
        );
    }
}
