//! The rail envelope: per-run lock with a fencing counter, the journal, idempotency.
//!
//! Invariant: every mutating rail on a run executes inside [`with_rail`]: it holds the
//! run's exclusive lock for its whole read-check-write, so concurrent rails serialise and
//! never interleave writes; its call is appended to `journal.jsonl`; and a repeated
//! idempotency key replays the saved outcome (same body) or is refused (different body).

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::CaseError;
use super::lifecycle::now;
use super::run::JOURNAL;
use crate::canon::canonical_hash;

pub const LOCK_FILE: &str = ".lock";

/// One line of `journal.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JournalEntry {
    pub fence: u64,
    pub rail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    pub body_hash: String,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<SavedError>,
    /// This entry replays the saved outcome of its key; it did not execute.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
    /// This entry was refused: its key was saved with a different body.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub conflict: bool,
    pub at: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    Rejected,
}

/// A refusal as saved in the journal, replayed verbatim for the same key and body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SavedError {
    pub kind: String,
    pub message: String,
}

/// The held lock: the fence number identifies this holder.
pub struct Fence {
    pub number: u64,
}

/// Reads every whole entry of the journal; a torn last line is ignored.
pub fn read_journal(run_dir: &Path) -> Result<Vec<JournalEntry>, CaseError> {
    let path = run_dir.join(JOURNAL);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(CaseError::io("read", path)(e)),
    };
    let mut out = Vec::new();
    let lines: Vec<&str> = text.split('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<JournalEntry>(line) {
            Ok(entry) => out.push(entry),
            // A torn final line (crash mid-append) is not a record.
            Err(_) if i + 1 == lines.len() => {}
            Err(e) => {
                return Err(CaseError::Corrupt {
                    file: path,
                    field: format!("line {}", i + 1),
                    reason: e.to_string(),
                });
            }
        }
    }
    Ok(out)
}

/// Runs `body` as rail `rail` on the run at `run_dir`, under the run lock, journaled and
/// idempotent. `request` is the rail's input; its canonical hash is the body hash.
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
    let mut lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(CaseError::io("open", &lock_path))?;
    lock.lock().map_err(CaseError::io("lock", &lock_path))?;
    // The lock is released when `lock` is dropped, on every path out of this function.
    let fence = Fence {
        number: next_fence(&mut lock).map_err(CaseError::io("write", &lock_path))?,
    };
    let body_hash = canonical_hash(&serde_json::json!({"rail": rail, "request": request}));

    if let Some(key) = idempotency_key {
        if key.is_empty() || key.len() > 200 {
            return Err(CaseError::BadIdempotencyKey {
                key: key.to_string(),
            });
        }
        let journal = read_journal(run_dir)?;
        if let Some(saved) = journal
            .iter()
            .find(|e| e.idempotency_key.as_deref() == Some(key) && !e.replayed && !e.conflict)
        {
            if saved.body_hash != body_hash {
                let err = CaseError::IdempotencyConflict {
                    key: key.to_string(),
                    rail: saved.rail.clone(),
                };
                // The refused call is journaled too, marked as not an original execution so
                // it never becomes the saved outcome of the key.
                append(
                    run_dir,
                    &JournalEntry {
                        fence: fence.number,
                        rail: rail.to_string(),
                        idempotency_key: Some(key.to_string()),
                        body_hash,
                        outcome: Outcome::Rejected,
                        result: None,
                        error: Some(SavedError {
                            kind: err.kind().to_string(),
                            message: err.to_string(),
                        }),
                        replayed: false,
                        conflict: true,
                        at: now(),
                    },
                )?;
                return Err(err);
            }
            append(
                run_dir,
                &JournalEntry {
                    replayed: true,
                    fence: fence.number,
                    at: now(),
                    ..saved.clone()
                },
            )?;
            return match (&saved.outcome, &saved.result, &saved.error) {
                (Outcome::Ok, Some(result), _) => {
                    serde_json::from_value(result.clone()).map_err(|e| CaseError::Corrupt {
                        file: run_dir.join(JOURNAL),
                        field: "result".into(),
                        reason: e.to_string(),
                    })
                }
                (_, _, Some(err)) => Err(CaseError::Replayed {
                    kind: err.kind.clone(),
                    message: err.message.clone(),
                }),
                _ => Err(CaseError::Corrupt {
                    file: run_dir.join(JOURNAL),
                    field: "outcome".into(),
                    reason: "saved entry has neither result nor error".into(),
                }),
            };
        }
    }

    let outcome = body(&fence);
    let entry = JournalEntry {
        fence: fence.number,
        rail: rail.to_string(),
        idempotency_key: idempotency_key.map(str::to_string),
        body_hash,
        outcome: if outcome.is_ok() {
            Outcome::Ok
        } else {
            Outcome::Rejected
        },
        result: outcome
            .as_ref()
            .ok()
            .and_then(|r| serde_json::to_value(r).ok()),
        error: outcome.as_ref().err().map(|e| SavedError {
            kind: e.kind().to_string(),
            message: e.to_string(),
        }),
        replayed: false,
        conflict: false,
        at: now(),
    };
    append(run_dir, &entry)?;
    outcome
}

fn append(run_dir: &Path, entry: &JournalEntry) -> Result<(), CaseError> {
    let path = run_dir.join(JOURNAL);
    let line = serde_json::to_string(entry).map_err(|e| CaseError::Corrupt {
        file: path.clone(),
        field: ".".into(),
        reason: e.to_string(),
    })?;
    crate::fsio::append_line(&path, &line).map_err(CaseError::io("append to", path))
}

/// Increments the fencing counter stored in the lock file and returns the new value.
fn next_fence(lock: &mut std::fs::File) -> std::io::Result<u64> {
    let mut text = String::new();
    lock.seek(SeekFrom::Start(0))?;
    lock.read_to_string(&mut text)?;
    let next = text.trim().parse::<u64>().unwrap_or(0) + 1;
    lock.set_len(0)?;
    lock.seek(SeekFrom::Start(0))?;
    lock.write_all(next.to_string().as_bytes())?;
    if crate::fsio::durable() {
        lock.sync_all()?;
    }
    Ok(next)
}
