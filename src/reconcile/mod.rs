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
use crate::case::citable::verify_artifacts;
use crate::case::finalize::{ResultDoc, Status};
use crate::case::frozen::{Frozen, VALIDATION_RECORD, evaluate, load_frozen};
use crate::case::lifecycle::{Lifecycle, State, now};
use crate::case::proposal::parse_proposal;
use crate::case::rail::with_rail;
use crate::case::research::{aggregate_strength, cited};
use crate::case::store::{self, PROPOSAL_JSON, RESULT_JSON};
use crate::case::validate::{ValidationRecord, Verdict};
use crate::case::{Run, RunHandle};
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
    #[must_use]
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

impl RunHandle {
    /// `close`: reconciles the finalized run's result with the AIR (re-verifying its
    /// evidence, re-binding and re-validating a proposal, tiering it through the gate),
    /// applies it when `req.apply` asks and the tier allows, and closes the run.
    ///
    /// # Errors
    ///
    /// See [`close`].
    pub fn close(&self, req: &CloseRequest, key: Option<&str>) -> Result<CloseDoc, CaseError> {
        close(self, req, key)
    }
}

/// [`RunHandle::close`].
///
/// # Errors
///
/// The rail envelope's refusals
/// (see [`with_rail`]: an unusable lock file, a corrupt
/// journal, broken integrity, a bad or conflicting idempotency key), then `Stale`, `Tamper`
/// for a changed frozen file, and `Transition` unless the run is finalized. Specific to
/// close: `CaseError::Rail` of kind `missing_output` without result.json, `source_changed`
/// when frozen evidence no longer matches the repository, `patch_failed` or `missing_proof`
/// when the result cannot be reconciled with the AIR, `nothing_to_apply`, `needs_approval`
/// or `rejected` when `--apply` is asked of a result that cannot be applied, `Air` when the
/// AIR no longer loads, and `Io` when the patched AIR cannot be written.
fn close(handle: &RunHandle, req: &CloseRequest, key: Option<&str>) -> Result<CloseDoc, CaseError> {
    let body = json!({"apply": req.apply, "approvedBy": req.approved_by});
    let run_dir = handle.dir();
    with_rail(run_dir, "close", key, &body, |_| {
        let (run, mut lc) = handle.checked_lifecycle()?;
        if lc.state != State::Finalized {
            return Err(CaseError::Transition {
                reason: format!("`close` needs a finalized run; it is {}", lc.state),
            });
        }
        let result: ResultDoc = store::read_doc(run_dir, RESULT_JSON)?
            .ok_or_else(|| refuse("missing_output", format!("`{RESULT_JSON}` does not exist")))?;
        let reverified = reverify(run)?;
        let air = Air::load(Path::new(&run.doc.inputs.air))?;
        let r = match result.status {
            Status::ProposalGenerated => reconcile_proposal(run, &lc, &air)?,
            Status::Supported => reconcile_supported(run, &lc, &air, &result)?,
            Status::Conflicted => {
                Reconciled::decline(Some("sources disagree: a human must decide".into()))
            }
            Status::InsufficientEvidence | Status::BlockedByMissingSource => {
                let escalate =
                    (run.doc.policy.contract.safety_sensitive != Condition::Never).then(|| {
                        format!(
                            "ungroundable safety-relevant deficiency ({}): a human must decide",
                            result.status
                        )
                    });
                Reconciled::decline(escalate)
            }
        };
        let applied = match &req.apply {
            Some(out) => Some(apply(
                out,
                req,
                run,
                result.status,
                r.tier,
                &r.reasons,
                r.patched,
            )?),
            None => None,
        };

        let doc = CloseDoc {
            format: "anvil-close".into(),
            format_version: 1,
            run_id: run.doc.identity.run_id.to_string(),
            case_key: run.doc.identity.case_key.to_string(),
            status: result.status,
            tier: r.tier,
            escalate: r.escalate,
            reasons: r.reasons,
            artifacts_reverified: reverified,
            validation: r.validation,
            eval_delta: r.eval_delta,
            gate: r.gate,
            applied,
            at: now(),
        };
        store::write_doc(run_dir, CLOSE_JSON, &doc)?;
        store::freeze(run_dir, &mut lc, CLOSE_JSON)?;
        lc.advance(State::Closed, "close", &now())?;
        lc.save(run_dir)?;
        Ok(doc)
    })
}

/// What reconciling one result decided, before anything is applied.
struct Reconciled {
    /// `None` when there is nothing to apply (a decline).
    tier: Option<Tier>,
    escalate: Option<String>,
    reasons: Vec<String>,
    validation: Option<ValidationRecord>,
    eval_delta: Option<EvalDelta>,
    gate: Vec<GateCheck>,
    patched: Option<Patched>,
}

/// The AIR with the result's patch applied, the values it sets, and the artifacts behind
/// them (for the provenance entry).
struct Patched {
    air: Air,
    set: Map<String, Value>,
    artifact_ids: Vec<String>,
}

impl Reconciled {
    /// A decline: nothing to apply; maybe a reason a human must look.
    fn decline(escalate: Option<String>) -> Reconciled {
        Reconciled {
            tier: None,
            escalate,
            reasons: Vec::new(),
            validation: None,
            eval_delta: None,
            gate: Vec::new(),
            patched: None,
        }
    }
}

/// Re-verifies every artifact against the repository (a changed source fails close) and
/// counts the local ones.
fn reverify(run: &Run) -> Result<usize, CaseError> {
    let evidence = store::evidence(&run.dir)?;
    verify_artifacts(run, &evidence).map_err(|e| match e {
        CaseError::Evidence(ev) => refuse(
            "source_changed",
            format!("frozen evidence no longer matches the repository: {ev}"),
        ),
        other => other,
    })?;
    Ok(evidence.artifacts.iter().filter(|a| a.is_local()).count())
}

/// A proposal: re-parsed, re-bound and re-validated, its patch measured against the AIR,
/// then tiered by the review reasons and the gate.
fn reconcile_proposal(run: &Run, lc: &Lifecycle, air: &Air) -> Result<Reconciled, CaseError> {
    let mut reasons = Vec::new();
    let mut gate = Vec::new();
    let bytes = crate::fsio::read_regular(
        &run.dir.join(PROPOSAL_JSON),
        crate::case::store::MAX_RUN_FILE_BYTES,
    )
    .map_err(CaseError::io("read", run.dir.join(PROPOSAL_JSON)))?;
    // Binding is checked again here, independently of parse at validate.
    let proposal = parse_proposal(&bytes, &run.doc, PROPOSAL_JSON)?;
    let frozen = load_frozen(run.clone(), lc)?;
    let record = evaluate(&frozen)?;
    let recorded: Option<ValidationRecord> = lc.record(VALIDATION_RECORD);
    let mut patched = air.clone();
    apply_patch(&mut patched, &run.doc.target.key, &proposal.set, &[])
        .map_err(|e| refuse("patch_failed", e))?;
    let delta = measure(air, &patched, &run.doc.target.key, run.doc.task.deficiency);
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
    Ok(Reconciled {
        tier: Some(tier),
        escalate: None,
        reasons,
        validation: Some(record),
        eval_delta: Some(delta),
        gate,
        patched: Some(Patched {
            air: patched,
            set: proposal.set.clone(),
            artifact_ids: artifact_ids(&frozen, &proposal.grounding),
        }),
    })
}

/// A `supported` result: the current value proven. Marking it proven must close the
/// deficiency; then it is tiered by the contract and the gate like a proposal's value.
fn reconcile_supported(
    run: &Run,
    lc: &Lifecycle,
    air: &Air,
    result: &ResultDoc,
) -> Result<Reconciled, CaseError> {
    let contract = &run.doc.policy.contract;
    let mut reasons = Vec::new();
    let mut gate = Vec::new();
    let proof = result
        .supported
        .clone()
        .ok_or_else(|| refuse("missing_proof", "supported result carries no proof".into()))?;
    let mut patched = air.clone();
    apply_patch(
        &mut patched,
        &run.doc.target.key,
        &Map::new(),
        std::slice::from_ref(&proof.field),
    )
    .map_err(|e| refuse("patch_failed", e))?;
    let delta = measure(air, &patched, &run.doc.target.key, run.doc.task.deficiency);
    let set: Map<String, Value> = [(proof.field.clone(), proof.value.clone())]
        .into_iter()
        .collect();
    let frozen = load_frozen(run.clone(), lc)?;
    let tier = if delta.acceptable() {
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
    } else {
        reasons.push("proving the current value does not close the deficiency".into());
        Tier::Reject
    };
    let ids = frozen
        .claims
        .claims
        .iter()
        .filter(|c| proof.claim_ids.contains(&c.id))
        .flat_map(|c| c.artifact_ids.clone())
        .collect();
    Ok(Reconciled {
        tier: Some(tier),
        escalate: None,
        reasons,
        validation: None,
        eval_delta: Some(delta),
        gate,
        patched: Some(Patched {
            air: patched,
            set: Map::new(),
            artifact_ids: ids,
        }),
    })
}

/// Writes the patched AIR to `out` with its provenance entry, when the tier allows: `auto`
/// always, `review` only with an approver, `reject` never.
fn apply(
    out: &Path,
    req: &CloseRequest,
    run: &Run,
    status: Status,
    tier: Option<Tier>,
    reasons: &[String],
    patched: Option<Patched>,
) -> Result<Applied, CaseError> {
    let Some(Patched {
        air: mut patched,
        set,
        artifact_ids,
    }) = patched
    else {
        return Err(refuse(
            "nothing_to_apply",
            format!("a {status} result has nothing to apply"),
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
    Ok(Applied {
        air: out.display().to_string(),
        approved_by: req.approved_by.clone(),
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
