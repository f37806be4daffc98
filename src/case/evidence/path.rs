//! Safe path resolution and checked reading for evidence: turns a caller-given,
//! repository-relative path into a canonical in-repository file (refusing absolute paths,
//! `..` escapes, symlinks that leave the repository, directories and special files), and
//! reads it with size, same-file and text checks. Nothing here writes to the repository.

use std::fs::{self, File};
use std::io;
use std::path::{Component, Path, PathBuf};

use super::{EvidenceError, MAX_FILE_BYTES};

/// Resolves a repository-relative path safely (the rules of [`acquire`](super::acquire)) to
/// its canonical relative path (`/`-separated, symlinks resolved) and its absolute path. The
/// target must be an existing regular file.
///
/// # Errors
///
/// An [`EvidenceError`] when the repository root cannot be canonicalised, or `path` is
/// empty (`empty_path`), absolute (`absolute_path`), escapes the root through `..`
/// (`path_escape`) or a symlink (`symlink_escape`), does not exist (`missing_file`), is not
/// a regular file (`not_a_file`), or is not valid UTF-8 (`non_utf8_path`).
pub fn resolve_path(repo_root: &Path, path: &str) -> Result<(String, PathBuf), EvidenceError> {
    let root = canonical_root(repo_root)?;
    resolve_under(&root, path)
}

pub(super) fn canonical_root(repo_root: &Path) -> Result<PathBuf, EvidenceError> {
    fs::canonicalize(repo_root).map_err(EvidenceError::io("resolve the repository", repo_root))
}

/// [`resolve_path`] against an already canonical root.
pub(super) fn resolve_under(root: &Path, path: &str) -> Result<(String, PathBuf), EvidenceError> {
    if path.is_empty() {
        return Err(EvidenceError::EmptyPath);
    }
    let given = Path::new(path);
    if given.has_root() || given.is_absolute() {
        return Err(EvidenceError::AbsolutePath { path: path.into() });
    }
    let mut names = Vec::new();
    for component in given.components() {
        match component {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            Component::ParentDir => return Err(EvidenceError::PathEscape { path: path.into() }),
            Component::RootDir | Component::Prefix(_) => {
                return Err(EvidenceError::AbsolutePath { path: path.into() });
            }
        }
    }

    // Walk one component at a time so every symlink on the way is seen and resolved;
    // `current` stays canonical throughout.
    let missing = || EvidenceError::MissingFile { path: path.into() };
    let mut current = root.to_path_buf();
    for name in names {
        let next = current.join(name);
        let meta = match fs::symlink_metadata(&next) {
            Ok(meta) => meta,
            Err(e) if is_absent(&e) => return Err(missing()),
            Err(e) => return Err(EvidenceError::io("inspect", &next)(e)),
        };
        if !meta.file_type().is_symlink() {
            current = next;
            continue;
        }
        let link = relative_display(root, &next);
        match fs::canonicalize(&next) {
            Ok(target) if target.starts_with(root) => current = target,
            Ok(target) => {
                return Err(EvidenceError::SymlinkEscape {
                    path: path.into(),
                    link,
                    target,
                });
            }
            Err(e) if is_absent(&e) => {
                // A dangling link: name it an escape when its text already points outside.
                let target =
                    fs::read_link(&next).map_err(EvidenceError::io("read symlink", &next))?;
                let lexical = lexical_join(&current, &target);
                if !lexical.starts_with(root) {
                    return Err(EvidenceError::SymlinkEscape {
                        path: path.into(),
                        link,
                        target: lexical,
                    });
                }
                return Err(missing());
            }
            Err(e) => return Err(EvidenceError::io("resolve symlink", &next)(e)),
        }
    }

    let meta = match fs::metadata(&current) {
        Ok(meta) => meta,
        Err(e) if is_absent(&e) => return Err(missing()),
        Err(e) => return Err(EvidenceError::io("inspect", &current)(e)),
    };
    if meta.is_dir() {
        return Err(EvidenceError::NotAFile {
            path: path.into(),
            what: "a directory",
        });
    }
    if !meta.is_file() {
        return Err(EvidenceError::NotAFile {
            path: path.into(),
            what: "a special file",
        });
    }
    let rel = relative_string(root, &current)
        .ok_or_else(|| EvidenceError::NonUtf8Path { path: path.into() })?;
    Ok((rel, current))
}

fn is_absent(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// `base` joined with `target`, with `.` and `..` folded lexically (no filesystem access).
fn lexical_join(base: &Path, target: &Path) -> PathBuf {
    let mut out = if target.is_absolute() {
        PathBuf::new()
    } else {
        base.to_path_buf()
    };
    for component in target.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `abs` relative to `root`, `/`-separated; `None` when a name is not UTF-8 or `abs` is
/// not under `root`.
fn relative_string(root: &Path, abs: &Path) -> Option<String> {
    let rel = abs.strip_prefix(root).ok()?;
    let names = rel
        .components()
        .map(|c| match c {
            Component::Normal(name) => name.to_str(),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(names.join("/"))
}

fn relative_display(root: &Path, abs: &Path) -> String {
    relative_string(root, abs).unwrap_or_else(|| abs.display().to_string())
}

/// Opens and reads a resolved file, refusing oversized files and detecting a path that
/// was swapped (for example for a symlink) between resolution and opening; returns its
/// bytes with their hash, taken in the same pass.
pub(super) fn read_checked(
    root: &Path,
    abs: &Path,
    rel: &str,
) -> Result<(Vec<u8>, String), EvidenceError> {
    let mut file = match File::open(abs) {
        Ok(file) => file,
        Err(e) if is_absent(&e) => return Err(EvidenceError::MissingFile { path: rel.into() }),
        Err(e) => return Err(EvidenceError::io("open", abs)(e)),
    };
    let meta = file.metadata().map_err(EvidenceError::io("inspect", abs))?;
    if !meta.is_file() {
        return Err(EvidenceError::NotAFile {
            path: rel.into(),
            what: if meta.is_dir() {
                "a directory"
            } else {
                "a special file"
            },
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(EvidenceError::FileTooLarge {
            path: rel.into(),
            size: meta.len(),
            limit: MAX_FILE_BYTES,
        });
    }
    ensure_same_file(root, abs, rel, &meta)?;
    // Sized from the metadata (at most the limit, checked above), so a file read whole
    // takes one allocation, and hashed as it is read; reading one byte past the limit
    // still bounds a file that grew since.
    let (bytes, hash) = crate::fsio::read_hashed(&mut file, meta.len(), MAX_FILE_BYTES + 1)
        .map_err(EvidenceError::io("read", abs))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(EvidenceError::FileTooLarge {
            path: rel.into(),
            size: bytes.len() as u64,
            limit: MAX_FILE_BYTES,
        });
    }
    Ok((bytes, hash))
}

/// After opening: the path must still be canonical, inside the repository, and name the
/// very file that was opened.
fn ensure_same_file(
    root: &Path,
    abs: &Path,
    rel: &str,
    opened: &fs::Metadata,
) -> Result<(), EvidenceError> {
    let changed = || EvidenceError::ConcurrentChange { path: rel.into() };
    let now = fs::canonicalize(abs).map_err(|_| changed())?;
    if now != abs || !now.starts_with(root) {
        return Err(changed());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let at_path = fs::metadata(abs).map_err(|_| changed())?;
        if at_path.dev() != opened.dev() || at_path.ino() != opened.ino() {
            return Err(changed());
        }
    }
    #[cfg(not(unix))]
    let _ = opened;
    Ok(())
}

/// Refuses binary, non-UTF-8 and empty files.
pub(super) fn check_text(bytes: Vec<u8>, rel: &str) -> Result<String, EvidenceError> {
    if let Some(offset) = memchr::memchr(0, &bytes) {
        return Err(EvidenceError::BinaryFile {
            path: rel.into(),
            offset,
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| EvidenceError::NotUtf8 {
        path: rel.into(),
        offset: e.utf8_error().valid_up_to(),
    })?;
    if text.is_empty() {
        return Err(EvidenceError::EmptyFile { path: rel.into() });
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        (dir, root)
    }

    /// A symlink loop does not resolve for a reason other than absence: it is reported as
    /// the filesystem's own error on the link, never as a missing file.
    #[test]
    fn a_symlink_loop_is_the_filesystems_error_not_a_missing_file() {
        let (_dir, root) = root();
        std::os::unix::fs::symlink("b.py", root.join("a.py")).unwrap();
        std::os::unix::fs::symlink("a.py", root.join("b.py")).unwrap();
        match resolve_under(&root, "a.py") {
            Err(EvidenceError::Io { action, path, .. }) => {
                assert_eq!(action, "resolve symlink");
                assert_eq!(path, root.join("a.py"));
            }
            other => panic!("a symlink loop resolved as {other:?}"),
        }
        // A dangling link inside the repository is the missing file it names.
        std::os::unix::fs::symlink("gone.py", root.join("c.py")).unwrap();
        assert!(matches!(
            resolve_under(&root, "c.py"),
            Err(EvidenceError::MissingFile { .. })
        ));
    }

    /// A link out of the repository is refused naming the link by its repository path.
    #[test]
    fn a_symlink_escape_names_the_link_relative_to_the_repository() {
        let (_dir, root) = root();
        let (_out, outside) = self::root();
        fs::write(outside.join("secret.py"), "x = 1\n").unwrap();
        fs::create_dir(root.join("src")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("src/vendor")).unwrap();
        match resolve_under(&root, "src/vendor/secret.py") {
            Err(EvidenceError::SymlinkEscape { link, target, .. }) => {
                assert_eq!(link, "src/vendor");
                assert_eq!(target, outside);
            }
            other => panic!("an escaping link resolved as {other:?}"),
        }
    }

    /// A path opened by read_checked must already be canonical: a link, even to a file
    /// inside the repository, means the path changed after it was resolved.
    #[test]
    fn a_path_that_is_no_longer_canonical_when_opened_is_a_concurrent_change() {
        let (_dir, root) = root();
        fs::write(root.join("real.py"), "x = 1\n").unwrap();
        std::os::unix::fs::symlink("real.py", root.join("link.py")).unwrap();
        assert!(matches!(
            read_checked(&root, &root.join("link.py"), "link.py"),
            Err(EvidenceError::ConcurrentChange { path }) if path == "link.py"
        ));
        assert_eq!(
            read_checked(&root, &root.join("real.py"), "real.py").unwrap(),
            (b"x = 1\n".to_vec(), crate::canon::bytes_hash(b"x = 1\n"))
        );
    }

    /// The file at the path must be the one opened: another file's identity, even on the
    /// same device, is a concurrent change.
    #[test]
    fn a_different_file_at_the_opened_path_is_a_concurrent_change() {
        let (_dir, root) = root();
        fs::write(root.join("a.py"), "a\n").unwrap();
        fs::write(root.join("b.py"), "b\n").unwrap();
        let other = fs::metadata(root.join("b.py")).unwrap();
        assert!(matches!(
            ensure_same_file(&root, &root.join("a.py"), "a.py", &other),
            Err(EvidenceError::ConcurrentChange { .. })
        ));
        let same = fs::metadata(root.join("a.py")).unwrap();
        assert!(ensure_same_file(&root, &root.join("a.py"), "a.py", &same).is_ok());
    }

    /// An open that fails for a reason other than absence (here a symlink loop put in
    /// place after resolution) is that error, never a missing file.
    #[test]
    fn an_open_failing_for_another_reason_is_that_error_not_a_missing_file() {
        let (_dir, root) = root();
        std::os::unix::fs::symlink("b.py", root.join("a.py")).unwrap();
        std::os::unix::fs::symlink("a.py", root.join("b.py")).unwrap();
        match read_checked(&root, &root.join("a.py"), "a.py") {
            Err(EvidenceError::Io { action, .. }) => assert_eq!(action, "open"),
            other => panic!("a looping path opened as {other:?}"),
        }
    }

    /// A file gone between resolution and opening is the missing file, not an I/O error.
    #[test]
    fn a_file_removed_before_it_is_opened_is_missing() {
        let (_dir, root) = root();
        let abs = root.join("gone.py");
        assert!(matches!(
            read_checked(&root, &abs, "gone.py"),
            Err(EvidenceError::MissingFile { path }) if path == "gone.py"
        ));
    }

    /// The size limit admits a file of exactly the limit and refuses one byte more
    /// (sparse files: nothing is written).
    #[test]
    fn a_file_of_exactly_the_size_limit_is_read_and_one_byte_more_is_refused() {
        let (_dir, root) = root();
        let abs = root.join("big.md");
        let file = File::create(&abs).unwrap();
        file.set_len(MAX_FILE_BYTES).unwrap();
        let (bytes, hash) =
            read_checked(&root, &abs, "big.md").expect("a file at the limit is read");
        assert_eq!(bytes.len() as u64, MAX_FILE_BYTES);
        assert_eq!(hash, crate::canon::bytes_hash(&bytes));
        drop(bytes);
        file.set_len(MAX_FILE_BYTES + 1).unwrap();
        assert!(matches!(
            read_checked(&root, &abs, "big.md"),
            Err(EvidenceError::FileTooLarge { size, .. }) if size == MAX_FILE_BYTES + 1
        ));
    }

    /// A name the filesystem refuses to look up (longer than a name can be) is reported as
    /// that refusal, since nothing says a file is missing; an absent one is missing.
    #[test]
    fn a_name_the_filesystem_cannot_look_up_is_its_error_not_a_missing_file() {
        let (_dir, root) = root();
        let long = format!("{}.py", "n".repeat(300));
        match resolve_under(&root, &long) {
            Err(EvidenceError::Io { action, .. }) => assert_eq!(action, "inspect"),
            other => panic!("a 303-byte name resolved as {other:?}"),
        }
        assert!(matches!(
            resolve_under(&root, "absent/file.py"),
            Err(EvidenceError::MissingFile { .. })
        ));
    }
}
