//! The rail envelope: per-run lock with a fencing counter, the hash-chained journal,
//! idempotency, and the integrity of every engine-owned file.
//!
//! Invariant: every mutating rail on a run executes inside [`with_rail`]: it holds the
//! run's exclusive lock for its whole read-check-write, so concurrent rails serialise and
//! never interleave writes; it first refuses a run whose engine-owned files, as recovery of
//! an interrupted rail would leave them, do not match the journal ([`integrity`]), and only
//! then recovers (so a refused call writes nothing); its call is appended to
//! `journal.jsonl` as one committed line (see [`super::commit`]); and a repeated
//! idempotency key replays the saved outcome (same body) or is refused (different body).
//!
//! The chain: line 1's `prev` is case.json's hash, line n's is line n-1's hash. Every line
//! names in `writes` the hash of every file it wrote; a line that moves the lifecycle
//! (a freeze, validate, finalize, close) rewrites lifecycle.json, which records the chain
//! head the line was written after, and every line moves the lock's anchor to the new
//! head. So case.json, the lifecycle, the journal and every file the engine wrote are
//! bound together: editing, truncating or wiping any of them is reported by name.
//! The seal makes edits evident; it does not stop a forger who recomputes every hash
//! (or rolls the run back to an earlier consistent state): verdicts are re-derived from
//! the frozen inputs for that, and a read-only run root is the barrier to rollback.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::error::CaseError;
pub use super::journal::{
    Fence, Journal, JournalEntry, JournalHead, Outcome, SavedError, read_journal,
};
use super::layout::{
    CASE_JSON, JOURNAL, LIFECYCLE_JSON, LOCK_FILE, MAX_RUN_FILE_BYTES, OUTPUT_DIR, SOURCE_JSON,
};
use super::lifecycle::{Lifecycle, State, now};
use crate::canon::canonical_hash;

const OUTPUT_PREFIX: &str = "output/";

/// One way the run's engine-owned files disagree with each other.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Broken {
    pub file: String,
    pub field: String,
    pub reason: String,
}

/// Checks that case.json, lifecycle.json, the journal chain and every file the engine
/// wrote agree. Empty when the run is intact.
///
/// # Errors
///
/// `CaseError::Io` when a run file cannot be read to hash it (a symlink or special file
/// included). Disagreements between the files are returned in the list, not as errors.
pub fn integrity(
    run_dir: &Path,
    journal: &Journal,
    anchor: Option<&JournalHead>,
) -> Result<Vec<Broken>, CaseError> {
    Ok(checked(run_dir, journal, anchor)?.0)
}

/// [`integrity`], with case.json's hash as read for it (`None` when case.json is missing).
fn checked(
    run_dir: &Path,
    journal: &Journal,
    anchor: Option<&JournalHead>,
) -> Result<(Vec<Broken>, Option<String>), CaseError> {
    let mut out = Vec::new();
    let mut broken = |file: &str, field: &str, reason: String| {
        out.push(Broken {
            file: file.to_string(),
            field: field.to_string(),
            reason,
        });
    };
    let hash_of =
        |rel: &str| -> Result<Option<String>, CaseError> { super::store::file_hash(run_dir, rel) };
    check_output_dir(run_dir, &mut broken);
    let case_path = run_dir.join(CASE_JSON);
    let Some(case_bytes) = super::commit::read(run_dir, CASE_JSON, MAX_RUN_FILE_BYTES)
        .map_err(CaseError::io("read", &case_path))?
    else {
        broken(CASE_JSON, ".", "missing".into());
        return Ok((out, None));
    };
    let case_hash = crate::canon::bytes_hash(&case_bytes);
    // Read once: the hash the journal's writes are checked against is of the bytes parsed.
    let (lc_hash, lc) = match Lifecycle::read_hashed(run_dir)? {
        Some((hash, Ok(lc))) => (hash, lc),
        Some((_, Err(e))) => {
            broken(LIFECYCLE_JSON, ".", e.to_string());
            return Ok((out, Some(case_hash)));
        }
        None => {
            broken(LIFECYCLE_JSON, ".", Lifecycle::missing(run_dir).to_string());
            return Ok((out, Some(case_hash)));
        }
    };
    if lc.case_hash != case_hash {
        broken(
            CASE_JSON,
            ".",
            format!(
                "its hash is {case_hash}, but the run was opened with {}",
                lc.case_hash
            ),
        );
    }
    // Only of the case.json the run was opened with: another one is reported above.
    // case.json does not change after open, and every rail checks it: inside one process
    // its fields are remembered under the sha256 of its bytes.
    static OPENED: crate::memo::Memo<String, Option<std::sync::Arc<OpenedCase>>> =
        crate::memo::Memo::new(1024);
    let opened = (lc.case_hash == case_hash)
        .then(|| {
            OPENED.get_or(case_hash.clone(), || {
                serde_json::from_slice::<OpenedCase>(&case_bytes)
                    .ok()
                    .map(std::sync::Arc::new)
            })
        })
        .flatten();
    if let Some(case) = &opened {
        check_source(run_dir, case, &mut broken);
    }
    check_chain(journal, &lc, anchor, &mut broken);
    check_lifecycle_writer(journal, &lc, opened.as_deref(), &mut broken);
    check_engine_writes(journal, &lc_hash, &hash_of, &mut broken)?;
    Ok((out, Some(case_hash)))
}

/// What the seal reads of case.json, once it hashes to what the run was opened with (so
/// open wrote it, and the rails' strict parse of it holds): only these fields.
#[derive(serde::Deserialize)]
struct OpenedCase {
    identity: OpenedIdentity,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct OpenedIdentity {
    run_id: String,
    created_at: String,
    #[serde(default)]
    source_digest: Option<String>,
}

/// source.json, for a repository without a commit, is the manifest whose digest case.json
/// records: checked here with the rest of the seal, so no rail, `case verify` or `case
/// show` works from a forged one.
fn check_source(run_dir: &Path, case: &OpenedCase, broken: &mut impl FnMut(&str, &str, String)) {
    if let Some(recorded) = &case.identity.source_digest
        && let Some((field, reason)) = super::citable::manifest_broken(run_dir, recorded)
    {
        broken(SOURCE_JSON, &field, reason);
    }
}

/// output/ must be the run's own directory: through a link the engine would read and
/// write somewhere else.
fn check_output_dir(run_dir: &Path, broken: &mut impl FnMut(&str, &str, String)) {
    match std::fs::symlink_metadata(run_dir.join(OUTPUT_DIR)) {
        Ok(m) if m.file_type().is_symlink() => {
            broken(OUTPUT_DIR, ".", "is a symlink (not followed)".into());
        }
        Ok(m) if !m.is_dir() => broken(OUTPUT_DIR, ".", "is not a directory".into()),
        _ => {}
    }
}

/// The chain itself, and its end: the lock anchors it.
fn check_chain(
    journal: &Journal,
    lc: &Lifecycle,
    anchor: Option<&JournalHead>,
    broken: &mut impl FnMut(&str, &str, String),
) {
    let mut prev = lc.case_hash.clone();
    for (i, entry) in journal.entries.iter().enumerate() {
        if entry.prev != prev {
            broken(
                JOURNAL,
                &format!("line {}.prev", i + 1),
                format!("is {}, but the line before hashes to {prev}", entry.prev),
            );
        }
        prev.clone_from(&journal.hashes[i]);
    }
    // The lock anchors the chain's end.
    let n = journal.entries.len() as u64;
    let actual = JournalHead {
        entries: n,
        head: journal.head(&lc.case_hash),
    };
    match anchor {
        Some(a) if *a != actual => broken(
            JOURNAL,
            ".",
            format!(
                "has {n} lines ending {}, but the run's lock anchored {} lines ending {}",
                actual.head, a.entries, a.head
            ),
        ),
        None if n > 0 => broken(
            LOCK_FILE,
            ".",
            format!("holds no journal anchor, but the journal has {n} lines"),
        ),
        _ => {}
    }
}

/// lifecycle.json records the journal head its writer followed; with no writer it is the
/// run's genesis record, exactly what open wrote from `case` (its run id, its creation
/// time as the one transition): before the first rail no journal line or anchor guards it,
/// and the first rail would otherwise seal an edit in.
fn check_lifecycle_writer(
    journal: &Journal,
    lc: &Lifecycle,
    case: Option<&OpenedCase>,
    broken: &mut impl FnMut(&str, &str, String),
) {
    if let Some(case) = case
        && lc.run_id.to_string() != case.identity.run_id
    {
        broken(
            LIFECYCLE_JSON,
            "runId",
            format!(
                "is {}, but case.json's is {}",
                lc.run_id, case.identity.run_id
            ),
        );
    }
    let writer = journal
        .entries
        .iter()
        .rposition(|e| e.writes.contains_key(LIFECYCLE_JSON));
    match writer {
        None => {
            let genesis = Lifecycle::new(
                lc.run_id.clone(),
                case.map_or("", |c| &c.identity.created_at),
                &lc.case_hash,
            );
            if lc.journal != genesis.journal
                || lc.state != State::Open
                || lc.transitions.len() != 1
                || !lc.frozen.is_empty()
                || !lc.records.is_empty()
            {
                broken(
                    LIFECYCLE_JSON,
                    ".",
                    "records work, but no journal line wrote it".into(),
                );
            } else if case.is_some() && lc.transitions != genesis.transitions {
                broken(
                    LIFECYCLE_JSON,
                    "transitions",
                    format!(
                        "are not the one transition open recorded ({}), and no journal line wrote them",
                        serde_json::to_string(&genesis.transitions[0]).unwrap_or_default()
                    ),
                );
            }
        }
        Some(i) => {
            let expect = JournalHead {
                entries: i as u64,
                head: journal.entries[i].prev.clone(),
            };
            if lc.journal != expect {
                broken(
                    LIFECYCLE_JSON,
                    "journal",
                    format!(
                        "records {} lines ending {}, but line {} that wrote it follows {} lines ending {}",
                        lc.journal.entries,
                        lc.journal.head,
                        i + 1,
                        expect.entries,
                        expect.head
                    ),
                );
            }
        }
    }
}

/// Every engine-private file holds what its last writer wrote. Files under output/ are
/// the agent's to write until their stage freezes; from then on lifecycle.json's frozen
/// hashes (bound by the checks before this one) guard them, and every verdict is
/// re-derived from them.
fn check_engine_writes(
    journal: &Journal,
    lc_hash: &str,
    hash_of: &impl Fn(&str) -> Result<Option<String>, CaseError>,
    broken: &mut impl FnMut(&str, &str, String),
) -> Result<(), CaseError> {
    let engine_private = journal
        .last_writes()
        .into_iter()
        .filter(|(rel, _)| !rel.starts_with(OUTPUT_PREFIX));
    for (rel, (_, hash)) in engine_private {
        let now = if rel == LIFECYCLE_JSON {
            Some(lc_hash.to_string())
        } else {
            hash_of(rel)?
        };
        let now = now.unwrap_or_else(|| "(deleted)".into());
        if now != hash {
            broken(
                rel,
                ".",
                format!("the journal says the engine wrote {hash}, but it is now {now}"),
            );
        }
    }
    Ok(())
}

/// Refuses a run whose integrity is broken, naming the first broken file and field;
/// otherwise case.json's hash, checked against the one the run was opened with.
fn ensure_intact(
    run_dir: &Path,
    journal: &Journal,
    anchor: Option<&JournalHead>,
) -> Result<String, CaseError> {
    let (broken, case_hash) = checked(run_dir, journal, anchor)?;
    if let Some(b) = broken.into_iter().next() {
        return Err(CaseError::Tampered {
            file: b.file,
            field: b.field,
            reason: b.reason,
        });
    }
    // `checked` reports a missing case.json as broken: an intact run has its hash.
    case_hash.ok_or_else(|| CaseError::Tampered {
        file: CASE_JSON.into(),
        field: ".".into(),
        reason: "missing".into(),
    })
}

/// Runs `body` as rail `rail` on the run at `run_dir`, under the run lock, journaled and
/// idempotent. `request` is the rail's input; its canonical hash is the body hash.
///
/// # Errors
///
/// `CaseError::Io` when the lock file cannot be opened, inspected or locked (a symlink or a
/// non-regular file included) or the lock, journal or staged files cannot be written;
/// `Corrupt` when a whole journal line does not parse; `Tampered` naming the first broken
/// file when the run's integrity is broken; `BadIdempotencyKey` for a key that is empty or
/// over 200 characters; `IdempotencyConflict` for a key already used with another body;
/// `Replayed` when the key's saved call was refused. Otherwise whatever `body` returns; a
/// refused body changes nothing but the journal.
pub fn with_rail<T, F>(
    run_dir: &Path,
    rail: &str,
    idempotency_key: Option<&str>,
    request: &Value,
    body: F,
) -> Result<T, CaseError>
where
    T: Serialize + serde::de::DeserializeOwned,
    F: FnOnce(&Fence) -> Result<T, CaseError>,
{
    let lock_path = run_dir.join(LOCK_FILE);
    // The lock is released when `lock` is dropped, on every path out of this function.
    let mut lock = lock_for_rail(run_dir)?;
    let settled = settle(run_dir, Some(&mut lock))?;
    // Checked as recovery would leave the run, before recovery writes anything: a refused
    // call leaves the run as it found it, and a committed line is never cut as torn.
    let case_hash = {
        let _view = super::commit::view(run_dir, settled.lost.clone());
        ensure_intact(run_dir, &settled.journal, settled.state.anchor.as_ref())?
    };
    let Settled {
        journal, mut state, ..
    } = settled.recover(run_dir, &mut lock)?;
    state.fence += 1;
    write_lock(&mut lock, &lock_path, &state, true).map_err(CaseError::io("write", &lock_path))?;
    let fence = Fence {
        number: state.fence,
    };
    let body_hash = canonical_hash(&serde_json::json!({"rail": rail, "request": request}));
    let entry = |outcome, result, error| JournalEntry {
        prev: String::new(),
        fence: fence.number,
        rail: rail.to_string(),
        idempotency_key: idempotency_key.map(str::to_string),
        body_hash: body_hash.clone(),
        outcome,
        result,
        error,
        replayed: false,
        conflict: false,
        writes: BTreeMap::new(),
        at: now(),
    };

    if let Some(key) = idempotency_key
        && let Some(saved) = saved_call(&journal, key)?
    {
        if saved.body_hash != body_hash {
            let err = CaseError::IdempotencyConflict {
                key: key.to_string(),
                rail: saved.rail.clone(),
            };
            // The refused call is journaled too, marked as not an original execution so
            // it never becomes the saved outcome of the key.
            let refused = JournalEntry {
                conflict: true,
                ..entry(
                    Outcome::Rejected,
                    None,
                    Some(SavedError {
                        kind: err.kind().to_string(),
                        message: err.to_string(),
                    }),
                )
            };
            commit(
                run_dir,
                &journal,
                &case_hash,
                &mut lock,
                &mut state,
                refused,
                BTreeMap::new(),
            )?;
            return Err(err);
        }
        // `commit` sets the line's `prev` and `writes` (none: nothing is staged).
        let replay = JournalEntry {
            replayed: true,
            fence: fence.number,
            at: now(),
            ..saved.clone()
        };
        commit(
            run_dir,
            &journal,
            &case_hash,
            &mut lock,
            &mut state,
            replay,
            BTreeMap::new(),
        )?;
        return saved_outcome(run_dir, saved);
    }

    let (outcome, staged) = run_staged(run_dir, &fence, body);
    let (kind, result, error) = recorded(&outcome);
    let done = entry(kind, result, error);
    commit(
        run_dir, &journal, &case_hash, &mut lock, &mut state, done, staged,
    )?;
    outcome
}

/// The original call the journal saved under idempotency key `key` (never a replay or a
/// refused conflict), or `None` when the key is new.
///
/// # Errors
///
/// `CaseError::BadIdempotencyKey` for a key that is empty or over 200 characters.
fn saved_call<'j>(journal: &'j Journal, key: &str) -> Result<Option<&'j JournalEntry>, CaseError> {
    if key.is_empty() || key.len() > 200 {
        return Err(CaseError::BadIdempotencyKey {
            key: key.to_string(),
        });
    }
    Ok(journal
        .entries
        .iter()
        .find(|e| e.idempotency_key.as_deref() == Some(key) && !e.replayed && !e.conflict))
}

/// What a replayed call answers: the saved call's result, or its saved refusal as
/// `CaseError::Replayed`; `Corrupt` when the saved line holds neither or its result does
/// not parse as `T`.
fn saved_outcome<T: serde::de::DeserializeOwned>(
    run_dir: &Path,
    saved: &JournalEntry,
) -> Result<T, CaseError> {
    match (&saved.outcome, &saved.result, &saved.error) {
        (Outcome::Ok, Some(result), _) => T::deserialize(result).map_err(|e| CaseError::Corrupt {
            file: run_dir.join(JOURNAL),
            field: "result".into(),
            reason: e.to_string(),
        }),
        (_, _, Some(err)) => Err(CaseError::Replayed {
            kind: err.kind.clone(),
            message: err.message.clone(),
        }),
        _ => Err(CaseError::Corrupt {
            file: run_dir.join(JOURNAL),
            field: "outcome".into(),
            reason: "saved entry has neither result nor error".into(),
        }),
    }
}

/// Runs `body` with its writes staged, and returns its outcome with the files it staged;
/// a refused body's staged files are discarded (it changes nothing but the journal).
fn run_staged<T>(
    run_dir: &Path,
    fence: &Fence,
    body: impl FnOnce(&Fence) -> Result<T, CaseError>,
) -> (
    Result<T, CaseError>,
    BTreeMap<String, (std::path::PathBuf, String)>,
) {
    super::commit::begin(run_dir, fence.number);
    let outcome = body(fence);
    let mut staged = super::commit::end();
    if outcome.is_err() {
        // A refused call changes nothing but the journal.
        super::commit::discard(&staged);
        staged.clear();
    }
    (outcome, staged)
}

/// What the journal line records of a body's outcome: ok or rejected, the result as
/// JSON, and the refusal's kind and message.
fn recorded<T: Serialize>(
    outcome: &Result<T, CaseError>,
) -> (Outcome, Option<Value>, Option<SavedError>) {
    (
        if outcome.is_ok() {
            Outcome::Ok
        } else {
            Outcome::Rejected
        },
        outcome
            .as_ref()
            .ok()
            .and_then(|r| serde_json::to_value(r).ok()),
        outcome.as_ref().err().map(|e| SavedError {
            kind: e.kind().to_string(),
            message: e.to_string(),
        }),
    )
}

/// Commits one journal line after `journal` (read under the lock, on a run whose case.json
/// hashed to `case_hash` in the rail's integrity check): a lifecycle.json the body staged
/// records the chain head the line follows; the line, naming every staged file's hash, is
/// appended (the commit point); the staged files move into place; the lock's anchor moves
/// to the new head.
fn commit(
    run_dir: &Path,
    journal: &Journal,
    case_hash: &str,
    lock: &mut std::fs::File,
    state: &mut LockState,
    mut entry: JournalEntry,
    mut staged: BTreeMap<String, (std::path::PathBuf, String)>,
) -> Result<(), CaseError> {
    let discard_on_err = |staged: &BTreeMap<_, _>, e: CaseError| {
        super::commit::discard(staged);
        e
    };
    let head = journal.head(case_hash);
    if let Some((pending, _)) = staged.remove(LIFECYCLE_JSON) {
        let read = crate::fsio::read_regular(&pending, super::layout::MAX_RUN_FILE_BYTES)
            .map_err(CaseError::io("read", &pending));
        let _ = std::fs::remove_file(&pending);
        let mut lc = read
            .and_then(|b| Lifecycle::parse(&b, &run_dir.join(LIFECYCLE_JSON)))
            .map_err(|e| discard_on_err(&staged, e))?;
        lc.journal = JournalHead {
            entries: journal.entries.len() as u64,
            head: head.clone(),
        };
        super::commit::begin_commit(run_dir, state.fence);
        let saved = lc.save(run_dir);
        staged.extend(super::commit::end());
        saved.map_err(|e| discard_on_err(&staged, e))?;
    }
    // The staged files' names must be durable before the line that commits them.
    super::commit::sync_staged(&staged).map_err(|e| discard_on_err(&staged, e))?;
    crate::fsio::crash_point("staged");

    entry.prev = head;
    entry.writes = staged
        .iter()
        .map(|(rel, (_, hash))| (rel.clone(), hash.clone()))
        .collect();
    let line = append(run_dir, &entry).map_err(|e| discard_on_err(&staged, e))?;
    crate::fsio::crash_point("journaled");
    super::commit::apply(run_dir, &staged)?;
    state.anchor = Some(JournalHead {
        entries: journal.entries.len() as u64 + 1,
        head: crate::canon::bytes_hash(line.as_bytes()),
    });
    let lock_path = run_dir.join(LOCK_FILE);
    write_lock(lock, &lock_path, state, false).map_err(CaseError::io("write", &lock_path))
}

/// Appends `entry` as one line and returns the line (without its newline).
fn append(run_dir: &Path, entry: &JournalEntry) -> Result<String, CaseError> {
    let path = run_dir.join(JOURNAL);
    let line = serde_json::to_string(entry).map_err(|e| CaseError::Corrupt {
        file: path.clone(),
        field: ".".into(),
        reason: e.to_string(),
    })?;
    crate::fsio::append_line(&path, &line).map_err(CaseError::io("append to", path))?;
    Ok(line)
}

/// What the lock file holds: the fencing counter and the journal's anchor (its line
/// count and head after the last committed line). Rewritten by every rail, so cutting
/// lines off the journal's end is seen even when they changed no other file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct LockState {
    fence: u64,
    anchor: Option<JournalHead>,
}

impl LockState {
    fn parse(text: &str) -> LockState {
        let mut lines = text.lines();
        let fence = lines
            .next()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or(0);
        let anchor = match (lines.next().and_then(|l| l.parse().ok()), lines.next()) {
            (Some(entries), Some(head)) => Some(JournalHead {
                entries,
                head: head.to_string(),
            }),
            _ => None,
        };
        LockState { fence, anchor }
    }

    fn render(&self) -> String {
        match &self.anchor {
            Some(a) => format!("{}\n{}\n{}\n", self.fence, a.entries, a.head),
            None => format!("{}\n", self.fence),
        }
    }
}

fn read_lock(lock: &mut std::fs::File) -> std::io::Result<LockState> {
    let mut text = String::new();
    lock.seek(SeekFrom::Start(0))?;
    lock.take(4096).read_to_string(&mut text)?;
    Ok(LockState::parse(&text))
}

/// Rewrites the lock file. `durable` fsyncs it: the fence must survive a power failure
/// (recovery recognises a crash by it); the anchor need not, since recovery rolls a lost
/// anchor forward over the committed line that carries the fence.
///
/// The new state is written over the old one, then the file cut to its length: never
/// emptied first, so a process killed in between leaves a lock that still parses (the
/// state only grows: the fence and the line count gain digits, never lose them), and no
/// rail pays for truncating a file to nothing.
fn write_lock(
    lock: &mut std::fs::File,
    path: &Path,
    state: &LockState,
    durable: bool,
) -> std::io::Result<()> {
    let text = state.render();
    lock.seek(SeekFrom::Start(0))?;
    lock.write_all(text.as_bytes())?;
    crate::fsio::crash_point(if durable {
        "fence-written"
    } else {
        "anchor-written"
    });
    lock.set_len(text.len() as u64)?;
    if durable {
        crate::fsio::sync_file(lock, path)?;
    }
    Ok(())
}

/// Opens and locks the run's lock file for a rail (never through a symlink). The first
/// rail of a run creates it, once the run is found intact without it; once the journal
/// holds anything a missing lock is a lost anchor, refused and never rebuilt. Either way a
/// refused call creates nothing.
fn lock_for_rail(run_dir: &Path) -> Result<std::fs::File, CaseError> {
    if let Some(lock) = lock_run(run_dir, true, false)? {
        return Ok(lock);
    }
    let journal_empty = match std::fs::symlink_metadata(run_dir.join(JOURNAL)) {
        Ok(m) => m.is_file() && m.len() == 0,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    };
    if !journal_empty {
        return Err(CaseError::Tampered {
            file: LOCK_FILE.into(),
            field: ".".into(),
            reason: "is missing, but the journal is not empty: a lost anchor is never rebuilt"
                .into(),
        });
    }
    if let Some(b) = check(run_dir)?.into_iter().next() {
        return Err(CaseError::Tampered {
            file: b.file,
            field: b.field,
            reason: b.reason,
        });
    }
    lock_run(run_dir, true, true)?.ok_or_else(|| {
        CaseError::io("open", run_dir.join(LOCK_FILE))(std::io::ErrorKind::NotFound.into())
    })
}

/// Opens and locks the run's lock file (never through a symlink), for writing when
/// `write`, creating it when `create`; `None` when it does not exist and is not created.
fn lock_run(run_dir: &Path, write: bool, create: bool) -> Result<Option<std::fs::File>, CaseError> {
    let lock_path = run_dir.join(LOCK_FILE);
    let lock = match OpenOptions::new()
        .read(true)
        .write(write)
        .create(create)
        .truncate(false)
        // Opened for reading only, a FIFO would block until a writer came: O_NONBLOCK
        // (no effect on a regular file, its reads or its flock) lets the check below
        // refuse it.
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&lock_path)
    {
        Ok(lock) => lock,
        Err(e) if !create && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(CaseError::io("open", &lock_path)(e)),
    };
    // A FIFO or device planted here would hang or mislead every rail.
    let regular = lock
        .metadata()
        .map_err(CaseError::io("inspect", &lock_path))?
        .is_file();
    if !regular {
        return Err(CaseError::io("lock", &lock_path)(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "is not a regular file",
        )));
    }
    lock.lock().map_err(CaseError::io("lock", &lock_path))?;
    Ok(Some(lock))
}

/// The run as recovery would leave it, read under the lock (or, without one, as it is).
struct Settled {
    journal: Journal,
    /// The lock's state, its anchor rolled forward over a line committed just before a
    /// crash.
    state: LockState,
    /// Whether the anchor was rolled forward (the lock needs rewriting).
    rolled: bool,
    /// Renames a crash left undone (see [`super::commit::lost_renames`]).
    lost: BTreeMap<String, (std::path::PathBuf, String)>,
}

/// Reads the journal and the lock and works out what recovery would do, writing nothing.
fn settle(run_dir: &Path, lock: Option<&mut std::fs::File>) -> Result<Settled, CaseError> {
    let lock_path = run_dir.join(LOCK_FILE);
    let journal = Journal::read(run_dir)?;
    let mut state = match lock {
        Some(lock) => read_lock(lock).map_err(CaseError::io("read", &lock_path))?,
        None => LockState::default(),
    };
    let n = journal.entries.len() as u64;
    // The last line committed, then the process died before the anchor moved: the lock
    // then holds that line's fence and still anchors exactly the line before it. A lock
    // deleted or rewritten matches neither and is left for `integrity` to report.
    let rolled = journal.entries.last().is_some_and(|last| {
        last.fence == state.fence
            && match &state.anchor {
                Some(a) => a.entries + 1 == n && a.head == last.prev,
                None => n == 1,
            }
    });
    if rolled {
        state.anchor = journal.hashes.last().map(|h| JournalHead {
            entries: n,
            head: h.clone(),
        });
    }
    let lost = super::commit::lost_renames(run_dir, &journal);
    Ok(Settled {
        journal,
        state,
        rolled,
        lost,
    })
}

impl Settled {
    /// Under the lock, on a run found intact as recovery leaves it: does what [`settle`]
    /// worked out — cuts a torn fragment after the anchored lines (the anchor counts every
    /// committed line, so only an append a crash cut short is cut), completes the lost
    /// renames, sweeps leftovers, moves the anchor — and returns the journal as it now is.
    fn recover(self, run_dir: &Path, lock: &mut std::fs::File) -> Result<Settled, CaseError> {
        let lock_path = run_dir.join(LOCK_FILE);
        super::commit::recover(run_dir, &self.journal, &self.lost)?;
        if self.rolled {
            write_lock(lock, &lock_path, &self.state, false)
                .map_err(CaseError::io("write", &lock_path))?;
        }
        let journal = if self.journal.torn_at.is_some() {
            Journal {
                torn_at: None,
                ..self.journal
            }
        } else {
            self.journal
        };
        Ok(Settled {
            journal,
            lost: BTreeMap::new(),
            rolled: false,
            ..self
        })
    }
}

/// `case verify`'s integrity check: every disagreement between the run's engine-owned
/// files, as recovery would leave them (see [`check_then`]).
///
/// # Errors
///
/// The errors of [`check_then`].
pub fn check(run_dir: &Path) -> Result<Vec<Broken>, CaseError> {
    Ok(check_then(run_dir, || ())?.0)
}

/// Under the run lock, reports every disagreement between the run's engine-owned files,
/// then runs `more` on the same view: the run as recovery of an interrupted rail would
/// leave it, without writing anything (recovery is the next rail's, and only on a run
/// found intact). A run with no lock yet (no rail has run) is read without one; when a
/// rail creates the lock meanwhile, the check is made again under it.
///
/// # Errors
///
/// `CaseError::Io` when the lock file cannot be opened or locked (or is not a regular
/// file) or a read fails, and `Corrupt` when a whole journal line does not parse. Broken
/// files are returned in the list, not as errors.
pub fn check_then<T>(
    run_dir: &Path,
    more: impl FnOnce() -> T,
) -> Result<(Vec<Broken>, T), CaseError> {
    let lock_path = run_dir.join(LOCK_FILE);
    let mut lock = lock_run(run_dir, false, false)?;
    if lock.is_none() {
        // A rail creates the lock before it writes anything: with no lock after the
        // reads, none wrote during them.
        let settled = settle(run_dir, None)?;
        let view = super::commit::view(run_dir, settled.lost.clone());
        let broken = integrity(run_dir, &settled.journal, settled.state.anchor.as_ref())?;
        if std::fs::symlink_metadata(&lock_path).is_err() {
            return Ok((broken, more()));
        }
        drop(view);
        lock = lock_run(run_dir, false, false)?;
    }
    let settled = settle(run_dir, lock.as_mut())?;
    let _view = super::commit::view(run_dir, settled.lost.clone());
    let broken = integrity(run_dir, &settled.journal, settled.state.anchor.as_ref())?;
    Ok((broken, more()))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::case::testing::{cite, claim_unit, payments_run};

    /// A durable rail syncs the lock once, for its fence, before anything else, and its
    /// journal line last: the line is the commit point, and the lock's anchor after it
    /// need not be durable (recovery rolls it forward).
    #[test]
    fn a_durable_rail_syncs_its_fence_first_and_its_journal_line_last() {
        let tmp = tempfile::tempdir().unwrap();
        let run = payments_run(tmp.path(), &[]);
        crate::fsio::take_synced();
        cite(&run, "src/payments/service.py", 32, 39);
        let synced = crate::fsio::take_synced();
        let lock = run.dir().join(LOCK_FILE);
        assert_eq!(synced.first(), Some(&lock), "{synced:?}");
        assert_eq!(
            synced.iter().filter(|p| **p == lock).count(),
            1,
            "{synced:?}"
        );
        assert_eq!(synced.last(), Some(&run.dir().join(JOURNAL)), "{synced:?}");
    }

    /// The payments run with one excerpt cited and a unit claimed on it: ready to freeze.
    fn cited_and_claimed(tmp: &std::path::Path) -> crate::case::RunHandle {
        let run = payments_run(tmp, &[]);
        let id = cite(&run, "src/payments/service.py", 32, 39).id;
        claim_unit(&run, "s", &[&id]);
        run
    }

    /// A rail that moves the lifecycle syncs the lifecycle.json it commits once: the copy
    /// its body stages is rewritten with the chain head before the line, so only the
    /// rewrite is synced, and before the line.
    #[test]
    fn a_lifecycle_rail_syncs_its_committed_lifecycle_once_before_its_line() {
        let tmp = tempfile::tempdir().unwrap();
        let run = cited_and_claimed(tmp.path());
        crate::fsio::take_synced();
        run.freeze_research(None).unwrap();
        let synced = crate::fsio::take_synced();
        let journal = run.dir().join(JOURNAL);
        let lifecycle: Vec<usize> = (0..synced.len())
            .filter(|&i| {
                let name = synced[i].file_name().unwrap().to_string_lossy();
                name.starts_with(".lifecycle.json.pending-")
            })
            .collect();
        assert_eq!(lifecycle.len(), 1, "{synced:?}");
        let line = synced.iter().position(|p| *p == journal).unwrap();
        assert!(lifecycle[0] < line, "{synced:?}");
        // What it synced is what landed: the lifecycle records the line it follows.
        let lc = Lifecycle::load(run.dir()).unwrap();
        let journal = read_journal(run.dir()).unwrap();
        assert_eq!(lc.journal.entries + 1, journal.len() as u64);
    }

    /// A rename lost to a power failure is completed even when a later line committed
    /// first: a rail syncs only the directories it stages into, so a freeze (lifecycle.json
    /// alone) after a claim (output/claims.json) leaves the claim's rename undurable, and
    /// the claim's pending copy is then the only one of what the frozen stage records.
    #[test]
    fn a_lost_rename_is_completed_even_under_a_later_line() {
        let tmp = tempfile::tempdir().unwrap();
        let run = cited_and_claimed(tmp.path());
        run.freeze_research(None).unwrap();
        let journal = Journal::read(run.dir()).unwrap();
        let claims = "output/claims.json";
        let (claim_line, freeze_line) = (&journal.entries[1], &journal.entries[2]);
        assert!(claim_line.writes.contains_key(claims), "{claim_line:?}");
        assert!(!freeze_line.writes.contains_key(claims), "{freeze_line:?}");
        let committed = std::fs::read(run.dir().join(claims)).unwrap();
        // The claim's rename, lost: its pending copy is back, the target gone.
        let pending = run
            .dir()
            .join(format!("output/.claims.json.pending-{}", claim_line.fence));
        std::fs::rename(run.dir().join(claims), &pending).unwrap();
        // A pending copy that is not the last write of its file is a leftover.
        let stale = run.dir().join(format!(
            "output/.evidence.json.pending-{}",
            claim_line.fence
        ));
        std::fs::write(&stale, b"{}").unwrap();
        // The check sees the run as recovery leaves it, and writes nothing.
        assert_eq!(check(run.dir()).unwrap(), Vec::new());
        assert!(!run.dir().join(claims).exists());
        assert!(pending.exists() && stale.exists());
        // The next rail recovers, even one its body then refuses.
        assert!(run.freeze_research(None).is_err());
        assert_eq!(std::fs::read(run.dir().join(claims)).unwrap(), committed);
        assert!(!pending.exists());
        assert!(!stale.exists());
        assert_eq!(check(run.dir()).unwrap(), Vec::new());
    }

    /// Relaxed durability (the battery's per-trial cases) makes no fsync at all, from open
    /// to close.
    #[test]
    fn a_relaxed_case_makes_no_fsync_from_open_to_close() {
        let tmp = tempfile::tempdir().unwrap();
        crate::fsio::take_synced();
        let synced: Vec<PathBuf> = crate::fsio::relaxed(|| {
            let run = cited_and_claimed(tmp.path());
            run.freeze_research(None).unwrap();
            run.finalize(
                Some(crate::case::finalize::Status::InsufficientEvidence),
                Some("a test"),
                None,
            )
            .unwrap();
            run.close(&crate::reconcile::CloseRequest::default(), None)
                .unwrap();
            crate::fsio::take_synced()
        });
        assert_eq!(synced, Vec::<PathBuf>::new());
    }
}
