//! R-GATE-1 judges the claims that ground the patched value: lines cited by another
//! accepted claim, one the proposal does not name, attest nothing for it; and the lines
//! that do attest it need only meet the skill's strength bar, not pass it.

use crate::support::rails::close;
use anvil_bench::reconcile::{CloseRequest, Tier};
use libtest_mimic::Failed;
use serde_json::json;

use super::passes_agrees_with_reasons;
use crate::support::{World, claim, ev, failed, freeze, unit_proposal, write_proposal};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "gate::lines_only_an_ungrounding_claim_cites_do_not_attest_the_patched_value",
            rules: &["R-GATE-1"],
            run: ungrounding_claim,
        },
        Check {
            name: "gate::a_value_attested_exactly_at_the_skills_strength_bar_reaches_auto",
            rules: &["R-GATE-1", "R-VAL-4"],
            run: at_the_bar,
        },
    ]
}

fn at_the_bar() -> Result<(), Failed> {
    // A description stated by one documentation line: doc strength is the skill's bar.
    let w = World::new();
    let o = super::case(
        &w,
        "describe-operation",
        "op.get_payment",
        None,
        &[("docs/payments.md", 6, 6)],
        json!("Returns the payment created by POST /payments."),
        None,
    )?;
    let gate = o.close.gate.first().ok_or("close.json has no gate entry")?;
    ensure!(
        gate.strength == gate.required,
        "fixture: the attested strength {} is not the bar {}: {gate:?}",
        gate.strength,
        gate.required
    );
    ensure!(
        o.close.tier == Some(Tier::Auto) && gate.passes,
        "a value meeting the bar exactly closed as {:?}: {}",
        o.close.tier,
        o.reasons()
    );
    Ok(())
}

fn ungrounding_claim() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    // The grounding claim cites lines that name capture_timeout without stating its unit;
    // a second accepted claim of the same value cites the line that states seconds.
    let naming = ev(&run, "src/payments/service.py", 26, 29)?;
    let test = ev(&run, "tests/test_capture.py", 7, 7)?;
    let grounding = claim(&run, "field.unit", json!("s"), &[&naming, &test])?;
    let stating = ev(&run, "src/payments/service.py", 32, 39)?;
    claim(&run, "field.unit", json!("s"), &[&stating])?;
    freeze(&run)?;
    write_proposal(&run, &unit_proposal("s", &[&grounding]));
    let v = crate::support::rails::validate(&run, None, false).map_err(failed)?;
    ensure!(
        v.verdict == anvil_bench::case::validate::Verdict::Pass,
        "fixture: the proposal does not validate, so the gate is not what is tested: {v:?}"
    );
    crate::support::rails::finalize(&run, None, None, None).map_err(failed)?;
    let closed = close(&run, &CloseRequest::default(), None).map_err(failed)?;
    passes_agrees_with_reasons(&closed)?;
    let gate = closed.gate.first().ok_or("close.json has no gate entry")?;
    ensure!(
        closed.tier == Some(Tier::Review)
            && closed.reasons.iter().any(|r| r.contains("R-GATE-1"))
            && gate.claim_ids == [grounding.clone()],
        "the patched value was judged on claims it is not grounded by: {:?} {:?} {gate:?}",
        closed.tier,
        closed.reasons
    );
    Ok(())
}
