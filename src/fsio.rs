//! Atomic file writes.
//!
//! Invariant: a reader never observes a half-written file. Every document the engine writes
//! goes to a temporary file in the same directory, is fsynced, then renamed over the target;
//! the directory is fsynced so the rename survives a crash.

use std::cell::Cell;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

thread_local! {
    /// Relaxed durability on this thread: atomic renames without fsync (see [`relaxed`]).
    static RELAXED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with relaxed durability on this thread: writes stay atomic (temp file +
/// rename, so a reader never sees half a file) but skip fsync, so they may be lost by a
/// power failure. For disposable runs only — the battery's per-trial cases, whose records
/// are written durably by the battery itself once the trial ends.
pub fn relaxed<T>(f: impl FnOnce() -> T) -> T {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            RELAXED.with(|r| r.set(self.0));
        }
    }
    let _reset = Reset(RELAXED.with(|r| r.replace(true)));
    f()
}

/// Whether writes on this thread are fsynced (see [`relaxed`]).
fn durable() -> bool {
    !RELAXED.with(Cell::get)
}

/// Writes `bytes` to `path` atomically (temp file + fsync + rename + directory fsync).
///
/// # Errors
///
/// Any I/O error creating, writing or syncing the temporary file, renaming it over `path`,
/// or syncing the directory; the temporary file is removed and `path` keeps its old
/// content.
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
        sync_file(&file, &tmp)?;
        fs::rename(&tmp, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Serialises `value` as pretty JSON (trailing newline) and writes it atomically.
///
/// # Errors
///
/// A value that does not serialise, or any error of [`write_atomic`].
pub fn write_json_atomic<T: serde::Serialize>(path: &Path, value: &T) -> io::Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
    text.push('\n');
    write_atomic(path, text.as_bytes())
}

/// fsyncs a directory so renames inside it are durable; nothing when durability is
/// relaxed on this thread (see [`relaxed`]).
///
/// # Errors
///
/// The I/O error opening or syncing `dir`.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    if durable() {
        sync_recorded(&File::open(dir)?, dir)
    } else {
        Ok(())
    }
}

/// fsyncs `file`, opened from `path`; nothing when durability is relaxed on this thread
/// (see [`relaxed`]). With [`sync_dir`], every fsync the engine makes: relaxed mode is
/// decided here and nowhere else.
///
/// # Errors
///
/// The I/O error syncing `file`.
pub fn sync_file(file: &File, path: &Path) -> io::Result<()> {
    if durable() {
        sync_recorded(file, path)
    } else {
        Ok(())
    }
}

/// fsyncs `file`, and in unit-test builds records `path` as synced on this thread.
fn sync_recorded(file: &File, path: &Path) -> io::Result<()> {
    file.sync_all()?;
    #[cfg(test)]
    SYNCED.with(|s| s.borrow_mut().push(path.to_path_buf()));
    #[cfg(not(test))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
thread_local! {
    /// Every file and directory synced on this thread, in order: a power
    /// failure is the only thing that tells a synced file from an unsynced one, so the
    /// unit tests read this instead.
    static SYNCED: std::cell::RefCell<Vec<PathBuf>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The files and directories synced on this thread since the last call, in order (unit
/// tests only).
#[cfg(test)]
pub(crate) fn take_synced() -> Vec<PathBuf> {
    SYNCED.with(|s| std::mem::take(&mut *s.borrow_mut()))
}

/// Appends one line to a file and fsyncs it. Used for append-only journals, where each line
/// is a whole record: a torn final line is detectable and ignored by readers.
///
/// # Errors
///
/// Any I/O error opening (a symlink is refused), writing or syncing the file.
pub fn append_line(path: &Path, line: &str) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let mut buf = String::with_capacity(line.len() + 1);
    buf.push_str(line);
    buf.push('\n');
    file.write_all(buf.as_bytes())?;
    sync_file(&file, path)
}

/// Reads a regular file, refusing a symlink (never followed), a FIFO, a device or a
/// directory, and anything longer than `cap` bytes.
///
/// # Errors
///
/// A symlink, a FIFO, a device or a directory at `path`, a file over `cap` bytes, or any
/// I/O error reading it.
pub fn read_regular(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                io::Error::new(io::ErrorKind::InvalidInput, "is a symlink (not followed)")
            } else {
                e
            }
        })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is not a regular file",
        ));
    }
    if meta.len() > cap {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {} bytes, over the cap of {cap}", meta.len()),
        ));
    }
    let mut out = Vec::with_capacity(meta.len() as usize);
    file.take(cap.saturating_add(1)).read_to_end(&mut out)?;
    if out.len() as u64 > cap {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("grew past the cap of {cap} bytes while read"),
        ));
    }
    Ok(out)
}

/// Absolute form of `path` without resolving symlinks (for recording where inputs live).
///
/// # Errors
///
/// The I/O error reading the current directory, for a relative `path`.
pub fn absolute(path: &Path) -> io::Result<PathBuf> {
    std::path::absolute(path)
}

/// Writes `bytes` to a new file at `path` (refusing an existing one), fsynced when
/// durable. The rail commit protocol stages its files with it, and open writes the files
/// of the run it stages.
///
/// # Errors
///
/// An existing file at `path`, or any I/O error writing or syncing the new one.
pub fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_new_unsynced(path, bytes).and_then(|file| sync_file(&file, path))
}

/// [`write_new`] without the fsync, for a file that is rewritten before anything depends
/// on it; returns the open file.
///
/// # Errors
///
/// An existing file at `path`, or any I/O error writing the new one.
pub fn write_new_unsynced(path: &Path, bytes: &[u8]) -> io::Result<File> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(path)?;
    let half = bytes.len() / 2;
    file.write_all(&bytes[..half])?;
    crash_point("stage-partial");
    file.write_all(&bytes[half..])?;
    Ok(file)
}

/// Crash injection for the crash-safety trials: in a debug build, when `ANVIL_CRASH_AT`
/// names this point, the process aborts here, as `kill -9` would. Release builds compile
/// it to nothing, so no environment variable can crash a production binary.
#[inline]
pub fn crash_point(name: &str) {
    #[cfg(debug_assertions)]
    if std::env::var_os("ANVIL_CRASH_AT").is_some_and(|v| v == name) {
        std::process::abort();
    }
    #[cfg(not(debug_assertions))]
    let _ = name;
}
