//! `lifecycle.json`: the engine-owned record of a run's state, stage freezes and verdicts.
//!
//! Invariant: state only moves along [`State::can_advance_to`]; every move is recorded.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Digest;

pub use super::journal::JournalHead;
use super::key::RunId;

pub const LIFECYCLE_FORMAT: &str = "anvil-lifecycle";
pub const LIFECYCLE_FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Open,
    ResearchFrozen,
    ProposalFrozen,
    Finalized,
    Closed,
}

impl State {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            State::Open => "open",
            State::ResearchFrozen => "research_frozen",
            State::ProposalFrozen => "proposal_frozen",
            State::Finalized => "finalized",
            State::Closed => "closed",
        }
    }

    /// Legal moves. An honest decline may finalize from any earlier state.
    #[must_use]
    pub fn can_advance_to(self, next: State) -> bool {
        matches!(
            (self, next),
            (State::Open, State::ResearchFrozen)
                | (State::ResearchFrozen, State::ProposalFrozen)
                | (
                    State::Open | State::ResearchFrozen | State::ProposalFrozen,
                    State::Finalized
                )
                | (State::Finalized, State::Closed)
        )
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Transition {
    pub from: Option<State>,
    pub to: State,
    pub rail: String,
    pub at: String,
}

/// lifecycle.json as read once: the `sha256:` hash of its bytes and what they parse to.
pub(super) type HashedRead = (String, Result<Lifecycle, super::error::CaseError>);

/// Lifecycles parsed (and saved: [`Lifecycle::save`]), by the sha256 of their bytes.
static PARSED: crate::memo::Memo<[u8; 32], Lifecycle> = crate::memo::Memo::new(256);

/// The lifecycle document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Lifecycle {
    pub format: String,
    pub format_version: u32,
    pub run_id: RunId,
    /// case.json's hash at open: a later change of case.json is tampering.
    pub case_hash: String,
    /// The journal chain this lifecycle was written after (see `case::rail`).
    pub journal: JournalHead,
    pub state: State,
    /// File (relative to the run) → `sha256:` of its bytes when its stage froze.
    pub frozen: BTreeMap<String, String>,
    /// Stage-specific records (stage-1 verdicts, the proposal validation record, …).
    pub records: BTreeMap<String, Value>,
    pub transitions: Vec<Transition>,
}

impl Lifecycle {
    #[must_use]
    pub fn new(run_id: RunId, at: &str, case_hash: &str) -> Lifecycle {
        Lifecycle {
            format: LIFECYCLE_FORMAT.into(),
            format_version: LIFECYCLE_FORMAT_VERSION,
            run_id,
            case_hash: case_hash.to_string(),
            journal: JournalHead {
                entries: 0,
                head: case_hash.to_string(),
            },
            state: State::Open,
            frozen: BTreeMap::new(),
            records: BTreeMap::new(),
            transitions: vec![Transition {
                from: None,
                to: State::Open,
                rail: "open".into(),
                at: at.into(),
            }],
        }
    }

    /// Moves to `next`, or says why it may not.
    ///
    /// # Errors
    ///
    /// `CaseError::Transition`, naming the rail and both states, when the lifecycle does
    /// not allow moving from the current state to `next`; the lifecycle is left unchanged.
    pub fn advance(
        &mut self,
        next: State,
        rail: &str,
        at: &str,
    ) -> Result<(), super::error::CaseError> {
        if !self.state.can_advance_to(next) {
            return Err(super::error::CaseError::Transition {
                reason: format!("`{rail}` cannot move a run from {} to {next}", self.state),
            });
        }
        self.transitions.push(Transition {
            from: Some(self.state),
            to: next,
            rail: rail.into(),
            at: at.into(),
        });
        self.state = next;
        Ok(())
    }
}

/// Current time as RFC 3339 UTC with milliseconds.
#[must_use]
pub fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

impl Lifecycle {
    /// Reads `lifecycle.json` of the run at `run_dir` (as the executing rail sees it).
    pub(super) fn load(run_dir: &std::path::Path) -> Result<Lifecycle, super::error::CaseError> {
        match Lifecycle::read_hashed(run_dir)? {
            Some((_, lc)) => lc,
            None => Err(Lifecycle::missing(run_dir)),
        }
    }

    /// The error a run without lifecycle.json is read with.
    pub(super) fn missing(run_dir: &std::path::Path) -> super::error::CaseError {
        super::error::CaseError::io("read", run_dir.join(super::layout::LIFECYCLE_JSON))(
            std::io::ErrorKind::NotFound.into(),
        )
    }

    /// lifecycle.json read once: the `sha256:` hash of its bytes and what they parse to
    /// ([`Lifecycle::parse`]); `None` when it is missing.
    ///
    /// # Errors
    ///
    /// `CaseError::Io` when it cannot be read (a symlink or special file included).
    pub(super) fn read_hashed(
        run_dir: &std::path::Path,
    ) -> Result<Option<HashedRead>, super::error::CaseError> {
        let path = run_dir.join(super::layout::LIFECYCLE_JSON);
        let Some(bytes) = super::commit::read(
            run_dir,
            super::layout::LIFECYCLE_JSON,
            super::layout::MAX_RUN_FILE_BYTES,
        )
        .map_err(super::error::CaseError::io("read", &path))?
        else {
            return Ok(None);
        };
        let digest: [u8; 32] = sha2::Sha256::digest(&bytes).into();
        Ok(Some((
            crate::canon::digest_hash(&digest),
            Lifecycle::parse_digested(&bytes, digest, &path),
        )))
    }

    /// Parses lifecycle bytes read from `path` strictly.
    ///
    /// # Errors
    ///
    /// `CaseError::Corrupt` naming `path` when the bytes are not UTF-8, do not parse
    /// strictly as a lifecycle (the field is named), or are of another format or format
    /// version.
    pub fn parse(
        bytes: &[u8],
        path: &std::path::Path,
    ) -> Result<Lifecycle, super::error::CaseError> {
        Lifecycle::parse_digested(bytes, sha2::Sha256::digest(bytes).into(), path)
    }

    /// [`Lifecycle::parse`] of bytes whose sha256 is `digest`. A rail reads its lifecycle
    /// more than once (its integrity check, its state check, its commit), and a process
    /// (the library API, the MCP server, a battery) reads the same one at each rail: the
    /// parse of equal bytes is remembered by their digest, and a clone handed out.
    pub(super) fn parse_digested(
        bytes: &[u8],
        digest: [u8; 32],
        path: &std::path::Path,
    ) -> Result<Lifecycle, super::error::CaseError> {
        PARSED.try_get_or(digest, || Lifecycle::parse_uncached(bytes, path))
    }

    fn parse_uncached(
        bytes: &[u8],
        path: &std::path::Path,
    ) -> Result<Lifecycle, super::error::CaseError> {
        let corrupt = |field: String, reason: String| super::error::CaseError::Corrupt {
            file: path.to_path_buf(),
            field,
            reason,
        };
        let text =
            std::str::from_utf8(bytes).map_err(|_| corrupt(".".into(), "not UTF-8".into()))?;
        let doc: Lifecycle =
            crate::json_path::from_str(text).map_err(|e| corrupt(e.path, e.message))?;
        if doc.format != LIFECYCLE_FORMAT || doc.format_version != LIFECYCLE_FORMAT_VERSION {
            return Err(corrupt(
                "formatVersion".into(),
                format!("expected {LIFECYCLE_FORMAT} v{LIFECYCLE_FORMAT_VERSION}"),
            ));
        }
        Ok(doc)
    }

    /// Writes `lifecycle.json` (staged when a rail is executing).
    ///
    /// # Errors
    ///
    /// `CaseError::Corrupt` if the lifecycle cannot be serialised, and `Io` when writing
    /// lifecycle.json (or staging it during a rail) fails, including when it would be
    /// written through a symlink.
    pub fn save(&self, run_dir: &std::path::Path) -> Result<(), super::error::CaseError> {
        let path = run_dir.join(super::layout::LIFECYCLE_JSON);
        let bytes = self.to_bytes(&path)?;
        super::commit::write(run_dir, super::layout::LIFECYCLE_JSON, &bytes)
            .map_err(super::error::CaseError::io("write", &path))?;
        self.remember(&bytes, &path);
        Ok(())
    }

    /// Remembers this lifecycle as the parse of `bytes`, its own serialisation written to
    /// `path`: a rail's commit reads back the lifecycle its body staged, and the next rail's
    /// integrity check the one the commit wrote, and inside one process neither parses
    /// again what the engine has just written. Bytes edited since hash differently and are
    /// parsed. A lifecycle reads back exactly as written (floats included:
    /// `float_roundtrip`), which debug builds check at every save.
    fn remember(&self, bytes: &[u8], path: &std::path::Path) {
        debug_assert_eq!(
            Lifecycle::parse_uncached(bytes, path).ok().as_ref(),
            Some(self),
            "a saved lifecycle reads back as itself"
        );
        PARSED.insert(sha2::Sha256::digest(bytes).into(), self.clone());
    }

    /// lifecycle.json's bytes: pretty JSON and a newline. `path` names the file in the
    /// error.
    ///
    /// # Errors
    ///
    /// `CaseError::Corrupt` if the lifecycle cannot be serialised.
    pub fn to_bytes(&self, path: &std::path::Path) -> Result<Vec<u8>, super::error::CaseError> {
        let mut bytes =
            serde_json::to_vec_pretty(self).map_err(|e| super::error::CaseError::Corrupt {
                file: path.to_path_buf(),
                field: ".".into(),
                reason: e.to_string(),
            })?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// A typed record, if present.
    #[must_use]
    pub fn record<T: serde::de::DeserializeOwned>(&self, name: &str) -> Option<T> {
        self.records.get(name).and_then(|v| T::deserialize(v).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parse of equal bytes is remembered, never the parse of other bytes: two
    /// lifecycles of one length that differ in a single byte parse as themselves, whichever
    /// came first, and a refused parse is refused again.
    #[test]
    fn a_remembered_parse_answers_only_its_own_bytes() {
        let path = std::path::Path::new("lifecycle.json");
        let lc = Lifecycle::new(RunId::generate(), &now(), "sha256:00");
        let mut other = lc.clone();
        other.case_hash = "sha256:01".into();
        let (a, b) = (
            serde_json::to_vec(&lc).unwrap(),
            serde_json::to_vec(&other).unwrap(),
        );
        assert_eq!(a.len(), b.len());
        for _ in 0..2 {
            assert_eq!(Lifecycle::parse(&a, path).unwrap(), lc);
            assert_eq!(Lifecycle::parse(&b, path).unwrap(), other);
        }
        let mut bad = a.clone();
        bad.extend_from_slice(b" x");
        for _ in 0..2 {
            assert!(Lifecycle::parse(&bad, path).is_err());
        }
    }

    /// A saved lifecycle is remembered as the parse of the bytes written, and only of
    /// them: the file edited after the save (one byte, same length) reads as the edit, and
    /// the saved bytes put back read as the saved lifecycle again.
    #[test]
    fn a_saved_lifecycle_is_remembered_only_for_the_bytes_written() {
        let dir = tempfile::tempdir().unwrap();
        let lc = Lifecycle::new(RunId::generate(), &now(), "sha256:aaaa");
        lc.save(dir.path()).unwrap();
        let path = dir.path().join(super::super::layout::LIFECYCLE_JSON);
        let read = || {
            Lifecycle::read_hashed(dir.path())
                .unwrap()
                .unwrap()
                .1
                .unwrap()
        };
        assert_eq!(read(), lc);
        let written = std::fs::read_to_string(&path).unwrap();
        let field = "\"caseHash\": \"sha256:aaaa\"";
        assert_eq!(written.matches(field).count(), 1, "{written}");
        let edit = written.replace(field, "\"caseHash\": \"sha256:aaab\"");
        std::fs::write(&path, edit).unwrap();
        assert_eq!(read().case_hash, "sha256:aaab", "the edit is read");
        std::fs::write(&path, &written).unwrap();
        assert_eq!(read(), lc);
    }

    /// A lifecycle of another format, or of another version of this one, is refused as
    /// corrupt at `formatVersion`, whichever of the two differs.
    #[test]
    fn parse_refuses_another_format_or_another_version() {
        let path = std::path::Path::new("lifecycle.json");
        let lc = Lifecycle::new(RunId::generate(), &now(), "sha256:00");
        let good = serde_json::to_value(&lc).unwrap();
        Lifecycle::parse(good.to_string().as_bytes(), path).unwrap();
        let mut other_format = good.clone();
        other_format["format"] = "anvil-other".into();
        let mut other_version = good;
        other_version["formatVersion"] = (LIFECYCLE_FORMAT_VERSION + 1).into();
        for doc in [other_format, other_version] {
            match Lifecycle::parse(doc.to_string().as_bytes(), path) {
                Err(crate::case::error::CaseError::Corrupt { field, .. }) => {
                    assert_eq!(field, "formatVersion", "{doc}");
                }
                other => panic!("{doc} gave {other:?}"),
            }
        }
    }
}
