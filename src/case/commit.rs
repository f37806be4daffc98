//! The rail commit protocol: staged writes, one journal line as the commit point, and
//! roll-forward recovery.
//!
//! Invariant: a rail's effect on its run is all or nothing at any kill point. While a rail
//! runs, every file it writes is staged beside its target as `.<name>.pending-<fence>`
//! (fsynced; the lifecycle.json a body stages is not, since the commit rewrites it with the
//! chain head and syncs that) and reads see the staged bytes; the journal line that names
//! each file's new hash is the commit point; the renames come after it. Under the run
//! lock, [`recover`] completes each file's rename from the line that last wrote it, when
//! its pending copy survives, and deletes every other pending or temporary file, so no
//! reader ever works from half a rail.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use super::error::CaseError;
use super::journal::Journal;
use super::layout::{LIFECYCLE_JSON, MAX_RUN_FILE_BYTES, OUTPUT_DIR};
use crate::canon::bytes_hash;

/// The files one executing rail has written so far.
struct Stage {
    run_dir: PathBuf,
    fence: u64,
    /// Whether a staged lifecycle.json is fsynced. Not in a rail's body: the commit
    /// always reads that one back, records the chain head in it and stages the result
    /// (fsynced) before the line that commits it, so the body's copy is never committed.
    sync_lifecycle: bool,
    /// Run-relative path → (pending file, its bytes' hash).
    files: BTreeMap<String, (PathBuf, String)>,
}

thread_local! {
    static STAGE: RefCell<Option<Stage>> = const { RefCell::new(None) };
}

/// The pending name of `rel` for the rail holding fence `fence`.
fn pending_path(run_dir: &Path, rel: &str, fence: u64) -> PathBuf {
    let target = run_dir.join(rel);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.pending-{fence}"))
}

/// Refuses `rel` when its directory in the run (output/) has been swapped for a symlink:
/// nothing is read, written or completed through it.
fn not_through_link(run_dir: &Path, rel: &str) -> io::Result<()> {
    let Some(parent) = Path::new(rel)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
    else {
        return Ok(());
    };
    match std::fs::symlink_metadata(run_dir.join(parent)) {
        Ok(m) if m.file_type().is_symlink() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is a symlink (not followed)", parent.display()),
        )),
        _ => Ok(()),
    }
}

fn staging_for(run_dir: &Path) -> bool {
    STAGE.with(|s| s.borrow().as_ref().is_some_and(|st| st.run_dir == run_dir))
}

/// Writes `bytes` as the new content of `rel` in the run at `run_dir`: staged when a rail
/// of that run executes on this thread, else written atomically at once (open, tools).
///
/// # Errors
///
/// An I/O error when `rel` would be reached through a symlink under `run_dir`, or when
/// writing the file (atomically, or the staged pending file during a rail) fails.
pub fn write(run_dir: &Path, rel: &str, bytes: &[u8]) -> io::Result<()> {
    not_through_link(run_dir, rel)?;
    if !staging_for(run_dir) {
        return crate::fsio::write_atomic(&run_dir.join(rel), bytes);
    }
    let sync = rel != LIFECYCLE_JSON
        || STAGE.with(|s| s.borrow().as_ref().is_none_or(|st| st.sync_lifecycle));
    stage(run_dir, rel, |pending| {
        if sync {
            write_and_hash(pending, bytes)
        } else {
            crate::fsio::write_new_unsynced(pending, bytes).map(|_| bytes_hash(bytes))
        }
    })
}

/// [`write`] for a document too large to hold twice (an evidence.json with a 16 MiB
/// excerpt): `produce` writes the bytes into a sink, and during a rail a second thread
/// hashes and writes each megabyte while the next is produced, so serialising, hashing
/// and writing overlap and no whole copy of the document is ever held.
///
/// # Errors
///
/// The errors of [`write`], and the error `produce` returns (the rail then fails and its
/// pending file is discarded).
pub fn write_streamed(
    run_dir: &Path,
    rel: &str,
    produce: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
) -> io::Result<()> {
    not_through_link(run_dir, rel)?;
    if !staging_for(run_dir) {
        let mut bytes = Vec::new();
        produce(&mut bytes)?;
        return crate::fsio::write_atomic(&run_dir.join(rel), &bytes);
    }
    stage(run_dir, rel, |pending| {
        // A failed producer or write leaves no half file for the sweep to find.
        stream_and_hash(pending, produce).inspect_err(|_| {
            let _ = std::fs::remove_file(pending);
        })
    })
}

/// Writes the pending file of `rel` for the executing rail with `write` (which returns
/// the hash of what it wrote) and records it as staged.
fn stage(
    run_dir: &Path,
    rel: &str,
    write: impl FnOnce(&Path) -> io::Result<String>,
) -> io::Result<()> {
    let fence = STAGE.with(|s| s.borrow().as_ref().map_or(0, |st| st.fence));
    let pending = pending_path(run_dir, rel, fence);
    let hash = write(&pending)?;
    crate::fsio::crash_point("stage-written");
    STAGE.with(|s| {
        if let Some(st) = s.borrow_mut().as_mut() {
            st.files.insert(rel.to_string(), (pending.clone(), hash));
        }
    });
    Ok(())
}

/// Writes `bytes` as the new file `pending` and returns their hash.
fn write_and_hash(pending: &Path, bytes: &[u8]) -> io::Result<String> {
    if bytes.len() < crate::fsio::PARALLEL_HASH_BYTES {
        crate::fsio::write_new(pending, bytes)?;
        return Ok(bytes_hash(bytes));
    }
    std::thread::scope(|s| {
        let hashing = s.spawn(|| bytes_hash(bytes));
        let written = crate::fsio::write_new(pending, bytes);
        let hash = hashing
            .join()
            .map_err(|_| io::Error::other("hashing a staged file failed"))?;
        written.map(|()| hash)
    })
}

/// How many bytes [`stream_and_hash`] hands its writing thread at a time.
const STREAM_CHUNK: usize = 1 << 20;

/// Creates `pending` with the bytes `produce` writes and returns their hash: `produce`
/// runs on this thread and fills one chunk while a second thread hashes and writes the
/// one before; the file is fsynced here, where the thread's durability mode is.
fn stream_and_hash(
    pending: &Path,
    produce: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
) -> io::Result<String> {
    use sha2::{Digest, Sha256};
    use std::io::Write as _;

    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(pending)?;
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(1);
    // The fsync below is this thread's; the writer starts each chunk's writeback as it goes.
    let writeback = crate::fsio::Writeback::here();
    let (file, hash) = std::thread::scope(|s| {
        let writer = s.spawn(move || -> io::Result<(std::fs::File, String)> {
            let mut file = file;
            let mut hasher = Sha256::new();
            for (n, chunk) in rx.into_iter().enumerate() {
                hasher.update(&chunk);
                file.write_all(&chunk)?;
                writeback.start(&file);
                if n == 0 {
                    crate::fsio::crash_point("stage-partial");
                }
            }
            Ok((file, crate::canon::streamed_hash(hasher)))
        });
        let mut sink = ChunkSink {
            chunk: Vec::with_capacity(STREAM_CHUNK),
            tx,
        };
        let produced = produce(&mut sink).and_then(|()| sink.send());
        // Dropping the sink closes the channel: the writer finishes what it was sent.
        drop(sink);
        let written = writer
            .join()
            .map_err(|_| io::Error::other("writing a staged file failed"))?;
        // The writer's own error first: a sink that could not send was its consequence.
        let written = written?;
        produced.map(|()| written)
    })?;
    crate::fsio::sync_file(&file, pending)?;
    Ok(hash)
}

/// The sink [`stream_and_hash`] gives its producer: full chunks go to the writing thread.
struct ChunkSink {
    chunk: Vec<u8>,
    tx: std::sync::mpsc::SyncSender<Vec<u8>>,
}

impl ChunkSink {
    /// Hands the chunk so far to the writing thread.
    fn send(&mut self) -> io::Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let full = std::mem::replace(&mut self.chunk, Vec::with_capacity(STREAM_CHUNK));
        self.tx
            .send(full)
            .map_err(|_| io::Error::other("the thread writing a staged file stopped"))
    }
}

impl io::Write for ChunkSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = STREAM_CHUNK - self.chunk.len();
        let taken = buf.len().min(room);
        self.chunk.extend_from_slice(&buf[..taken]);
        if self.chunk.len() == STREAM_CHUNK {
            self.send()?;
        }
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The bytes of `rel` as the executing rail sees them: staged if it wrote them, else on
/// disk (a symlink or special file is refused). `None` when absent.
///
/// # Errors
///
/// An I/O error when `rel` would be reached through a symlink, when the file is a symlink,
/// FIFO, device or directory rather than a regular file, when it is over `cap` bytes, or
/// when reading fails. A missing file is `Ok(None)`, not an error.
pub fn read(run_dir: &Path, rel: &str, cap: u64) -> io::Result<Option<Vec<u8>>> {
    not_through_link(run_dir, rel)?;
    let staged = STAGE.with(|s| {
        s.borrow()
            .as_ref()
            .filter(|st| st.run_dir == run_dir)
            .and_then(|st| st.files.get(rel).map(|(p, _)| p.clone()))
    });
    let path = staged.unwrap_or_else(|| run_dir.join(rel));
    match crate::fsio::read_regular(&path, cap) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Starts staging a rail's body for the rail holding `fence` on this thread.
pub(super) fn begin(run_dir: &Path, fence: u64) {
    begin_with(run_dir, fence, false);
}

/// Starts staging the lifecycle.json a rail's commit writes: the one it commits.
pub(super) fn begin_commit(run_dir: &Path, fence: u64) {
    begin_with(run_dir, fence, true);
}

fn begin_with(run_dir: &Path, fence: u64, sync_lifecycle: bool) {
    STAGE.with(|s| {
        *s.borrow_mut() = Some(Stage {
            run_dir: run_dir.to_path_buf(),
            fence,
            sync_lifecycle,
            files: BTreeMap::new(),
        });
    });
}

/// Ends staging and returns what was staged (run-relative path → hash, pending file).
pub(super) fn end() -> BTreeMap<String, (PathBuf, String)> {
    STAGE.with(|s| s.borrow_mut().take().map(|st| st.files).unwrap_or_default())
}

/// Throws staged files away (the rail failed: nothing of it may land).
pub(super) fn discard(files: &BTreeMap<String, (PathBuf, String)>) {
    for (pending, _) in files.values() {
        let _ = std::fs::remove_file(pending);
    }
}

/// Makes the staged files' directory entries durable (their bytes were fsynced as they
/// were written): after this, the journal line that commits them is the only write left
/// that decides the rail.
pub(super) fn sync_staged(files: &BTreeMap<String, (PathBuf, String)>) -> Result<(), CaseError> {
    let dirs: std::collections::BTreeSet<PathBuf> = files
        .values()
        .filter_map(|(pending, _)| pending.parent().map(Path::to_path_buf))
        .collect();
    for dir in dirs {
        crate::fsio::sync_dir(&dir).map_err(CaseError::io("sync", &dir))?;
    }
    Ok(())
}

/// Moves committed pending files over their targets. The renames are not fsynced: one lost
/// to a power failure leaves its durable pending file, and [`recover`] completes it, even
/// after later lines.
pub(super) fn apply(
    run_dir: &Path,
    files: &BTreeMap<String, (PathBuf, String)>,
) -> Result<(), CaseError> {
    for (rel, (pending, _)) in files {
        let target = run_dir.join(rel);
        std::fs::rename(pending, &target).map_err(CaseError::io("rename", &target))?;
        crate::fsio::crash_point("renamed-one");
    }
    Ok(())
}

/// The renames a crash left undone: each file whose pending copy from the line that last
/// wrote it survives and holds that line's hash, while the file itself does not.
///
/// A committed line's renames are not synced (see [`apply`]); a later rail's sync makes
/// them durable only for the directories it stages into. So after a power failure the
/// rename lost may be any line's, not only the last's: each file's pending copy from the
/// line that last wrote it counts, whichever line that is.
pub(super) fn lost_renames(
    run_dir: &Path,
    journal: &Journal,
) -> BTreeMap<String, (PathBuf, String)> {
    let mut lost = BTreeMap::new();
    for (rel, (fence, hash)) in journal.last_writes() {
        if not_through_link(run_dir, rel).is_err() {
            continue;
        }
        // Without a staged copy there is nothing to finish, whatever the target holds:
        // look for it first, so a settled run costs no read and hash of its files.
        let pending = pending_path(run_dir, rel, fence);
        if std::fs::symlink_metadata(&pending).is_err() {
            continue;
        }
        let target = run_dir.join(rel);
        let now = crate::fsio::read_regular(&target, MAX_RUN_FILE_BYTES)
            .ok()
            .map(|b| bytes_hash(&b));
        if now.as_deref() == Some(hash) {
            continue;
        }
        let staged = crate::fsio::read_regular(&pending, MAX_RUN_FILE_BYTES)
            .ok()
            .map(|b| bytes_hash(&b));
        if staged.as_deref() == Some(hash) {
            lost.insert(rel.to_string(), (pending, hash.to_string()));
        }
    }
    lost
}

/// While it lives, reads of its run on this thread ([`read`]) see the lost renames done:
/// the run as recovery would leave it, looked at before anything is written.
pub(super) struct View(());

impl Drop for View {
    fn drop(&mut self) {
        drop(end());
    }
}

/// Shows reads of `run_dir` on this thread the run with `lost` (see [`lost_renames`])
/// completed, until the returned [`View`] drops. Nothing is written.
pub(super) fn view(run_dir: &Path, lost: BTreeMap<String, (PathBuf, String)>) -> View {
    begin_with(run_dir, 0, false);
    STAGE.with(|s| {
        if let Some(st) = s.borrow_mut().as_mut() {
            st.files = lost;
        }
    });
    View(())
}

/// Under the run lock, once the run is known intact as recovery leaves it: drops a torn
/// last journal line (it never committed), completes the `lost` renames (see
/// [`lost_renames`]), and deletes every other pending or temporary file the engine leaves
/// in the run.
///
/// # Errors
///
/// `CaseError::Io` when truncating a torn last journal line, renaming a surviving pending
/// file into place, or sweeping leftover pending and temporary files fails.
pub(super) fn recover(
    run_dir: &Path,
    journal: &Journal,
    lost: &BTreeMap<String, (PathBuf, String)>,
) -> Result<(), CaseError> {
    if journal.torn_at.is_some() {
        journal.truncate_torn(run_dir)?;
    }
    for (rel, (pending, _)) in lost {
        let target = run_dir.join(rel);
        std::fs::rename(pending, &target).map_err(CaseError::io("rename", &target))?;
    }
    sweep(run_dir)
}

/// Deletes the engine's leftovers (`.*.pending-*`, `.*.tmp-*`) in the run and `output/`.
/// The agent's workspace is not the engine's to clean.
fn sweep(run_dir: &Path) -> Result<(), CaseError> {
    for dir in [run_dir.to_path_buf(), run_dir.join(OUTPUT_DIR)] {
        // Nothing is deleted through an output/ swapped for a link, and one replaced by a
        // file is not listed: `integrity` names either.
        if dir != run_dir && std::fs::symlink_metadata(&dir).is_ok_and(|m| !m.is_dir()) {
            continue;
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(CaseError::io("list", &dir)(e)),
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') && (name.contains(".pending-") || name.contains(".tmp-")) {
                let path = entry.path();
                // Only files: a planted directory of that name is left for verify to report.
                if entry
                    .file_type()
                    .is_ok_and(|t| t.is_file() || t.is_symlink())
                {
                    std::fs::remove_file(&path).map_err(CaseError::io("remove", &path))?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Before the commit line, each directory holding a pending file is synced once, so
    /// the renames it commits can be completed after a power failure; relaxed durability
    /// (the battery's disposable cases) and a rail that staged nothing sync none.
    #[test]
    fn sync_staged_syncs_each_pending_directory_once_and_only_when_durable() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path();
        let output = run.join(OUTPUT_DIR);
        std::fs::create_dir(&output).unwrap();
        let staged = |rel: &str| {
            let pending = pending_path(run, rel, 7);
            (rel.to_string(), (pending, "sha256:x".to_string()))
        };
        let files: BTreeMap<String, (PathBuf, String)> = [
            staged(super::super::layout::LIFECYCLE_JSON),
            staged("output/evidence.json"),
            staged("output/claims.json"),
        ]
        .into_iter()
        .collect();
        crate::fsio::take_synced();
        sync_staged(&files).unwrap();
        let mut synced = crate::fsio::take_synced();
        synced.sort();
        assert_eq!(synced, [run.to_path_buf(), output]);
        crate::fsio::relaxed(|| sync_staged(&files)).unwrap();
        assert_eq!(crate::fsio::take_synced(), Vec::<PathBuf>::new());
        sync_staged(&BTreeMap::new()).unwrap();
        assert_eq!(crate::fsio::take_synced(), Vec::<PathBuf>::new());
    }

    /// The sweep deletes the engine's leftovers and only those, and a run without an
    /// output/ (an agent may have deleted it) is swept, not refused.
    #[test]
    fn the_sweep_removes_only_leftover_files_and_tolerates_a_missing_output() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path();
        for name in [
            ".lifecycle.json.pending-3",
            ".case.json.tmp-1",
            "case.json",
            ".keep",
        ] {
            std::fs::write(run.join(name), "x").unwrap();
        }
        std::fs::create_dir(run.join(".claims.json.pending-9")).unwrap();
        sweep(run).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(run)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [".claims.json.pending-9", ".keep", "case.json"]);
        // An output/ replaced by a file is left for integrity to name, not listed.
        std::fs::write(run.join(OUTPUT_DIR), "x").unwrap();
        sweep(run).unwrap();
    }

    /// A run directory that cannot be listed is an error naming it, never a sweep
    /// silently skipped; only a missing directory is nothing to sweep.
    #[test]
    fn a_run_that_cannot_be_listed_is_an_error_and_a_missing_one_is_nothing_to_sweep() {
        let tmp = tempfile::tempdir().unwrap();
        let not_a_dir = tmp.path().join("run");
        std::fs::write(&not_a_dir, "x").unwrap();
        match sweep(&not_a_dir) {
            Err(CaseError::Io { action, path, .. }) => {
                assert_eq!((action, path), ("list", not_a_dir));
            }
            other => panic!("sweeping a file gave {other:?}"),
        }
        sweep(&tmp.path().join("gone")).unwrap();
    }

    /// A staged write lands in its pending file only; the rail reads it back, the run's
    /// file is untouched, and a discarded stage leaves nothing behind (a failed rail
    /// changes nothing, not even until the next rail's sweep).
    #[test]
    fn a_discarded_stage_leaves_neither_the_file_nor_its_pending_copy() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path();
        std::fs::write(run.join("lifecycle.json"), "old").unwrap();
        begin(run, 7);
        write(run, "lifecycle.json", b"new").unwrap();
        write(run, "claims.json", b"[]").unwrap();
        assert_eq!(
            read(run, "lifecycle.json", 1 << 20).unwrap().as_deref(),
            Some(&b"new"[..])
        );
        let staged = end();
        assert_eq!(staged.len(), 2);
        let pending: Vec<&PathBuf> = staged.values().map(|(p, _)| p).collect();
        assert!(pending.iter().all(|p| p.exists()), "{pending:?}");
        assert_eq!(std::fs::read(run.join("lifecycle.json")).unwrap(), b"old");
        discard(&staged);
        let mut left: Vec<String> = std::fs::read_dir(run)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["lifecycle.json"]);
        assert_eq!(std::fs::read(run.join("lifecycle.json")).unwrap(), b"old");
    }

    /// A run whose output/ was swapped for a symlink is neither written nor read through
    /// it, however the rest of the engine would have noticed; a top-level file is unaffected.
    #[test]
    fn nothing_goes_through_a_symlinked_directory_of_the_run() {
        let tmp = tempfile::tempdir().unwrap();
        let (run, elsewhere) = (tmp.path().join("run"), tmp.path().join("elsewhere"));
        std::fs::create_dir_all(&run).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("evidence.json"), "{}").unwrap();
        std::os::unix::fs::symlink(&elsewhere, run.join("output")).unwrap();
        let refused = |e: io::Error| {
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
            assert!(e.to_string().contains("symlink"), "{e}");
        };
        refused(write(&run, "output/evidence.json", b"[]").unwrap_err());
        refused(read(&run, "output/evidence.json", 1 << 20).unwrap_err());
        assert_eq!(
            std::fs::read(elsewhere.join("evidence.json")).unwrap(),
            b"{}"
        );
        write(&run, "lifecycle.json", b"{}").unwrap();
        assert_eq!(
            read(&run, "lifecycle.json", 1 << 20).unwrap().as_deref(),
            Some(&b"{}"[..])
        );
    }

    /// Bytes that fill several chunks, written in pieces that straddle the chunk edges.
    fn streamed_bytes() -> Vec<u8> {
        (0..(2 * STREAM_CHUNK + 12_345))
            .map(|i| u8::try_from(i % 251).unwrap())
            .collect()
    }

    fn produce_in_pieces(bytes: &[u8], sink: &mut dyn io::Write) -> io::Result<()> {
        for piece in bytes.chunks(STREAM_CHUNK / 3 + 7) {
            sink.write_all(piece)?;
        }
        Ok(())
    }

    /// A streamed write stages exactly the bytes produced, in order, under their hash,
    /// fsyncs its pending file when durable and not when relaxed, and reads back like any
    /// staged write; outside a rail it writes the file at once.
    #[test]
    fn a_streamed_write_stages_the_bytes_produced_under_their_hash() {
        let bytes = streamed_bytes();
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path();
        for relaxed in [false, true] {
            begin(run, 3);
            crate::fsio::take_synced();
            let write = || write_streamed(run, "claims.json", |s| produce_in_pieces(&bytes, s));
            if relaxed {
                crate::fsio::relaxed(write).unwrap();
            } else {
                write().unwrap();
            }
            let synced = crate::fsio::take_synced();
            assert_eq!(
                read(run, "claims.json", 1 << 30).unwrap().as_deref(),
                Some(&bytes[..])
            );
            let staged = end();
            let (pending, hash) = &staged["claims.json"];
            assert_eq!(std::fs::read(pending).unwrap(), bytes);
            assert_eq!(*hash, bytes_hash(&bytes));
            let expected = if relaxed {
                vec![]
            } else {
                vec![pending.clone()]
            };
            assert_eq!(synced, expected, "relaxed: {relaxed}");
            discard(&staged);
        }
        write_streamed(run, "claims.json", |s| produce_in_pieces(&bytes, s)).unwrap();
        assert_eq!(std::fs::read(run.join("claims.json")).unwrap(), bytes);
    }

    /// A producer that fails after sending chunks fails the write with its own error and
    /// stages nothing, so the rail fails and changes nothing.
    #[test]
    fn a_failing_producer_fails_the_streamed_write_and_stages_nothing() {
        let bytes = streamed_bytes();
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path();
        begin(run, 4);
        let err = write_streamed(run, "claims.json", |s| {
            produce_in_pieces(&bytes, s)?;
            Err(io::Error::other("the document did not serialise"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "the document did not serialise");
        assert!(end().is_empty());
        let left: Vec<_> = std::fs::read_dir(run).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
