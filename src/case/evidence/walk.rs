//! The files inside the inspect scopes: every regular file a scope admits, found by walking
//! the repository. Case open walks them to find the snapshots a case declares; the tools
//! walk them to answer a batch.
//!
//! Invariant: symlinks are not followed and `.git` is not entered, so a walk lists only
//! files that are inside the repository under their own canonical path.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::Classifier;
use crate::skill::EvidenceKind;

/// A regular file inside the repository and an inspect scope.
#[derive(Debug, Clone)]
pub(crate) struct ScopedFile {
    /// Canonical, `/`-separated, repository-relative.
    pub rel: String,
    pub abs: PathBuf,
    pub kind: EvidenceKind,
    pub size: u64,
}

/// Why a walk (or a read after it) stopped: what it was doing, to which path.
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} `{}`: {source}", path.display())]
pub(crate) struct WalkError {
    pub action: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

impl WalkError {
    pub(crate) fn at(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(io::Error) -> WalkError {
        let path = path.into();
        move |source| WalkError {
            action,
            path,
            source,
        }
    }
}

/// Every regular file under `root` (canonical) inside a scope, in path order. Symlinks are
/// not followed: a link's in-repository target is listed under its own canonical path, and
/// a link leaving the repository is never listed. `.git` is repository metadata, not source.
pub(crate) fn scoped_files(root: &Path, scopes: &Classifier) -> Result<Vec<ScopedFile>, WalkError> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        let entries = fs::read_dir(&dir).map_err(WalkError::at("list", &dir))?;
        for entry in entries {
            let entry = entry.map_err(WalkError::at("list", &dir))?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let ty = entry
                .file_type()
                .map_err(WalkError::at("inspect", entry.path()))?;
            if ty.is_dir() {
                if !(prefix.is_empty() && name == ".git") {
                    stack.push((entry.path(), rel));
                }
            } else if ty.is_file()
                && let Some(kind) = scopes.classify(&rel)
            {
                let size = entry
                    .metadata()
                    .map_err(WalkError::at("inspect", entry.path()))?
                    .len();
                out.push(ScopedFile {
                    rel,
                    abs: entry.path(),
                    kind,
                    size,
                });
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
}
