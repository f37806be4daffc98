//! Where evidence bytes come from (R-GATE-3).
//!
//! Invariant: a local artifact's bytes are the repository as it was when the case opened —
//! the blob committed at the case's source revision, or, for a repository without a
//! commit, working-tree bytes whose hash matches the manifest recorded at open. Nothing
//! under the cases directory, nothing the agent wrote after open, and nothing uncommitted
//! in a git work tree can become evidence.

use std::path::{Path, PathBuf};

use super::EvidenceError;
use super::path::read_checked;
use crate::repo::committed::{Committed, CommittedError};
use crate::repo::digest::Recorded;

enum Reader {
    Committed(Box<Committed>),
    Digested(Recorded),
    /// Unit tests only: the working tree, trusted as is.
    #[cfg(test)]
    Worktree,
}

/// The repository as a case may cite it.
pub struct Source {
    revision: String,
    reader: Reader,
    /// Canonical directories whose files are never evidence (a cases dir inside the repo).
    excluded: Vec<PathBuf>,
}

impl Source {
    /// The repository at `revision` (a full commit id), read from git objects.
    ///
    /// # Errors
    ///
    /// `EvidenceError::Repository` when `root`'s git objects cannot be opened at `revision`
    /// (not a repository, or no such commit).
    pub fn committed(root: &Path, revision: &str) -> Result<Source, EvidenceError> {
        let tree = Committed::open(root, revision).map_err(|e| EvidenceError::Repository {
            reason: e.to_string(),
        })?;
        Ok(Source {
            revision: revision.to_string(),
            reader: Reader::Committed(Box::new(tree)),
            excluded: Vec::new(),
        })
    }

    /// A repository without a commit, as `manifest` recorded it at open.
    #[must_use]
    pub fn digested(revision: &str, manifest: Recorded) -> Source {
        Source {
            revision: revision.to_string(),
            reader: Reader::Digested(manifest),
            excluded: Vec::new(),
        }
    }

    /// The working tree as is, for unit tests of the path and range rules.
    #[cfg(test)]
    #[must_use]
    pub fn worktree(revision: &str) -> Source {
        Source {
            revision: revision.to_string(),
            reader: Reader::Worktree,
            excluded: Vec::new(),
        }
    }

    /// Never reads evidence under `dir` (canonical).
    #[must_use]
    pub fn excluding(mut self, dir: PathBuf) -> Source {
        self.excluded.push(dir);
        self
    }

    /// The revision artifacts record.
    #[must_use]
    pub fn revision(&self) -> &str {
        &self.revision
    }

    /// The bytes of the resolved file `rel` (at `abs` under the canonical `root`), with
    /// their hash when the read already had to compute it (a repository without a commit
    /// checks every file against its manifest): a whole-file excerpt then costs one hash
    /// pass, not two.
    pub(super) fn read(
        &self,
        root: &Path,
        abs: &Path,
        rel: &str,
    ) -> Result<(Vec<u8>, Option<String>), EvidenceError> {
        if self.excluded.iter().any(|dir| abs.starts_with(dir)) {
            return Err(EvidenceError::InsideCasesDir { path: rel.into() });
        }
        match &self.reader {
            Reader::Committed(tree) => tree
                .read(rel, super::MAX_FILE_BYTES)
                .map(|bytes| (bytes, None))
                .map_err(|e| committed_error(e, rel)),
            Reader::Digested(manifest) => {
                let (bytes, hash) = read_checked(root, abs, rel)?;
                let recorded =
                    manifest
                        .hash_of(rel)
                        .map_err(|reason| EvidenceError::Repository {
                            reason: format!("source.json: {reason}"),
                        })?;
                let Some(recorded) = recorded else {
                    return Err(EvidenceError::NotAtOpen { path: rel.into() });
                };
                if hash != recorded {
                    return Err(EvidenceError::ChangedSinceOpen { path: rel.into() });
                }
                Ok((bytes, Some(hash)))
            }
            #[cfg(test)]
            Reader::Worktree => read_checked(root, abs, rel).map(|(bytes, _)| (bytes, None)),
        }
    }
}

fn committed_error(e: CommittedError, rel: &str) -> EvidenceError {
    match e {
        CommittedError::NotCommitted { revision, .. } => EvidenceError::NotCommitted {
            path: rel.into(),
            revision,
        },
        CommittedError::NotABlob { what, .. } => EvidenceError::NotAFile {
            path: rel.into(),
            what,
        },
        CommittedError::TooLarge { size, limit, .. } => EvidenceError::FileTooLarge {
            path: rel.into(),
            size,
            limit,
        },
        other => EvidenceError::Repository {
            reason: other.to_string(),
        },
    }
}
