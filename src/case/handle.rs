//! [`RunHandle`]: an open run, and the rails as its methods — add-evidence,
//! add-external-evidence, add-claim, freeze-research, validate, show and verify here;
//! finalize in [`super::finalize`]; close in `crate::reconcile`.
//!
//! Invariant: a run is loaded in one place. [`RunHandle::open`] reads case.json, checks it
//! is a complete run whose directory is its run id, and keeps it; nothing else calls
//! `Run::load` or `Lifecycle::load`. Each rail then takes the run lock (in
//! [`super::rail::with_rail`]), refuses a stale run or a tampered frozen file, reads the
//! lifecycle under the lock, checks its state, and only then writes, atomically. The
//! handle holds no lock between rails: a long-lived holder (the MCP server) must not
//! shut out `case verify` or an agent's own shell rails on the same run.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

use super::citable::{evidence_source, outside_every_run, verify_artifacts};
use super::claim::RawClaim;
use super::doc::CaseDoc;
use super::error::CaseError;
use super::evidence::{EvidenceArtifact, EvidenceRequest, acquire, acquire_external};
use super::frozen::{RESEARCH_RECORD, VALIDATION_RECORD, evaluate, load_frozen};
use super::lifecycle::{Lifecycle, State, now};
use super::rail::{Broken, with_rail};
use super::research::{ClaimInput, ResearchRecord, admit_claim, stage_one};
use super::run::Run;
use super::store::{self, CLAIMS_JSON, CRITIQUE_JSON, EVIDENCE_JSON, PROPOSAL_JSON, RESULT_JSON};
use super::validate::{Critique, Review, ValidationRecord};
use super::verify::{Current, VerifyReport, current_world, drift, frozen_and_verdicts, staleness};

/// What [`RunHandle::inspected`] sees: the broken files, the lifecycle, and the caller's
/// own reads.
type Inspected<T> = (Vec<Broken>, Result<Lifecycle, CaseError>, T);

/// An open run: its directory and its parsed, identity-checked case.json.
#[derive(Debug, Clone)]
pub struct RunHandle {
    run: Run,
}

impl RunHandle {
    /// Opens the run at `dir`, refusing anything that is not a complete run.
    ///
    /// # Errors
    ///
    /// `CaseError::NotARun` when `dir` is not a directory, has no case.json, or its name is
    /// not the run id case.json records; `Io` when case.json cannot be read (a symlink or
    /// special file included); and `Corrupt` when it is not UTF-8, does not parse strictly,
    /// or is of another format version.
    pub fn open(dir: &Path) -> Result<RunHandle, CaseError> {
        Ok(RunHandle {
            run: Run::load(dir)?,
        })
    }

    /// This handle with its directory made absolute (against the current directory, as
    /// [`std::path::absolute`]: no file is read, no link followed), for a process that
    /// runs elsewhere and is handed the run's paths.
    ///
    /// # Errors
    ///
    /// `CaseError::Io` when the current directory cannot be read.
    pub fn absolute(&self) -> Result<RunHandle, CaseError> {
        let dir =
            std::path::absolute(&self.run.dir).map_err(CaseError::io("resolve", &self.run.dir))?;
        let mut run = self.run.clone();
        run.dir = dir;
        Ok(RunHandle { run })
    }

    /// The run, for a holder that keeps only its documents.
    #[must_use]
    pub fn into_run(self) -> Run {
        self.run
    }

    /// The run directory, as it was named to [`RunHandle::open`].
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.run.dir
    }

    /// The run's case document.
    #[must_use]
    pub fn doc(&self) -> &CaseDoc {
        &self.run.doc
    }

    /// The run: directory, case document and case.json's hash.
    #[must_use]
    pub fn run(&self) -> &Run {
        &self.run
    }

    /// `output/<name>` of this run.
    #[must_use]
    pub fn output(&self, name: &str) -> PathBuf {
        self.run.output(name)
    }

    /// The lifecycle as it is on disk now (read without the run lock: a view, not a
    /// basis for a write).
    ///
    /// # Errors
    ///
    /// `CaseError::Io` when lifecycle.json is missing or unreadable (a symlink or special
    /// file included), and `Corrupt` when it does not parse or is of another format
    /// version.
    pub fn lifecycle(&self) -> Result<Lifecycle, CaseError> {
        Lifecycle::load(self.dir())
    }

    /// The run, refused when stale: a stale run's outputs must never be consumed.
    ///
    /// # Errors
    ///
    /// `CaseError::Stale` naming every field (AIR hash, source revision) in which the
    /// current world differs from the one the run was opened on.
    pub fn current(&self) -> Result<&Run, CaseError> {
        let run = &self.run;
        let current = current_world(
            Path::new(&run.doc.inputs.air),
            Path::new(&run.doc.inputs.repository),
            &run.doc,
        );
        let stale = staleness(&run.doc, &current);
        if !stale.is_empty() {
            return Err(CaseError::Stale {
                run: run.dir.display().to_string(),
                fields: stale,
            });
        }
        Ok(run)
    }

    /// For a rail, under its lock: the current run and its lifecycle, with every frozen
    /// file checked against its recorded hash.
    ///
    /// # Errors
    ///
    /// `CaseError::Stale` for a stale run (see [`RunHandle::current`]), `Io` or `Corrupt`
    /// when lifecycle.json cannot be read, and `Tamper` when a frozen file's hash changed
    /// or the file is gone or unreadable.
    pub fn checked_lifecycle(&self) -> Result<(&Run, Lifecycle), CaseError> {
        let run = self.current()?;
        let lc = Lifecycle::load(self.dir())?;
        store::check_frozen(self.dir(), &lc)?;
        Ok((run, lc))
    }

    /// [`RunHandle::checked_lifecycle`], refused unless the run is in one of `allowed`.
    fn prepare(
        &self,
        rail: &'static str,
        allowed: &[State],
    ) -> Result<(&Run, Lifecycle), CaseError> {
        let (run, lc) = self.checked_lifecycle()?;
        require_state(&lc, rail, allowed)?;
        Ok((run, lc))
    }

    /// `case verify`'s integrity check: under the run lock, every disagreement between the
    /// run's engine-owned files, as recovery of an interrupted rail would leave them. It
    /// writes nothing: recovery is the next rail's.
    ///
    /// # Errors
    ///
    /// `CaseError::Io` when the run's lock file cannot be opened or locked (or is not a
    /// regular file) or a run file cannot be read, and `Corrupt` when a journal line other
    /// than a torn last one does not parse. Broken files are reported in the list, not as
    /// errors.
    pub fn integrity(&self) -> Result<Vec<Broken>, CaseError> {
        super::rail::check(self.dir())
    }

    /// Every broken file of the run, integrity and re-derived verdicts together.
    ///
    /// # Errors
    ///
    /// The errors of [`RunHandle::integrity`]. Re-derived verdicts that disagree are
    /// reported in the list, not as errors.
    pub fn tamper(&self) -> Result<Vec<Broken>, CaseError> {
        Ok(self.inspected(|| ())?.0)
    }

    /// Under the run lock and writing nothing, on the run as recovery would leave it: every
    /// broken file (integrity, then frozen files and re-derived verdicts), the lifecycle,
    /// and what `more` reads.
    fn inspected<T>(&self, more: impl FnOnce() -> T) -> Result<Inspected<T>, CaseError> {
        let (mut out, (frozen, lc, more)) = super::rail::check_then(self.dir(), || {
            let lc = Lifecycle::load(self.dir());
            let frozen = match &lc {
                Ok(lc) => frozen_and_verdicts(&self.run, lc),
                Err(_) => Vec::new(),
            };
            (frozen, lc, more())
        })?;
        out.extend(frozen);
        Ok((out, lc, more))
    }

    /// `case verify`: drift of the views, staleness against `air`/`repo` (defaulting to
    /// the inputs recorded in case.json), and tampering.
    ///
    /// # Errors
    ///
    /// `CaseError::Io` when a view (case.md, the expected-output schema) exists but cannot
    /// be read, and the errors of [`RunHandle::tamper`]. Drift, staleness and tampering are
    /// reported in the [`VerifyReport`], not as errors.
    pub fn verify(
        &self,
        air: Option<&Path>,
        repo: Option<&Path>,
    ) -> Result<VerifyReport, CaseError> {
        let run = &self.run;
        let air = air.map_or_else(|| run.doc.inputs.air.clone().into(), Path::to_path_buf);
        let repo = repo.map_or_else(
            || run.doc.inputs.repository.clone().into(),
            Path::to_path_buf,
        );
        let current: Current = current_world(&air, &repo, &run.doc);
        Ok(VerifyReport {
            format: "anvil-verify",
            format_version: 1,
            run: run.dir.display().to_string(),
            case_key: run.doc.identity.case_key.to_string(),
            run_id: run.doc.identity.run_id.to_string(),
            drift: drift(run)?,
            stale: staleness(&run.doc, &current),
            tamper: self.tamper()?,
        })
    }

    /// `add-evidence`: read a repository coordinate and freeze it as an artifact.
    ///
    /// # Errors
    ///
    /// The rail envelope's refusals (see [`with_rail`]: an unusable
    /// lock file, a corrupt journal, broken integrity, a bad or conflicting idempotency
    /// key), then `Stale`, `Tamper` for a changed frozen file, and `Transition` unless the
    /// run is open. Specific to add-evidence: `CaseError::Rail` of kind `inside_a_run` when
    /// the path lies inside a run directory, and `CaseError::Evidence` when the coordinate
    /// cannot be acquired (see [`acquire`]).
    pub fn add_evidence(
        &self,
        req: &EvidenceRequest,
        key: Option<&str>,
    ) -> Result<EvidenceArtifact, CaseError> {
        let body = json!({"path": req.path, "startLine": req.start_line, "endLine": req.end_line});
        let mut fresh = None;
        let saved = with_rail(self.dir(), "add-evidence", key, &body, |_| {
            let (run, _) = self.prepare("add-evidence", &[State::Open])?;
            outside_every_run(run, "add-evidence", &req.path)?;
            let policy = &run.doc.policy;
            let source = evidence_source(run)?;
            let artifact = acquire(
                Path::new(&run.doc.inputs.repository),
                &source,
                &policy.inspect_scopes,
                &policy.contract.admissible_kinds,
                req,
                &now(),
            )?;
            store_artifact(self.dir(), artifact, &mut fresh)
        })?;
        returned_artifact(self.dir(), &saved, fresh)
    }

    /// `add-external-evidence`: record a caller-supplied excerpt, always unverified.
    ///
    /// # Errors
    ///
    /// The rail envelope's refusals (see [`with_rail`]: an unusable
    /// lock file, a corrupt journal, broken integrity, a bad or conflicting idempotency
    /// key), then `Stale`, `Tamper` for a changed frozen file, and `Transition` unless the
    /// run is open. Specific to add-external-evidence: `CaseError::Rail` of kind
    /// `too_large` (before the rail) for a source or uri over `NOTE_BYTES`, and
    /// `CaseError::Evidence` for a blank source, uri or excerpt, an excerpt holding a NUL
    /// byte, or when `external` is not an admissible kind.
    pub fn add_external_evidence(
        &self,
        source: &str,
        uri: &str,
        excerpt: &str,
        key: Option<&str>,
    ) -> Result<EvidenceArtifact, CaseError> {
        for (field, text) in [("source", source), ("uri", uri)] {
            crate::limits::Limit::NoteBytes
                .check(text.len())
                .map_err(|l| CaseError::Rail {
                    rail: "add-external-evidence",
                    kind: "too_large",
                    reason: format!("`{field}` {l}"),
                })?;
        }
        let body = json!({"source": source, "uri": uri, "excerptHash": crate::canon::bytes_hash(excerpt.as_bytes())});
        let mut fresh = None;
        let saved = with_rail(self.dir(), "add-external-evidence", key, &body, |_| {
            let (run, _) = self.prepare("add-external-evidence", &[State::Open])?;
            let artifact = acquire_external(
                source,
                uri,
                excerpt,
                &run.doc.policy.contract.admissible_kinds,
                &now(),
            )?;
            store_artifact(self.dir(), artifact, &mut fresh)
        })?;
        returned_artifact(self.dir(), &saved, fresh)
    }

    /// `add-claim` from a JSON body, parsed strictly (an `excerpt` field is refused).
    ///
    /// # Errors
    ///
    /// `CaseError::Document` (kind `unknown_field` or `shape`) when `body` is not a claim
    /// input, then the errors of [`RunHandle::add_claim`].
    pub fn add_claim_json(&self, body: &Value, key: Option<&str>) -> Result<RawClaim, CaseError> {
        let input: ClaimInput = crate::json_path::deserialize(body.clone()).map_err(|e| {
            let kind = if e.message.starts_with("unknown field") {
                super::proposal::DocErrorKind::UnknownField
            } else {
                super::proposal::DocErrorKind::Shape
            };
            super::proposal::DocError::new("add-claim", &e.path, kind, e.message)
        })?;
        self.add_claim(input, key)
    }

    /// `add-claim`: an atomic claim over existing artifacts, in the skill's vocabulary.
    ///
    /// # Errors
    ///
    /// The rail envelope's refusals (see [`with_rail`]: an unusable
    /// lock file, a corrupt journal, broken integrity, a bad or conflicting idempotency
    /// key), then `Stale`, `Tamper` for a changed frozen file, and `Transition` unless the
    /// run is open. Specific to add-claim: a `Document` refusal when evidence.json or
    /// claims.json is unreadable, and when the claim is refused (its predicate, value,
    /// confidence or cited artifacts; see [`admit_claim`]).
    pub fn add_claim(&self, input: ClaimInput, key: Option<&str>) -> Result<RawClaim, CaseError> {
        let body = serde_json::to_value(&input).unwrap_or(Value::Null);
        with_rail(self.dir(), "add-claim", key, &body, |_| {
            let (run, _) = self.prepare("add-claim", &[State::Open])?;
            let evidence = store::evidence(self.dir())?;
            let claim = admit_claim(input, &run.doc, &evidence)?;
            let mut doc = store::claims(self.dir())?;
            if let Some(existing) = doc.claims.iter().find(|c| c.id == claim.id) {
                return Ok(existing.clone());
            }
            doc.claims.push(claim.clone());
            store::write_doc(self.dir(), CLAIMS_JSON, &doc)?;
            Ok(claim)
        })
    }

    /// `freeze-research`: hash evidence.json and claims.json into lifecycle.json and run
    /// stage 1. Hand-written documents are checked here exactly like rail-produced ones.
    ///
    /// # Errors
    ///
    /// The rail envelope's refusals (see [`with_rail`]: an unusable
    /// lock file, a corrupt journal, broken integrity, a bad or conflicting idempotency
    /// key), then `Stale`, `Tamper` for a changed frozen file, and `Transition` unless the
    /// run is open. Specific to freeze-research: a `Document` refusal when evidence.json or
    /// claims.json does not parse or is of another format, and the refusals of
    /// [`verify_artifacts`] (`forged_artifact`,
    /// `inside_a_run`, a changed source).
    pub fn freeze_research(&self, key: Option<&str>) -> Result<ResearchRecord, CaseError> {
        with_rail(self.dir(), "freeze-research", key, &json!({}), |_| {
            let (run, mut lc) = self.prepare("freeze-research", &[State::Open])?;
            let evidence = store::evidence(self.dir())?;
            let claims = store::claims(self.dir())?;
            verify_artifacts(run, &evidence)?;
            // Materialise empty documents so the freeze hashes real files.
            if store::file_hash(self.dir(), EVIDENCE_JSON)?.is_none() {
                store::write_doc(self.dir(), EVIDENCE_JSON, &evidence)?;
            }
            if store::file_hash(self.dir(), CLAIMS_JSON)?.is_none() {
                store::write_doc(self.dir(), CLAIMS_JSON, &claims)?;
            }
            let record = stage_one(&run.doc, &evidence, &claims, &now());
            store::freeze(self.dir(), &mut lc, EVIDENCE_JSON)?;
            store::freeze(self.dir(), &mut lc, CLAIMS_JSON)?;
            lc.records.insert(
                RESEARCH_RECORD.into(),
                serde_json::to_value(&record).unwrap_or(Value::Null),
            );
            lc.advance(State::ResearchFrozen, "freeze-research", &now())?;
            lc.save(self.dir())?;
            Ok(record)
        })
    }

    /// `validate`: freeze the proposal, run the checks, record the authoritative verdict in
    /// lifecycle.json and a review copy in critique.json. `dry_run` writes nothing.
    ///
    /// # Errors
    ///
    /// Unless `dry_run`, the rail envelope's refusals (see
    /// [`with_rail`]: an unusable lock file, a corrupt journal,
    /// broken integrity, a bad or conflicting idempotency key); in both modes `Stale`,
    /// `Tamper` for a changed frozen file, and `Transition` unless research is frozen.
    /// Specific to validate: `Tampered` when the recorded stage-1 record differs from its
    /// re-derivation, `CaseError::Rail` of kind `missing_output` without
    /// output/proposal.json, and `Document` when the proposal does not parse or bind. A
    /// failing check is a `fail` verdict, not an error.
    pub fn validate(
        &self,
        key: Option<&str>,
        dry_run: bool,
    ) -> Result<ValidationRecord, CaseError> {
        if dry_run {
            let (run, lc) = self.prepare("validate", &[State::ResearchFrozen])?;
            return evaluate(&load_frozen(run.clone(), &lc)?);
        }
        with_rail(self.dir(), "validate", key, &json!({}), |_| {
            let (run, mut lc) = self.prepare("validate", &[State::ResearchFrozen])?;
            let frozen = load_frozen(run.clone(), &lc)?;
            let record = evaluate(&frozen)?;
            store::freeze(self.dir(), &mut lc, PROPOSAL_JSON)?;
            lc.records.insert(
                VALIDATION_RECORD.into(),
                serde_json::to_value(&record).unwrap_or(Value::Null),
            );
            lc.advance(State::ProposalFrozen, "validate", &now())?;
            store::write_doc(
                self.dir(),
                CRITIQUE_JSON,
                &Critique::of(&record, Review::SelfReview),
            )?;
            lc.save(self.dir())?;
            Ok(record)
        })
    }

    /// `show`: state, stage hashes, status, staleness and the next legal rails.
    ///
    /// # Errors
    ///
    /// `CaseError::Io` or `Corrupt` when lifecycle.json cannot be read or parsed. Staleness
    /// is reported in the [`ShowReport`], not as an error.
    pub fn show(&self) -> Result<ShowReport, CaseError> {
        let run = &self.run;
        let (broken, lc, result) = self.inspected(|| {
            store::read_doc::<Value>(self.dir(), RESULT_JSON)
                .ok()
                .flatten()
        })?;
        let lc = lc?;
        let current = current_world(
            Path::new(&run.doc.inputs.air),
            Path::new(&run.doc.inputs.repository),
            &run.doc,
        );
        let next = match lc.state {
            State::Open => vec![
                "add-evidence",
                "add-external-evidence",
                "add-claim",
                "freeze-research",
                "finalize (decline)",
            ],
            State::ResearchFrozen => vec![
                "validate (after writing output/proposal.json)",
                "finalize (decline or supported)",
            ],
            State::ProposalFrozen => vec!["finalize"],
            State::Finalized => vec!["close"],
            State::Closed => vec![],
        };
        Ok(ShowReport {
            format: "anvil-show",
            format_version: 1,
            run: self.dir().display().to_string(),
            case_key: run.doc.identity.case_key.to_string(),
            run_id: run.doc.identity.run_id.to_string(),
            target: run.doc.target.key.to_string(),
            skill: format!(
                "{}@{}",
                run.doc.identity.skill, run.doc.identity.skill_version
            ),
            tampered: broken
                .first()
                .map(|b| format!("`{}` ({}) {}", b.file, b.field, b.reason)),
            stale: staleness(&run.doc, &current),
            status: result.as_ref().and_then(|r| r.get("status").cloned()),
            verdict: lc
                .records
                .get(VALIDATION_RECORD)
                .and_then(|v| v.get("verdict").cloned()),
            state: lc.state,
            frozen: lc.frozen,
            next,
        })
    }
}

fn require_state(lc: &Lifecycle, rail: &'static str, allowed: &[State]) -> Result<(), CaseError> {
    if allowed.contains(&lc.state) {
        return Ok(());
    }
    Err(CaseError::Transition {
        reason: format!(
            "`{rail}` needs the run in state {}, but it is {}",
            allowed
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(" or "),
            lc.state
        ),
    })
}

/// What the journal keeps of an added artifact: its id and content hash, never its
/// excerpt. The excerpt lives in evidence.json; a replayed call reads it back from there,
/// so neither a call nor its replay copies a large excerpt into the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ArtifactRef {
    pub id: String,
    pub content_hash: String,
}

/// The artifact `saved` names, as evidence.json holds it.
fn stored_artifact(run_dir: &Path, saved: &ArtifactRef) -> Result<EvidenceArtifact, CaseError> {
    store::evidence(run_dir)?
        .get(&saved.id)
        .filter(|a| a.content_hash == saved.content_hash)
        .cloned()
        .ok_or_else(|| CaseError::Corrupt {
            file: run_dir.join(EVIDENCE_JSON),
            field: "artifacts".into(),
            reason: format!(
                "artifact `{}` ({}) that the journal records is not there",
                saved.id, saved.content_hash
            ),
        })
}

/// Stores `artifact` unless the same coordinate with the same bytes is already there (the
/// first is kept), and leaves the artifact as stored in `stored` for the caller to return.
fn store_artifact(
    run_dir: &Path,
    artifact: EvidenceArtifact,
    stored: &mut Option<EvidenceArtifact>,
) -> Result<ArtifactRef, CaseError> {
    let mut doc = store::evidence(run_dir)?;
    let saved = ArtifactRef {
        id: artifact.id.clone(),
        content_hash: artifact.content_hash.clone(),
    };
    if let Some(first) = doc.get(&artifact.id) {
        *stored = Some(first.clone());
    } else {
        doc.insert(artifact);
        store::write_evidence(run_dir, &doc)?;
        // Taken back, not cloned before: the artifact may hold a 16 MiB excerpt.
        *stored = doc.artifacts.pop();
    }
    Ok(saved)
}

/// The artifact a call returns: the one this call stored or found (`fresh`), or, for a
/// replayed call whose body did not run, the one evidence.json holds under the journal's
/// reference. Returning `fresh` spares re-reading evidence.json, which holds every
/// excerpt (16 MiB of one cited document cost a second parse of it).
fn returned_artifact(
    run_dir: &Path,
    saved: &ArtifactRef,
    fresh: Option<EvidenceArtifact>,
) -> Result<EvidenceArtifact, CaseError> {
    match fresh {
        Some(a) if a.id == saved.id && a.content_hash == saved.content_hash => Ok(a),
        _ => stored_artifact(run_dir, saved),
    }
}

/// What `case show` reports.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShowReport {
    pub format: &'static str,
    pub format_version: u32,
    pub run: String,
    pub case_key: String,
    pub run_id: String,
    pub target: String,
    pub skill: String,
    pub state: State,
    pub frozen: std::collections::BTreeMap<String, String>,
    pub tampered: Option<String>,
    pub stale: Vec<super::verify::StaleField>,
    pub status: Option<Value>,
    pub verdict: Option<Value>,
    pub next: Vec<&'static str>,
}
