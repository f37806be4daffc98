//! The lifecycle and honest outcomes: legal transitions only, frozen stages that cannot be
//! edited, `proposal_generated` only with a passing record, supported only with proof, and
//! every decline carrying what was learned (R-LC-1..10).
//! Trials by area live in `lifecycle/` (transitions, frozen files, outcomes, supported,
//! critique); the list and the shared helpers are here.

mod critique;
mod frozen;
mod outcomes;
mod supported;
mod transitions;

use std::path::Path;

use crate::support::rails::finalize;
use anvil_bench::case::finalize::{ResultDoc, Status};
use serde_json::{Value, json};

use crate::Check;
use crate::support::{claim, ev, externals, lifecycle_json};
use supported::supported_refused;

pub fn checks() -> Vec<Check> {
    vec![
        // R-LC-1
        Check {
            name: "lifecycle::a_run_advances_open_research_frozen_proposal_frozen_finalized",
            rules: &["R-LC-1"],
            run: transitions::happy_path_transitions,
        },
        Check {
            name: "lifecycle::validate_before_freeze_research_is_refused",
            rules: &["R-LC-1"],
            run: transitions::validate_from_open,
        },
        Check {
            name: "lifecycle::validate_without_a_proposal_is_refused_as_missing_output",
            rules: &["R-LC-1"],
            run: transitions::validate_without_a_proposal,
        },
        Check {
            name: "lifecycle::freeze_research_twice_is_refused",
            rules: &["R-LC-1"],
            run: transitions::freeze_twice,
        },
        Check {
            name: "lifecycle::validate_twice_is_refused",
            rules: &["R-LC-1"],
            run: transitions::validate_twice,
        },
        Check {
            name: "lifecycle::a_finalized_run_refuses_every_earlier_rail",
            rules: &["R-LC-1"],
            run: transitions::finalized_refuses_everything,
        },
        Check {
            name: "lifecycle::evidence_and_claims_after_freeze_research_are_refused",
            rules: &["R-LC-1", "R-LC-4"],
            run: transitions::research_rails_after_freeze,
        },
        // R-LC-2
        Check {
            name: "lifecycle::an_honest_decline_finalizes_from_open",
            rules: &["R-LC-2"],
            run: transitions::decline_from_open,
        },
        Check {
            name: "lifecycle::a_decline_from_open_freezes_what_was_learned",
            rules: &["R-LC-2", "R-LC-3"],
            run: transitions::decline_from_open_freezes_research,
        },
        // R-LC-3, R-LC-4
        Check {
            name: "lifecycle::freezing_records_the_hash_of_each_frozen_file",
            rules: &["R-LC-3"],
            run: frozen::freeze_hashes,
        },
        Check {
            name: "lifecycle::an_edit_of_frozen_claims_json_is_detected_by_the_next_rail",
            rules: &["R-LC-3", "R-LC-4"],
            run: frozen::claims_tamper,
        },
        Check {
            name: "lifecycle::a_deleted_frozen_file_is_detected_by_the_next_rail",
            rules: &["R-LC-3"],
            run: frozen::deleted_frozen,
        },
        Check {
            name: "lifecycle::an_edit_of_frozen_proposal_json_is_detected_at_finalize",
            rules: &["R-LC-3", "R-LC-4"],
            run: frozen::proposal_tamper,
        },
        // R-LC-5
        Check {
            name: "lifecycle::proposal_generated_without_a_validation_record_is_refused",
            rules: &["R-LC-5"],
            run: outcomes::generated_without_record,
        },
        Check {
            name: "lifecycle::proposal_generated_after_a_failing_validation_is_refused",
            rules: &["R-LC-5"],
            run: outcomes::generated_after_fail,
        },
        // R-LC-6
        Check {
            name: "lifecycle::supported_with_proof_finalizes_and_records_the_proof",
            rules: &["R-LC-6"],
            run: supported::supported_with_proof,
        },
        Check {
            name: "lifecycle::supported_with_proof_exactly_at_the_strength_bar_finalizes",
            rules: &["R-LC-6"],
            run: supported::supported_at_the_bar,
        },
        Check {
            name: "lifecycle::supported_needs_a_claim_asserting_exactly_the_current_value",
            rules: &["R-LC-6"],
            run: || {
                supported_refused(|run| {
                    let a = ev(run, "src/payments/service.py", 32, 39)?;
                    let t = ev(run, "tests/test_capture.py", 6, 8)?;
                    claim(run, "field.unit", json!("ms"), &[&a, &t])?;
                    claim(run, "field.conversion", json!("s"), &[&a, &t])?;
                    Ok(())
                })
            },
        },
        Check {
            name: "lifecycle::supported_needs_the_strength_bar",
            rules: &["R-LC-6"],
            run: || {
                supported_refused(|run| {
                    let d = ev(run, "docs/payments.md", 3, 4)?;
                    claim(run, "field.unit", json!("s"), &[&d])?;
                    Ok(())
                })
            },
        },
        Check {
            name: "lifecycle::supported_needs_the_strength_bar_where_unverified_support_is_allowed",
            rules: &["R-LC-6"],
            run: supported::supported_needs_the_strength_bar_where_unverified_support_is_allowed,
        },
        Check {
            name: "lifecycle::supported_a_few_hundredths_under_the_strength_bar_is_refused",
            rules: &["R-LC-6"],
            run: supported::supported_just_under_the_bar_is_refused,
        },
        Check {
            name: "lifecycle::supported_needs_verified_support_for_a_unit",
            rules: &["R-LC-6"],
            run: || {
                supported_refused(|run| {
                    let ids = externals(run, 5)?;
                    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                    claim(run, "field.unit", json!("s"), &refs)?;
                    Ok(())
                })
            },
        },
        Check {
            name: "lifecycle::supported_is_refused_under_a_conflict",
            rules: &["R-LC-6"],
            run: || {
                supported_refused(|run| {
                    let a = ev(run, "src/payments/service.py", 32, 39)?;
                    let t = ev(run, "tests/test_capture.py", 6, 8)?;
                    let d = ev(run, "docs/payments.md", 3, 4)?;
                    claim(run, "field.unit", json!("s"), &[&a, &t])?;
                    claim(run, "field.unit", json!("ms"), &[&d])?;
                    Ok(())
                })
            },
        },
        Check {
            name: "lifecycle::supported_is_refused_when_a_proposal_exists",
            rules: &["R-LC-6"],
            run: supported::supported_with_patch,
        },
        // R-LC-7
        Check {
            name: "lifecycle::a_missing_value_can_never_be_supported",
            rules: &["R-LC-7"],
            run: supported::missing_value_never_supported,
        },
        // R-LC-8
        Check {
            name: "lifecycle::finalize_refuses_a_critique_edited_to_pass",
            rules: &["R-LC-8", "R-LC-4"],
            run: critique::critique_edited_to_pass,
        },
        Check {
            name: "lifecycle::finalize_refuses_a_critique_edited_anywhere_while_its_verdict_and_hash_are_kept",
            rules: &["R-LC-8"],
            run: critique::critique_edited_verdict_kept,
        },
        Check {
            name: "lifecycle::finalize_refuses_a_critique_without_a_validation_record",
            rules: &["R-LC-8"],
            run: critique::critique_without_record,
        },
        // R-LC-9
        Check {
            name: "lifecycle::conflicted_carries_artifacts_claims_and_conflicts",
            rules: &["R-LC-9"],
            run: outcomes::conflicted_carries_everything,
        },
        Check {
            name: "lifecycle::a_decline_after_a_failed_validation_carries_the_critique",
            rules: &["R-LC-9"],
            run: outcomes::decline_carries_critique,
        },
        // R-LC-10
        Check {
            name: "lifecycle::the_critique_of_a_single_process_is_labelled_self",
            rules: &["R-LC-10"],
            run: critique::critique_is_self,
        },
        Check {
            name: "lifecycle::a_critique_relabelled_independent_by_hand_is_refused_at_finalize",
            rules: &["R-LC-10", "R-LC-8"],
            run: critique::critique_relabelled,
        },
    ]
}

fn state(run: &Path) -> Value {
    lifecycle_json(run)["state"].clone()
}

fn decline(run: &Path, status: Status) -> Result<ResultDoc, anvil_bench::case::CaseError> {
    finalize(run, Some(status), Some("conformance"), None)
}
