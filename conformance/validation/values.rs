//! R-VAL-7: the value checks: an empty or tautological description, and a value outside
//! the skill's vocabulary.

use std::path::PathBuf;

use crate::support::rails;
use anvil_bench::case::proposal::DocErrorKind;
use anvil_bench::case::validate::{ValidationRecord, Verdict};
use libtest_mimic::Failed;
use serde_json::{Value, json};

use super::{check, checks_on, fails_on, stopped, stopped_run, validated};
use crate::ensure;
use crate::support::{
    World, claim, claim_input, ev, failed, freeze, msg, rejected_doc, unit_proposal, unit_research,
    write_proposal,
};

const PAYMENT_ID: &str = "op.create_payment.output.body.payment_id";

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

pub(super) fn empty_description() -> Result<(), Failed> {
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

pub(super) fn tautological_description() -> Result<(), Failed> {
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

/// The type is among the words a description must go beyond: `payment_id` is a string, so
/// a description made of the name's words and the type's says nothing new.
pub(super) fn name_and_type_description() -> Result<(), Failed> {
    for t in ["Payment id string.", "The string id of the payment"] {
        let w = World::new();
        let (run, c) = describe_run(&w, t)?;
        write_proposal(&run, &describe_proposal(t, &c));
        let record = validated(&run)?;
        fails_on(&record, "description_not_tautological")
            .map_err(|e| failed(format!("{t:?}: {}", msg(&e))))?;
    }
    Ok(())
}

/// An operation's route is among the words its description must go beyond: for
/// `GET /payments/{payment_id}`, "get payment by payment id" names the operation and its
/// route and says nothing new (its last word is in the route, not the name). A description
/// that says more, on the same research, passes the check.
pub(super) fn route_description() -> Result<(), Failed> {
    let outcome = |text: &str| -> Result<ValidationRecord, Failed> {
        let w = World::new();
        let run = anvil_bench::case::open(&w.request("describe-operation", "op.get_payment"))
            .map_err(failed)?
            .run_dir;
        let d = ev(&run, "docs/payments.md", 6, 6)?;
        let c = claim(&run, "operation.description", json!(text), &[&d])?;
        freeze(&run)?;
        write_proposal(
            &run,
            &json!({
                "format": "anvil-proposal", "formatVersion": 1,
                "skill": "describe-operation", "skillVersion": 1,
                "deficiency": "missing_operation_description",
                "target": "op.get_payment",
                "patch": {"target": "op.get_payment", "set": {"description": text}},
                "grounding": {"description": [c]},
                "confidence": 0.8, "rationale": "the docs say what it returns"
            }),
        );
        validated(&run)
    };
    for t in ["Get payment by payment id.", "GET /payments/{payment_id}"] {
        fails_on(&outcome(t)?, "description_not_tautological")
            .map_err(|e| failed(format!("{t:?}: {}", msg(&e))))?;
    }
    let good = "Returns the payment that POST /payments created, by its identifier.";
    let record = outcome(good)?;
    ensure!(
        check(&record.checks, "description_not_tautological")?.passed,
        "a description that says more was called tautological: {:?}",
        record.checks
    );
    Ok(())
}

pub(super) fn out_of_vocabulary_value() -> Result<(), Failed> {
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
