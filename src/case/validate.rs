//! Stage 2 checks: the skill's deterministic validation of a proposal.
//!
//! Invariant: the verdict is a pure function of the case, the frozen evidence and claims,
//! the stage-1 record and the proposal. Only artifacts that ground a patched value count
//! towards its strength and verification.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::claim::RawClaim;
use super::doc::CaseDoc;
use super::evidence::EvidenceDoc;
use super::proposal::{Proposal, STRUCTURAL_KEYS};
use super::research::{ClaimsDoc, ResearchRecord, aggregate_strength, cited};
use crate::air::is_tautological;
use crate::skill::Verification;

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckResult {
    pub id: String,
    pub passed: bool,
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
}

/// The authoritative validation record (in lifecycle.json as `proposalValidation`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ValidationRecord {
    pub verdict: Verdict,
    pub proposal_hash: String,
    pub checks: Vec<CheckResult>,
    pub at: String,
}

/// The inputs every check reads.
pub struct Inputs<'a> {
    pub case: &'a CaseDoc,
    pub evidence: &'a EvidenceDoc,
    pub claims: &'a ClaimsDoc,
    pub research: &'a ResearchRecord,
    pub proposal: &'a Proposal,
}

impl Inputs<'_> {
    fn grounding_claims(&self, field: &str) -> Vec<&RawClaim> {
        let ids = self
            .proposal
            .grounding
            .get(field)
            .cloned()
            .unwrap_or_default();
        self.claims
            .claims
            .iter()
            .filter(|c| ids.contains(&c.id))
            .collect()
    }

    fn accepted_grounding(&self, field: &str) -> Vec<&RawClaim> {
        self.grounding_claims(field)
            .into_iter()
            .filter(|c| self.research.accepted(&c.id))
            .collect()
    }
}

/// Runs the skill's checks, in contract order.
#[must_use]
pub fn run_checks(inp: &Inputs) -> Vec<CheckResult> {
    inp.case
        .policy
        .contract
        .checks
        .iter()
        .map(|id| {
            let (passed, detail) = check(id, inp);
            CheckResult {
                id: id.clone(),
                passed,
                detail,
            }
        })
        .collect()
}

#[must_use]
pub fn verdict(checks: &[CheckResult]) -> Verdict {
    if checks.iter().all(|c| c.passed) {
        Verdict::Pass
    } else {
        Verdict::Fail
    }
}

fn all_fields(
    inp: &Inputs,
    mut f: impl FnMut(&str, &Value) -> Result<String, String>,
) -> (bool, String) {
    let mut notes = Vec::new();
    for (field, value) in &inp.proposal.set {
        match f(field, value) {
            Ok(note) => notes.push(note),
            Err(why) => return (false, why),
        }
    }
    (true, notes.join("; "))
}

fn check(id: &str, inp: &Inputs) -> (bool, String) {
    let contract = &inp.case.policy.contract;
    match id {
        "patch_within_boundary" => {
            let writable = contract.writable_fields();
            all_fields(inp, |field, _| {
                if writable.contains(&field) {
                    Ok(format!("`{field}` is writable"))
                } else {
                    Err(format!(
                        "`{field}` is outside the writable fields ({})",
                        writable.join(", ")
                    ))
                }
            })
        }
        "no_structural_change" => all_fields(inp, |field, _| {
            if STRUCTURAL_KEYS.contains(&field) {
                Err(format!("`{field}` is structural"))
            } else {
                Ok(format!("`{field}` is not structural"))
            }
        }),
        "claims_from_admissible_sources" => claims_from_admissible_sources(inp),
        "evidence_supports_value" => evidence_supports_value(inp),
        "evidence_meets_minimum_strength" => evidence_meets_minimum_strength(inp),
        "evidence_meets_verification" => evidence_meets_verification(inp),
        "no_unresolved_conflict" => all_fields(inp, |field, _| {
            let predicate = contract.predicate_for_field(field).unwrap_or_default();
            match inp.research.conflict_on(predicate) {
                Some(c) => Err(format!(
                    "unresolved conflict on `{predicate}` between {} values",
                    c.values.len()
                )),
                None => Ok(format!("no conflict on `{predicate}`")),
            }
        }),
        "description_nonempty" => all_fields(inp, |field, value| match value {
            Value::String(s) if field == "description" && s.trim().is_empty() => {
                Err("description is empty".into())
            }
            _ => Ok(format!("`{field}` is non-empty")),
        }),
        "description_not_tautological" => all_fields(inp, |field, value| {
            let (name, ty) = target_words(inp.case);
            match value {
                Value::String(s) if field == "description" && is_tautological(s, &name, &ty) => {
                    Err(format!("\"{s}\" only restates `{name}`"))
                }
                _ => Ok(format!("`{field}` says more than the name")),
            }
        }),
        "value_in_vocabulary" => all_fields(inp, |field, value| {
            match contract.value_constraints.get(field) {
                Some(c) if c.admits(value) => Ok(format!("{value} is admissible for `{field}`")),
                Some(c) => Err(format!(
                    "{value} is not admissible for `{field}`: expected {}",
                    c.describe()
                )),
                None => Err(format!("`{field}` has no value constraint")),
            }
        }),
        other => (
            false,
            format!("unknown check `{other}` in the skill contract"),
        ),
    }
}

/// Every grounding claim cited for a patched field exists and was accepted at stage 1.
fn claims_from_admissible_sources(inp: &Inputs) -> (bool, String) {
    all_fields(inp, |field, _| {
        let ids = inp
            .proposal
            .grounding
            .get(field)
            .cloned()
            .unwrap_or_default();
        for cid in &ids {
            if !inp.claims.claims.iter().any(|c| &c.id == cid) {
                return Err(format!("grounding claim `{cid}` does not exist"));
            }
            if !inp.research.accepted(cid) {
                return Err(format!("grounding claim `{cid}` was rejected at stage 1"));
            }
        }
        Ok(format!(
            "{} grounding claim(s) for `{field}` accepted",
            ids.len()
        ))
    })
}

/// For each patched field, no accepted grounding claim on its predicate asserts another
/// value, and one asserts the proposed value.
fn evidence_supports_value(inp: &Inputs) -> (bool, String) {
    let contract = &inp.case.policy.contract;
    all_fields(inp, |field, value| {
        let predicate = contract.predicate_for_field(field).unwrap_or_default();
        let claims = inp.accepted_grounding(field);
        if let Some(c) = claims
            .iter()
            .find(|c| c.predicate == predicate && &c.value != value)
        {
            return Err(format!(
                "grounding claim `{}` asserts {} for `{predicate}`, not {value}",
                c.id, c.value
            ));
        }
        match claims
            .iter()
            .find(|c| c.predicate == predicate && &c.value == value)
        {
            Some(c) => Ok(format!("claim `{}` asserts {predicate} = {value}", c.id)),
            None => Err(format!(
                "no accepted grounding claim asserts {predicate} = {value}"
            )),
        }
    })
}

/// Each patched field's accepted grounding reaches the contract's minimum strength.
fn evidence_meets_minimum_strength(inp: &Inputs) -> (bool, String) {
    let contract = &inp.case.policy.contract;
    all_fields(inp, |field, _| {
        let s = aggregate_strength(cited(&inp.accepted_grounding(field), inp.evidence));
        if s >= contract.minimum_strength {
            Ok(format!(
                "`{field}` strength {s} ≥ {}",
                contract.minimum_strength
            ))
        } else {
            Err(format!(
                "`{field}` strength {s} < {}",
                contract.minimum_strength
            ))
        }
    })
}

/// Each patched field's grounding meets the verification the contract asks of it: any
/// grounding when unverified is allowed, else verified artifacts of the minimum strength.
fn evidence_meets_verification(inp: &Inputs) -> (bool, String) {
    let contract = &inp.case.policy.contract;
    all_fields(inp, |field, _| {
        let arts = cited(&inp.accepted_grounding(field), inp.evidence);
        match contract.verification_for(field) {
            Verification::AllowUnverified => Ok(format!("`{field}` admits unverified grounding")),
            Verification::Verified => {
                let s = aggregate_strength(arts.into_iter().filter(|a| a.is_verified()));
                if s >= contract.minimum_strength {
                    Ok(format!("`{field}` verified strength {s}"))
                } else {
                    Err(format!(
                        "`{field}` requires verified grounding: verified strength {s} < {}",
                        contract.minimum_strength
                    ))
                }
            }
        }
    })
}

/// The words a description must go beyond: the target's name and its type (or route).
fn target_words(case: &CaseDoc) -> (String, String) {
    let t = &case.target;
    let ty = match (&t.field, &t.operation) {
        (Some(f), _) => f.ty.clone(),
        (None, Some(op)) => format!("{} {}", op.method, op.path),
        _ => String::new(),
    };
    (t.name().to_string(), ty)
}

/// The review copy of a validation record, as written to critique.json.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Critique {
    pub format: String,
    pub format_version: u32,
    pub review: Review,
    pub verdict: Verdict,
    pub proposal_hash: String,
    pub checks: Vec<CheckResult>,
    pub at: String,
}

impl Critique {
    /// The self-review copy of a validation record.
    #[must_use]
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
    #[must_use]
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
