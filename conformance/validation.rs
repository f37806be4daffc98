//! The skill's deterministic checks on a frozen proposal, and the authoritative
//! validation record (R-VAL-1..8). Where the parser already refuses a document, a second
//! trial runs the check itself on a proposal that bypassed the parser, so each layer is
//! proven on its own.

use std::path::{Path, PathBuf};

use anvil_bench::case::lifecycle::Lifecycle;
use anvil_bench::case::proposal::{DocErrorKind, Proposal, parse_proposal};
use anvil_bench::case::rails;
use anvil_bench::case::validate::{CheckResult, Inputs, ValidationRecord, Verdict, run_checks};
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::support::*;
use crate::{Check, ensure};

const PAYMENT_ID: &str = "op.create_payment.output.body.payment_id";

pub fn checks() -> Vec<Check> {
    vec![
        // R-VAL-1
        Check {
            name: "validation::a_patch_writing_a_field_outside_the_skill_is_refused",
            rules: &["R-VAL-1"],
            run: outside_boundary_refused,
        },
        Check {
            name: "validation::the_boundary_check_fails_a_patch_that_bypassed_the_parser",
            rules: &["R-VAL-1"],
            run: boundary_check_itself,
        },
        // R-VAL-2
        Check {
            name: "validation::structural_keys_are_never_writable",
            rules: &["R-VAL-2"],
            run: structural_refused,
        },
        Check {
            name: "validation::the_structural_check_fails_a_patch_that_bypassed_the_parser",
            rules: &["R-VAL-2"],
            run: structural_check_itself,
        },
        // R-VAL-3
        Check {
            name: "validation::a_patched_value_other_than_the_grounding_claims_fails",
            rules: &["R-VAL-3"],
            run: value_differs_from_claim,
        },
        Check {
            name: "validation::a_supporting_claim_cannot_ground_a_patched_value",
            rules: &["R-VAL-3"],
            run: supporting_claim_does_not_ground,
        },
        // R-VAL-4
        Check {
            name: "validation::a_lone_doc_is_below_the_unit_strength_bar",
            rules: &["R-VAL-4"],
            run: lone_doc,
        },
        Check {
            name: "validation::two_excerpts_of_one_file_count_once",
            rules: &["R-VAL-4"],
            run: one_file_counts_once,
        },
        Check {
            name: "validation::strength_is_the_noisy_or_of_distinct_files",
            rules: &["R-VAL-4"],
            run: noisy_or,
        },
        // R-VAL-5
        Check {
            name: "validation::external_only_grounding_fails_the_unit_verification_bar",
            rules: &["R-VAL-5"],
            run: external_only,
        },
        Check {
            name: "validation::an_unrelated_verified_artifact_does_not_lift_unverified_grounding",
            rules: &["R-VAL-5"],
            run: unrelated_verified,
        },
        // R-VAL-6
        Check {
            name: "validation::an_unresolved_conflict_fails_validation",
            rules: &["R-VAL-6"],
            run: conflict_fails,
        },
        // R-VAL-7
        Check {
            name: "validation::an_empty_description_is_refused",
            rules: &["R-VAL-7"],
            run: empty_description,
        },
        Check {
            name: "validation::a_tautological_description_fails",
            rules: &["R-VAL-7"],
            run: tautological_description,
        },
        Check {
            name: "validation::a_value_outside_the_vocabulary_is_refused",
            rules: &["R-VAL-7"],
            run: out_of_vocabulary_value,
        },
        // R-VAL-8
        Check {
            name: "validation::the_lifecycle_record_holds_the_verdict_checks_and_proposal_hash",
            rules: &["R-VAL-8"],
            run: record_holds_verdict_and_hash,
        },
        Check {
            name: "validation::a_failing_verdict_is_recorded_and_the_cli_exits_1",
            rules: &["R-VAL-8"],
            run: failing_verdict_recorded,
        },
    ]
}

/// Runs the skill's checks on the run's proposal after `edit` (bypassing the parser).
fn checks_on(run: &Path, edit: impl FnOnce(&mut Proposal)) -> Result<Vec<CheckResult>, Failed> {
    let r = anvil_bench::case::Run::load(run).map_err(failed)?;
    let lc = Lifecycle::load(run).map_err(failed)?;
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

fn outside_boundary_refused() -> Result<(), Failed> {
    for (field, value) in [
        (
            "description",
            json!("Seconds to wait before the authorisation is voided."),
        ),
        ("sensitivity", json!("none")),
        ("retryable", json!(false)),
    ] {
        stopped(
            |p| {
                p["patch"]["set"][field] = value.clone();
                p["grounding"][field] = p["grounding"]["unit"].clone();
            },
            &format!("patch.set.{field}"),
            DocErrorKind::Boundary,
            "patch_within_boundary",
        )
        .map_err(|e| failed(format!("{field}: {}", msg(&e))))?;
    }
    Ok(())
}

fn boundary_check_itself() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    let clean = checks_on(&u.run, |_| {})?;
    ensure!(
        check(&clean, "patch_within_boundary")?.passed,
        "the clean proposal is outside the boundary"
    );
    let checks = checks_on(&u.run, |p| {
        p.set
            .insert("description".into(), json!("Seconds to wait."));
        p.grounding
            .insert("description".into(), vec![u.claim.clone()]);
    })?;
    let c = check(&checks, "patch_within_boundary")?;
    ensure!(
        !c.passed && c.detail.contains("description"),
        "patch_within_boundary let `description` through: {}",
        c.detail
    );
    Ok(())
}

fn structural_refused() -> Result<(), Failed> {
    for (key, value) in [
        ("type", json!("number")),
        ("required", json!(true)),
        ("name", json!("capture_timeout_s")),
        ("location", json!("input.query")),
        ("enum", json!(["30", "600"])),
    ] {
        stopped(
            |p| {
                p["patch"]["set"][key] = value.clone();
                p["grounding"][key] = p["grounding"]["unit"].clone();
            },
            &format!("patch.set.{key}"),
            DocErrorKind::StructuralChange,
            "no_structural_change",
        )
        .map_err(|e| failed(format!("{key}: {}", msg(&e))))?;
    }
    Ok(())
}

fn structural_check_itself() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    for key in ["type", "required", "name", "location", "enum"] {
        let checks = checks_on(&u.run, |p| {
            p.set.insert(key.into(), json!("x"));
        })?;
        let c = check(&checks, "no_structural_change")?;
        ensure!(
            !c.passed,
            "no_structural_change let `{key}` through: {}",
            c.detail
        );
    }
    Ok(())
}

fn value_differs_from_claim() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("ms", &[&u.claim]));
    let record = validated(&u.run)?;
    fails_on(&record, "evidence_supports_value")
}

fn supporting_claim_does_not_ground() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    let t = ev(&run, "tests/test_capture.py", 6, 8)?;
    let support = claim(&run, "field.conversion", json!("s"), &[&a, &t])?;
    freeze(&run)?;
    write_proposal(&run, &unit_proposal("s", &[&support]));
    let record = validated(&run)?;
    fails_on(&record, "evidence_supports_value")
}

/// A frozen unit run whose only `field.unit = "s"` claim cites `coords`; proposal written.
fn unit_grounded_by(w: &World, coords: &[(&str, u32, u32)]) -> Result<PathBuf, Failed> {
    let run = w.open_unit()?.run_dir;
    let mut ids = Vec::new();
    for (p, s, e) in coords {
        ids.push(ev(&run, p, *s, *e)?);
    }
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let c = claim(&run, "field.unit", json!("s"), &refs)?;
    freeze(&run)?;
    write_proposal(&run, &unit_proposal("s", &[&c]));
    Ok(run)
}

fn strength_of(run: &Path) -> Option<f64> {
    lifecycle_json(run)["records"]["research"]["values"]
        .as_array()?
        .iter()
        .find(|v| v["predicate"] == "field.unit" && v["value"] == "s")?["strength"]
        .as_f64()
}

fn lone_doc() -> Result<(), Failed> {
    let w = World::new();
    let run = unit_grounded_by(&w, &[("docs/payments.md", 3, 4)])?;
    ensure!(
        strength_of(&run) == Some(0.6),
        "a lone doc has strength {:?}",
        strength_of(&run)
    );
    let record = validated(&run)?;
    fails_on(&record, "evidence_meets_minimum_strength")
}

fn one_file_counts_once() -> Result<(), Failed> {
    let w = World::new();
    let run = unit_grounded_by(
        &w,
        &[("docs/payments.md", 3, 4), ("docs/payments.md", 8, 9)],
    )?;
    ensure!(
        strength_of(&run) == Some(0.6),
        "two excerpts of one doc have strength {:?}, not 0.6",
        strength_of(&run)
    );
    let record = validated(&run)?;
    fails_on(&record, "evidence_meets_minimum_strength")
}

fn noisy_or() -> Result<(), Failed> {
    // implementation 0.9 + contract_test 0.85 → 1 − 0.1 × 0.15 = 0.985: passes.
    let w = World::new();
    let run = unit_grounded_by(
        &w,
        &[
            ("src/payments/service.py", 32, 39),
            ("tests/test_capture.py", 6, 8),
        ],
    )?;
    ensure!(
        strength_of(&run).is_some_and(|s| (s - 0.985).abs() < 1e-9),
        "implementation + contract_test has strength {:?}, not 0.985",
        strength_of(&run)
    );
    let record = validated(&run)?;
    ensure!(
        check(&record.checks, "evidence_meets_minimum_strength")?.passed,
        "0.985 did not meet 0.8"
    );
    // doc 0.6 + comment 0.4 → 1 − 0.4 × 0.6 = 0.76: fails.
    let w = World::new();
    let run = unit_grounded_by(
        &w,
        &[
            ("docs/payments.md", 3, 4),
            ("src/payments/service.py", 35, 35),
        ],
    )?;
    ensure!(
        strength_of(&run).is_some_and(|s| (s - 0.76).abs() < 1e-9),
        "doc + comment has strength {:?}, not 0.76",
        strength_of(&run)
    );
    let record = validated(&run)?;
    fails_on(&record, "evidence_meets_minimum_strength")
}

/// Five distinct external pages (1 − 0.7⁵ ≈ 0.83 ≥ 0.8) ground `s`: the strength bar is met
/// but annotate-unit requires verified grounding for `unit`.
fn external_only() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let ids = externals(&run, 5)?;
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let c = claim(&run, "field.unit", json!("s"), &refs)?;
    freeze(&run)?;
    write_proposal(&run, &unit_proposal("s", &[&c]));
    let record = validated(&run)?;
    ensure!(
        check(&record.checks, "evidence_meets_minimum_strength")?.passed,
        "test setup: five externals should meet the strength bar"
    );
    fails_on(&record, "evidence_meets_verification")
}

fn unrelated_verified() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let ids = externals(&run, 5)?;
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let grounding = claim(&run, "field.unit", json!("s"), &refs)?;
    // Verified artifacts elsewhere in the case: a supporting claim, and even an accepted
    // `field.unit = "s"` claim the proposal does not cite.
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    let t = ev(&run, "tests/test_capture.py", 6, 8)?;
    claim(
        &run,
        "field.conversion",
        json!("timedelta(seconds=...)"),
        &[&a],
    )?;
    claim(&run, "field.unit", json!("s"), &[&a, &t])?;
    freeze(&run)?;
    write_proposal(&run, &unit_proposal("s", &[&grounding]));
    let record = validated(&run)?;
    fails_on(&record, "evidence_meets_verification")
}

fn conflict_fails() -> Result<(), Failed> {
    let w = World::new();
    let u = unit_research(&w)?;
    let d = ev(&u.run, "docs/payments.md", 3, 4)?;
    claim(&u.run, "field.unit", json!("ms"), &[&d])?;
    let research = freeze(&u.run)?;
    ensure!(
        research.conflict_on("field.unit").is_some(),
        "test setup: no conflict recorded"
    );
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    let record = validated(&u.run)?;
    ensure!(
        check(&record.checks, "evidence_supports_value")?.passed
            && check(&record.checks, "evidence_meets_minimum_strength")?.passed,
        "test setup: the grounding itself should be sound"
    );
    fails_on(&record, "no_unresolved_conflict")?;
    let e = anvil_bench::case::finalize::finalize(&u.run, None, None, None);
    ensure!(e.is_err(), "a conflicted proposal finalized as generated");
    Ok(())
}

/// describe-field on `payment_id` (its description only restates the name), research
/// frozen with `field.description = description` grounded in implementation and doc.
fn describe_run(w: &World, description: &str) -> Result<(PathBuf, String), Failed> {
    let run = anvil_bench::case::open(&w.request("describe-field", PAYMENT_ID))
        .map_err(failed)?
        .run_dir;
    let a = ev(&run, "src/payments/service.py", 42, 54)?;
    let d = ev(&run, "docs/payments.md", 6, 6)?;
    let c = claim(&run, "field.description", json!(description), &[&a, &d])?;
    freeze(&run)?;
    Ok((run, c))
}

fn describe_proposal(description: &str, claim: &str) -> Value {
    json!({
        "format": "anvil-proposal", "formatVersion": 1,
        "skill": "describe-field", "skillVersion": 1,
        "deficiency": "tautological_description",
        "target": PAYMENT_ID,
        "patch": {"target": PAYMENT_ID, "set": {"description": description}},
        "grounding": {"description": [claim]},
        "confidence": 0.8, "rationale": "create_payment returns the authorisation id"
    })
}

const GOOD_DESCRIPTION: &str =
    "Identifier of the new payment; pass it to GET /payments/{payment_id} to fetch it.";

fn empty_description() -> Result<(), Failed> {
    let w = World::new();
    let (run, c) = describe_run(&w, GOOD_DESCRIPTION)?;
    write_proposal(&run, &describe_proposal(GOOD_DESCRIPTION, &c));
    let clean = checks_on(&run, |_| {})?;
    ensure!(
        clean.iter().all(|c| c.passed),
        "test setup: the good description fails: {clean:?}"
    );
    for empty in ["", "   ", "\n\t"] {
        let w = World::new();
        let (run, c) = describe_run(&w, GOOD_DESCRIPTION)?;
        write_proposal(&run, &describe_proposal(empty, &c));
        stopped_run(
            &run,
            "patch.set.description",
            DocErrorKind::Value,
            "description_nonempty",
        )
        .map_err(|e| failed(format!("description {empty:?}: {}", msg(&e))))?;
    }
    // The check itself, on a proposal that bypassed the parser.
    write_proposal(&run, &describe_proposal(GOOD_DESCRIPTION, &c));
    let checks = checks_on(&run, |p| {
        p.set.insert("description".into(), json!("  "));
    })?;
    let nonempty = check(&checks, "description_nonempty")?;
    ensure!(!nonempty.passed, "description_nonempty passed \"  \"");
    Ok(())
}

fn tautological_description() -> Result<(), Failed> {
    for t in ["The payment id.", "Payment ID", "the id of the payment"] {
        let w = World::new();
        let (run, c) = describe_run(&w, t)?;
        write_proposal(&run, &describe_proposal(t, &c));
        let record = validated(&run)?;
        fails_on(&record, "description_not_tautological")
            .map_err(|e| failed(format!("{t:?}: {}", msg(&e))))?;
    }
    // The control: a description that says more passes every check.
    let w = World::new();
    let (run, c) = describe_run(&w, GOOD_DESCRIPTION)?;
    write_proposal(&run, &describe_proposal(GOOD_DESCRIPTION, &c));
    let record = validated(&run)?;
    ensure!(
        record.verdict == Verdict::Pass,
        "a good description failed: {:?}",
        record.checks
    );
    Ok(())
}

fn out_of_vocabulary_value() -> Result<(), Failed> {
    for v in ["fortnight", "seconds", "S", "sec"] {
        stopped(
            |p| p["patch"]["set"]["unit"] = json!(v),
            "patch.set.unit",
            DocErrorKind::Value,
            "value_in_vocabulary",
        )
        .map_err(|e| failed(format!("unit {v:?}: {}", msg(&e))))?;
    }
    // The claim rail refuses it too.
    let w = World::new();
    let u = unit_research(&w)?;
    rejected_doc(
        rails::add_claim(
            &u.run,
            claim_input("field.unit", json!("fortnight"), &[&u.implementation]),
            None,
        ),
        "value",
        DocErrorKind::Value,
    )?;
    // And the check itself, on a proposal that bypassed the parser.
    freeze(&u.run)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    let checks = checks_on(&u.run, |p| {
        p.set.insert("unit".into(), json!("fortnight"));
    })?;
    ensure!(
        !check(&checks, "value_in_vocabulary")?.passed,
        "value_in_vocabulary passed `fortnight`"
    );
    Ok(())
}

fn record_holds_verdict_and_hash() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    let bytes = std::fs::read(out(&u.run, "proposal.json")).unwrap();
    let hash = anvil_bench::canon::bytes_hash(&bytes);
    let record = validated(&u.run)?;
    ensure!(record.verdict == Verdict::Pass, "{:?}", record.checks);
    let lc = lifecycle_json(&u.run);
    let v = &lc["records"]["proposalValidation"];
    ensure!(v["verdict"] == "pass", "recorded verdict {}", v["verdict"]);
    ensure!(
        v["proposalHash"] == hash,
        "recorded proposal hash {} is not {hash}",
        v["proposalHash"]
    );
    ensure!(
        lc["frozen"]["output/proposal.json"] == hash,
        "proposal.json is not frozen at its hash"
    );
    ensure!(lc["state"] == "proposal_frozen", "state {}", lc["state"]);
    let case = read_json(&u.run.join("case.json"));
    let contract_checks: Vec<Value> = case["policy"]["contract"]["checks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let recorded: Vec<Value> = v["checks"]
        .as_array()
        .map(|a| a.iter().map(|c| c["id"].clone()).collect())
        .unwrap_or_default();
    ensure!(
        !recorded.is_empty() && recorded == contract_checks,
        "recorded checks {recorded:?} are not the contract's {contract_checks:?}"
    );
    ensure!(
        v["checks"].as_array().is_some_and(|a| a
            .iter()
            .all(|c| c["passed"] == true && c["detail"].is_string())),
        "checks lack outcome or detail"
    );
    Ok(())
}

fn failing_verdict_recorded() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("ms", &[&u.claim]));
    let hash =
        anvil_bench::canon::bytes_hash(&std::fs::read(out(&u.run, "proposal.json")).unwrap());
    let o = rail_cli(&w, "validate", &u.run, &[]);
    ensure!(
        o.status.code() == Some(1),
        "a failing verdict exited {:?}",
        o.status.code()
    );
    ensure!(
        stdout(&o).contains("evidence_supports_value"),
        "the failing check is not shown: {}",
        stdout(&o)
    );
    let v = &lifecycle_json(&u.run)["records"]["proposalValidation"];
    ensure!(
        v["verdict"] == "fail" && v["proposalHash"] == hash,
        "the failing verdict is not recorded with the proposal hash: {v}"
    );
    Ok(())
}
