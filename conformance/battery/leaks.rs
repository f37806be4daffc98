//! Leaks of the answer key: a canary anywhere the agent wrote marks its trial contaminated
//! (R-BAT-3), the cheaters are caught every time (R-BAT-4), and a label set that changes
//! during the run fails it (R-BAT-5).

use anvil_bench::battery::arm::Arm;
use anvil_bench::battery::results::Infra;
use anvil_bench::battery::runner::{Verdict, assemble, manifest, verdict};
use anvil_bench::battery::summary::controls;
use libtest_mimic::Failed;
use serde_json::Value;

use super::{CONFLICTED, FOUR, Fixture, PROPOSAL, battery_ok, synthetic, trial};
use crate::support::{read_json, stderr, stdout};
use crate::{Check, ensure};

fn a_canary_in_the_transcript_workspace_or_output_marks_the_trial_contaminated()
-> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, CONFLICTED]);
    // The agent leaks the canary of one scenario in every trial (read from a file, so its
    // command line holds none): on stdout, in workspace/ and in output/.
    let secret = f.root().join("secret.txt");
    std::fs::write(&secret, f.canary(CONFLICTED)).unwrap();
    let script = format!(
        r#"c=$(cat '{}')
echo "thinking about $c"
printf 'draft: %s\n' "$c" > workspace/notes.md
printf '%s\n' "$c" > output/extra.txt"#,
        secret.display()
    );
    let doc = battery_ok(&f.command_config("out", &script))?.results;
    for id in [PROPOSAL, CONFLICTED] {
        let t = trial(&doc, id, Arm::Command)?;
        ensure!(
            t.contaminated,
            "{}: a canary (of {CONFLICTED}) in its outputs went unflagged",
            t.id
        );
        for file in [
            "run/execution.log.jsonl",
            "run/workspace/notes.md",
            "run/output/extra.txt",
        ] {
            ensure!(
                t.contamination.iter().any(|c| c == file),
                "{}: `{file}` holds the canary and is not named: {:?}",
                t.id,
                t.contamination
            );
        }
        let b = trial(&doc, id, Arm::Baseline)?;
        ensure!(
            !b.contaminated && b.contamination.is_empty(),
            "{}: flagged without a leak: {:?}",
            b.id,
            b.contamination
        );
    }
    ensure!(
        doc.overall.arms["command"].contaminated == 2,
        "the overall summary does not count both contaminated trials: {:?}",
        doc.overall.arms["command"]
    );
    Ok(())
}

fn a_symlink_or_fifo_planted_by_the_agent_is_flagged() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let script = format!(
        "ln -s '{}' output/answer.json\nmkfifo workspace/pipe",
        f.label(PROPOSAL).display()
    );
    let doc = battery_ok(&f.command_config("out", &script))?.results;
    let t = trial(&doc, PROPOSAL, Arm::Command)?;
    ensure!(t.contaminated, "{}: planted files went unflagged", t.id);
    for file in [
        "run/output/answer.json (not a regular file)",
        "run/workspace/pipe (not a regular file)",
    ] {
        ensure!(
            t.contamination.iter().any(|c| c == file),
            "`{file}` is not named: {:?}",
            t.contamination
        );
    }
    Ok(())
}

fn both_cheaters_are_caught_and_the_oracle_passes_on_every_scenario() -> Result<(), Failed> {
    let f = Fixture::new(&FOUR);
    let mut cfg = f.config("out", Arm::Baseline);
    cfg.controls = true;
    let o = battery_ok(&cfg)?;
    let doc = &o.results;
    let cheater = doc.controls.cheater.as_ref().ok_or("no cheater verdict")?;
    ensure!(
        cheater.passed && cheater.ran == 8 && cheater.unflagged.is_empty(),
        "the negative control did not pass on every scenario: {cheater:?}"
    );
    for id in FOUR {
        let handed = trial(doc, id, Arm::CheaterHanded)?;
        ensure!(
            handed.contaminated && handed.contamination.iter().any(|c| c.contains("output/")),
            "{}: the handed canary in its outputs went unflagged: {:?}",
            handed.id,
            handed.contamination
        );
        let reach = trial(doc, id, Arm::CheaterReach)?;
        ensure!(
            reach.contaminated || reach.reached_labels == Some(false),
            "{}: reached labels and was not flagged: {reach:?}",
            reach.id
        );
        for arm in [Arm::Baseline, Arm::Oracle] {
            let t = trial(doc, id, arm)?;
            ensure!(!t.contaminated, "{}: flagged without a leak", t.id);
        }
    }
    let oracle = doc.controls.oracle.as_ref().ok_or("no oracle verdict")?;
    ensure!(
        oracle.passed && oracle.ran == 4 && oracle.failures.is_empty(),
        "the positive control did not score 100%: {oracle:?}"
    );
    ensure!(
        o.verdict == Verdict::Completed,
        "verdict {:?} on a sound corpus",
        o.verdict
    );
    Ok(())
}

fn an_unflagged_cheater_fails_the_negative_control() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let mut cfg = f.config("out", Arm::Heuristic);
    cfg.controls = true;
    let caught = |s: &str, arm| {
        let mut t = synthetic(s, arm, 0, false);
        t.contaminated = true;
        t.contamination = vec!["run/output/notes.txt".into()];
        t
    };
    let mut missed = synthetic("a/missed", Arm::CheaterHanded, 0, false);
    missed.reached_labels = None;
    let mut reached = synthetic("a/reached", Arm::CheaterReach, 0, false);
    reached.reached_labels = Some(true);
    let mut contained = synthetic("a/contained", Arm::CheaterReach, 0, false);
    contained.reached_labels = Some(false);
    let mut broken = synthetic("a/broken", Arm::CheaterHanded, 0, false);
    broken.infra = Some(Infra {
        error: "the engine binary is missing".into(),
        attempts: 1,
    });
    let trials = vec![
        caught("a/caught", Arm::CheaterHanded),
        caught("a/caught", Arm::CheaterReach),
        missed,
        reached,
        contained,
        broken,
    ];
    let c = controls(&trials, &cfg.arms())
        .cheater
        .ok_or("no cheater verdict")?;
    ensure!(!c.passed, "the negative control passed with misses: {c:?}");
    let want = [
        "a/broken::cheater-handed#0",
        "a/missed::cheater-handed#0",
        "a/reached::cheater-reach#0",
    ];
    let mut got = c.unflagged.clone();
    got.sort();
    ensure!(
        got == want,
        "unflagged should list exactly {want:?}, got {got:?}"
    );
    let doc = assemble(
        manifest(&cfg, "sha256:0".into(), "sha256:1".into(), true),
        trials,
        vec![],
        "sha256:1".into(),
        true,
    );
    ensure!(
        verdict(&doc, false, false) == Verdict::ControlsFailed,
        "an unflagged cheater did not fail the run"
    );
    Ok(())
}

fn a_label_changed_during_the_run_fails_it() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, CONFLICTED]);
    let before = f.seal();
    // Prepared outside the labels: the other scenario's label, expecting something else.
    let edited = f.root().join("edited.json");
    let mut label = read_json(&f.label(CONFLICTED));
    label["expect"] = serde_json::json!({"status": "insufficient_evidence"});
    crate::support::write_json(&edited, &label);
    let script = format!(
        "cp '{}' '{}'",
        edited.display(),
        f.label(CONFLICTED).display()
    );
    let out = f.out("out");
    let args = f.battery_args(&[
        "--out",
        out.to_str().unwrap(),
        "--scenario",
        PROPOSAL,
        "--no-controls",
        "--jobs",
        "1",
        "--json",
        "--investigator",
        "command",
        "--backend",
        "native",
        "--allow-degraded-native",
        "--command",
        "sh",
        "-c",
        &script,
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = f.cli(&args);
    ensure!(
        run.status.code() == Some(1),
        "expected exit 1, got {:?}\n{}\n{}",
        run.status.code(),
        stdout(&run),
        stderr(&run)
    );
    let done: Value = stdout(&run)
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or("no final JSON line")?;
    ensure!(
        done["verdict"] == "LabelsChanged",
        "the run ended {done}, not LabelsChanged"
    );
    let results = read_json(&out.join("results.json"));
    let after = f.seal();
    ensure!(after != before, "the agent did not change the label set");
    ensure!(
        results["manifest"]["labelSeal"] == before.as_str(),
        "the manifest's seal {} is not the one taken before the run ({before})",
        results["manifest"]["labelSeal"]
    );
    ensure!(
        results["labelSealAfter"] == after.as_str(),
        "labelSealAfter {} is not the seal of the changed set ({after})",
        results["labelSealAfter"]
    );
    Ok(())
}

/// Regression: a scan that covered the run alone would miss a canary the agent left in its
/// copy of the repository (writable where the backend cannot make it read-only).
fn a_canary_written_into_the_repository_copy_marks_the_trial_contaminated() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let secret = f.root().join("secret.txt");
    std::fs::write(&secret, f.canary(PROPOSAL)).unwrap();
    // Nothing in the run: the canary goes to a new file in the repository copy only.
    let script = format!(
        r#"repo=$(sed -n 's/.*"repository": *"\([^"]*\)".*/\1/p' case.json | head -n 1)
cat '{}' > "$repo/NOTES.md""#,
        secret.display()
    );
    let doc = battery_ok(&f.command_config("out", &script))?.results;
    let t = trial(&doc, PROPOSAL, Arm::Command)?;
    ensure!(
        t.contaminated && t.contamination.iter().any(|c| c == "repo/NOTES.md"),
        "{}: a canary in the repository copy went unflagged: {:?}",
        t.id,
        t.contamination
    );
    Ok(())
}

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "battery::a_canary_in_the_transcript_workspace_or_output_marks_the_trial_contaminated",
            rules: &["R-BAT-3"],
            run: a_canary_in_the_transcript_workspace_or_output_marks_the_trial_contaminated,
        },
        Check {
            name: "battery::a_canary_written_into_the_repository_copy_marks_the_trial_contaminated",
            rules: &["R-BAT-3"],
            run: a_canary_written_into_the_repository_copy_marks_the_trial_contaminated,
        },
        Check {
            name: "battery::a_symlink_or_fifo_planted_by_the_agent_is_flagged",
            rules: &["R-BAT-3"],
            run: a_symlink_or_fifo_planted_by_the_agent_is_flagged,
        },
        Check {
            name: "battery::both_cheaters_are_caught_and_the_oracle_passes_on_every_scenario",
            rules: &["R-BAT-4", "R-BAT-8"],
            run: both_cheaters_are_caught_and_the_oracle_passes_on_every_scenario,
        },
        Check {
            name: "battery::an_unflagged_cheater_fails_the_negative_control",
            rules: &["R-BAT-4"],
            run: an_unflagged_cheater_fails_the_negative_control,
        },
        Check {
            name: "battery::a_label_changed_during_the_run_fails_it",
            rules: &["R-BAT-5"],
            run: a_label_changed_during_the_run_fails_it,
        },
    ]
}
