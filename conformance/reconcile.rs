//! Close and reconcile: re-verification, re-binding, eval delta, tiers, apply with
//! provenance (R-REC-*, R-EV-10, R-BIND-6), and the scripted driver (R-DRV-5).

mod open_target;
mod records;
mod routing;
mod values;

use std::path::{Path, PathBuf};

use crate::support::rails::close;
use anvil_bench::air::{Air, DeficiencyCode, TargetKey};
use anvil_bench::case::finalize::Status;
use anvil_bench::case::{CaseError, open};
use anvil_bench::driver::scripted::{Agent, ScriptedAgentDriver};
use anvil_bench::reconcile::delta::{apply_patch, measure};
use anvil_bench::reconcile::{CloseDoc, CloseRequest, Tier};
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::support::{EMAIL_TARGET, UNIT_TARGET, World, read_json};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    let mut all = vec![
        Check {
            name: "reconcile::close_reverifies_evidence_and_fails_on_a_changed_source",
            rules: &["R-REC-1", "R-EV-10"],
            run: changed_source,
        },
        Check {
            name: "reconcile::close_fails_when_a_cited_directory_becomes_a_link_to_an_identical_copy",
            rules: &["R-REC-1", "R-EV-10"],
            run: cited_directory_linked_to_a_copy,
        },
        Check {
            name: "reconcile::close_reruns_validation_and_rejects_a_forged_pass",
            rules: &["R-REC-1", "R-REC-3"],
            run: forged_pass,
        },
        Check {
            name: "reconcile::close_rebinds_a_proposal_forged_together_with_the_engine_records",
            rules: &["R-BIND-6"],
            run: forged_binding,
        },
        Check {
            name: "reconcile::eval_delta_shows_the_target_closed_and_nothing_new",
            rules: &["R-REC-2"],
            run: eval_delta,
        },
        Check {
            name: "reconcile::a_patch_that_opens_a_deficiency_is_not_acceptable",
            rules: &["R-REC-2"],
            run: eval_delta_new,
        },
        Check {
            name: "reconcile::unverified_only_grounding_routes_to_review",
            rules: &["R-REC-4"],
            run: unverified_review,
        },
        Check {
            name: "reconcile::a_safety_sensitive_skill_routes_to_review",
            rules: &["R-REC-5"],
            run: safety_review,
        },
        Check {
            name: "reconcile::overwriting_an_existing_value_routes_to_review",
            rules: &["R-REC-6"],
            run: overwrite_review,
        },
        Check {
            name: "reconcile::conflicted_and_ungroundable_safety_escalate_to_a_human",
            rules: &["R-REC-7"],
            run: escalations,
        },
        Check {
            name: "reconcile::apply_writes_auto_with_provenance_and_review_only_when_approved",
            rules: &["R-REC-8"],
            run: apply_rules,
        },
        Check {
            name: "driver::a_scripted_in_process_driver_runs_a_whole_case_without_an_llm",
            rules: &["R-DRV-5"],
            run: scripted_driver,
        },
    ];
    all.extend(open_target::checks());
    all.extend(records::checks());
    all.extend(routing::checks());
    all.extend(values::checks());
    all
}

fn f(e: CaseError) -> Failed {
    Failed::from(e.to_string())
}

/// Opens `skill` on `target` in `w` and runs a scripted investigation citing `evidence`
/// for `value`; finalizes as `proposal_generated`.
fn investigate(
    w: &World,
    skill: &str,
    target: &str,
    evidence: &[(&str, u32, u32)],
    value: Value,
) -> Result<PathBuf, Failed> {
    let mut req = w.request(skill, target);
    req.deficiency = None;
    let opened = open(&req).map_err(f)?;
    let predicate = predicate_of(skill);
    let ev: Vec<(String, u32, u32)> = evidence
        .iter()
        .map(|(p, a, b)| (p.to_string(), *a, *b))
        .collect();
    ScriptedAgentDriver::new("trial", move |agent: &Agent| {
        let ids = ev
            .iter()
            .map(|(p, a, b)| agent.add_evidence(p, Some((*a, *b))))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let claim = agent.add_claim(predicate, value.clone(), &refs, 0.9)?;
        agent.freeze_research()?;
        agent.propose(value.clone(), &[&claim], "trial")?;
        agent.validate()?;
        agent.finalize(None, None)?;
        Ok(())
    })
    .run(
        &anvil_bench::case::RunHandle::open(&opened.run_dir)
            .map_err(|e| Failed::from(e.to_string()))?,
    )
    .map_err(f)?;
    Ok(opened.run_dir)
}

fn predicate_of(skill: &str) -> &'static str {
    match skill {
        "annotate-unit" => "field.unit",
        "enrich-error" => "error.retryable",
        "classify-sensitivity" => "field.sensitivity",
        "describe-operation" => "operation.description",
        _ => "field.description",
    }
}

fn unit_run(w: &World) -> Result<PathBuf, Failed> {
    investigate(
        w,
        "annotate-unit",
        UNIT_TARGET,
        &[("src/payments/service.py", 32, 39)],
        json!("s"),
    )
}

fn close_plain(run: &Path) -> Result<CloseDoc, Failed> {
    close(run, &CloseRequest::default(), None).map_err(f)
}

fn changed_source() -> Result<(), Failed> {
    let w = World::new();
    let run = unit_run(&w)?;
    let path = w.repo().join("src/payments/service.py");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "timedelta(seconds=request.capture_timeout)",
        "timedelta(milliseconds=request.capture_timeout)",
    );
    std::fs::write(&path, text).unwrap();
    match close(&run, &CloseRequest::default(), None) {
        Ok(_) => Err("close accepted evidence whose source changed".into()),
        Err(e) => {
            ensure!(
                e.kind() == "source_changed",
                "unexpected refusal {}: {e}",
                e.kind()
            );
            ensure!(
                e.to_string().contains("service.py"),
                "the refusal does not name the source: {e}"
            );
            ensure!(
                !run.join("close.json").exists(),
                "a refused close wrote close.json"
            );
            Ok(())
        }
    }
}

/// The cited file's directory, after the case opened, becomes a link to a copy that was
/// there at open with the same bytes under a path of the same length: the excerpt still
/// hashes the same, but it is another file, and close refuses it as a changed source.
fn cited_directory_linked_to_a_copy() -> Result<(), Failed> {
    let w = World::new();
    let repo = w.repo();
    crate::support::copy_tree(&repo.join("src/payments"), &repo.join("src/paymentz"));
    let run = unit_run(&w)?;
    std::fs::remove_dir_all(repo.join("src/payments")).unwrap();
    std::os::unix::fs::symlink("paymentz", repo.join("src/payments")).unwrap();
    let e = match close(&run, &CloseRequest::default(), None) {
        Ok(_) => return Err("close accepted an excerpt now read through a link to a copy".into()),
        Err(e) => e,
    };
    ensure!(
        e.kind() == "source_changed" && e.to_string().contains("src/paymentz/service.py"),
        "unexpected refusal {}: {e}",
        e.kind()
    );
    ensure!(
        !run.join("close.json").exists(),
        "a refused close wrote close.json"
    );
    Ok(())
}

/// Rewrites lifecycle.json's validation record and critique.json to say `pass`.
fn forge_pass(run: &Path) {
    let lc_path = run.join("lifecycle.json");
    let mut lc = read_json(&lc_path);
    lc["records"]["proposalValidation"]["verdict"] = json!("pass");
    for c in lc["records"]["proposalValidation"]["checks"]
        .as_array_mut()
        .unwrap()
    {
        c["passed"] = json!(true);
    }
    std::fs::write(&lc_path, serde_json::to_vec_pretty(&lc).unwrap()).unwrap();
    let cr_path = run.join("output/critique.json");
    let mut cr = read_json(&cr_path);
    cr["verdict"] = json!("pass");
    cr["checks"] = lc["records"]["proposalValidation"]["checks"].clone();
    std::fs::write(&cr_path, serde_json::to_vec_pretty(&cr).unwrap()).unwrap();
}

fn forged_pass() -> Result<(), Failed> {
    let w = World::new();
    // A lone doc (0.6) cannot ground a unit (bar 0.8): validation fails.
    let opened = open(&w.request("annotate-unit", UNIT_TARGET)).map_err(f)?;
    ScriptedAgentDriver::new("weak", |agent: &Agent| {
        let ev = agent.add_evidence("docs/payments.md", Some((3, 4)))?;
        let claim = agent.add_claim("field.unit", json!("s"), &[&ev], 0.5)?;
        agent.freeze_research()?;
        agent.propose(json!("s"), &[&claim], "weak")?;
        let record = agent.validate()?;
        assert_eq!(record.verdict, anvil_bench::case::validate::Verdict::Fail);
        Ok(())
    })
    .run(
        &anvil_bench::case::RunHandle::open(&opened.run_dir)
            .map_err(|e| Failed::from(e.to_string()))?,
    )
    .map_err(f)?;
    forge_pass(&opened.run_dir);
    // Forged by hand, the lifecycle no longer matches the journal's seal.
    let naive = crate::support::rails::finalize(&opened.run_dir, None, None, None);
    ensure!(
        matches!(&naive, Err(e) if e.kind() == "tamper" && e.to_string().contains("lifecycle.json")),
        "finalize accepted a hand-forged pass: {naive:?}"
    );
    // Re-sealed as a forger who knows the format would, the verdict is still re-derived.
    crate::support::reseal(&opened.run_dir);
    let sealed = crate::support::rails::finalize(&opened.run_dir, None, None, None);
    ensure!(
        matches!(&sealed, Err(e) if e.kind() == "tamper" && e.to_string().contains("records.proposalValidation")),
        "finalize trusted a re-sealed forged pass: {sealed:?}"
    );
    let apply = close(
        &opened.run_dir,
        &CloseRequest {
            apply: Some(w.root().join("out.json")),
            approved_by: Some("x".into()),
        },
        None,
    );
    ensure!(
        apply.is_err() && !w.root().join("out.json").exists(),
        "a rejected result was applied"
    );
    Ok(())
}

fn forged_binding() -> Result<(), Failed> {
    let w = World::new();
    let run = unit_run(&w)?;
    // Forge everything the engine froze: the proposal now patches another field, and the
    // lifecycle hashes and records are rewritten to match.
    let prop_path = run.join("output/proposal.json");
    let mut prop = read_json(&prop_path);
    prop["target"] = json!("op.create_payment.input.body.amount");
    prop["patch"]["target"] = json!("op.create_payment.input.body.amount");
    let bytes = serde_json::to_vec_pretty(&prop).unwrap();
    std::fs::write(&prop_path, &bytes).unwrap();
    let hash = anvil_bench::canon::bytes_hash(&bytes);
    let lc_path = run.join("lifecycle.json");
    let mut lc = read_json(&lc_path);
    lc["frozen"]["output/proposal.json"] = json!(hash);
    lc["records"]["proposalValidation"]["proposalHash"] = json!(hash);
    std::fs::write(&lc_path, serde_json::to_vec_pretty(&lc).unwrap()).unwrap();
    let cr_path = run.join("output/critique.json");
    let mut cr = read_json(&cr_path);
    cr["proposalHash"] = json!(hash);
    std::fs::write(&cr_path, serde_json::to_vec_pretty(&cr).unwrap()).unwrap();
    // Re-sealed, so the seal is not what refuses it: close re-binds the target itself.
    crate::support::reseal(&run);
    match close(&run, &CloseRequest::default(), None) {
        Ok(doc) => Err(format!("close accepted a rebound proposal: tier {:?}", doc.tier).into()),
        Err(e) => {
            ensure!(
                e.to_string().contains("target")
                    && e.to_string()
                        .contains("op.create_payment.input.body.amount"),
                "unexpected refusal: {e}"
            );
            Ok(())
        }
    }
}

fn eval_delta() -> Result<(), Failed> {
    let w = World::new();
    let run = unit_run(&w)?;
    let doc = close_plain(&run)?;
    let delta = doc.eval_delta.ok_or("no eval delta")?;
    ensure!(
        delta.target_closed && delta.new_deficiencies.is_empty(),
        "delta: {delta:?}"
    );
    let unit = delta.families.get("unit").ok_or("no unit family")?;
    ensure!(
        unit.after + 1 == unit.before,
        "unit family did not improve by one: {unit:?}"
    );
    // The patch touched only the unit: every other family's open deficiencies still count.
    let others: Vec<_> = delta
        .families
        .iter()
        .filter(|(n, _)| *n != "unit")
        .collect();
    ensure!(
        others.iter().any(|(_, s)| s.before > 0) && others.iter().all(|(_, s)| s.after == s.before),
        "families the patch did not touch changed: {:?}",
        delta.families
    );
    ensure!(
        doc.tier == Some(Tier::Auto),
        "a clean unit proposal closed as {:?}",
        doc.tier
    );
    Ok(())
}

fn eval_delta_new() -> Result<(), Failed> {
    let w = World::new();
    w.edit_air(|v| v["operations"][0]["fields"][1]["description"] = Value::Null);
    let air = Air::load(&w.air()).unwrap();
    let target: TargetKey = "op.create_payment.input.body.currency".parse().unwrap();
    let mut patched = air.clone();
    // A description that only restates the name closes "missing" but opens "tautological".
    let set = json!({"description": "The currency."})
        .as_object()
        .unwrap()
        .clone();
    apply_patch(&mut patched, &target, &set, &[]).map_err(Failed::from)?;
    let delta = measure(
        &air,
        &patched,
        &target,
        DeficiencyCode::MissingFieldDescription,
    );
    ensure!(delta.target_closed, "missing description should be closed");
    ensure!(
        delta
            .new_deficiencies
            .iter()
            .any(|d| d.contains("tautological_description"))
            && !delta.acceptable(),
        "the new tautology was not reported: {delta:?}"
    );
    Ok(())
}

fn unverified_review() -> Result<(), Failed> {
    let w = World::new();
    let opened = open(&w.request("describe-operation", "op.get_payment")).map_err(f)?;
    let value = json!("Returns one payment by its identifier.");
    ScriptedAgentDriver::new("external", |agent: &Agent| {
        let mut ids = Vec::new();
        for i in 0..3 {
            ids.push(agent.add_external(
                "vendor-wiki",
                &format!("https://wiki.example.invalid/p/{i}"),
                "GET /payments/{id} returns one payment",
            )?);
        }
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let claim = agent.add_claim("operation.description", value.clone(), &refs, 0.6)?;
        agent.freeze_research()?;
        agent.propose(value.clone(), &[&claim], "three external pages")?;
        agent.validate()?;
        agent.finalize(None, None)?;
        Ok(())
    })
    .run(
        &anvil_bench::case::RunHandle::open(&opened.run_dir)
            .map_err(|e| Failed::from(e.to_string()))?,
    )
    .map_err(f)?;
    let doc = close_plain(&opened.run_dir)?;
    routed_to_review(&doc, "unverified-only grounding", "unverified")
}

fn safety_review() -> Result<(), Failed> {
    let w = World::new();
    let run = investigate(
        &w,
        "classify-sensitivity",
        EMAIL_TARGET,
        &[("src/payments/receipts.py", 13, 15)],
        json!("pii"),
    )?;
    let doc = close_plain(&run)?;
    routed_to_review(&doc, "sensitivity", "safety")
}

fn overwrite_review() -> Result<(), Failed> {
    let w = World::new();
    w.edit_air(|v| {
        v["operations"][0]["fields"][2]["unit"] = json!("ms");
        v["operations"][0]["fields"][2]["inferred"] = json!(["unit"]);
    });
    let run = investigate(
        &w,
        "annotate-unit",
        UNIT_TARGET,
        &[("src/payments/service.py", 32, 39)],
        json!("s"),
    )?;
    let doc = close_plain(&run)?;
    routed_to_review(&doc, "overwrite", "overwrites")
}

fn escalations() -> Result<(), Failed> {
    let w = World::new();
    let opened = open(&w.request("annotate-unit", UNIT_TARGET)).map_err(f)?;
    ScriptedAgentDriver::new("conflict", |agent: &Agent| {
        let a = agent.add_evidence("src/payments/service.py", Some((32, 39)))?;
        let b = agent.add_evidence("tests/test_capture.py", Some((6, 8)))?;
        agent.add_claim("field.unit", json!("s"), &[&a], 0.9)?;
        agent.add_claim("field.unit", json!("ms"), &[&b], 0.4)?;
        agent.freeze_research()?;
        agent.finalize(
            Some(Status::Conflicted),
            Some("service says s, a reading of the test says ms"),
        )?;
        Ok(())
    })
    .run(
        &anvil_bench::case::RunHandle::open(&opened.run_dir)
            .map_err(|e| Failed::from(e.to_string()))?,
    )
    .map_err(f)?;
    let doc = close_plain(&opened.run_dir)?;
    ensure!(
        doc.tier.is_none() && doc.escalate.is_some(),
        "conflicted did not escalate: {doc:?}"
    );

    let opened = open(&w.request("classify-sensitivity", EMAIL_TARGET)).map_err(f)?;
    crate::support::rails::finalize(
        &opened.run_dir,
        Some(Status::InsufficientEvidence),
        None,
        None,
    )
    .map_err(f)?;
    let doc = close_plain(&opened.run_dir)?;
    ensure!(
        doc.escalate.is_some(),
        "an ungroundable sensitivity did not escalate"
    );

    let opened = open(&w.request("describe-operation", "op.get_payment")).map_err(f)?;
    crate::support::rails::finalize(
        &opened.run_dir,
        Some(Status::InsufficientEvidence),
        None,
        None,
    )
    .map_err(f)?;
    let doc = close_plain(&opened.run_dir)?;
    ensure!(doc.escalate.is_none(), "a non-safety decline escalated");
    Ok(())
}

fn apply_rules() -> Result<(), Failed> {
    let w = World::new();
    let run = unit_run(&w)?;
    let out = w.root().join("patched.json");
    let doc = close(
        &run,
        &CloseRequest {
            apply: Some(out.clone()),
            approved_by: None,
        },
        None,
    )
    .map_err(f)?;
    ensure!(
        doc.tier == Some(Tier::Auto) && doc.applied.is_some(),
        "auto was not applied"
    );
    let patched = Air::load(&out).map_err(|e| Failed::from(e.to_string()))?;
    let field = &patched.operations[0].fields[2];
    ensure!(
        field.unit.as_deref() == Some("s"),
        "unit not written: {field:?}"
    );
    let prov = patched.provenance.last().ok_or("no provenance")?;
    let case = read_json(&run.join("case.json"));
    ensure!(
        prov.case_key == case["identity"]["caseKey"] && prov.run_id == case["identity"]["runId"],
        "provenance does not name the run"
    );
    let evidence = read_json(&run.join("output/evidence.json"));
    let ev_ids: Vec<String> = evidence["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect();
    ensure!(
        !prov.artifact_ids.is_empty() && prov.artifact_ids.iter().all(|a| ev_ids.contains(a)),
        "provenance artifact ids {:?}",
        prov.artifact_ids
    );
    ensure!(
        prov.tier == "auto" && prov.approved_by.is_none(),
        "provenance tier {}, approved by {:?}",
        prov.tier,
        prov.approved_by
    );
    // An auto value needs no approval: a name given anyway is not recorded as its approver.
    let w3 = World::new();
    let run = unit_run(&w3)?;
    let out = w3.root().join("patched.json");
    close(
        &run,
        &CloseRequest {
            apply: Some(out.clone()),
            approved_by: Some("bystander".into()),
        },
        None,
    )
    .map_err(f)?;
    let patched = Air::load(&out).map_err(|e| Failed::from(e.to_string()))?;
    let prov = patched.provenance.last().ok_or("no provenance")?;
    ensure!(
        prov.tier == "auto" && prov.approved_by.is_none(),
        "an auto value's provenance names an approver: {prov:?}"
    );

    // Review without approval: refused, nothing written; with approval: applied.
    let w2 = World::new();
    let run = investigate(
        &w2,
        "classify-sensitivity",
        EMAIL_TARGET,
        &[("src/payments/receipts.py", 13, 15)],
        json!("pii"),
    )?;
    let out = w2.root().join("patched.json");
    let refused = close(
        &run,
        &CloseRequest {
            apply: Some(out.clone()),
            approved_by: None,
        },
        None,
    );
    ensure!(
        matches!(&refused, Err(e) if e.kind() == "needs_approval"),
        "review applied without approval: {:?}",
        refused.map(|d| d.tier)
    );
    ensure!(!out.exists(), "a refused apply wrote the AIR");
    let doc = close(
        &run,
        &CloseRequest {
            apply: Some(out.clone()),
            approved_by: Some("maintainer".into()),
        },
        None,
    )
    .map_err(f)?;
    ensure!(doc.applied.is_some(), "approved review not applied");
    let patched = Air::load(&out).map_err(|e| Failed::from(e.to_string()))?;
    let prov = patched.provenance.last().ok_or("no provenance")?;
    ensure!(
        prov.approved_by.as_deref() == Some("maintainer") && prov.tier == "review",
        "provenance: {prov:?}"
    );
    Ok(())
}

fn scripted_driver() -> Result<(), Failed> {
    let w = World::new();
    let run = unit_run(&w)?;
    let result = read_json(&run.join("output/result.json"));
    ensure!(
        result["status"] == "proposal_generated",
        "status {}",
        result["status"]
    );
    let exec = read_json(&run.join("execution.json"));
    ensure!(
        exec["driver"] == "scripted:trial" && exec["error"].is_null(),
        "execution: {exec}"
    );
    // A script error is recorded, not swallowed.
    let opened = open(&w.request("annotate-unit", UNIT_TARGET)).map_err(f)?;
    let err = ScriptedAgentDriver::new("failing", |agent: &Agent| {
        agent.add_evidence("/etc/passwd", None).map(|_| ())
    })
    .run(&anvil_bench::case::RunHandle::open(&opened.run_dir).map_err(f)?);
    ensure!(err.is_err(), "a failing script reported success");
    let exec = read_json(&opened.run_dir.join("execution.json"));
    ensure!(
        exec["error"]
            .as_str()
            .is_some_and(|e| e.contains("/etc/passwd")),
        "execution error: {exec}"
    );
    Ok(())
}

/// `doc` reconciled to review, with a reason mentioning `reason`.
fn routed_to_review(doc: &CloseDoc, what: &str, reason: &str) -> Result<(), Failed> {
    ensure!(
        doc.tier == Some(Tier::Review),
        "{what} closed as {:?} ({:?})",
        doc.tier,
        doc.reasons
    );
    ensure!(
        doc.reasons.iter().any(|r| r.contains(reason)),
        "reasons: {:?}",
        doc.reasons
    );
    Ok(())
}
