//! R-VAL-8: the authoritative validation record in lifecycle.json (verdict, checks,
//! proposal hash), and the CLI's exit 1 on a failing verdict.

use anvil_bench::case::validate::Verdict;
use libtest_mimic::Failed;
use serde_json::Value;

use super::validated;
use crate::ensure;
use crate::support::{
    World, frozen_unit, lifecycle_json, out, rail_cli, read_json, stdout, unit_proposal,
    write_proposal,
};

pub(super) fn record_holds_verdict_and_hash() -> Result<(), Failed> {
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

pub(super) fn failing_verdict_recorded() -> Result<(), Failed> {
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
