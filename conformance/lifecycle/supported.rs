//! R-LC-6 and R-LC-7: `supported` only with proof of exactly the current value, and never
//! for a value that is missing.

use std::path::Path;

use anvil_bench::case::finalize::Status;
use libtest_mimic::Failed;
use serde_json::json;

use super::decline;
use crate::ensure;
use crate::support::{
    UNIT_TARGET, World, bytes_of, claim, failed, freeze, frozen_unit, open_inferred_unit, out,
    rail_cli, read_json, refused_as, unit_proposal, unit_research_in, write_proposal,
};

/// The inferred-unit case (current value `s`) with research from `research`, frozen;
/// `supported` must be refused and nothing written.
pub(super) fn supported_refused(
    research: impl FnOnce(&Path) -> Result<(), Failed>,
) -> Result<(), Failed> {
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

pub(super) fn supported_with_proof() -> Result<(), Failed> {
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

/// The current `s` proven by a lone schema excerpt: strength 0.8, annotate-unit's bar
/// exactly. The bar is a minimum, so `supported` is proven.
pub(super) fn supported_at_the_bar() -> Result<(), Failed> {
    let w = World::new();
    let (schema, lines) = crate::support::seconds_schema(&w);
    let run = open_inferred_unit(&w)?;
    let a = crate::support::ev(&run, schema, 1, lines)?;
    let c = claim(&run, "field.unit", json!("s"), &[&a])?;
    freeze(&run)?;
    let result = decline(&run, Status::Supported).map_err(failed)?;
    let proof = result
        .supported
        .ok_or("supported without a recorded proof")?;
    ensure!(
        proof.strength == 0.8 && proof.verified_strength == 0.8 && proof.claim_ids == [c],
        "the proof is not the lone schema excerpt at the bar: {proof:?}"
    );
    Ok(())
}

pub(super) fn supported_with_patch() -> Result<(), Failed> {
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

pub(super) fn missing_value_never_supported() -> Result<(), Failed> {
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

/// Regression: with the strength bar dropped, a skill that allows unverified support (so
/// no verified bar stands behind it) would prove a value on one weak vendor page.
/// The inferred description of `capture_timeout`, a describe-field case: a current value to
/// prove, and a field whose support need not be verified (bar 0.6).
const DESCRIPTION: &str = "How long the payment stays authorized before capture.";

fn inferred_description(w: &World) -> Result<std::path::PathBuf, Failed> {
    w.edit_air(|air| {
        let field = &mut air["operations"][0]["fields"][2];
        assert_eq!(field["name"], "capture_timeout");
        field["description"] = json!(DESCRIPTION);
        field["inferred"] = json!(["description"]);
    });
    let mut req = w.request("describe-field", UNIT_TARGET);
    req.deficiency = Some("unproven_inferred_value".into());
    Ok(anvil_bench::case::open(&req).map_err(failed)?.run_dir)
}

/// Support a few hundredths under the bar is refused: a comment-only excerpt (0.4) and one
/// external page (0.3), two sources, make 1 − 0.6 × 0.7 = 0.58 against describe-field's 0.6.
/// (The unit trials cannot show this: a unit needs verified support, whose own bar refuses
/// the same research.)
pub(super) fn supported_just_under_the_bar_is_refused() -> Result<(), Failed> {
    let w = World::new();
    let run = inferred_description(&w)?;
    let comment = crate::support::ev(&run, "src/payments/service.py", 35, 35)?;
    let page = crate::support::externals(&run, 1)?.remove(0);
    let kinds: Vec<String> = read_json(&out(&run, "evidence.json"))["artifacts"]
        .as_array()
        .ok_or("evidence.json has no artifacts")?
        .iter()
        .map(|a| a["kind"].as_str().unwrap_or("").to_string())
        .collect();
    ensure!(
        kinds == ["comment", "external"],
        "test setup: the excerpts are not a comment and a page: {kinds:?}"
    );
    claim(
        &run,
        "field.description",
        json!(DESCRIPTION),
        &[&comment, &page],
    )?;
    freeze(&run)?;
    let e = refused_as(decline(&run, Status::Supported), "unproven_support")?;
    ensure!(
        e.to_string().contains("support strength 0.58") && e.to_string().contains("< 0.6"),
        "0.58 of support was refused, but not for its strength: {e}"
    );
    ensure!(!out(&run, "result.json").exists(), "result.json written");
    Ok(())
}

pub(super) fn supported_needs_the_strength_bar_where_unverified_support_is_allowed()
-> Result<(), Failed> {
    let outcome = |pages: usize| -> Result<Result<Status, String>, Failed> {
        let w = World::new();
        let run = inferred_description(&w)?;
        let ids: Vec<String> = (0..pages)
            .map(|i| {
                crate::support::rails::add_external_evidence(
                    &run,
                    "vendor-docs",
                    &format!("https://vendor.example/capture-{i}"),
                    &format!("capture_timeout: {DESCRIPTION}\n"),
                    None,
                )
                .map(|a| a.id)
                .map_err(failed)
            })
            .collect::<Result<_, _>>()?;
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        claim(&run, "field.description", json!(DESCRIPTION), &refs)?;
        freeze(&run)?;
        Ok(decline(&run, Status::Supported)
            .map(|r| r.status)
            .map_err(|e| e.to_string()))
    };
    // One page (0.3) is under describe-field's bar (0.6); three (0.657) reach it.
    match outcome(1)? {
        Err(e) => ensure!(
            e.contains("unproven_support") || e.contains("strength"),
            "one page was refused, but not for its strength: {e}"
        ),
        Ok(s) => return Err(format!("one unverified page at 0.3 proved the value: {s}").into()),
    }
    ensure!(
        outcome(3)? == Ok(Status::Supported),
        "three pages, past the bar, did not prove the value: {:?}",
        outcome(3)?
    );
    Ok(())
}
