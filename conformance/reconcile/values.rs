//! Routing that depends on the value and on the status: a safety-sensitive value reaches
//! review whether it was proposed or proven `supported` (R-REC-5), an overwrite of a
//! boolean is an overwrite (R-REC-6), and close re-verifies the evidence of every result,
//! not only of a proposal (R-EV-10).

use std::path::{Path, PathBuf};

use anvil_bench::case::finalize::Status;
use anvil_bench::reconcile::{CloseRequest, Tier};
use libtest_mimic::Failed;
use serde_json::json;

use super::{close_plain, investigate, routed_to_review};
use crate::support::rails::{close, finalize};
use crate::support::{
    EMAIL_TARGET, World, claim, ev, failed, freeze, open_inferred_unit, unit_research_in,
};
use crate::{Check, ensure};

const CARD_DECLINED: &str = "op.create_payment.error.CARD_DECLINED";
const RATE_LIMITED: &str = "op.create_payment.error.RATE_LIMITED";

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "reconcile::a_retryable_error_routes_to_review_as_safety_sensitive_and_a_non_retryable_one_does_not",
            rules: &["R-REC-5"],
            run: safety_by_value,
        },
        Check {
            name: "reconcile::a_supported_safety_sensitive_value_routes_to_review_as_safety_sensitive",
            rules: &["R-REC-5"],
            run: supported_safety,
        },
        Check {
            name: "reconcile::overwriting_an_existing_boolean_routes_to_review",
            rules: &["R-REC-6"],
            run: overwrite_boolean,
        },
        Check {
            name: "reconcile::close_reverifies_the_evidence_of_a_supported_result_and_of_a_decline",
            rules: &["R-EV-10", "R-REC-1"],
            run: changed_source_without_proposal,
        },
        Check {
            name: "reconcile::close_reverifies_evidence_that_no_claim_cites",
            rules: &["R-EV-10", "R-REC-1"],
            run: changed_uncited_source,
        },
    ]
}

/// enrich-error is safety-sensitive only when `retryable` is true: RATE_LIMITED proposed
/// as retryable goes to review *because it is safety-sensitive*, while CARD_DECLINED
/// proposed as not retryable carries no safety reason.
fn safety_by_value() -> Result<(), Failed> {
    let w = World::new();
    let run = investigate(
        &w,
        "enrich-error",
        RATE_LIMITED,
        &[
            ("src/payments/service.py", 19, 21),
            ("src/payments/service.py", 48, 50),
        ],
        json!(true),
    )?;
    let doc = close_plain(&run)?;
    routed_to_review(&doc, "retryable true", "safety")?;

    let w = World::new();
    let run = investigate(
        &w,
        "enrich-error",
        CARD_DECLINED,
        &[
            ("src/payments/service.py", 14, 16),
            ("src/payments/service.py", 45, 47),
        ],
        json!(false),
    )?;
    let doc = close_plain(&run)?;
    ensure!(
        !doc.reasons.iter().any(|r| r.contains("safety")),
        "retryable false was called safety-sensitive: {:?}",
        doc.reasons
    );
    Ok(())
}

/// classify-sensitivity is always safety-sensitive: proving an inferred `pii` as
/// `supported` must reach review with that reason, as a proposal of it does.
fn supported_safety() -> Result<(), Failed> {
    let w = World::new();
    w.edit_air(|air| {
        let field = &mut air["operations"][0]["fields"][3];
        assert_eq!(field["name"], "customer_email");
        field["sensitivity"] = json!("pii");
        field["inferred"] = json!(["sensitivity"]);
    });
    let mut req = w.request("classify-sensitivity", EMAIL_TARGET);
    req.deficiency = Some("unproven_inferred_value".into());
    let run = anvil_bench::case::open(&req).map_err(failed)?.run_dir;
    let a = ev(&run, "src/payments/receipts.py", 13, 15)?;
    claim(&run, "field.sensitivity", json!("pii"), &[&a])?;
    freeze(&run)?;
    let result = finalize(&run, Some(Status::Supported), None, None).map_err(failed)?;
    ensure!(
        result.status == Status::Supported,
        "test setup: finalized as {}",
        result.status
    );
    let doc = close_plain(&run)?;
    routed_to_review(&doc, "supported pii", "safety")
}

/// CARD_DECLINED carries an inferred `retryable: true`; a proposal of `false` replaces an
/// existing value and must reach review saying so (without the overwrite it is `auto`:
/// false is auto-approvable and not safety-sensitive).
fn overwrite_boolean() -> Result<(), Failed> {
    let w = World::new();
    w.edit_air(|air| {
        let error = &mut air["operations"][0]["errors"][0];
        assert_eq!(error["code"], "CARD_DECLINED");
        error["retryable"] = json!(true);
        error["inferred"] = json!(["retryable"]);
    });
    let run = investigate(
        &w,
        "enrich-error",
        CARD_DECLINED,
        &[
            ("src/payments/service.py", 14, 16),
            ("src/payments/service.py", 45, 47),
        ],
        json!(false),
    )?;
    let doc = close_plain(&run)?;
    routed_to_review(&doc, "retryable true -> false", "overwrites")
}

/// The unit case, finalized without a proposal (`supported` of an inferred `s`, or an
/// honest `insufficient_evidence`), with service.py changed afterwards: close must fail
/// with `source_changed` and write nothing.
fn changed_source_without_proposal() -> Result<(), Failed> {
    for status in [Status::Supported, Status::InsufficientEvidence] {
        let w = World::new();
        let run: PathBuf = open_inferred_unit(&w)?;
        let u = unit_research_in(run)?;
        freeze(&u.run)?;
        let result = finalize(&u.run, Some(status), None, None).map_err(failed)?;
        ensure!(
            result.status == status,
            "test setup: finalized as {}",
            result.status
        );
        change_service(&w);
        refused_as_changed(&u.run, status)?;
    }
    Ok(())
}

fn change_service(w: &World) {
    let path = w.repo().join("src/payments/service.py");
    let before = std::fs::read_to_string(&path).unwrap();
    let after = before.replace(
        "timedelta(seconds=request.capture_timeout)",
        "timedelta(milliseconds=request.capture_timeout)",
    );
    assert_ne!(
        before, after,
        "test setup: service.py has no conversion to edit"
    );
    std::fs::write(&path, after).unwrap();
}

fn refused_as_changed(run: &Path, status: Status) -> Result<(), Failed> {
    match close(run, &CloseRequest::default(), None) {
        Ok(doc) => Err(format!(
            "{status}: close accepted evidence whose source changed (tier {:?})",
            doc.tier.map(Tier::as_str)
        )
        .into()),
        Err(e) => {
            ensure!(
                e.kind() == "source_changed" && e.to_string().contains("service.py"),
                "{status}: unexpected refusal {}: {e}",
                e.kind()
            );
            ensure!(
                !run.join("close.json").exists(),
                "{status}: a refused close wrote close.json"
            );
            Ok(())
        }
    }
}

/// Every artifact of the run is re-read at close, not only those a claim cites: the
/// proposal is grounded on service.py, and docs/payments.md, acquired but cited by no
/// claim, changes afterwards.
fn changed_uncited_source() -> Result<(), Failed> {
    let w = World::new();
    let run = open_inferred_unit(&w)?;
    let u = unit_research_in(run)?;
    ev(&u.run, "docs/payments.md", 3, 4)?;
    freeze(&u.run)?;
    let result = finalize(&u.run, Some(Status::Supported), None, None).map_err(failed)?;
    ensure!(
        result.status == Status::Supported,
        "test setup: finalized as {}",
        result.status
    );
    let path = w.repo().join("docs/payments.md");
    let before = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = before.lines().collect();
    let mut after: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
    after[2] = format!("{} (edited)", after[2]);
    std::fs::write(&path, after.join("\n") + "\n").unwrap();
    match close(&u.run, &CloseRequest::default(), None) {
        Ok(doc) => Err(format!(
            "close accepted an uncited artifact whose source changed (tier {:?})",
            doc.tier.map(Tier::as_str)
        )
        .into()),
        Err(e) => {
            ensure!(
                e.kind() == "source_changed" && e.to_string().contains("payments.md"),
                "unexpected refusal {}: {e}",
                e.kind()
            );
            Ok(())
        }
    }
}
