//! The research and synthesis rails: add-evidence, add-external-evidence, add-claim,
//! freeze-research, validate, and show.
//!
//! Invariant: each rail loads the run, refuses a stale run or a tampered frozen file,
//! checks the lifecycle state, and only then writes — atomically, under the run lock.

use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use super::claim::RawClaim;
use super::error::CaseError;
use super::evidence::{EvidenceArtifact, EvidenceRequest, Source, acquire, acquire_external};
use super::lifecycle::{Lifecycle, State, now};
use super::proposal::parse_proposal;
use super::rail::with_rail;
use super::research::{ClaimInput, ResearchRecord, admit_claim, stage_one};
use super::run::Run;
use super::run::SOURCE_JSON;
use super::store::{self, CLAIMS_JSON, CRITIQUE_JSON, EVIDENCE_JSON, PROPOSAL_JSON, RESULT_JSON};
use super::validate::{Inputs, ValidationRecord, run_checks, verdict};
use super::verify::{current_world, staleness};
use crate::repo::digest::SourceManifest;

pub const RESEARCH_RECORD: &str = "research";
pub const VALIDATION_RECORD: &str = "proposalValidation";

/// Loads a run and refuses it when stale: its outputs must never be consumed.
pub fn load_current(run_dir: &Path) -> Result<Run, CaseError> {
    let run = Run::load(run_dir)?;
    let current = current_world(
        Path::new(&run.doc.inputs.air),
        Path::new(&run.doc.inputs.repository),
    );
    let stale = staleness(&run.doc, &current);
    if !stale.is_empty() {
        return Err(CaseError::Stale {
            run: run_dir.display().to_string(),
            fields: stale,
        });
    }
    Ok(run)
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

/// Loads run + lifecycle for a rail and checks state and frozen hashes.
fn prepare(
    run_dir: &Path,
    rail: &'static str,
    allowed: &[State],
) -> Result<(Run, Lifecycle), CaseError> {
    let run = load_current(run_dir)?;
    let lc = Lifecycle::load(run_dir)?;
    store::check_frozen(run_dir, &lc)?;
    require_state(&lc, rail, allowed)?;
    Ok((run, lc))
}

/// The repository as this run may cite it (R-GATE-3): the blobs committed at its source
/// revision, or, without a commit, the manifest recorded at open (`source.json`, bound to
/// case.json by `sourceDigest`). A cases directory inside the repository is excluded.
pub fn evidence_source(run: &Run) -> Result<Source, CaseError> {
    let repo = Path::new(&run.doc.inputs.repository);
    let revision = &run.doc.identity.source_revision;
    let source = if crate::repo::committed::is_commit_id(revision) {
        Source::committed(repo, revision)?
    } else {
        let manifest = load_manifest(run)?;
        Source::digested(revision, manifest)
    };
    Ok(match cases_dir_inside(run) {
        Some(dir) => source.excluding(dir),
        None => source,
    })
}

/// The run's cases directory when it lies inside the repository (canonical).
fn cases_dir_inside(run: &Run) -> Option<std::path::PathBuf> {
    let repo = std::fs::canonicalize(&run.doc.inputs.repository).ok()?;
    let run_dir = std::fs::canonicalize(&run.dir).ok()?;
    let cases = run_dir.parent()?.parent()?.to_path_buf();
    cases.starts_with(&repo).then_some(cases)
}

fn load_manifest(run: &Run) -> Result<SourceManifest, CaseError> {
    let path = run.dir.join(SOURCE_JSON);
    let tampered = |reason: String| CaseError::Tampered {
        file: SOURCE_JSON.into(),
        field: ".".into(),
        reason,
    };
    let Some(recorded) = &run.doc.identity.source_digest else {
        return Err(tampered(
            "case.json records no sourceDigest for a repository without a commit".into(),
        ));
    };
    let bytes = crate::fsio::read_regular(&path, store::MAX_RUN_FILE_BYTES)
        .map_err(CaseError::io("read", &path))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| tampered("is not UTF-8".into()))?;
    let manifest: SourceManifest =
        crate::json_path::from_str(text).map_err(|e| CaseError::Corrupt {
            file: path.clone(),
            field: e.path,
            reason: e.message,
        })?;
    if manifest.digest() != *recorded {
        return Err(tampered(format!(
            "hashes to {}, but case.json recorded {recorded}",
            manifest.digest()
        )));
    }
    Ok(manifest)
}

/// `add-evidence`: read a repository coordinate and freeze it as an artifact.
pub fn add_evidence(
    run_dir: &Path,
    req: &EvidenceRequest,
    key: Option<&str>,
) -> Result<EvidenceArtifact, CaseError> {
    let body = json!({"path": req.path, "startLine": req.start_line, "endLine": req.end_line});
    let mut fresh = None;
    let saved = with_rail(run_dir, "add-evidence", key, &body, |_| {
        let (run, _) = prepare(run_dir, "add-evidence", &[State::Open])?;
        outside_every_run(&run, "add-evidence", &req.path)?;
        let policy = &run.doc.policy;
        let source = evidence_source(&run)?;
        let artifact = acquire(
            Path::new(&run.doc.inputs.repository),
            &source,
            &policy.inspect_scopes,
            &policy.contract.admissible_kinds,
            req,
            &now(),
        )?;
        store_artifact(run_dir, artifact, &mut fresh)
    })?;
    returned_artifact(run_dir, &saved, fresh)
}

/// `add-external-evidence`: record a caller-supplied excerpt, always unverified.
pub fn add_external_evidence(
    run_dir: &Path,
    source: &str,
    uri: &str,
    excerpt: &str,
    key: Option<&str>,
) -> Result<EvidenceArtifact, CaseError> {
    let body = json!({"source": source, "uri": uri, "excerptHash": crate::canon::bytes_hash(excerpt.as_bytes())});
    let mut fresh = None;
    let saved = with_rail(run_dir, "add-external-evidence", key, &body, |_| {
        let (run, _) = prepare(run_dir, "add-external-evidence", &[State::Open])?;
        let artifact = acquire_external(
            source,
            uri,
            excerpt,
            &run.doc.policy.contract.admissible_kinds,
            &now(),
        )?;
        store_artifact(run_dir, artifact, &mut fresh)
    })?;
    returned_artifact(run_dir, &saved, fresh)
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

/// Refuses a repository path that lies inside a run directory — this run's workspace or
/// output, or any run of a cases dir kept inside the repository (the default
/// `.refinement/cases` is): what a run holds was written by an agent or by the engine and
/// is never a source. A path that does not resolve is left to `acquire` to name.
fn outside_every_run(run: &Run, rail: &'static str, path: &str) -> Result<(), CaseError> {
    let repo = Path::new(&run.doc.inputs.repository);
    let (Ok((_, abs)), Ok(root)) = (
        super::evidence::resolve_path(repo, path),
        std::fs::canonicalize(repo),
    ) else {
        return Ok(());
    };
    let own = std::fs::canonicalize(&run.dir).ok();
    let is_run = |d: &Path| {
        own.as_deref() == Some(d)
            || (d.join(super::run::CASE_JSON).is_file()
                && d.join(super::run::LIFECYCLE_JSON).is_file())
    };
    let inside = abs
        .ancestors()
        .skip(1)
        .take_while(|d| d.starts_with(&root))
        .find(|d| is_run(d));
    match inside {
        None => Ok(()),
        Some(dir) => Err(CaseError::Rail {
            rail,
            kind: "inside_a_run",
            reason: format!(
                "`{path}` lies inside the run directory `{}`: what a run holds is written by an agent or the engine, never read as evidence",
                dir.display()
            ),
        }),
    }
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
    match doc.get(&artifact.id) {
        Some(first) => *stored = Some(first.clone()),
        None => {
            *stored = Some(artifact.clone());
            doc.insert(artifact);
            store::write_doc(run_dir, EVIDENCE_JSON, &doc)?;
        }
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

/// `add-claim` from a JSON body, parsed strictly (an `excerpt` field is refused).
pub fn add_claim_json(
    run_dir: &Path,
    body: &Value,
    key: Option<&str>,
) -> Result<RawClaim, CaseError> {
    let input: ClaimInput = crate::json_path::deserialize(body.clone()).map_err(|e| {
        let kind = if e.message.starts_with("unknown field") {
            super::proposal::DocErrorKind::UnknownField
        } else {
            super::proposal::DocErrorKind::Shape
        };
        super::proposal::DocError::new("add-claim", &e.path, kind, e.message)
    })?;
    add_claim(run_dir, input, key)
}

/// `add-claim`: an atomic claim over existing artifacts, in the skill's vocabulary.
pub fn add_claim(
    run_dir: &Path,
    input: ClaimInput,
    key: Option<&str>,
) -> Result<RawClaim, CaseError> {
    let body = serde_json::to_value(&input).unwrap_or(Value::Null);
    with_rail(run_dir, "add-claim", key, &body, |_| {
        let (run, _) = prepare(run_dir, "add-claim", &[State::Open])?;
        let evidence = store::evidence(run_dir)?;
        let claim = admit_claim(input, &run.doc, &evidence)?;
        let mut doc = store::claims(run_dir)?;
        if let Some(existing) = doc.claims.iter().find(|c| c.id == claim.id) {
            return Ok(existing.clone());
        }
        doc.claims.push(claim.clone());
        store::write_doc(run_dir, CLAIMS_JSON, &doc)?;
        Ok(claim)
    })
}

/// `freeze-research`: hash evidence.json and claims.json into lifecycle.json and run
/// stage 1. Hand-written documents are checked here exactly like rail-produced ones.
pub fn freeze_research(run_dir: &Path, key: Option<&str>) -> Result<ResearchRecord, CaseError> {
    with_rail(run_dir, "freeze-research", key, &json!({}), |_| {
        let (run, mut lc) = prepare(run_dir, "freeze-research", &[State::Open])?;
        store::ensure_output_dir(run_dir)?;
        let evidence = store::evidence(run_dir)?;
        let claims = store::claims(run_dir)?;
        verify_artifacts(&run, &evidence)?;
        // Materialise empty documents so the freeze hashes real files.
        if store::file_hash(run_dir, EVIDENCE_JSON)?.is_none() {
            store::write_doc(run_dir, EVIDENCE_JSON, &evidence)?;
        }
        if store::file_hash(run_dir, CLAIMS_JSON)?.is_none() {
            store::write_doc(run_dir, CLAIMS_JSON, &claims)?;
        }
        let record = stage_one(&run.doc, &evidence, &claims, &now());
        store::freeze(run_dir, &mut lc, EVIDENCE_JSON)?;
        store::freeze(run_dir, &mut lc, CLAIMS_JSON)?;
        lc.records.insert(
            RESEARCH_RECORD.into(),
            serde_json::to_value(&record).unwrap_or(Value::Null),
        );
        lc.advance(State::ResearchFrozen, "freeze-research", &now())
            .map_err(|reason| CaseError::Transition { reason })?;
        lc.save(run_dir)?;
        Ok(record)
    })
}

/// Every artifact in evidence.json must be what the engine would have produced: a local
/// artifact's coordinate is acquired again — bytes, hash, kind (from the scopes) and id
/// must all match — and an external one must be unverified with an id derived from its
/// coordinate. A hand-written "verified" excerpt or a relabelled kind cannot survive.
pub fn verify_artifacts(
    run: &Run,
    evidence: &super::evidence::EvidenceDoc,
) -> Result<(), CaseError> {
    let repo = Path::new(&run.doc.inputs.repository);
    let policy = &run.doc.policy;
    let source = evidence_source(run)?;
    let forged = |id: &str, why: String| CaseError::Rail {
        rail: "freeze-research",
        kind: "forged_artifact",
        reason: format!("artifact `{id}` {why}"),
    };
    for a in &evidence.artifacts {
        if a.expected_id().as_deref() != Some(a.id.as_str()) {
            return Err(forged(&a.id, "does not derive from its coordinate".into()));
        }
        if a.is_local() {
            outside_every_run(
                run,
                "freeze-research",
                a.path.as_deref().unwrap_or_default(),
            )?;
            // A changed source is reported as such before anything else.
            super::evidence::reverify(repo, &source, a)?;
            let req = EvidenceRequest {
                path: a.path.clone().unwrap_or_default(),
                start_line: a.start_line,
                end_line: a.end_line,
            };
            let again = acquire(
                repo,
                &source,
                &policy.inspect_scopes,
                &policy.contract.admissible_kinds,
                &req,
                &a.acquired_at,
            )
            .map_err(|e| forged(&a.id, format!("cannot be acquired again: {e}")))?;
            if again.kind != a.kind
                || again.id != a.id
                || again.verification != a.verification
                || again.uri != a.uri
            {
                return Err(forged(
                    &a.id,
                    format!(
                        "is not what the engine reads at its coordinate (kind {} there, {} recorded)",
                        again.kind, a.kind
                    ),
                ));
            }
        } else if a.is_verified() {
            return Err(forged(
                &a.id,
                "is external but claims to be verified".into(),
            ));
        } else if !policy.contract.admissible_kinds.contains(&a.kind) {
            return Err(forged(&a.id, format!("is of inadmissible kind {}", a.kind)));
        }
    }
    Ok(())
}

/// The inputs of validation, loaded from a run whose research is frozen.
pub struct Frozen {
    pub run: Run,
    pub evidence: super::evidence::EvidenceDoc,
    pub claims: super::research::ClaimsDoc,
    pub research: ResearchRecord,
}

/// Loads the frozen inputs of validation. The stage-1 record is not read back: it is
/// re-derived from the frozen evidence and claims, and a recorded one that differs is
/// tampering.
pub fn load_frozen(run: Run, lc: &Lifecycle) -> Result<Frozen, CaseError> {
    let evidence = store::evidence(&run.dir)?;
    let claims = store::claims(&run.dir)?;
    let research = rederive_research(&run, lc, &evidence, &claims)?;
    Ok(Frozen {
        evidence,
        claims,
        research,
        run,
    })
}

/// Stage 1 re-run over the frozen documents, checked against the record in lifecycle.json.
pub fn rederive_research(
    run: &Run,
    lc: &Lifecycle,
    evidence: &super::evidence::EvidenceDoc,
    claims: &super::research::ClaimsDoc,
) -> Result<ResearchRecord, CaseError> {
    let recorded: ResearchRecord =
        lc.record(RESEARCH_RECORD)
            .ok_or_else(|| CaseError::Corrupt {
                file: run.dir.join(super::run::LIFECYCLE_JSON),
                field: "records.research".into(),
                reason: "research is not frozen".into(),
            })?;
    let again = stage_one(&run.doc, evidence, claims, &recorded.at);
    if again != recorded {
        return Err(CaseError::Tampered {
            file: super::run::LIFECYCLE_JSON.into(),
            field: "records.research".into(),
            reason: "differs from stage 1 re-run over the frozen evidence and claims".into(),
        });
    }
    Ok(again)
}

/// Every verdict lifecycle.json records, re-derived once from the frozen inputs: stage 1
/// when research froze, and validation when it ran, over the same loaded documents.
pub fn rederive(
    run: &Run,
    lc: &Lifecycle,
) -> Result<(Option<ResearchRecord>, Option<ValidationRecord>), CaseError> {
    if !lc.records.contains_key(RESEARCH_RECORD) && !lc.records.contains_key(VALIDATION_RECORD) {
        return Ok((None, None));
    }
    let frozen = load_frozen(run.clone(), lc)?;
    let validation = rederive_validation(&frozen, lc)?;
    Ok((Some(frozen.research), validation))
}

/// The validation record re-derived from the frozen proposal and research, checked
/// against the one in lifecycle.json; `None` when validation never ran.
fn rederive_validation(
    frozen: &Frozen,
    lc: &Lifecycle,
) -> Result<Option<ValidationRecord>, CaseError> {
    let Some(recorded) = lc.record::<ValidationRecord>(VALIDATION_RECORD) else {
        if lc.records.contains_key(VALIDATION_RECORD) {
            return Err(CaseError::Tampered {
                file: super::run::LIFECYCLE_JSON.into(),
                field: format!("records.{VALIDATION_RECORD}"),
                reason: "is not a validation record".into(),
            });
        }
        return Ok(None);
    };
    let mut again = evaluate(frozen)?;
    again.at = recorded.at.clone();
    if again != recorded {
        return Err(CaseError::Tampered {
            file: super::run::LIFECYCLE_JSON.into(),
            field: format!("records.{VALIDATION_RECORD}"),
            reason: format!(
                "says {:?}, but validation re-run over the frozen proposal says {:?}",
                recorded.verdict, again.verdict
            ),
        });
    }
    Ok(Some(again))
}

/// Parses the proposal and runs the checks, writing nothing.
pub fn evaluate(frozen: &Frozen) -> Result<ValidationRecord, CaseError> {
    let dir = &frozen.run.dir;
    let read = super::commit::read(dir, PROPOSAL_JSON, store::MAX_RUN_FILE_BYTES)
        .and_then(|b| b.ok_or_else(|| std::io::ErrorKind::NotFound.into()));
    let bytes = read.map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => CaseError::Rail {
            rail: "validate",
            kind: "missing_output",
            reason: format!("`{PROPOSAL_JSON}` does not exist: write the proposal first"),
        },
        _ => CaseError::io("read", dir.join(PROPOSAL_JSON))(e),
    })?;
    let proposal = parse_proposal(&bytes, &frozen.run.doc, PROPOSAL_JSON)?;
    let checks = run_checks(&Inputs {
        case: &frozen.run.doc,
        evidence: &frozen.evidence,
        claims: &frozen.claims,
        research: &frozen.research,
        proposal: &proposal,
    });
    Ok(ValidationRecord {
        verdict: verdict(&checks),
        proposal_hash: crate::canon::bytes_hash(&bytes),
        checks,
        at: now(),
    })
}

/// The review copy of a validation record, as written to critique.json.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Critique {
    pub format: String,
    pub format_version: u32,
    pub review: Review,
    pub verdict: super::validate::Verdict,
    pub proposal_hash: String,
    pub checks: Vec<super::validate::CheckResult>,
    pub at: String,
}

impl Critique {
    /// The self-review copy of a validation record.
    pub fn of(record: &ValidationRecord, review: Review) -> Critique {
        Critique {
            format: "anvil-critique".into(),
            format_version: 1,
            review,
            verdict: record.verdict,
            proposal_hash: record.proposal_hash.clone(),
            checks: record.checks.clone(),
            at: record.at.clone(),
        }
    }

    /// True when this copy is exactly the review copy of the authoritative record: its
    /// format, verdict, proposal hash, time and every check (id, passed, detail). Only the
    /// engine's own self-review exists so far, so a copy labelled `independent` is a
    /// forgery: an independent review is recorded by the engine when a separate process
    /// ran it.
    pub fn agrees_with(&self, record: &ValidationRecord) -> bool {
        *self == Critique::of(record, Review::SelfReview)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Review {
    /// The same process that proposed also reviewed.
    #[serde(rename = "self")]
    SelfReview,
    /// A separate process without the investigator's transcript reviewed.
    Independent,
}

/// `validate`: freeze the proposal, run the checks, record the authoritative verdict in
/// lifecycle.json and a review copy in critique.json. `dry_run` writes nothing.
pub fn validate(
    run_dir: &Path,
    key: Option<&str>,
    dry_run: bool,
) -> Result<ValidationRecord, CaseError> {
    if dry_run {
        let (run, lc) = prepare(run_dir, "validate", &[State::ResearchFrozen])?;
        return evaluate(&load_frozen(run, &lc)?);
    }
    with_rail(run_dir, "validate", key, &json!({}), |_| {
        let (run, mut lc) = prepare(run_dir, "validate", &[State::ResearchFrozen])?;
        let frozen = load_frozen(run, &lc)?;
        let record = evaluate(&frozen)?;
        store::freeze(run_dir, &mut lc, PROPOSAL_JSON)?;
        lc.records.insert(
            VALIDATION_RECORD.into(),
            serde_json::to_value(&record).unwrap_or(Value::Null),
        );
        lc.advance(State::ProposalFrozen, "validate", &now())
            .map_err(|reason| CaseError::Transition { reason })?;
        store::write_doc(
            run_dir,
            CRITIQUE_JSON,
            &Critique::of(&record, Review::SelfReview),
        )?;
        lc.save(run_dir)?;
        Ok(record)
    })
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

/// `show`: state, stage hashes, status, staleness and the next legal rails.
pub fn show(run_dir: &Path) -> Result<ShowReport, CaseError> {
    let run = Run::load(run_dir)?;
    let lc = Lifecycle::load(run_dir)?;
    let current = current_world(
        Path::new(&run.doc.inputs.air),
        Path::new(&run.doc.inputs.repository),
    );
    let result: Option<Value> = store::read_doc(run_dir, RESULT_JSON).ok().flatten();
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
        run: run_dir.display().to_string(),
        case_key: run.doc.identity.case_key.to_string(),
        run_id: run.doc.identity.run_id.to_string(),
        target: run.doc.target.key.to_string(),
        skill: format!(
            "{}@{}",
            run.doc.identity.skill, run.doc.identity.skill_version
        ),
        tampered: super::verify::tamper(run_dir)?
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
