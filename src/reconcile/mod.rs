//! Close: re-verify, re-validate, measure the eval delta, reconcile into an approval tier,
//! and (on request) apply to the AIR with provenance.
//!
//! Invariant: a case's result re-enters the same deterministic back half as any proposal,
//! and nothing reaches `auto` past the engine's gate (`gate`: R-GATE-1, R-GATE-2).
//! Close trusts nothing the agent left: it re-reads every verified artifact from the
//! repository, re-parses and re-binds the proposal, and re-runs validation.

pub mod delta;
pub mod gate;

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::air::{Air, DeficiencyCode, Provenance};
use crate::case::CaseError;
use crate::case::RunHandle;
use crate::case::citable::verify_artifacts;
use crate::case::finalize::{ResultDoc, Status};
use crate::case::frozen::{Frozen, VALIDATION_RECORD, evaluate, load_frozen};
use crate::case::lifecycle::{State, now};
use crate::case::proposal::parse_proposal;
use crate::case::rail::with_rail;
use crate::case::research::{aggregate_strength, cited};
use crate::case::store::{self, PROPOSAL_JSON, RESULT_JSON};
use crate::case::validate::{ValidationRecord, Verdict};
use crate::skill::Condition;
use delta::{EvalDelta, apply_patch, measure};
use gate::GateCheck;

pub const CLOSE_JSON: &str = "close.json";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Auto,
    Review,
    Reject,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Auto => "auto",
            Tier::Review => "review",
            Tier::Reject => "reject",
        }
    }
}

/// `close.json`: the reconciliation of one finalized run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CloseDoc {
    pub format: String,
    pub format_version: u32,
    pub run_id: String,
    pub case_key: String,
    pub status: Status,
    /// `None` when there is nothing to apply (a decline).
    pub tier: Option<Tier>,
    /// Why a human must look, when one must.
    pub escalate: Option<String>,
    pub reasons: Vec<String>,
    pub artifacts_reverified: usize,
    pub validation: Option<ValidationRecord>,
    pub eval_delta: Option<EvalDelta>,
    /// The gate's verdict on each value applied: which rule matched which cited line, or
    /// that none did, and any disagreement between verified excerpts (R-GATE-1, R-GATE-2).
    #[serde(default)]
    pub gate: Vec<GateCheck>,
    pub applied: Option<Applied>,
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    pub air: String,
    pub approved_by: Option<String>,
}

/// What the caller asks close to do.
#[derive(Debug, Clone, Default)]
pub struct CloseRequest {
    /// Write the patched AIR here.
    pub apply: Option<std::path::PathBuf>,
    /// Approves a `review`-tier result for application.
    pub approved_by: Option<String>,
}

fn refuse(kind: &'static str, reason: String) -> CaseError {
    CaseError::Rail {
        rail: "close",
        kind,
        reason,
    }
}

/// `close`.
pub fn close(run_dir: &Path, req: &CloseRequest, key: Option<&str>) -> Result<CloseDoc, CaseError> {
    let body = json!({"apply": req.apply, "approvedBy": req.approved_by});
    let handle = RunHandle::open(run_dir)?;
    with_rail(run_dir, "close", key, &body, |_| {
        let (run, mut lc) = handle.checked_lifecycle()?;
        if lc.state != State::Finalized {
            return Err(CaseError::Transition {
                reason: format!("`close` needs a finalized run; it is {}", lc.state),
            });
        }
        let result: ResultDoc = store::read_doc(run_dir, RESULT_JSON)?
            .ok_or_else(|| refuse("missing_output", format!("`{RESULT_JSON}` does not exist")))?;
        // Re-verify every artifact against the repository: a changed source fails close.
        let evidence = store::evidence(run_dir)?;
        verify_artifacts(run, &evidence).map_err(|e| match e {
            CaseError::Evidence(ev) => refuse(
                "source_changed",
                format!("frozen evidence no longer matches the repository: {ev}"),
            ),
            other => other,
        })?;
        let reverified = evidence.artifacts.iter().filter(|a| a.is_local()).count();

        let contract = run.doc.policy.contract.clone();
        let air_path = Path::new(&run.doc.inputs.air).to_path_buf();
        let air = Air::load(&air_path)?;
        let mut reasons = Vec::new();
        let mut escalate = None;
        let mut gate = Vec::new();
        let (tier, validation, eval_delta, patched) = match result.status {
            Status::ProposalGenerated => {
                let bytes = crate::fsio::read_regular(
                    &run_dir.join(PROPOSAL_JSON),
                    crate::case::store::MAX_RUN_FILE_BYTES,
                )
                .map_err(CaseError::io("read", run_dir.join(PROPOSAL_JSON)))?;
                // Binding is checked again here, independently of parse at validate.
                let proposal = parse_proposal(&bytes, &run.doc, PROPOSAL_JSON)?;
                let frozen = load_frozen(run.clone(), &lc)?;
                let record = evaluate(&frozen)?;
                let recorded: Option<ValidationRecord> = lc.record(VALIDATION_RECORD);
                let mut patched = air.clone();
                apply_patch(&mut patched, &run.doc.target.key, &proposal.set, &[])
                    .map_err(|e| refuse("patch_failed", e))?;
                let delta = measure(&air, &patched, &run.doc.target.key, run.doc.task.deficiency);
                let tier = if record.verdict != Verdict::Pass
                    || recorded.as_ref().map(|r| r.verdict) != Some(Verdict::Pass)
                {
                    reasons.push("validation failed on re-run".into());
                    Tier::Reject
                } else if !delta.acceptable() {
                    if !delta.target_closed {
                        reasons.push("the target's deficiency does not close".into());
                    }
                    for d in &delta.new_deficiencies {
                        reasons.push(format!("new deficiency: {d}"));
                    }
                    Tier::Reject
                } else {
                    review_reasons(
                        &frozen,
                        &proposal.set,
                        &proposal.grounding,
                        &run.doc,
                        &mut reasons,
                    );
                    gate = gate::check(&frozen, &proposal.set, &proposal.grounding, &mut reasons);
                    if reasons.is_empty() {
                        Tier::Auto
                    } else {
                        Tier::Review
                    }
                };
                let provenance_set = proposal.set.clone();
                (
                    Some(tier),
                    Some(record),
                    Some(delta),
                    Some((
                        patched,
                        provenance_set,
                        artifact_ids(&frozen, &proposal.grounding),
                    )),
                )
            }
            Status::Supported => {
                let proof = result.supported.clone().ok_or_else(|| {
                    refuse("missing_proof", "supported result carries no proof".into())
                })?;
                let mut patched = air.clone();
                apply_patch(
                    &mut patched,
                    &run.doc.target.key,
                    &Map::new(),
                    std::slice::from_ref(&proof.field),
                )
                .map_err(|e| refuse("patch_failed", e))?;
                let delta = measure(&air, &patched, &run.doc.target.key, run.doc.task.deficiency);
                let set: Map<String, Value> = [(proof.field.clone(), proof.value.clone())]
                    .into_iter()
                    .collect();
                let frozen = load_frozen(run.clone(), &lc)?;
                let tier = if !delta.acceptable() {
                    reasons.push("proving the current value does not close the deficiency".into());
                    Tier::Reject
                } else {
                    if contract.safety_sensitive.holds(&set) {
                        reasons.push("safety-sensitive skill".into());
                    }
                    if !contract.auto_approve.holds(&set) {
                        reasons.push("the skill is not auto-approvable for this value".into());
                    }
                    let grounding = [(proof.field.clone(), proof.claim_ids.clone())]
                        .into_iter()
                        .collect();
                    gate = gate::check(&frozen, &set, &grounding, &mut reasons);
                    if reasons.is_empty() {
                        Tier::Auto
                    } else {
                        Tier::Review
                    }
                };
                let ids = frozen
                    .claims
                    .claims
                    .iter()
                    .filter(|c| proof.claim_ids.contains(&c.id))
                    .flat_map(|c| c.artifact_ids.clone())
                    .collect();
                (
                    Some(tier),
                    None,
                    Some(delta),
                    Some((patched, Map::new(), ids)),
                )
            }
            Status::Conflicted => {
                escalate = Some("sources disagree: a human must decide".into());
                (None, None, None, None)
            }
            Status::InsufficientEvidence | Status::BlockedByMissingSource => {
                if contract.safety_sensitive != Condition::Never {
                    escalate = Some(format!(
                        "ungroundable safety-relevant deficiency ({}): a human must decide",
                        result.status
                    ));
                }
                (None, None, None, None)
            }
        };

        let mut applied = None;
        if let Some(out) = &req.apply {
            let Some((mut patched, set, artifact_ids)) = patched else {
                return Err(refuse(
                    "nothing_to_apply",
                    format!("a {} result has nothing to apply", result.status),
                ));
            };
            match (tier, &req.approved_by) {
                (Some(Tier::Auto), _) | (Some(Tier::Review), Some(_)) => {}
                (Some(Tier::Review), None) => {
                    return Err(refuse(
                        "needs_approval",
                        format!(
                            "tier review needs --approved-by to apply ({})",
                            reasons.join("; ")
                        ),
                    ));
                }
                _ => {
                    return Err(refuse(
                        "rejected",
                        format!("tier reject cannot be applied ({})", reasons.join("; ")),
                    ));
                }
            }
            let tier = tier.unwrap_or(Tier::Reject);
            patched.provenance.push(Provenance {
                target: run.doc.target.key.to_string(),
                set,
                case_key: run.doc.identity.case_key.to_string(),
                run_id: run.doc.identity.run_id.to_string(),
                artifact_ids,
                tier: tier.as_str().into(),
                approved_by: if tier == Tier::Review {
                    req.approved_by.clone()
                } else {
                    None
                },
                applied_at: now(),
            });
            crate::fsio::write_json_atomic(out, &patched).map_err(CaseError::io("write", out))?;
            applied = Some(Applied {
                air: out.display().to_string(),
                approved_by: req.approved_by.clone(),
            });
        }

        let doc = CloseDoc {
            format: "anvil-close".into(),
            format_version: 1,
            run_id: run.doc.identity.run_id.to_string(),
            case_key: run.doc.identity.case_key.to_string(),
            status: result.status,
            tier,
            escalate,
            reasons,
            artifacts_reverified: reverified,
            validation,
            eval_delta,
            gate,
            applied,
            at: now(),
        };
        store::write_doc(run_dir, CLOSE_JSON, &doc)?;
        store::freeze(run_dir, &mut lc, CLOSE_JSON)?;
        lc.advance(State::Closed, "close", &now())
            .map_err(|reason| CaseError::Transition { reason })?;
        lc.save(run_dir)?;
        Ok(doc)
    })
}

/// Why an otherwise valid proposal must go to a human: unverified-only grounding, a
/// safety-sensitive value, a skill not auto-approvable for the value, or an overwrite.
fn review_reasons(
    frozen: &Frozen,
    set: &Map<String, Value>,
    grounding: &std::collections::BTreeMap<String, Vec<String>>,
    case: &crate::case::CaseDoc,
    reasons: &mut Vec<String>,
) {
    let contract = &case.policy.contract;
    for field in set.keys() {
        let ids = grounding.get(field).cloned().unwrap_or_default();
        let claims: Vec<_> = frozen
            .claims
            .claims
            .iter()
            .filter(|c| ids.contains(&c.id) && frozen.research.accepted(&c.id))
            .collect();
        let arts = cited(&claims, &frozen.evidence);
        if aggregate_strength(arts.iter().copied().filter(|a| a.is_verified())) == 0.0 {
            reasons.push(format!(
                "`{field}` is grounded only by unverified artifacts"
            ));
        }
    }
    if contract.safety_sensitive.holds(set) {
        reasons.push("safety-sensitive value".into());
    }
    if !contract.auto_approve.holds(set) {
        reasons.push("the skill is not auto-approvable for this value".into());
    }
    let replaces_bad_value = matches!(
        case.task.deficiency,
        DeficiencyCode::TautologicalDescription
            | DeficiencyCode::MissingFieldDescription
            | DeficiencyCode::MissingOperationDescription
    );
    for (field, value) in set {
        let current = case
            .target
            .current
            .get(field)
            .cloned()
            .unwrap_or(Value::Null);
        if !current.is_null() && &current != value && !replaces_bad_value {
            reasons.push(format!("overwrites the existing `{field}` {current}"));
        }
    }
}

fn artifact_ids(
    frozen: &Frozen,
    grounding: &std::collections::BTreeMap<String, Vec<String>>,
) -> Vec<String> {
    let ids: Vec<&String> = grounding.values().flatten().collect();
    let mut out: Vec<String> = frozen
        .claims
        .claims
        .iter()
        .filter(|c| ids.contains(&&c.id))
        .flat_map(|c| c.artifact_ids.clone())
        .collect();
    out.sort();
    out.dedup();
    out
}
