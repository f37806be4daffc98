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

/// Early writeback for a file written in pieces, decided on the thread that will fsync
/// it: when writes there are durable, [`Writeback::start`] after each piece sets it going to
/// disk at once (Linux `sync_file_range`), so the fsync that ends the file waits for less.
/// Only a hint: the fsync is still what makes the file durable, and nothing else changes.
#[derive(Debug, Clone, Copy)]
pub struct Writeback {
    durable: bool,
}

impl Writeback {
    /// The writeback of the calling thread's durability mode (see [`relaxed`]), to hand to
    /// the thread that writes the file.
    #[must_use]
    pub fn here() -> Writeback {
        Writeback { durable: durable() }
    }

    /// Starts writing back to disk what of `file` is dirty and not already on its way,
    /// without waiting for it (`sync_file_range` over the whole file); nothing when relaxed,
    /// or off Linux. A refusal is ignored: the fsync still comes.
    pub fn start(self, file: &File) {
        #[cfg(target_os = "linux")]
        if self.durable {
            use std::os::fd::AsRawFd;
            // SAFETY: a plain system call on a descriptor `file` keeps open for the call;
            // it reads no memory of ours. Offset 0 and length 0 name the whole file.
            unsafe {
                libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (self, file);
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

/// Opens a regular file for reading, refusing a symlink (never followed), a FIFO, a device
/// or a directory. The open neither follows nor blocks, and the kind is checked on the
/// opened file, so a path swapped for a FIFO after it was looked at is not waited on.
///
/// # Errors
///
/// A symlink, a FIFO, a device or a directory at `path`, or any I/O error opening it.
pub fn open_regular(path: &Path) -> io::Result<(File, std::fs::Metadata)> {
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
    Ok((file, meta))
}

/// Reads a regular file, refusing a symlink (never followed), a FIFO, a device or a
/// directory, and anything longer than `cap` bytes.
///
/// # Errors
///
/// A symlink, a FIFO, a device or a directory at `path`, a file over `cap` bytes, or any
/// I/O error reading it.
pub fn read_regular(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let (file, meta) = open_regular(path)?;
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

/// The hash of the regular file at `path` (as [`crate::canon::bytes_hash`] writes it),
/// streamed, so a file of any size is hashed in bounded memory; opened as
/// [`open_regular`] opens it.
///
/// # Errors
///
/// Those of [`open_regular`], or an I/O error reading the file.
pub fn hash_regular(path: &Path) -> io::Result<String> {
    use sha2::Digest as _;
    let (mut file, _) = open_regular(path)?;
    let mut hasher = sha2::Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = fill(&mut file, &mut buf)?;
        hasher.update(&buf[..n]);
        if n < buf.len() {
            break;
        }
    }
    Ok(crate::canon::streamed_hash(hasher))
}

/// From this size on, bytes are hashed on a second thread while they are read or written
/// (a 16 MiB excerpt, the evidence.json that holds it): the hash then costs no wall time
/// beside the I/O. Below it, starting a thread costs more than the hash.
pub const PARALLEL_HASH_BYTES: usize = 1 << 20;

/// Reads `reader` to its end, or to `limit` bytes, and returns the bytes with their hash
/// (as [`crate::canon::bytes_hash`] writes it) in one pass over them. `expected`, the size
/// the file had when opened, sizes the buffer; from [`PARALLEL_HASH_BYTES`] on, a second
/// thread hashes each piece read while this one reads the next. A reader shorter or longer
/// than `expected` is read as it is: the caller compares the length with its limit. The
/// buffer is allocated up front, so the caller bounds `expected` (a file's size checked
/// against its cap) or `limit`.
///
/// # Errors
///
/// The reader's I/O error.
pub fn read_hashed(
    reader: &mut impl Read,
    expected: u64,
    limit: u64,
) -> io::Result<(Vec<u8>, String)> {
    use sha2::{Digest, Sha256};
    let sized = usize::try_from(expected.min(limit)).unwrap_or(usize::MAX);
    if sized < PARALLEL_HASH_BYTES {
        let mut bytes = Vec::with_capacity(sized + 1);
        reader.take(limit).read_to_end(&mut bytes)?;
        let hash = crate::canon::bytes_hash(&bytes);
        return Ok((bytes, hash));
    }
    let mut bytes = vec![0u8; sized];
    let pieces = bytes.chunks_mut(PARALLEL_HASH_BYTES);
    let (filled, mut hasher) = std::thread::scope(|s| -> io::Result<(usize, Sha256)> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<&[u8]>(2);
        let hashing = s.spawn(move || {
            let mut hasher = Sha256::new();
            for piece in rx {
                hasher.update(piece);
            }
            hasher
        });
        let mut filled = 0;
        for piece in pieces {
            let n = fill(reader, piece)?;
            filled += n;
            let piece: &[u8] = piece;
            // The hashing thread only stops when the channel closes, so a send cannot fail.
            let _ = tx.send(&piece[..n]);
            if n < piece.len() {
                break;
            }
        }
        drop(tx);
        let hasher = hashing
            .join()
            .map_err(|_| io::Error::other("hashing a file read failed"))?;
        Ok((filled, hasher))
    })?;
    bytes.truncate(filled);
    if filled == sized {
        // The file grew after it was opened: the rest, up to the limit, is read here.
        let mut rest = Vec::new();
        reader.take(limit - sized as u64).read_to_end(&mut rest)?;
        hasher.update(&rest);
        bytes.extend_from_slice(&rest);
    }
    Ok((bytes, crate::canon::streamed_hash(hasher)))
}

/// Reads into `buf` until it is full or the reader ends; returns how many bytes it read.
fn fill(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match reader.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
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

/// Makes a FIFO at `path`, for tests of what must never wait on one.
#[cfg(test)]
pub(crate) fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path and a mode; mkfifo touches nothing else.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file's streamed hash is its bytes' (across read sizes); a symlink, a FIFO and a
    /// directory are refused at once (a FIFO is not waited on).
    #[test]
    fn a_regular_file_hashes_as_its_bytes_and_nothing_else_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let file = dir.path().join("f");
        std::fs::write(&file, &bytes).unwrap();
        assert_eq!(
            hash_regular(&file).unwrap(),
            crate::canon::bytes_hash(&bytes)
        );
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        for refused in [&link, &fifo, &dir.path().to_path_buf()] {
            let e = hash_regular(refused).unwrap_err();
            assert_eq!(
                e.kind(),
                io::ErrorKind::InvalidInput,
                "{}",
                refused.display()
            );
        }
    }

    /// A reader that hands out `bytes` in reads of at most `step` bytes, is interrupted
    /// once before each, and fails instead of reading past `fail_at` when it is set.
    struct Uneven {
        bytes: Vec<u8>,
        at: usize,
        step: usize,
        interrupt: bool,
        fail_at: Option<usize>,
    }

    impl Uneven {
        fn new(bytes: Vec<u8>, step: usize) -> Uneven {
            Uneven {
                bytes,
                at: 0,
                step,
                interrupt: true,
                fail_at: None,
            }
        }
    }

    impl Read for Uneven {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if !self.interrupt {
                return Err(io::ErrorKind::Interrupted.into());
            }
            if self.fail_at.is_some_and(|at| self.at >= at) {
                return Err(io::Error::other("the disk went away"));
            }
            let n = buf.len().min(self.step).min(self.bytes.len() - self.at);
            buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    /// Bytes that differ at every offset a wrong piece boundary could shift.
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    /// Read whole, hashed on this thread or on the second one, a reader gives back its
    /// bytes and their hash, whatever sizes its reads come in.
    #[test]
    fn a_read_returns_the_bytes_and_their_hash_below_and_above_the_threshold() {
        for len in [
            0,
            1,
            4096,
            PARALLEL_HASH_BYTES - 1,
            PARALLEL_HASH_BYTES,
            3 * PARALLEL_HASH_BYTES + 7,
        ] {
            let bytes = pattern(len);
            let mut reader = Uneven::new(bytes.clone(), 100_003);
            let (read, hash) = read_hashed(&mut reader, len as u64, u64::MAX).unwrap();
            assert!(read == bytes, "{len} bytes read back differently");
            assert_eq!(hash, crate::canon::bytes_hash(&bytes), "{len} bytes");
        }
    }

    /// A file that shrank or grew after its size was taken is read as it is, up to the
    /// limit, and the hash is of what was read.
    #[test]
    fn a_reader_shorter_or_longer_than_expected_is_read_as_it_is_up_to_the_limit() {
        let big = 2 * PARALLEL_HASH_BYTES;
        let cases = [
            // (actual length, expected length, limit, bytes read)
            (big - 5, big, u64::MAX, big - 5),
            (big / 2 + 3, big, u64::MAX, big / 2 + 3),
            (big + 10, big, u64::MAX, big + 10),
            (big + 10, big, big as u64 + 4, big + 4),
            (big + 10, big + 10, big as u64 + 1, big + 1),
        ];
        for (actual, expected, limit, want) in cases {
            let bytes = pattern(actual);
            let mut reader = Uneven::new(bytes.clone(), 65_537);
            let (read, hash) = read_hashed(&mut reader, expected as u64, limit).unwrap();
            assert_eq!(read.len(), want, "{actual} bytes expected as {expected}");
            assert!(
                read == bytes[..want],
                "{actual} bytes expected as {expected}"
            );
            assert_eq!(hash, crate::canon::bytes_hash(&bytes[..want]));
        }
    }

    /// A read that fails part way is that error, on either path, never bytes.
    #[test]
    fn a_read_failing_part_way_is_the_error() {
        for len in [1000, 3 * PARALLEL_HASH_BYTES] {
            let mut reader = Uneven::new(pattern(len), 4096);
            reader.fail_at = Some(len / 2);
            let err = read_hashed(&mut reader, len as u64, u64::MAX).unwrap_err();
            assert_eq!(err.to_string(), "the disk went away", "{len} bytes");
        }
    }

    /// The writeback hint takes the durability of the thread it is taken on (the writing
    /// thread it is handed to is always durable by default).
    #[test]
    fn writeback_takes_the_durability_of_the_thread_it_is_taken_on() {
        assert!(Writeback::here().durable);
        assert!(!relaxed(Writeback::here).durable);
    }
}
