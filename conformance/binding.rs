//! Proposal ↔ identity binding: a hand-written proposal.json is bound to its case by exact
//! equality of target, patch.target, skill, skillVersion and deficiency, and a mismatch is
//! refused, never coerced (R-BIND-1..5, R-BIND-7).

use crate::support::rails;
use crate::support::rails::finalize;
use anvil_bench::case::finalize::Status;
use anvil_bench::case::proposal::DocErrorKind;
use libtest_mimic::Failed;
use serde_json::json;

use crate::support::{
    EMAIL_TARGET, UNIT_TARGET, World, bytes_of, failed, frozen_unit, lifecycle_json, msg, out,
    proposal_refused, rail_cli, stderr, unit_proposal, write_proposal,
};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "binding::a_proposal_for_another_target_is_refused",
            rules: &["R-BIND-1", "R-BIND-7"],
            run: || {
                for other in [EMAIL_TARGET, "op.create_payment.input.body.amount"] {
                    let d = proposal_refused(
                        |p| {
                            p["target"] = json!(other);
                            p["patch"]["target"] = json!(other);
                        },
                        "target",
                        DocErrorKind::Binding,
                    )?;
                    ensure!(
                        d.reason.contains(other) && d.reason.contains(UNIT_TARGET),
                        "the refusal does not name both targets: {}",
                        d.reason
                    );
                }
                Ok(())
            },
        },
        Check {
            name: "binding::a_patch_target_differing_from_the_proposal_target_is_refused",
            rules: &["R-BIND-2", "R-BIND-7"],
            run: || {
                let d = proposal_refused(
                    |p| p["patch"]["target"] = json!(EMAIL_TARGET),
                    "patch.target",
                    DocErrorKind::Binding,
                )?;
                ensure!(
                    d.reason.contains(EMAIL_TARGET),
                    "the refusal does not name the patch target: {}",
                    d.reason
                );
                Ok(())
            },
        },
        Check {
            name: "binding::a_proposal_for_another_skill_is_refused",
            rules: &["R-BIND-3", "R-BIND-7"],
            run: || {
                for s in ["describe-field", "annotate-units", ""] {
                    proposal_refused(|p| p["skill"] = json!(s), "skill", DocErrorKind::Binding)
                        .map_err(|e| failed(format!("skill `{s}`: {}", msg(&e))))?;
                }
                Ok(())
            },
        },
        Check {
            name: "binding::a_proposal_for_another_skill_version_is_refused",
            rules: &["R-BIND-4", "R-BIND-7"],
            run: || {
                for v in [0, 2] {
                    proposal_refused(
                        |p| p["skillVersion"] = json!(v),
                        "skillVersion",
                        DocErrorKind::Binding,
                    )
                    .map_err(|e| failed(format!("skillVersion {v}: {}", msg(&e))))?;
                }
                Ok(())
            },
        },
        Check {
            name: "binding::a_proposal_for_another_deficiency_is_refused",
            rules: &["R-BIND-5", "R-BIND-7"],
            run: || {
                for d in ["unproven_inferred_value", "missing_field_description"] {
                    proposal_refused(
                        |p| p["deficiency"] = json!(d),
                        "deficiency",
                        DocErrorKind::Binding,
                    )
                    .map_err(|e| failed(format!("deficiency `{d}`: {}", msg(&e))))?;
                }
                Ok(())
            },
        },
        Check {
            name: "binding::the_cli_refuses_a_mismatched_proposal_with_exit_1_naming_the_field",
            rules: &["R-BIND-2", "R-BIND-7", "R-PARSE-7"],
            run: cli_refusal,
        },
        Check {
            name: "binding::a_bound_hand_written_proposal_goes_through_every_rail_unchanged",
            rules: &["R-BIND-7"],
            run: bound_proposal_end_to_end,
        },
    ]
}

fn cli_refusal() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let mut p = unit_proposal("s", &[&u.claim]);
    p["patch"]["target"] = json!(EMAIL_TARGET);
    write_proposal(&u.run, &p);
    let o = rail_cli(&w, "validate", &u.run, &[]);
    ensure!(o.status.code() == Some(1), "exit {:?}", o.status.code());
    let err = stderr(&o);
    ensure!(
        err.contains("output/proposal.json") && err.contains("patch.target"),
        "stderr does not name document and field: {err}"
    );
    ensure!(
        lifecycle_json(&u.run)["state"] == "research_frozen",
        "a refused proposal moved the run"
    );
    Ok(())
}

/// The control: the same hand-written document, bound correctly, is validated, frozen and
/// finalized, and the result patches exactly the case's target.
fn bound_proposal_end_to_end() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    let written = bytes_of(&out(&u.run, "proposal.json"));
    let record = rails::validate(&u.run, None, false).map_err(failed)?;
    ensure!(
        record.verdict == anvil_bench::case::validate::Verdict::Pass,
        "a bound proposal failed: {:?}",
        record.checks
    );
    let result = finalize(&u.run, None, None, None).map_err(failed)?;
    ensure!(
        result.status == Status::ProposalGenerated,
        "status {}",
        result.status
    );
    ensure!(
        result.target == UNIT_TARGET
            && result.patch == Some(json!({"unit": "s"}).as_object().cloned().unwrap()),
        "the result patches {} with {:?}",
        result.target,
        result.patch
    );
    ensure!(
        bytes_of(&out(&u.run, "proposal.json")) == written,
        "the rails rewrote the hand-written proposal"
    );
    Ok(())
}
