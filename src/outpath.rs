//! Where an operator-given output may be written (`case close --apply`, `--out` of `air`,
//! `report` and `battery`, `replay-model --transcript`).
//!
//! Invariant: an output file goes only onto a new path or over an existing regular file,
//! and an output directory only into a new path or an existing directory; a symlink, a
//! device, a FIFO, a socket or (for a file) a directory at the destination is refused by
//! name before anything is written. Writers still use temp file + rename, which never
//! writes through whatever sits at the destination — but a rename would *replace* it, so
//! a device node or a link is checked for first.

use std::io;
use std::path::{Path, PathBuf};

/// An output destination that must not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutPathError {
    #[error(
        "refusing to write `{}`: it is {what}; an output {rule}",
        path.display()
    )]
    Refused {
        path: PathBuf,
        what: &'static str,
        rule: &'static str,
    },
    #[error("cannot inspect the output `{}`: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl OutPathError {
    /// A stable name for `--json` error documents.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            OutPathError::Refused { .. } => "bad_output_path",
            OutPathError::Io { .. } => "io",
        }
    }
}

const FILE_RULE: &str = "goes to a new path or over a regular file";
const DIR_RULE: &str = "directory is a new path or an existing directory";

/// Checks that `path` may receive an output file: absent, or a regular file (not a link).
///
/// # Errors
///
/// A symlink, a directory, a device, a FIFO or a socket at `path`, or an I/O error looking
/// at it.
pub fn check_file(path: &Path) -> Result<(), OutPathError> {
    match what_is(path)? {
        None | Some(Entry::File) => Ok(()),
        Some(other) => Err(refused(path, other, FILE_RULE)),
    }
}

/// Checks that `path` may receive an output directory: absent, or a directory (not a link
/// to one).
///
/// # Errors
///
/// A symlink or anything but a directory at `path`, or an I/O error looking at it.
pub fn check_dir(path: &Path) -> Result<(), OutPathError> {
    match what_is(path)? {
        None | Some(Entry::Dir) => Ok(()),
        Some(other) => Err(refused(path, other, DIR_RULE)),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    File,
    Dir,
    Other(&'static str),
}

fn refused(path: &Path, entry: Entry, rule: &'static str) -> OutPathError {
    let what = match entry {
        Entry::File => "a regular file",
        Entry::Dir => "a directory",
        Entry::Other(what) => what,
    };
    OutPathError::Refused {
        path: path.to_path_buf(),
        what,
        rule,
    }
}

/// What is at `path` itself (a symlink is not followed); `None` when nothing is.
fn what_is(path: &Path) -> Result<Option<Entry>, OutPathError> {
    use std::os::unix::fs::FileTypeExt;
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(OutPathError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let ty = meta.file_type();
    Ok(Some(if ty.is_symlink() {
        Entry::Other("a symlink (not followed)")
    } else if ty.is_file() {
        Entry::File
    } else if ty.is_dir() {
        Entry::Dir
    } else if ty.is_fifo() {
        Entry::Other("a FIFO")
    } else if ty.is_char_device() || ty.is_block_device() {
        Entry::Other("a device")
    } else if ty.is_socket() {
        Entry::Other("a socket")
    } else {
        Entry::Other("not a regular file")
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_path_or_a_regular_file_may_receive_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.json");
        check_file(&file).unwrap();
        std::fs::write(&file, "{}").unwrap();
        check_file(&file).unwrap();
        check_dir(&dir.path().join("new")).unwrap();
        check_dir(dir.path()).unwrap();
    }

    #[test]
    fn a_device_a_link_or_a_directory_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        for (path, what) in [
            (Path::new("/dev/full"), "a device"),
            (link.as_path(), "a symlink (not followed)"),
            (dir.path(), "a directory"),
        ] {
            let e = check_file(path).unwrap_err();
            assert!(
                e.to_string()
                    .contains(&format!("`{}`: it is {what}", path.display())),
                "{e}"
            );
            assert_eq!(e.kind(), "bad_output_path");
        }
        let e = check_dir(&link).unwrap_err();
        assert!(e.to_string().contains("symlink"), "{e}");
        let e = check_dir(Path::new("/dev/null")).unwrap_err();
        assert!(e.to_string().contains("a device"), "{e}");
    }
}
