//! R-GATE-2: two verified frozen excerpts that state different values for one predicate are
//! a conflict whether or not the agent claimed both; it is recorded at freeze, keeps the value
//! from `auto`, and the agent may decline `conflicted` on it.

use crate::support::rails::close;
use anvil_bench::case::finalize::Status;
use anvil_bench::reconcile::{CloseRequest, Tier};
use libtest_mimic::Failed;
use serde_json::json;

use super::{case, passes_agrees_with_reasons, unit_case, write_repo};
use crate::support::{
    UNIT_TARGET, World, claim, ev, failed, freeze, out, read_json, refused_as, tree, unit_proposal,
    write_proposal,
};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "gate::an_unclaimed_conflict_between_verified_excerpts_is_recorded_at_freeze_and_blocks_auto",
            rules: &["R-GATE-2"],
            run: unclaimed_conflict,
        },
        Check {
            name: "gate::the_agent_may_decline_conflicted_on_an_unclaimed_conflict",
            rules: &["R-GATE-2", "R-REC-7"],
            run: decline_conflicted,
        },
        Check {
            name: "gate::agreeing_excerpts_other_fields_and_unverified_excerpts_make_no_conflict",
            rules: &["R-GATE-2"],
            run: no_false_conflict,
        },
        Check {
            name: "gate::a_value_the_repository_contradicts_in_lines_no_claim_cites_is_not_auto",
            rules: &["R-GATE-2"],
            run: uncited_conflict,
        },
        Check {
            name: "gate::two_files_stating_different_units_on_the_same_line_number_are_a_conflict",
            rules: &["R-GATE-2"],
            run: same_line_number,
        },
        Check {
            name: "gate::a_conflict_is_any_two_lines_sharing_no_value_neither_neighbours_only_nor_overlapping_ones",
            rules: &["R-GATE-2"],
            run: any_two_lines,
        },
        Check {
            name: "gate::the_repository_scan_weighs_a_directory_holding_its_own_case_json",
            rules: &["R-GATE-2"],
            run: a_directory_with_its_own_case_json_is_still_scanned,
        },
    ]
}

/// The example plus a Rust client that converts `capture_timeout` with `from_millis`.
fn millis_world() -> World {
    let w = World::new();
    write_repo(
        &w,
        "src/client/capture.rs",
        "pub fn void_after(req: &CreatePayment) -> Duration {\n    Duration::from_millis(req.capture_timeout)\n}\n",
    );
    w
}

fn unclaimed_conflict() -> Result<(), Failed> {
    let w = millis_world();
    let run = {
        let mut req = w.request("annotate-unit", UNIT_TARGET);
        req.deficiency = None;
        anvil_bench::case::open(&req).map_err(failed)?.run_dir
    };
    // Both excerpts are frozen; the claim cites only the seconds side.
    let secs = ev(&run, "src/payments/service.py", 32, 39)?;
    let _millis = ev(&run, "src/client/capture.rs", 1, 3)?;
    let cl = claim(&run, "field.unit", json!("s"), &[&secs])?;
    let research = freeze(&run)?;
    let c = research
        .attested_conflict_on("field.unit")
        .ok_or_else(|| failed(format!("no conflict recorded at freeze: {research:?}")))?;
    ensure!(
        c.values.contains(&json!("s"))
            && c.values.contains(&json!("ms"))
            && c.claimed == [json!("s")],
        "the recorded conflict does not show both sides and the claimed one: {c:?}"
    );
    ensure!(
        research.conflicts.is_empty(),
        "only one value was claimed, yet a claimed conflict was recorded"
    );
    write_proposal(&run, &unit_proposal("s", &[&cl]));
    crate::support::rails::validate(&run, None, false).map_err(failed)?;
    crate::support::rails::finalize(&run, None, None, None).map_err(failed)?;
    let result = read_json(&out(&run, "result.json"));
    ensure!(
        result["attestedConflicts"][0]["predicate"] == "field.unit",
        "result.json does not carry the conflict: {result}"
    );
    let closed = close(&run, &CloseRequest::default(), None).map_err(failed)?;
    // Held back by the frozen excerpts' own disagreement, not only by the repository scan.
    ensure!(
        closed.tier == Some(Tier::Review)
            && closed
                .reasons
                .iter()
                .any(|r| r.contains("R-GATE-2") && r.contains("verified excerpts")),
        "a conflicted predicate reached {:?}: {:?}",
        closed.tier,
        closed.reasons
    );
    passes_agrees_with_reasons(&closed)?;
    let gate = closed.gate.first().ok_or("close.json has no gate entry")?;
    ensure!(
        gate.conflict
            .as_ref()
            .is_some_and(|c| c.claimed == [json!("s")]),
        "close.json does not show the conflict with the value claimed: {gate:?}"
    );
    Ok(())
}

fn decline_conflicted() -> Result<(), Failed> {
    let w = millis_world();
    let o = case(
        &w,
        "annotate-unit",
        UNIT_TARGET,
        None,
        &[
            ("src/payments/service.py", 32, 39),
            ("src/client/capture.rs", 1, 3),
        ],
        json!("s"),
        Some(Status::Conflicted),
    )?;
    ensure!(
        o.close.status == Status::Conflicted && o.close.escalate.is_some(),
        "the decline was not recorded and escalated: {:?}",
        o.close
    );
    // Without a disagreement in the excerpts, `conflicted` is refused.
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let secs = ev(&run, "src/payments/service.py", 32, 39)?;
    claim(&run, "field.unit", json!("s"), &[&secs])?;
    freeze(&run)?;
    refused_as(
        crate::support::rails::finalize(&run, Some(Status::Conflicted), None, None),
        "no_conflict",
    )?;
    Ok(())
}

fn no_false_conflict() -> Result<(), Failed> {
    let w = World::new();
    // A sibling quantity in another unit, the same unit said twice, and an external
    // (unverified) excerpt saying milliseconds: none is a conflict on capture_timeout.
    write_repo(
        &w,
        "src/payments/limits.py",
        "# amount is in cents\nMAX_AMOUNT_CENTS = 1_000_000\nREFUND_WINDOW = timedelta(days=30)\n# capture_timeout is given in seconds\nCAPTURE_TIMEOUT_DEFAULT = 30\n",
    );
    let run = w.open_unit()?.run_dir;
    let a = ev(&run, "src/payments/service.py", 32, 39)?;
    let b = ev(&run, "src/payments/limits.py", 1, 5)?;
    let c = ev(&run, "tests/test_capture.py", 6, 8)?;
    let ext = crate::support::rails::add_external_evidence(
        &run,
        "vendor-docs",
        "https://vendor.example/capture",
        "capture_timeout is given in milliseconds\n",
        None,
    )
    .map_err(failed)?
    .id;
    claim(&run, "field.unit", json!("s"), &[&a, &b, &c, &ext])?;
    let research = freeze(&run)?;
    ensure!(
        research.attested_conflicts.is_empty(),
        "a conflict was recorded where verified excerpts agree: {:?}",
        research.attested_conflicts
    );
    Ok(())
}

fn uncited_conflict() -> Result<(), Failed> {
    // The agent cites only the seconds side; a client module stating milliseconds for the
    // same field is in scope but never cited or frozen. Auto would apply `s` with no human
    // weighing the repository's own disagreement.
    let w = millis_world();
    let o = unit_case(
        &w,
        &[
            ("src/payments/service.py", 32, 39),
            ("tests/test_capture.py", 6, 8),
        ],
        "s",
    )?;
    ensure!(
        o.research.attested_conflicts.is_empty(),
        "fixture: the frozen excerpts already disagree, so this is not the uncited case"
    );
    ensure!(
        o.close.tier == Some(Tier::Review)
            && o.close
                .reasons
                .iter()
                .any(|r| r.contains("lines no claim cites") && r.contains("src/client/capture.rs")),
        "a value the repository contradicts reached {:?}: {}",
        o.close.tier,
        o.reasons()
    );
    // The reason says how much of the repository was weighed: every file of this small
    // example is a text file in scope, so all of them.
    let files = tree(&w.repo()).values().filter(|h| *h != "dir").count();
    ensure!(
        o.reasons()
            .contains(&format!(", {files} in-scope files scanned)")),
        "the reason does not say all {files} in-scope files were scanned: {}",
        o.reasons()
    );
    // A value no line states is contradicted by both sides, and close.json says so too.
    let w = millis_world();
    let stated_nowhere = unit_case(
        &w,
        &[
            ("src/payments/service.py", 32, 39),
            ("tests/test_capture.py", 6, 8),
        ],
        "min",
    )?;
    ensure!(
        stated_nowhere
            .close
            .reasons
            .iter()
            .any(|r| r.contains("lines no claim cites")),
        "the repository's disagreement with `min` is not reported: {}",
        stated_nowhere.reasons()
    );
    // The same citations in a repository that does not contradict them reach auto.
    let clean = unit_case(
        &World::new(),
        &[
            ("src/payments/service.py", 32, 39),
            ("tests/test_capture.py", 6, 8),
        ],
        "s",
    )?;
    ensure!(
        clean.close.tier == Some(Tier::Auto),
        "the uncontradicted value closed as {:?}: {}",
        clean.close.tier,
        clean.reasons()
    );
    Ok(())
}

/// The unit case on a repository whose only statements of `capture_timeout`'s unit are the
/// trial's own files, each cited whole: what stage 1 records at freeze.
fn frozen_over(
    files: &[(&str, &str)],
) -> Result<anvil_bench::case::research::ResearchRecord, Failed> {
    let w = World::new();
    super::unit_free(&w);
    for (rel, text) in files {
        write_repo(&w, rel, text);
    }
    let run = w.open_unit()?.run_dir;
    let mut ids = Vec::new();
    for (rel, text) in files {
        let lines = u32::try_from(text.lines().count()).map_err(failed)?;
        ids.push(ev(&run, rel, 1, lines)?);
    }
    let cited: Vec<&str> = ids.iter().map(String::as_str).collect();
    claim(&run, "field.unit", json!("s"), &cited)?;
    freeze(&run)
}

/// Regression: lines were told apart by their line number alone, so a second file's line
/// at the same number as an earlier file's was never weighed.
fn same_line_number() -> Result<(), Failed> {
    let research = frozen_over(&[
        (
            "src/a/window.py",
            "def window(req):\n    return timedelta(seconds=req.capture_timeout)\n",
        ),
        (
            "src/b/window.rs",
            "pub fn window(req: &CreatePayment) -> Duration {\n    Duration::from_millis(req.capture_timeout)\n}\n",
        ),
    ])?;
    let c = research
        .attested_conflict_on("field.unit")
        .ok_or_else(|| failed(format!("no conflict recorded at freeze: {research:?}")))?;
    ensure!(
        c.values.contains(&json!("s")) && c.values.contains(&json!("ms")),
        "the conflict does not show both units: {c:?}"
    );
    Ok(())
}

/// Regression: a line stating two units shares one with each of its neighbours; only the
/// lines around it share none. Comparing each line with the next only missed that, and
/// counting any two different sets as a conflict made one out of lines that agree.
fn any_two_lines() -> Result<(), Failed> {
    let both = "    both = timedelta(seconds=req.capture_timeout), timedelta(milliseconds=req.capture_timeout)\n";
    let secs = "    a = timedelta(seconds=req.capture_timeout)\n";
    let millis = "    c = timedelta(milliseconds=req.capture_timeout)\n";
    let research = frozen_over(&[(
        "src/a/window.py",
        &format!("def window(req):\n{secs}{both}{millis}"),
    )])?;
    let c = research.attested_conflict_on("field.unit").ok_or_else(|| {
        failed(format!(
            "seconds and milliseconds, with a line stating both between them, made no conflict: {research:?}"
        ))
    })?;
    ensure!(
        c.values.contains(&json!("s")) && c.values.contains(&json!("ms")),
        "the conflict does not show both units: {c:?}"
    );
    // The line stating both shares a unit with a line stating one: no two lines share none.
    let research = frozen_over(&[(
        "src/a/window.py",
        &format!("def window(req):\n{secs}{both}"),
    )])?;
    ensure!(
        research.attested_conflicts.is_empty(),
        "lines that share a unit were recorded as a conflict: {:?}",
        research.attested_conflicts
    );
    Ok(())
}

/// Regression: the whole-repository scan skips a run directory (a `case.json` beside a
/// `lifecycle.json`); skipping any directory that holds either one left a repository's own
/// `case.json` fixture directory, and the statements beside it, unweighed.
fn a_directory_with_its_own_case_json_is_still_scanned() -> Result<(), Failed> {
    let w = millis_world();
    write_repo(
        &w,
        "src/client/case.json",
        "{\"name\": \"a test fixture\"}\n",
    );
    let o = unit_case(
        &w,
        &[
            ("src/payments/service.py", 32, 39),
            ("tests/test_capture.py", 6, 8),
        ],
        "s",
    )?;
    ensure!(
        o.close.tier == Some(Tier::Review)
            && o.close
                .reasons
                .iter()
                .any(|r| r.contains("lines no claim cites") && r.contains("src/client/capture.rs")),
        "the milliseconds beside a case.json fixture were not weighed: {:?}: {}",
        o.close.tier,
        o.reasons()
    );
    Ok(())
}
