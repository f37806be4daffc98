//! The skill's deterministic checks on a frozen proposal, and the authoritative
//! validation record (R-VAL-1..8). Where the parser already refuses a document, a second
//! trial runs the check itself on a proposal that bypassed the parser, so each layer is
//! proven on its own.
//! Trials by area live in `validation/` (boundary, grounding, values, record); the list
//! and the shared helpers are here.

mod boundary;
mod grounding;
mod record;
mod values;

use std::path::Path;

use crate::support::rails;
use anvil_bench::case::proposal::{DocErrorKind, Proposal, parse_proposal};
use anvil_bench::case::validate::{CheckResult, Inputs, ValidationRecord, Verdict, run_checks};
use libtest_mimic::Failed;
use serde_json::Value;

use crate::support::{World, failed, frozen_unit, out, unit_proposal, write_proposal};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        // R-VAL-1
        Check {
            name: "validation::a_patch_writing_a_field_outside_the_skill_is_refused",
            rules: &["R-VAL-1"],
            run: boundary::outside_boundary_refused,
        },
        Check {
            name: "validation::the_boundary_check_fails_a_patch_that_bypassed_the_parser",
            rules: &["R-VAL-1"],
            run: boundary::boundary_check_itself,
        },
        // R-VAL-2
        Check {
            name: "validation::structural_keys_are_never_writable",
            rules: &["R-VAL-2"],
            run: boundary::structural_refused,
        },
        Check {
            name: "validation::the_structural_check_fails_a_patch_that_bypassed_the_parser",
            rules: &["R-VAL-2"],
            run: boundary::structural_check_itself,
        },
        // R-VAL-3
        Check {
            name: "validation::a_patched_value_other_than_the_grounding_claims_fails",
            rules: &["R-VAL-3"],
            run: grounding::value_differs_from_claim,
        },
        Check {
            name: "validation::a_grounding_that_also_cites_a_claim_of_another_value_fails",
            rules: &["R-VAL-3"],
            run: grounding::grounding_citing_another_value_fails,
        },
        Check {
            name: "validation::a_claim_rejected_at_freeze_grounds_nothing",
            rules: &["R-VAL-3", "R-CL-5"],
            run: grounding::rejected_claim_grounds_nothing,
        },
        Check {
            name: "validation::a_supporting_claim_cannot_ground_a_patched_value",
            rules: &["R-VAL-3"],
            run: grounding::supporting_claim_does_not_ground,
        },
        // R-VAL-4
        Check {
            name: "validation::a_lone_doc_is_below_the_unit_strength_bar",
            rules: &["R-VAL-4"],
            run: grounding::lone_doc,
        },
        Check {
            name: "validation::grounding_exactly_at_the_strength_bar_validates_and_finalizes",
            rules: &["R-VAL-4"],
            run: grounding::exactly_at_the_bar,
        },
        Check {
            name: "validation::two_excerpts_of_one_file_count_once",
            rules: &["R-VAL-4"],
            run: grounding::one_file_counts_once,
        },
        Check {
            name: "validation::strength_is_the_noisy_or_of_distinct_files",
            rules: &["R-VAL-4"],
            run: grounding::noisy_or,
        },
        // R-VAL-5
        Check {
            name: "validation::external_only_grounding_fails_the_unit_verification_bar",
            rules: &["R-VAL-5"],
            run: grounding::external_only,
        },
        Check {
            name: "validation::an_unrelated_verified_artifact_does_not_lift_unverified_grounding",
            rules: &["R-VAL-5"],
            run: grounding::unrelated_verified,
        },
        // R-VAL-6
        Check {
            name: "validation::an_unresolved_conflict_fails_validation",
            rules: &["R-VAL-6"],
            run: grounding::conflict_fails,
        },
        Check {
            name: "validation::an_unresolved_conflict_on_an_error_predicate_fails_validation",
            rules: &["R-VAL-6"],
            run: grounding::conflict_fails_for_an_error,
        },
        Check {
            name: "validation::a_conflicting_value_grounded_only_by_external_pages_is_still_a_conflict",
            rules: &["R-VAL-6", "R-CL-6"],
            run: grounding::unverified_dissent_is_a_conflict,
        },
        // R-VAL-7
        Check {
            name: "validation::an_empty_description_is_refused",
            rules: &["R-VAL-7"],
            run: values::empty_description,
        },
        Check {
            name: "validation::a_tautological_description_fails",
            rules: &["R-VAL-7"],
            run: values::tautological_description,
        },
        Check {
            name: "validation::a_description_restating_only_the_name_and_the_type_fails",
            rules: &["R-VAL-7"],
            run: values::name_and_type_description,
        },
        Check {
            name: "validation::an_operation_description_restating_only_the_name_and_the_route_fails",
            rules: &["R-VAL-7"],
            run: values::route_description,
        },
        Check {
            name: "validation::a_value_outside_the_vocabulary_is_refused",
            rules: &["R-VAL-7"],
            run: values::out_of_vocabulary_value,
        },
        // R-VAL-8
        Check {
            name: "validation::the_lifecycle_record_holds_the_verdict_checks_and_proposal_hash",
            rules: &["R-VAL-8"],
            run: record::record_holds_verdict_and_hash,
        },
        Check {
            name: "validation::a_failing_verdict_is_recorded_and_the_cli_exits_1",
            rules: &["R-VAL-8"],
            run: record::failing_verdict_recorded,
        },
    ]
}

/// Runs the skill's checks on the run's proposal after `edit` (bypassing the parser).
fn checks_on(run: &Path, edit: impl FnOnce(&mut Proposal)) -> Result<Vec<CheckResult>, Failed> {
    let r = crate::support::rails::load_run(run).map_err(failed)?;
    let lc = crate::support::rails::load_lifecycle(run).map_err(failed)?;
    let frozen = rails::load_frozen(r, &lc).map_err(failed)?;
    let bytes = std::fs::read(out(run, "proposal.json")).unwrap();
    let mut p = parse_proposal(&bytes, &frozen.run.doc, "output/proposal.json").map_err(failed)?;
    edit(&mut p);
    Ok(run_checks(&Inputs {
        case: &frozen.run.doc,
        evidence: &frozen.evidence,
        claims: &frozen.claims,
        research: &frozen.research,
        proposal: &p,
    }))
}

fn check<'a>(checks: &'a [CheckResult], id: &str) -> Result<&'a CheckResult, Failed> {
    checks
        .iter()
        .find(|c| c.id == id)
        .ok_or_else(|| failed(format!("no `{id}` check ran: {checks:?}")))
}

/// Validates (the real rail) and returns the record.
fn validated(run: &Path) -> Result<ValidationRecord, Failed> {
    rails::validate(run, None, false).map_err(failed)
}

/// The record fails, and check `id` is among the failures.
fn fails_on(record: &ValidationRecord, id: &str) -> Result<(), Failed> {
    ensure!(
        record.verdict == Verdict::Fail,
        "the proposal passed; `{id}` should have failed: {:?}",
        record.checks
    );
    let c = check(&record.checks, id)?;
    ensure!(!c.passed, "`{id}` passed: {}", c.detail);
    Ok(())
}

/// A proposal (the valid unit proposal changed by `mutate`) is stopped by the validate
/// rail: rejected at the parser at `field` with `kind`, or recorded as failing `check`.
/// Either layer may hold the rule; the `…_bypassed_the_parser` trials prove the check.
fn stopped(
    mutate: impl FnOnce(&mut Value),
    field: &str,
    kind: DocErrorKind,
    check_id: &str,
) -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let mut p = unit_proposal("s", &[&u.claim]);
    mutate(&mut p);
    write_proposal(&u.run, &p);
    stopped_run(&u.run, field, kind, check_id)
}

fn stopped_run(run: &Path, field: &str, kind: DocErrorKind, check_id: &str) -> Result<(), Failed> {
    match rails::validate(run, None, false) {
        Ok(record) => fails_on(&record, check_id),
        Err(anvil_bench::case::CaseError::Document(d)) if d.field == field && d.kind == kind => {
            ensure!(
                d.document == "output/proposal.json" && !d.reason.is_empty(),
                "the rejection does not name document and reason: {d:?}"
            );
            Ok(())
        }
        Err(e) => Err(format!(
            "expected a rejection at `{field}` or a failing `{check_id}`, got {e:?}"
        )
        .into()),
    }
}
