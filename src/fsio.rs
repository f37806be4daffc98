//! Atomic file writes.
//!
//! Invariant: a reader never observes a half-written file. Every document the engine writes
//! goes to a temporary file in the same directory, is fsynced, then renamed over the target;
//! the directory is fsynced so the rename survives a crash.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically (temp file + fsync + rename + directory fsync).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    // A bare file name has an empty parent: that is the current directory.
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", ulid::Ulid::new()));
    let result = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Serialises `value` as pretty JSON (trailing newline) and writes it atomically.
pub fn write_json_atomic<T: serde::Serialize>(path: &Path, value: &T) -> io::Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
    text.push('\n');
    write_atomic(path, text.as_bytes())
}

/// fsyncs a directory so renames inside it are durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Appends one line to a file and fsyncs it. Used for append-only journals, where each line
/// is a whole record: a torn final line is detectable and ignored by readers.
pub fn append_line(path: &Path, line: &str) -> io::Result<()> {
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    let mut buf = String::with_capacity(line.len() + 1);
    buf.push_str(line);
    buf.push('\n');
    file.write_all(buf.as_bytes())?;
    file.sync_all()
}

/// Absolute form of `path` without resolving symlinks (for recording where inputs live).
pub fn absolute(path: &Path) -> io::Result<PathBuf> {
    std::path::absolute(path)
}
