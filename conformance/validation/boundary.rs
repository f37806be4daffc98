//! R-VAL-1 and R-VAL-2: a patch writes only the skill's fields and never a structural key;
//! refused by the parser, and failed by the check itself on a proposal that bypassed it.

use anvil_bench::case::proposal::DocErrorKind;
use libtest_mimic::Failed;
use serde_json::json;

use super::{check, checks_on, stopped};
use crate::ensure;
use crate::support::{World, failed, frozen_unit, msg, unit_proposal, write_proposal};

pub(super) fn outside_boundary_refused() -> Result<(), Failed> {
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

pub(super) fn boundary_check_itself() -> Result<(), Failed> {
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

pub(super) fn structural_refused() -> Result<(), Failed> {
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

pub(super) fn structural_check_itself() -> Result<(), Failed> {
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
