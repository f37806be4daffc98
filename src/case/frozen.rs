//! The verdicts a run's lifecycle records, re-derived from its frozen inputs: stage 1 over
//! the frozen evidence and claims, validation over the frozen proposal. A recorded verdict
//! is never read back as true; one that differs from its re-derivation is tampering.

use super::error::CaseError;
use super::evidence::EvidenceDoc;
use super::layout::{LIFECYCLE_JSON, MAX_RUN_FILE_BYTES, PROPOSAL_JSON};
use super::lifecycle::{Lifecycle, now};
use super::proposal::parse_proposal;
use super::research::{ClaimsDoc, ResearchRecord, stage_one};
use super::run::Run;
use super::store;
use super::validate::{Inputs, ValidationRecord, run_checks, verdict};

/// The key of the stage-1 record in lifecycle.json.
pub const RESEARCH_RECORD: &str = "research";
/// The key of the validation record in lifecycle.json.
pub const VALIDATION_RECORD: &str = "proposalValidation";

/// The inputs of validation, loaded from a run whose research is frozen.
pub struct Frozen {
    pub run: Run,
    pub evidence: EvidenceDoc,
    pub claims: ClaimsDoc,
    pub research: ResearchRecord,
}

/// Loads the frozen inputs of validation. The stage-1 record is not read back: it is
/// re-derived from the frozen evidence and claims, and a recorded one that differs is
/// tampering.
///
/// # Errors
///
/// The errors of reading evidence.json and claims.json (`Io`, a `Document` refusal, an
/// unsupported format), `Corrupt` when research is not frozen in `lc`, and `Tampered` when
/// the recorded stage-1 record differs from its re-derivation.
pub fn load_frozen(run: Run, lc: &Lifecycle) -> Result<Frozen, CaseError> {
    let evidence = store::evidence(&run.dir)?;
    let claims = store::claims(&run.dir)?;
    let research = rederive_research(&run, lc, &evidence, &claims)?;
    Ok(Frozen {
        run,
        evidence,
        claims,
        research,
    })
}

/// Stage 1 re-run over the frozen documents, checked against the record in lifecycle.json.
///
/// # Errors
///
/// `CaseError::Corrupt` when `lc` records no research (it is not frozen), and
/// `CaseError::Tampered` when stage 1 re-run over `evidence` and `claims` differs from the
/// recorded record.
pub fn rederive_research(
    run: &Run,
    lc: &Lifecycle,
    evidence: &EvidenceDoc,
    claims: &ClaimsDoc,
) -> Result<ResearchRecord, CaseError> {
    let recorded: ResearchRecord =
        lc.record(RESEARCH_RECORD)
            .ok_or_else(|| CaseError::Corrupt {
                file: run.dir.join(LIFECYCLE_JSON),
                field: "records.research".into(),
                reason: "research is not frozen".into(),
            })?;
    let again = stage_one(&run.doc, evidence, claims, &recorded.at);
    if again != recorded {
        return Err(CaseError::Tampered {
            file: LIFECYCLE_JSON.into(),
            field: "records.research".into(),
            reason: "differs from stage 1 re-run over the frozen evidence and claims".into(),
        });
    }
    Ok(again)
}

/// Every verdict lifecycle.json records, re-derived once from the frozen inputs: stage 1
/// when research froze, and validation when it ran, over the same loaded documents.
///
/// # Errors
///
/// The errors of [`load_frozen`]; `Tampered` when the recorded validation is not a
/// validation record or differs from validation re-run over the frozen proposal; and the
/// errors of [`evaluate`] when that re-run cannot read or parse the proposal.
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
                file: LIFECYCLE_JSON.into(),
                field: format!("records.{VALIDATION_RECORD}"),
                reason: "is not a validation record".into(),
            });
        }
        return Ok(None);
    };
    let mut again = evaluate(frozen)?;
    again.at.clone_from(&recorded.at);
    if again != recorded {
        return Err(CaseError::Tampered {
            file: LIFECYCLE_JSON.into(),
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
///
/// # Errors
///
/// `CaseError::Rail` of kind `missing_output` when output/proposal.json does not exist,
/// `Io` when it cannot be read (a symlink or special file included), and `Document` when it
/// does not parse or bind to the case (see
/// [`parse_proposal`]). Failing checks are a `fail`
/// verdict, not an error.
pub fn evaluate(frozen: &Frozen) -> Result<ValidationRecord, CaseError> {
    let dir = &frozen.run.dir;
    let read = super::commit::read(dir, PROPOSAL_JSON, MAX_RUN_FILE_BYTES)
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
