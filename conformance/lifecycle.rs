//! The lifecycle and honest outcomes: legal transitions only, frozen stages that cannot be
//! edited, proposal_generated only with a passing record, supported only with proof, and
//! every decline carrying what was learned (R-LC-1..10).

use std::path::Path;

use anvil_bench::case::finalize::{ResultDoc, Status, finalize};
use anvil_bench::case::rails;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::support::*;
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        // R-LC-1
        Check {
            name: "lifecycle::a_run_advances_open_research_frozen_proposal_frozen_finalized",
            rules: &["R-LC-1"],
            run: happy_path_transitions,
        },
        Check {
            name: "lifecycle::validate_before_freeze_research_is_refused",
            rules: &["R-LC-1"],
            run: validate_from_open,
        },
        Check {
            name: "lifecycle::freeze_research_twice_is_refused",
            rules: &["R-LC-1"],
            run: freeze_twice,
        },
        Check {
            name: "lifecycle::validate_twice_is_refused",
            rules: &["R-LC-1"],
            run: validate_twice,
        },
        Check {
            name: "lifecycle::a_finalized_run_refuses_every_earlier_rail",
            rules: &["R-LC-1"],
            run: finalized_refuses_everything,
        },
        Check {
            name: "lifecycle::evidence_and_claims_after_freeze_research_are_refused",
            rules: &["R-LC-1", "R-LC-4"],
            run: research_rails_after_freeze,
        },
        // R-LC-2
        Check {
            name: "lifecycle::an_honest_decline_finalizes_from_open",
            rules: &["R-LC-2"],
            run: decline_from_open,
        },
        // R-LC-3, R-LC-4
        Check {
            name: "lifecycle::freezing_records_the_hash_of_each_frozen_file",
            rules: &["R-LC-3"],
            run: freeze_hashes,
        },
        Check {
            name: "lifecycle::an_edit_of_frozen_claims_json_is_detected_by_the_next_rail",
            rules: &["R-LC-3", "R-LC-4"],
            run: claims_tamper,
        },
        Check {
            name: "lifecycle::a_deleted_frozen_file_is_detected_by_the_next_rail",
            rules: &["R-LC-3"],
            run: deleted_frozen,
        },
        Check {
            name: "lifecycle::an_edit_of_frozen_proposal_json_is_detected_at_finalize",
            rules: &["R-LC-3", "R-LC-4"],
            run: proposal_tamper,
        },
        // R-LC-5
        Check {
            name: "lifecycle::proposal_generated_without_a_validation_record_is_refused",
            rules: &["R-LC-5"],
            run: generated_without_record,
        },
        Check {
            name: "lifecycle::proposal_generated_after_a_failing_validation_is_refused",
            rules: &["R-LC-5"],
            run: generated_after_fail,
        },
        // R-LC-6
        Check {
            name: "lifecycle::supported_with_proof_finalizes_and_records_the_proof",
            rules: &["R-LC-6"],
            run: supported_with_proof,
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
            run: supported_with_patch,
        },
        // R-LC-7
        Check {
            name: "lifecycle::a_missing_value_can_never_be_supported",
            rules: &["R-LC-7"],
            run: missing_value_never_supported,
        },
        // R-LC-8
        Check {
            name: "lifecycle::finalize_refuses_a_critique_edited_to_pass",
            rules: &["R-LC-8", "R-LC-4"],
            run: critique_edited_to_pass,
        },
        Check {
            name: "lifecycle::finalize_refuses_a_critique_without_a_validation_record",
            rules: &["R-LC-8"],
            run: critique_without_record,
        },
        // R-LC-9
        Check {
            name: "lifecycle::conflicted_carries_artifacts_claims_and_conflicts",
            rules: &["R-LC-9"],
            run: conflicted_carries_everything,
        },
        Check {
            name: "lifecycle::a_decline_after_a_failed_validation_carries_the_critique",
            rules: &["R-LC-9"],
            run: decline_carries_critique,
        },
        // R-LC-10
        Check {
            name: "lifecycle::the_critique_of_a_single_process_is_labelled_self",
            rules: &["R-LC-10"],
            run: critique_is_self,
        },
        Check {
            name: "lifecycle::a_critique_relabelled_independent_by_hand_is_refused_at_finalize",
            rules: &["R-LC-10", "R-LC-8"],
            run: critique_relabelled,
        },
    ]
}

fn state(run: &Path) -> Value {
    lifecycle_json(run)["state"].clone()
}

fn decline(run: &Path, status: Status) -> Result<ResultDoc, anvil_bench::case::CaseError> {
    finalize(run, Some(status), Some("conformance"), None)
}

/// The rail is refused as an illegal transition and lifecycle.json and output/ are
/// byte-identical afterwards.
fn illegal<T: std::fmt::Debug>(
    run: &Path,
    what: &str,
    f: impl FnOnce() -> Result<T, anvil_bench::case::CaseError>,
) -> Result<(), Failed> {
    let lc = bytes_of(&run.join("lifecycle.json"));
    let before = tree(&run.join("output"));
    refused_as(f(), "illegal_transition").map_err(|e| failed(format!("{what}: {}", msg(&e))))?;
    ensure!(
        bytes_of(&run.join("lifecycle.json")) == lc,
        "{what}: a refused transition changed lifecycle.json"
    );
    ensure!(
        tree(&run.join("output")) == before,
        "{what}: a refused transition changed output/"
    );
    Ok(())
}

fn happy_path_transitions() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    ensure!(
        state(&u.run) == "research_frozen",
        "after freeze: {}",
        state(&u.run)
    );
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    ensure!(
        state(&u.run) == "proposal_frozen",
        "after validate: {}",
        state(&u.run)
    );
    finalize(&u.run, None, None, None).map_err(failed)?;
    ensure!(
        state(&u.run) == "finalized",
        "after finalize: {}",
        state(&u.run)
    );
    let moves: Vec<(Value, Value)> = lifecycle_json(&u.run)["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["from"].clone(), t["to"].clone()))
        .collect();
    ensure!(
        moves
            == [
                (Value::Null, json!("open")),
                (json!("open"), json!("research_frozen")),
                (json!("research_frozen"), json!("proposal_frozen")),
                (json!("proposal_frozen"), json!("finalized")),
            ],
        "transitions recorded: {moves:?}"
    );
    Ok(())
}

fn validate_from_open() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    illegal(&u.run, "validate from open", || {
        rails::validate(&u.run, None, false)
    })?;
    illegal(&u.run, "validate --dry-run from open", || {
        rails::validate(&u.run, None, true)
    })
}

fn freeze_twice() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    illegal(&u.run, "freeze-research again", || {
        rails::freeze_research(&u.run, None)
    })
}

fn validate_twice() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    illegal(&u.run, "validate again", || {
        rails::validate(&u.run, None, false)
    })
}

fn finalized_refuses_everything() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    decline(&u.run, Status::InsufficientEvidence).map_err(failed)?;
    ensure!(state(&u.run) == "finalized", "state {}", state(&u.run));
    illegal(&u.run, "finalize again", || {
        decline(&u.run, Status::BlockedByMissingSource)
    })?;
    illegal(&u.run, "add-evidence", || {
        add_ev(&u.run, "docs/payments.md", Some((3, 4)))
    })?;
    illegal(&u.run, "add-claim", || {
        rails::add_claim(
            &u.run,
            claim_input("field.unit", json!("ms"), &[&u.test]),
            None,
        )
    })?;
    illegal(&u.run, "freeze-research", || {
        rails::freeze_research(&u.run, None)
    })?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    illegal(&u.run, "validate", || rails::validate(&u.run, None, false))
}

fn research_rails_after_freeze() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    illegal(&u.run, "add-evidence", || {
        add_ev(&u.run, "docs/payments.md", Some((3, 4)))
    })?;
    illegal(&u.run, "add-external-evidence", || {
        rails::add_external_evidence(
            &u.run,
            "wiki",
            "https://wiki.example/x",
            "in seconds\n",
            None,
        )
    })?;
    illegal(&u.run, "add-claim", || {
        rails::add_claim(
            &u.run,
            claim_input("field.unit", json!("ms"), &[&u.test]),
            None,
        )
    })
}

fn decline_from_open() -> Result<(), Failed> {
    for status in [Status::InsufficientEvidence, Status::BlockedByMissingSource] {
        let w = World::new();
        let run = w.open_unit()?.run_dir;
        ensure!(state(&run) == "open", "test setup");
        let result = decline(&run, status).map_err(|e| failed(format!("{status}: {e}")))?;
        ensure!(result.status == status, "finalized as {}", result.status);
        ensure!(
            state(&run) == "finalized",
            "{status}: state {}",
            state(&run)
        );
        let on_disk = read_json(&out(&run, "result.json"));
        ensure!(
            on_disk["status"] == status.as_str() && on_disk.get("patch").is_none(),
            "{status}: result.json is {on_disk}"
        );
    }
    Ok(())
}

fn freeze_hashes() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let hash = |rel: &str| anvil_bench::canon::bytes_hash(&std::fs::read(u.run.join(rel)).unwrap());
    let lc = lifecycle_json(&u.run);
    for rel in ["output/evidence.json", "output/claims.json"] {
        ensure!(
            lc["frozen"][rel] == hash(rel),
            "{rel} frozen as {}, file hashes {}",
            lc["frozen"][rel],
            hash(rel)
        );
    }
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    finalize(&u.run, None, None, None).map_err(failed)?;
    let lc = lifecycle_json(&u.run);
    for rel in [
        "output/evidence.json",
        "output/claims.json",
        "output/proposal.json",
        "output/result.json",
    ] {
        ensure!(
            lc["frozen"][rel] == hash(rel),
            "{rel} frozen as {}, file hashes {}",
            lc["frozen"][rel],
            hash(rel)
        );
    }
    Ok(())
}

fn expect_tamper<T: std::fmt::Debug>(
    what: &str,
    file: &str,
    r: Result<T, anvil_bench::case::CaseError>,
) -> Result<(), Failed> {
    let e = refused_as(r, "tamper").map_err(|e| failed(format!("{what}: {}", msg(&e))))?;
    ensure!(
        e.to_string().contains(file),
        "{what}: the tamper error does not name {file}: {e}"
    );
    Ok(())
}

fn claims_tamper() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    let mut doc = read_json(&out(&u.run, "claims.json"));
    doc["claims"][0]["confidence"] = json!(1.0);
    write_json(&out(&u.run, "claims.json"), &doc);
    let lc = bytes_of(&u.run.join("lifecycle.json"));
    expect_tamper(
        "validate",
        "output/claims.json",
        rails::validate(&u.run, None, false),
    )?;
    expect_tamper(
        "finalize",
        "output/claims.json",
        decline(&u.run, Status::InsufficientEvidence),
    )?;
    ensure!(
        bytes_of(&u.run.join("lifecycle.json")) == lc,
        "a tampered run moved on"
    );
    ensure!(
        !out(&u.run, "critique.json").exists() && !out(&u.run, "result.json").exists(),
        "a tampered run produced output"
    );
    Ok(())
}

fn deleted_frozen() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    std::fs::remove_file(out(&u.run, "claims.json")).unwrap();
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    expect_tamper(
        "validate",
        "output/claims.json",
        rails::validate(&u.run, None, false),
    )
}

fn proposal_tamper() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    // A later edit: same value, another rationale; and one to another value.
    let edits: [fn(&mut Value); 2] = [
        |p| p["rationale"] = json!("edited after validation"),
        |p| p["patch"]["set"]["unit"] = json!("ms"),
    ];
    for edit in edits {
        let mut p = read_json(&out(&u.run, "proposal.json"));
        let original = bytes_of(&out(&u.run, "proposal.json")).unwrap();
        edit(&mut p);
        write_proposal(&u.run, &p);
        expect_tamper(
            "finalize",
            "output/proposal.json",
            finalize(&u.run, None, None, None),
        )?;
        ensure!(
            !out(&u.run, "result.json").exists(),
            "a tampered proposal produced a result"
        );
        std::fs::write(out(&u.run, "proposal.json"), original).unwrap();
    }
    // Restored byte for byte, the run finalizes.
    finalize(&u.run, None, None, None).map_err(failed)?;
    Ok(())
}

fn generated_without_record() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    let lc = bytes_of(&u.run.join("lifecycle.json"));
    refused_as(
        finalize(&u.run, Some(Status::ProposalGenerated), None, None),
        "not_validated",
    )?;
    refused_as(finalize(&u.run, None, None, None), "status_required")?;
    ensure!(
        bytes_of(&u.run.join("lifecycle.json")) == lc && !out(&u.run, "result.json").exists(),
        "a refused finalize wrote something"
    );
    Ok(())
}

fn generated_after_fail() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("ms", &[&u.claim]));
    let record = rails::validate(&u.run, None, false).map_err(failed)?;
    ensure!(
        record.verdict == anvil_bench::case::validate::Verdict::Fail,
        "test setup: the proposal passed"
    );
    refused_as(
        finalize(&u.run, Some(Status::ProposalGenerated), None, None),
        "validation_failed",
    )?;
    refused_as(finalize(&u.run, None, None, None), "status_required")?;
    ensure!(
        !out(&u.run, "result.json").exists(),
        "a refused finalize wrote result.json"
    );
    let o = rail_cli(&w, "finalize", &u.run, &["--status", "proposal_generated"]);
    ensure!(o.status.code() == Some(1), "CLI exit {:?}", o.status.code());
    Ok(())
}

/// The inferred-unit case (current value `s`) with research from `research`, frozen;
/// `supported` must be refused and nothing written.
fn supported_refused(research: impl FnOnce(&Path) -> Result<(), Failed>) -> Result<(), Failed> {
    let w = World::new();
    let run = open_inferred_unit(&w)?;
    research(&run)?;
    freeze(&run)?;
    let lc = bytes_of(&run.join("lifecycle.json"));
    refused_as(decline(&run, Status::Supported), "unproven_support")?;
    ensure!(
        bytes_of(&run.join("lifecycle.json")) == lc && !out(&run, "result.json").exists(),
        "a refused `supported` wrote something"
    );
    Ok(())
}

fn supported_with_proof() -> Result<(), Failed> {
    let w = World::new();
    let run = open_inferred_unit(&w)?;
    let case = read_json(&run.join("case.json"));
    ensure!(
        case["target"]["current"]["unit"] == "s",
        "test setup: no current unit in {}",
        case["target"]["current"]
    );
    let u = unit_research_in(run)?;
    freeze(&u.run)?;
    let result = decline(&u.run, Status::Supported).map_err(failed)?;
    ensure!(
        result.status == Status::Supported,
        "status {}",
        result.status
    );
    ensure!(result.patch.is_none(), "supported carries a patch");
    let proof = result
        .supported
        .ok_or("supported without a recorded proof")?;
    ensure!(
        proof.field == "unit" && proof.value == json!("s") && proof.claim_ids == [u.claim.clone()],
        "proof is {proof:?}"
    );
    ensure!(
        proof.strength >= 0.8 && proof.verified_strength >= 0.8,
        "proof strength {proof:?}"
    );
    Ok(())
}

fn supported_with_patch() -> Result<(), Failed> {
    let w = World::new();
    let run = open_inferred_unit(&w)?;
    let u = unit_research_in(run)?;
    freeze(&u.run)?;
    let mut p = unit_proposal("s", &[&u.claim]);
    p["deficiency"] = json!("unproven_inferred_value");
    write_proposal(&u.run, &p);
    refused_as(decline(&u.run, Status::Supported), "unproven_support")?;
    ensure!(!out(&u.run, "result.json").exists(), "result.json written");
    Ok(())
}

fn missing_value_never_supported() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    let case = read_json(&u.run.join("case.json"));
    ensure!(
        case["target"]["current"]["unit"].is_null(),
        "test setup: the unit is not missing"
    );
    // Strong, verified research for `s` is frozen, but there is no current value.
    let e = refused_as(decline(&u.run, Status::Supported), "unproven_support")?;
    ensure!(
        e.to_string().contains("unit"),
        "the refusal does not say which value is missing: {e}"
    );
    ensure!(!out(&u.run, "result.json").exists(), "result.json written");
    let o = rail_cli(&w, "finalize", &u.run, &["--status", "supported"]);
    ensure!(o.status.code() == Some(1), "CLI exit {:?}", o.status.code());
    Ok(())
}

fn critique_edited_to_pass() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("ms", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    let mut c = read_json(&out(&u.run, "critique.json"));
    ensure!(
        c["verdict"] == "fail",
        "test setup: critique says {}",
        c["verdict"]
    );
    c["verdict"] = json!("pass");
    for check in c["checks"].as_array_mut().unwrap() {
        check["passed"] = json!(true);
    }
    write_json(&out(&u.run, "critique.json"), &c);
    let lc = bytes_of(&u.run.join("lifecycle.json"));
    for status in [
        None,
        Some(Status::ProposalGenerated),
        Some(Status::InsufficientEvidence),
    ] {
        let e = finalize(&u.run, status, None, None);
        ensure!(
            e.as_ref().is_err_and(|e| e.kind() == "critique_disagrees"),
            "finalize {status:?} with an edited critique: {:?}",
            e.map(|r| r.status)
        );
    }
    ensure!(
        bytes_of(&u.run.join("lifecycle.json")) == lc && !out(&u.run, "result.json").exists(),
        "a refused finalize wrote something"
    );
    Ok(())
}

fn critique_without_record() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    write_json(
        &out(&u.run, "critique.json"),
        &json!({
            "format": "anvil-critique", "formatVersion": 1, "review": "independent",
            "verdict": "pass", "proposalHash": "sha256:00", "checks": [],
            "at": "2026-01-01T00:00:00.000Z"
        }),
    );
    for status in [
        Some(Status::ProposalGenerated),
        Some(Status::InsufficientEvidence),
    ] {
        let e = finalize(&u.run, status, None, None);
        ensure!(
            e.as_ref().is_err_and(|e| e.kind() == "critique_disagrees"),
            "finalize {status:?} with a hand-written critique: {:?}",
            e.map(|r| r.status)
        );
    }
    ensure!(!out(&u.run, "result.json").exists(), "result.json written");
    Ok(())
}

fn conflicted_carries_everything() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    let d = ev(&u.run, "docs/payments.md", 3, 4)?;
    let ms = claim(&u.run, "field.unit", json!("ms"), &[&d])?;
    freeze(&u.run)?;
    let result = decline(&u.run, Status::Conflicted).map_err(failed)?;
    ensure!(result.patch.is_none(), "a decline carries a patch");
    let ids: Vec<&str> = result.artifacts.iter().map(|a| a.id.as_str()).collect();
    for id in [&u.implementation, &u.test, &d] {
        ensure!(
            ids.contains(&id.as_str()),
            "artifact {id} missing from result"
        );
    }
    ensure!(
        result.artifacts.iter().all(|a| !a.excerpt.is_empty()),
        "artifacts lost their excerpts"
    );
    let cids: Vec<&str> = result.claims.iter().map(|c| c.id.as_str()).collect();
    ensure!(
        cids.contains(&u.claim.as_str()) && cids.contains(&ms.as_str()),
        "claims missing from result: {cids:?}"
    );
    ensure!(
        result.claim_verdicts.len() == 2,
        "claim verdicts: {:?}",
        result.claim_verdicts
    );
    ensure!(
        result.conflicts.len() == 1 && result.conflicts[0].values.len() == 2,
        "conflicts: {:?}",
        result.conflicts
    );
    let on_disk = read_json(&out(&u.run, "result.json"));
    for key in ["artifacts", "claims", "claimVerdicts", "conflicts"] {
        ensure!(
            on_disk[key].as_array().is_some_and(|a| !a.is_empty()),
            "result.json has no {key}"
        );
    }
    Ok(())
}

fn decline_carries_critique() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("ms", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    let result = decline(&u.run, Status::InsufficientEvidence).map_err(failed)?;
    ensure!(result.patch.is_none(), "a decline carries a patch");
    let critique = result.critique.ok_or("the decline dropped the critique")?;
    ensure!(
        critique.verdict == anvil_bench::case::validate::Verdict::Fail
            && critique.checks.iter().any(|c| !c.passed),
        "critique {critique:?}"
    );
    ensure!(
        result.validation.is_some(),
        "the decline dropped the validation record"
    );
    ensure!(
        result.artifacts.len() == 2 && result.claims.len() == 1 && result.claim_verdicts.len() == 1,
        "the decline dropped research: {} artifacts, {} claims",
        result.artifacts.len(),
        result.claims.len()
    );
    Ok(())
}

fn critique_is_self() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    let c = read_json(&out(&u.run, "critique.json"));
    ensure!(
        c["review"] == "self",
        "critique.json review is {}",
        c["review"]
    );
    let result = finalize(&u.run, None, None, None).map_err(failed)?;
    let on_disk = read_json(&out(&u.run, "result.json"));
    ensure!(
        on_disk["critique"]["review"] == "self",
        "result.json critique review is {}",
        on_disk["critique"]["review"]
    );
    ensure!(
        result
            .critique
            .is_some_and(|c| c.review == rails::Review::SelfReview),
        "the result's critique is not labelled self"
    );
    Ok(())
}

/// The investigator relabels its own critique `independent` (verdict, checks and hash
/// untouched). A single process must never be reported as independent review.
fn critique_relabelled() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    rails::validate(&u.run, None, false).map_err(failed)?;
    let mut c = read_json(&out(&u.run, "critique.json"));
    c["review"] = json!("independent");
    write_json(&out(&u.run, "critique.json"), &c);
    match finalize(&u.run, None, None, None) {
        Err(_) => Ok(()),
        Ok(result) => Err(format!(
            "finalize accepted a self-critique relabelled by hand; result.json reports review {:?}",
            result.critique.map(|c| c.review)
        )
        .into()),
    }
}
