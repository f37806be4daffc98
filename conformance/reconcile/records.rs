//! Close against the engine's records and the AIR: the lifecycle's validation record is the
//! verdict (R-VAL-8, R-REC-3), and a patch lands on the target the case names (R-REC-2,
//! R-REC-8).

use crate::support::rails::close;
use anvil_bench::air::Air;
use anvil_bench::reconcile::{CloseRequest, Tier};
use libtest_mimic::Failed;
use serde_json::json;

use super::{close_plain, f, investigate, unit_run};
use crate::support::{World, read_json, reseal};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "reconcile::a_failing_lifecycle_record_rejects_even_when_validation_reruns_clean",
            rules: &["R-REC-3", "R-VAL-8"],
            run: failing_record,
        },
        Check {
            name: "reconcile::an_error_patch_lands_on_the_error_the_case_names",
            rules: &["R-REC-2", "R-REC-8"],
            run: error_target,
        },
    ]
}

fn failing_record() -> Result<(), Failed> {
    let w = World::new();
    let run = unit_run(&w)?;
    // The proposal is sound, so re-running validation at close passes; the authoritative
    // record in lifecycle.json says it failed, and close must side with the record.
    let lc_path = run.join("lifecycle.json");
    let mut lc = read_json(&lc_path);
    ensure!(
        lc["records"]["proposalValidation"]["verdict"] == "pass",
        "fixture: the clean run's record is {}",
        lc["records"]["proposalValidation"]["verdict"]
    );
    lc["records"]["proposalValidation"]["verdict"] = json!("fail");
    std::fs::write(&lc_path, serde_json::to_vec_pretty(&lc).unwrap()).unwrap();
    reseal(&run);
    let doc = close_plain(&run)?;
    ensure!(
        doc.tier == Some(Tier::Reject)
            && doc.reasons.iter().any(|r| r.contains("validation failed")),
        "a run whose lifecycle record failed closed as {:?}: {:?}",
        doc.tier,
        doc.reasons
    );
    Ok(())
}

fn error_target() -> Result<(), Failed> {
    // CARD_DECLINED is the operation's first error; RATE_LIMITED the second. Each case must
    // patch its own error and close its own deficiency, whichever position it holds.
    for (code, other, value, regions) in [
        (
            "CARD_DECLINED",
            "RATE_LIMITED",
            false,
            [
                ("src/payments/service.py", 14, 16),
                ("src/payments/service.py", 45, 47),
            ],
        ),
        (
            "RATE_LIMITED",
            "CARD_DECLINED",
            true,
            [
                ("src/payments/service.py", 19, 21),
                ("src/payments/service.py", 48, 50),
            ],
        ),
    ] {
        let w = World::new();
        let target = format!("op.create_payment.error.{code}");
        let run = investigate(&w, "enrich-error", &target, &regions, json!(value))?;
        let out = w.root().join("patched.json");
        let doc = close(
            &run,
            &CloseRequest {
                apply: Some(out.clone()),
                approved_by: Some("maintainer".into()),
            },
            None,
        )
        .map_err(f)?;
        let delta = doc.eval_delta.as_ref().ok_or("no eval delta")?;
        ensure!(
            delta.target_closed && delta.new_deficiencies.is_empty(),
            "{code}: the patch did not close its own deficiency: {delta:?}"
        );
        let patched = Air::load(&out).map_err(|e| Failed::from(e.to_string()))?;
        let errors = &patched.operations[0].errors;
        let retryable = |c: &str| errors.iter().find(|e| e.code == c).map(|e| e.retryable);
        ensure!(
            retryable(code) == Some(Some(value)) && retryable(other) == Some(None),
            "{code}: the patch landed elsewhere: {errors:?}"
        );
    }
    Ok(())
}
