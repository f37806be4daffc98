//! R-REC-2 at close: a valid proposal whose patch leaves the case's deficiency open on its
//! target reconciles to reject, and says that is why.

use anvil_bench::case::open;
use libtest_mimic::Failed;
use serde_json::json;

use super::{close_plain, f};
use crate::support::{UNIT_TARGET, World, freeze, unit_proposal, unit_research_in, write_proposal};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![Check {
        name: "reconcile::a_patch_that_leaves_the_target_deficient_is_rejected_and_says_so",
        rules: &["R-REC-2"],
        run: left_open,
    }]
}

fn left_open() -> Result<(), Failed> {
    let w = World::new();
    // capture_timeout's unit and description are both inferred; annotate-unit can prove
    // only the unit, so the field is still carrying an unproven inferred value afterwards.
    w.edit_air(|air| {
        let field = &mut air["operations"][0]["fields"][2];
        assert_eq!(field["name"], "capture_timeout");
        field["unit"] = json!("s");
        field["inferred"] = json!(["unit", "description"]);
    });
    let mut req = w.request("annotate-unit", UNIT_TARGET);
    req.deficiency = Some("unproven_inferred_value".into());
    let run = open(&req).map_err(f)?.run_dir;
    let u = unit_research_in(run)?;
    freeze(&u.run)?;
    let mut p = unit_proposal("s", &[&u.claim]);
    p["deficiency"] = json!("unproven_inferred_value");
    write_proposal(&u.run, &p);
    let v = crate::support::rails::validate(&u.run, None, false).map_err(f)?;
    ensure!(
        v.verdict == anvil_bench::case::validate::Verdict::Pass,
        "fixture: the proposal does not validate: {v:?}"
    );
    crate::support::rails::finalize(&u.run, None, None, None).map_err(f)?;
    let doc = close_plain(&u.run)?;
    let delta = doc.eval_delta.as_ref().ok_or("no eval delta")?;
    ensure!(
        !delta.target_closed
            && doc.tier == Some(anvil_bench::reconcile::Tier::Reject)
            && doc.reasons.iter().any(|r| r.contains("does not close")),
        "a patch leaving the target deficient closed as {:?}: {:?} {delta:?}",
        doc.tier,
        doc.reasons
    );
    Ok(())
}
