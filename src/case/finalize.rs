//! `finalize`: the honest outcome of a run, in `output/result.json`.
//!
//! Invariant: `proposal_generated` needs a passing validation record in lifecycle.json
//! (critique.json is review material and may not disagree with it); `supported` needs
//! proof; `conflicted` needs a recorded conflict (between claims, or between verified
//! excerpts: R-GATE-2). Every outcome carries everything learned.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::attest::AttestedConflict;
use super::claim::RawClaim;
use super::error::CaseError;
use super::evidence::EvidenceArtifact;
use super::handle::RunHandle;
use super::lifecycle::{Lifecycle, State, now};
use super::rail::with_rail;
use super::research::{ClaimVerdict, Conflict, ResearchRecord};
use super::run::Run;
use super::store::{self, CLAIMS_JSON, CRITIQUE_JSON, EVIDENCE_JSON, PROPOSAL_JSON, RESULT_JSON};
use super::validate::{Critique, ValidationRecord, Verdict};
use crate::skill::Verification;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    ProposalGenerated,
    Supported,
    Conflicted,
    InsufficientEvidence,
    BlockedByMissingSource,
}

impl Status {
    pub const ALL: [Status; 5] = [
        Status::ProposalGenerated,
        Status::Supported,
        Status::Conflicted,
        Status::InsufficientEvidence,
        Status::BlockedByMissingSource,
    ];

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Status::ProposalGenerated => "proposal_generated",
            Status::Supported => "supported",
            Status::Conflicted => "conflicted",
            Status::InsufficientEvidence => "insufficient_evidence",
            Status::BlockedByMissingSource => "blocked_by_missing_source",
        }
    }

    #[must_use]
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The proof behind `supported`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SupportProof {
    pub field: String,
    pub value: Value,
    pub claim_ids: Vec<String>,
    pub strength: f64,
    pub verified_strength: f64,
}

/// `output/result.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResultDoc {
    pub format: String,
    pub format_version: u32,
    pub run_id: String,
    pub case_key: String,
    pub target: String,
    pub skill: String,
    pub skill_version: u32,
    pub deficiency: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Only `proposal_generated` carries a patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<ValidationRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critique: Option<Critique>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supported: Option<SupportProof>,
    pub artifacts: Vec<EvidenceArtifact>,
    pub claims: Vec<RawClaim>,
    pub claim_verdicts: Vec<ClaimVerdict>,
    pub conflicts: Vec<Conflict>,
    /// Verified excerpts stating different values, claimed or not (R-GATE-2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attested_conflicts: Vec<AttestedConflict>,
    pub at: String,
}

fn refuse(kind: &'static str, reason: String) -> CaseError {
    CaseError::Rail {
        rail: "finalize",
        kind,
        reason,
    }
}

impl RunHandle {
    /// `finalize`. Without `status`, a validated proposal finalizes as `proposal_generated`;
    /// anything else must name its status.
    ///
    /// # Errors
    ///
    /// The rail envelope's refusals (see [`with_rail`]: an unusable
    /// lock file, a corrupt journal, broken integrity, a bad or conflicting idempotency
    /// key), then `Stale` for a stale run, `Tamper` for a changed frozen file, and
    /// `Transition` when the run cannot move to finalized. Specific to finalize:
    /// `CaseError::Rail` of kind `too_large` (before the rail) for a reason over
    /// `NOTE_BYTES`, `critique_disagrees` (critique.json contradicts or lacks a
    /// validation), `status_required` (no status named and no passing validation),
    /// `not_validated` or `validation_failed` for `proposal_generated`, `unproven_support`
    /// for `supported` without its proof, and `no_conflict` for `conflicted` without a
    /// recorded conflict; `Tampered` when a re-derived verdict differs from the recorded
    /// one, and `Tamper` when proposal.json changed after validation.
    pub fn finalize(
        &self,
        status: Option<Status>,
        reason: Option<&str>,
        key: Option<&str>,
    ) -> Result<ResultDoc, CaseError> {
        if let Some(reason) = reason {
            crate::limits::Limit::NoteBytes
                .check(reason.len())
                .map_err(|l| refuse("too_large", format!("`reason` {l}")))?;
        }
        let body = json!({"status": status, "reason": reason});
        let run_dir = self.dir();
        with_rail(run_dir, "finalize", key, &body, |_| {
            let (run, mut lc) = self.checked_lifecycle()?;
            if !lc.state.can_advance_to(State::Finalized) {
                return Err(CaseError::Transition {
                    reason: format!(
                        "`finalize` cannot move a run from {} to finalized",
                        lc.state
                    ),
                });
            }
            // Verdicts are re-derived from the frozen inputs, never read back.
            let (research, validation): (Option<ResearchRecord>, Option<ValidationRecord>) =
                super::frozen::rederive(run, &lc)?;
            let critique: Option<Critique> = store::read_doc(run_dir, CRITIQUE_JSON)?;
            check_critique(critique.as_ref(), validation.as_ref())?;
            let status = honest_status(status, validation.as_ref())?;
            let mut patch = None;
            let mut proposal_hash = None;
            let mut supported = None;
            match status {
                Status::ProposalGenerated => {
                    let (set, hash) = validated_patch(run_dir, run, validation.as_ref())?;
                    patch = Some(set);
                    proposal_hash = Some(hash);
                }
                Status::Supported => {
                    supported = Some(support_proof(run_dir, run, &lc, research.as_ref())?);
                }
                Status::Conflicted => check_conflict(research.as_ref())?,
                Status::InsufficientEvidence | Status::BlockedByMissingSource => {}
            }
            // Whatever was learned is frozen with the result, so close can detect later edits.
            for rel in [EVIDENCE_JSON, CLAIMS_JSON] {
                if !lc.frozen.contains_key(rel) && store::file_hash(run_dir, rel)?.is_some() {
                    store::freeze(run_dir, &mut lc, rel)?;
                }
            }
            let evidence = store::evidence(run_dir)?;
            let claims = store::claims(run_dir)?;
            let id = &run.doc.identity;
            let result = ResultDoc {
                format: "anvil-result".into(),
                format_version: 1,
                run_id: id.run_id.to_string(),
                case_key: id.case_key.to_string(),
                target: run.doc.target.key.to_string(),
                skill: id.skill.clone(),
                skill_version: id.skill_version,
                deficiency: run.doc.task.deficiency.to_string(),
                status,
                reason: reason.map(str::to_string),
                patch,
                proposal_hash,
                validation,
                critique,
                supported,
                artifacts: evidence.artifacts,
                claims: claims.claims,
                claim_verdicts: research
                    .as_ref()
                    .map(|r| r.claims.clone())
                    .unwrap_or_default(),
                conflicts: research
                    .as_ref()
                    .map(|r| r.conflicts.clone())
                    .unwrap_or_default(),
                attested_conflicts: research.map(|r| r.attested_conflicts).unwrap_or_default(),
                at: now(),
            };
            store::write_doc(run_dir, RESULT_JSON, &result)?;
            store::freeze(run_dir, &mut lc, RESULT_JSON)?;
            lc.advance(State::Finalized, "finalize", &now())?;
            lc.save(run_dir)?;
            Ok(result)
        })
    }
}

/// critique.json is review material: it may exist only beside a validation record, and
/// must agree with it.
fn check_critique(
    critique: Option<&Critique>,
    validation: Option<&ValidationRecord>,
) -> Result<(), CaseError> {
    match (critique, validation) {
        (Some(c), Some(v)) if !c.agrees_with(v) => Err(refuse(
            "critique_disagrees",
            format!(
                "`{CRITIQUE_JSON}` disagrees with the validation record in lifecycle.json (tamper)"
            ),
        )),
        (Some(_), None) => Err(refuse(
            "critique_disagrees",
            format!("`{CRITIQUE_JSON}` exists but no validation was recorded (tamper)"),
        )),
        _ => Ok(()),
    }
}

/// The status asked for, or `proposal_generated` when none is named and validation passed.
fn honest_status(
    status: Option<Status>,
    validation: Option<&ValidationRecord>,
) -> Result<Status, CaseError> {
    match status {
        Some(s) => Ok(s),
        None if validation.is_some_and(|v| v.verdict == Verdict::Pass) => {
            Ok(Status::ProposalGenerated)
        }
        None => Err(refuse(
            "status_required",
            "no passing validation record: name the honest status with --status".into(),
        )),
    }
}

/// `proposal_generated`: the proposal that passed validation, still the same bytes, parsed
/// and bound again; its patch and hash.
fn validated_patch(
    run_dir: &Path,
    run: &Run,
    validation: Option<&ValidationRecord>,
) -> Result<(Map<String, Value>, String), CaseError> {
    let v = validation.ok_or_else(|| {
        refuse(
            "not_validated",
            "proposal_generated needs a validation record: run validate".into(),
        )
    })?;
    if v.verdict != Verdict::Pass {
        return Err(refuse(
            "validation_failed",
            "proposal_generated needs a passing validation record; the recorded verdict is fail"
                .into(),
        ));
    }
    let bytes = crate::fsio::read_regular(&run_dir.join(PROPOSAL_JSON), store::MAX_RUN_FILE_BYTES)
        .map_err(CaseError::io("read", run_dir.join(PROPOSAL_JSON)))?;
    if crate::canon::bytes_hash(&bytes) != v.proposal_hash {
        return Err(CaseError::Tamper {
            file: PROPOSAL_JSON.into(),
            frozen: v.proposal_hash.clone(),
            now: crate::canon::bytes_hash(&bytes),
        });
    }
    let proposal = super::proposal::parse_proposal(&bytes, &run.doc, PROPOSAL_JSON)?;
    Ok((proposal.set, v.proposal_hash.clone()))
}

/// `supported`: frozen research, no proposal, and the proof of the current value.
fn support_proof(
    run_dir: &Path,
    run: &Run,
    lc: &Lifecycle,
    research: Option<&ResearchRecord>,
) -> Result<SupportProof, CaseError> {
    if lc.state != State::ResearchFrozen {
        return Err(refuse(
            "unproven_support",
            format!(
                "supported needs frozen research and no proposal; the run is {}",
                lc.state
            ),
        ));
    }
    if store::file_hash(run_dir, PROPOSAL_JSON)?.is_some() {
        return Err(refuse(
            "unproven_support",
            format!("supported means no patch, but `{PROPOSAL_JSON}` exists"),
        ));
    }
    let research =
        research.ok_or_else(|| refuse("unproven_support", "research is not frozen".into()))?;
    prove_support(&run.doc, research)
}

/// `conflicted`: a conflict recorded at freeze-research, between claims or excerpts.
fn check_conflict(research: Option<&ResearchRecord>) -> Result<(), CaseError> {
    let has_conflict =
        research.is_some_and(|r| !r.conflicts.is_empty() || !r.attested_conflicts.is_empty());
    if !has_conflict {
        return Err(refuse("no_conflict", "conflicted needs a conflict recorded at freeze-research: two accepted claims asserting different values, or two verified excerpts stating different values".into()));
    }
    Ok(())
}

/// The proof `supported` needs: a current value, an accepted claim asserting exactly it,
/// the strength and verification bars met, and no conflict.
fn prove_support(
    case: &super::doc::CaseDoc,
    research: &ResearchRecord,
) -> Result<SupportProof, CaseError> {
    let contract = &case.policy.contract;
    let Some(out) = contract.outputs.first() else {
        return Err(refuse("unproven_support", "the skill has no output".into()));
    };
    let current = case
        .target
        .current
        .get(&out.field)
        .cloned()
        .unwrap_or(Value::Null);
    if current.is_null() {
        return Err(refuse(
            "unproven_support",
            format!(
                "`{}` has no current value, so it cannot be supported",
                out.field
            ),
        ));
    }
    if research.conflict_on(&out.predicate).is_some() {
        return Err(refuse(
            "unproven_support",
            format!("claims on `{}` conflict", out.predicate),
        ));
    }
    let support = research
        .values
        .iter()
        .find(|v| v.predicate == out.predicate && v.value == current)
        .ok_or_else(|| {
            refuse(
                "unproven_support",
                format!("no accepted claim asserts {} = {current}", out.predicate),
            )
        })?;
    if support.strength < contract.minimum_strength {
        return Err(refuse(
            "unproven_support",
            format!(
                "support strength {} < {}",
                support.strength, contract.minimum_strength
            ),
        ));
    }
    if contract.verification_for(&out.field) == Verification::Verified
        && support.verified_strength < contract.minimum_strength
    {
        return Err(refuse(
            "unproven_support",
            format!(
                "`{}` requires verified support: verified strength {} < {}",
                out.field, support.verified_strength, contract.minimum_strength
            ),
        ));
    }
    Ok(SupportProof {
        field: out.field.clone(),
        value: current,
        claim_ids: support.claim_ids.clone(),
        strength: support.strength,
        verified_strength: support.verified_strength,
    })
}
