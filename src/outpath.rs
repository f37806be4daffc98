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
    #[error(
        "refusing to write `{}`: it is the input `{}` (the same file); an output goes to \
         another path",
        path.display(),
        input.display()
    )]
    IsInput { path: PathBuf, input: PathBuf },
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
            OutPathError::IsInput { .. } => "output_is_input",
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

/// Checks that `path` is none of `inputs`: not the same file, by device and inode, so
/// `./spec.yaml`, another spelling or a hard link is caught too. Writing over an input
/// would replace what the command read (the temp file and rename never fail on that).
///
/// # Errors
///
/// `path` exists and is the same file as one of `inputs`.
pub fn check_not_input(path: &Path, inputs: &[&Path]) -> Result<(), OutPathError> {
    use std::os::unix::fs::MetadataExt;
    // A path that is not there yet is no input; what else cannot be inspected is left to
    // `check_file` and the write.
    let Ok(out) = std::fs::metadata(path) else {
        return Ok(());
    };
    for input in inputs {
        if let Ok(meta) = std::fs::metadata(input)
            && (meta.dev(), meta.ino()) == (out.dev(), out.ino())
        {
            return Err(OutPathError::IsInput {
                path: path.to_path_buf(),
                input: input.to_path_buf(),
            });
        }
    }
    Ok(())
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

    #[test]
    fn an_output_that_is_an_input_is_refused_however_it_is_spelled() {
        let dir = tempfile::tempdir().unwrap();
        let spec = dir.path().join("spec.yaml");
        std::fs::write(&spec, "openapi: 3.0.0\n").unwrap();
        let linked = dir.path().join("linked.yaml");
        std::fs::hard_link(&spec, &linked).unwrap();
        let dotted = dir.path().join(".").join("spec.yaml");
        for out in [&spec, &linked, &dotted] {
            let e = check_not_input(out, &[Path::new("/dev/null"), &spec]).unwrap_err();
            assert_eq!(e.kind(), "output_is_input");
            let text = e.to_string();
            assert!(text.contains(&format!("`{}`", out.display())), "{text}");
            assert!(
                text.contains(&format!("input `{}`", spec.display())),
                "{text}"
            );
        }
        let other = dir.path().join("air.json");
        check_not_input(&other, &[&spec]).unwrap();
        std::fs::write(&other, "{}").unwrap();
        check_not_input(&other, &[&spec]).unwrap();
    }
}
