//! The repository as committed: file bytes read from git objects, in-process.
//!
//! Invariant: bytes returned here are the blob recorded under a path in the tree of one
//! named commit — never the working tree, never anything written after that commit. A
//! path that is not a regular blob in that tree (absent, a directory, a symlink, a
//! submodule) is refused by name.

use std::path::Path;

/// Why a committed file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CommittedError {
    #[error("`{}` is not a git repository that can be read: {reason}", root.display())]
    Open {
        root: std::path::PathBuf,
        reason: String,
    },
    #[error("commit {revision} cannot be read from the repository: {reason}")]
    Commit { revision: String, reason: String },
    #[error("`{path}` is not committed at revision {revision}")]
    NotCommitted { path: String, revision: String },
    #[error("`{path}` is {what} at revision {revision}, not a regular file")]
    NotABlob {
        path: String,
        revision: String,
        what: &'static str,
    },
    #[error("`{path}` at revision {revision} is {size} bytes, over the limit of {limit}")]
    TooLarge {
        path: String,
        revision: String,
        size: u64,
        limit: u64,
    },
    #[error("cannot read `{path}` at revision {revision}: {reason}")]
    Read {
        path: String,
        revision: String,
        reason: String,
    },
}

/// One commit's tree, opened for reading.
pub struct Committed {
    repo: gix::Repository,
    tree: gix::ObjectId,
    revision: String,
}

impl Committed {
    /// Opens `revision` (a full object id) in the repository whose work tree is `root`.
    /// The repository is opened isolated: no global or system configuration and no
    /// environment variable chooses what is read.
    ///
    /// # Errors
    ///
    /// `CommittedError::Open` when `root` is not a readable git repository;
    /// `CommittedError::Commit` when `revision` is not a full object id or does not name a
    /// commit with a readable tree.
    pub fn open(root: &Path, revision: &str) -> Result<Committed, CommittedError> {
        let repo = gix::open_opts(root, gix::open::Options::isolated()).map_err(|e| {
            CommittedError::Open {
                root: root.to_path_buf(),
                reason: e.to_string(),
            }
        })?;
        let commit_err = |reason: String| CommittedError::Commit {
            revision: revision.to_string(),
            reason,
        };
        let id =
            gix::ObjectId::from_hex(revision.as_bytes()).map_err(|e| commit_err(e.to_string()))?;
        let tree = {
            let commit = repo
                .find_commit(id)
                .map_err(|e| commit_err(e.to_string()))?;
            commit
                .tree_id()
                .map_err(|e| commit_err(e.to_string()))?
                .detach()
        };
        Ok(Committed {
            repo,
            tree,
            revision: revision.to_string(),
        })
    }

    /// The bytes of the regular file at `rel` (`/`-separated) in the commit's tree, at most
    /// `limit` bytes.
    ///
    /// # Errors
    ///
    /// `CommittedError::NotCommitted` when `rel` is absent from the tree;
    /// `CommittedError::NotABlob` when it is a directory, a symlink or a submodule;
    /// `CommittedError::TooLarge` when the blob is over `limit` bytes;
    /// `CommittedError::Read` when the tree or the object cannot be read.
    pub fn read(&self, rel: &str, limit: u64) -> Result<Vec<u8>, CommittedError> {
        let read_err = |reason: String| CommittedError::Read {
            path: rel.to_string(),
            revision: self.revision.clone(),
            reason,
        };
        let tree = self
            .repo
            .find_tree(self.tree)
            .map_err(|e| read_err(e.to_string()))?;
        let entry = tree
            .lookup_entry(rel.split('/').map(str::as_bytes))
            .map_err(|e| read_err(e.to_string()))?
            .ok_or_else(|| CommittedError::NotCommitted {
                path: rel.to_string(),
                revision: self.revision.clone(),
            })?;
        let mode = entry.mode();
        let what = if mode.is_tree() {
            Some("a directory")
        } else if mode.is_link() {
            Some("a symlink")
        } else if mode.is_commit() {
            Some("a submodule")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(CommittedError::NotABlob {
                path: rel.to_string(),
                revision: self.revision.clone(),
                what,
            });
        }
        let header = self
            .repo
            .find_header(entry.object_id())
            .map_err(|e| read_err(e.to_string()))?;
        if header.size() > limit {
            return Err(CommittedError::TooLarge {
                path: rel.to_string(),
                revision: self.revision.clone(),
                size: header.size(),
                limit,
            });
        }
        let blob = self
            .repo
            .find_blob(entry.object_id())
            .map_err(|e| read_err(e.to_string()))?;
        Ok(blob.detach().data)
    }
}

/// Whether `revision` names a commit (a full object id) rather than `none`.
#[must_use]
pub fn is_commit_id(revision: &str) -> bool {
    super::is_object_id(revision)
}
