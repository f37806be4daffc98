//! The hash-chained journal: one committed line per rail call (see [`super::rail`] for
//! the chain and [`super::commit`] for the commit point), read back whole lines only.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::CaseError;
use super::layout::{JOURNAL, MAX_RUN_FILE_BYTES};

/// A position in the journal chain: how many lines, and the hash of the last (case.json's
/// hash when there is none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JournalHead {
    pub entries: u64,
    pub head: String,
}

/// One line of `journal.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JournalEntry {
    /// The hash of the previous line (case.json's hash for the first).
    pub prev: String,
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
    /// Run-relative file → `sha256:` of the bytes this call wrote there.
    pub writes: BTreeMap<String, String>,
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

/// The journal as read: its whole lines, their hashes, and where a torn last line begins.
#[derive(Debug, Default)]
pub struct Journal {
    pub entries: Vec<JournalEntry>,
    /// `sha256:` of each entry's line (without its newline).
    pub hashes: Vec<String>,
    /// Byte offset of a torn last line (a crash mid-append): not a record.
    pub torn_at: Option<u64>,
}

impl Journal {
    /// Each file the journal's lines name → the fence and `sha256:` hash of the line that
    /// last wrote it.
    #[must_use]
    pub fn last_writes(&self) -> std::collections::BTreeMap<&str, (u64, &str)> {
        let mut last = std::collections::BTreeMap::new();
        for entry in &self.entries {
            for (rel, hash) in &entry.writes {
                last.insert(rel.as_str(), (entry.fence, hash.as_str()));
            }
        }
        last
    }

    /// Reads the journal of the run at `run_dir` (a symlink or special file is refused).
    ///
    /// # Errors
    ///
    /// `CaseError::Io` when journal.jsonl exists but cannot be read (a symlink or special
    /// file included), and `Corrupt` naming the line when a newline-terminated line is not
    /// a journal entry. A missing journal is empty, and a torn last line is recorded in
    /// `torn_at`, not refused.
    pub fn read(run_dir: &Path) -> Result<Journal, CaseError> {
        let path = run_dir.join(JOURNAL);
        let bytes = match crate::fsio::read_regular(&path, MAX_RUN_FILE_BYTES) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Journal::default()),
            Err(e) => return Err(CaseError::io("read", path)(e)),
        };
        let mut out = Journal::default();
        let mut offset = 0u64;
        let mut rest: &[u8] = &bytes;
        let mut number = 0;
        while !rest.is_empty() {
            number += 1;
            let (line, next, whole) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], &rest[i + 1..], true),
                None => (rest, &rest[rest.len()..], false),
            };
            let parsed = std::str::from_utf8(line)
                .ok()
                .and_then(|t| serde_json::from_str::<JournalEntry>(t).ok());
            match parsed {
                Some(entry) if whole => {
                    out.hashes.push(crate::canon::bytes_hash(line));
                    out.entries.push(entry);
                }
                // A last line without its newline was never committed.
                _ if !whole => {
                    out.torn_at = Some(offset);
                    break;
                }
                _ => {
                    let reason = std::str::from_utf8(line)
                        .map_err(|e| e.to_string())
                        .and_then(|t| {
                            serde_json::from_str::<JournalEntry>(t)
                                .map(|_| ())
                                .map_err(|e| e.to_string())
                        })
                        .err()
                        .unwrap_or_default();
                    return Err(CaseError::Corrupt {
                        file: path,
                        field: format!("line {number}"),
                        reason,
                    });
                }
            }
            offset += line.len() as u64 + 1;
            rest = next;
        }
        Ok(out)
    }

    /// The chain head: the hash the next line's `prev` must be.
    #[must_use]
    pub fn head(&self, case_hash: &str) -> String {
        self.hashes
            .last()
            .cloned()
            .unwrap_or_else(|| case_hash.to_string())
    }

    /// Cuts a torn last line off the file (recovery, under the lock).
    pub(super) fn truncate_torn(&self, run_dir: &Path) -> Result<(), CaseError> {
        let Some(at) = self.torn_at else {
            return Ok(());
        };
        let path = run_dir.join(JOURNAL);
        let file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(CaseError::io("open", &path))?;
        file.set_len(at).map_err(CaseError::io("truncate", &path))?;
        crate::fsio::sync_file(&file, &path).map_err(CaseError::io("sync", &path))
    }
}

/// Reads every whole entry of the journal; a torn last line is ignored.
///
/// # Errors
///
/// The errors of [`Journal::read`]: `Io` when the journal cannot be read, `Corrupt` when a
/// whole line is not an entry.
pub fn read_journal(run_dir: &Path) -> Result<Vec<JournalEntry>, CaseError> {
    Journal::read(run_dir).map(|j| j.entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(fence: u64) -> String {
        let entry = JournalEntry {
            prev: format!("sha256:{fence}"),
            fence,
            rail: "add-evidence".into(),
            idempotency_key: None,
            body_hash: "sha256:b".into(),
            outcome: Outcome::Ok,
            result: None,
            error: None,
            replayed: false,
            conflict: false,
            writes: BTreeMap::new(),
            at: "2026-01-01T00:00:00Z".into(),
        };
        serde_json::to_string(&entry).unwrap()
    }

    fn read(text: &str) -> Result<Journal, CaseError> {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(JOURNAL), text).unwrap();
        Journal::read(tmp.path())
    }

    /// Whole lines are entries, each hashed as written; a last line without its newline was
    /// never committed, parseable or not, and is marked torn at its offset.
    #[test]
    fn a_last_line_without_its_newline_is_torn_even_when_it_parses() {
        let (one, two, three) = (line(1), line(2), line(3));
        let whole = format!("{one}\n{two}\n");
        let j = read(&whole).unwrap();
        assert_eq!(
            j.entries.iter().map(|e| e.fence).collect::<Vec<_>>(),
            [1, 2]
        );
        assert_eq!(
            j.hashes,
            [
                crate::canon::bytes_hash(one.as_bytes()),
                crate::canon::bytes_hash(two.as_bytes())
            ]
        );
        assert_eq!(j.torn_at, None);
        let at = u64::try_from(whole.len()).unwrap();
        for torn in [three.as_str(), "{\"prev\":", "\u{0}garbage"] {
            let j = read(&format!("{whole}{torn}")).unwrap();
            assert_eq!(j.entries.len(), 2, "{torn}");
            assert_eq!(j.torn_at, Some(at), "{torn}");
        }
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(JOURNAL), format!("{whole}{three}")).unwrap();
        assert_eq!(read_journal(tmp.path()).unwrap().len(), 2);
        assert!(read_journal(&tmp.path().join("absent")).unwrap().is_empty());
    }

    /// Recovery cuts a torn last line off the file at the offset `read` found, so the next
    /// line appended starts on a line of its own; a journal without one is left alone.
    #[test]
    fn truncate_torn_cuts_the_file_back_to_its_last_whole_line() {
        let whole = format!("{}\n{}\n", line(1), line(2));
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(JOURNAL);
        std::fs::write(&path, format!("{whole}{{\"prev\":")).unwrap();
        let torn = Journal::read(tmp.path()).unwrap();
        assert_eq!(torn.torn_at, Some(u64::try_from(whole.len()).unwrap()));
        torn.truncate_torn(tmp.path()).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), whole);
        let settled = Journal::read(tmp.path()).unwrap();
        assert_eq!((settled.entries.len(), settled.torn_at), (2, None));
        settled.truncate_torn(tmp.path()).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), whole);
    }

    /// A whole line that is not an entry is corruption, named by its line number, not a torn
    /// tail to cut off.
    #[test]
    fn a_whole_line_that_is_not_an_entry_is_corrupt() {
        let text = format!("{}\nnot json\n{}\n", line(1), line(2));
        match read(&text) {
            Err(CaseError::Corrupt { field, .. }) => assert_eq!(field, "line 2"),
            other => panic!("expected a corrupt journal, got {other:?}"),
        }
    }
}
