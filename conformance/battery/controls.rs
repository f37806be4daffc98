//! What fails a run: a label the oracle cannot reach (R-BAT-8), infrastructure failures
//! past their retries and their limit (R-BAT-9), a deterministic arm that disagrees with
//! itself (R-BAT-10).

use std::collections::BTreeMap;

use anvil_bench::battery::arm::Arm;
use anvil_bench::battery::results::{Infra, NotRun, TrialRecord, trial_file_name};
use anvil_bench::battery::runner::{Event, Verdict, assemble, manifest, nondeterministic, verdict};
use anvil_bench::battery::summary::{ClassSummary, controls, summarize};
use anvil_bench::process::CancelHandle;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use super::{CONFLICTED, Fixture, PROPOSAL, SUPPORTED, battery_ok, copy_tree, synthetic, trial};
use crate::support::{failed, read_json, stderr, stdout, write_json};
use crate::{Check, ensure};

fn a_label_the_oracle_cannot_reach_fails_the_run_naming_the_scenario() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, SUPPORTED]);
    // `supported` needs a current value, and the target has none: no rail sequence
    // reaches it, though the label is sound (a label `scenarios check` refuses, such as a
    // value the skill does not admit, is refused before the battery starts).
    f.edit_label(PROPOSAL, |l| {
        l["expect"] = json!({"status": "supported",
                             "evidence": [{"path": "docs/api/checkouts.md", "lines": [8, 15]}]});
    });
    // Evidence outside every inspect scope.
    f.edit_label(SUPPORTED, |l| {
        l["expect"]["evidence"] = json!([{"path": "Cargo.toml", "lines": [1, 1]}]);
    });
    let mut cfg = f.config("out", Arm::Baseline);
    cfg.controls = true;
    let o = battery_ok(&cfg)?;
    let oracle = o
        .results
        .controls
        .oracle
        .as_ref()
        .ok_or("no oracle verdict")?;
    ensure!(
        !oracle.passed,
        "the oracle passed unreachable labels: {oracle:?}"
    );
    for id in [PROPOSAL, SUPPORTED] {
        ensure!(
            oracle
                .failures
                .iter()
                .any(|f| f.starts_with(&format!("{id}: "))),
            "{id} is not named among the oracle's failures: {:?}",
            oracle.failures
        );
    }
    ensure!(
        oracle.failures.len() == 2,
        "one failure per unreachable label expected: {:?}",
        oracle.failures
    );
    ensure!(
        o.verdict == Verdict::ControlsFailed,
        "verdict {:?}, not ControlsFailed",
        o.verdict
    );
    // An oracle trial that never produced a result is no pass either (whatever made the
    // oracle give up: it must not leave the control's denominator).
    let mut gave_up = synthetic("a/gave-up", Arm::Oracle, 0, false);
    gave_up.infra = Some(Infra {
        error: "the in-process investigator failed".into(),
        attempts: 1,
    });
    let c = controls(
        &[synthetic("a/fine", Arm::Oracle, 0, true), gave_up],
        &cfg.arms(),
    )
    .oracle
    .ok_or("no oracle verdict")?;
    ensure!(
        !c.passed && c.failures.len() == 1 && c.failures[0].starts_with("a/gave-up: "),
        "an oracle trial with no result passed the control: {c:?}"
    );
    Ok(())
}

fn infrastructure_failures_are_retried_then_left_out_of_every_denominator() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, CONFLICTED]);
    let mut cfg = f.command_config("out", "echo 'endpoint unreachable' >&2; exit 3");
    cfg.retries = 2;
    let mut retries: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let o = anvil_bench::battery::runner::run(&cfg, &CancelHandle::new(), &mut |e| {
        if let Event::Retrying { id, attempt, .. } = e {
            retries.entry(id.to_string()).or_default().push(attempt);
        }
    })
    .map_err(failed)?;
    let doc = &o.results;
    for id in [PROPOSAL, CONFLICTED] {
        let t = trial(doc, id, Arm::Command)?;
        let infra = t
            .infra
            .as_ref()
            .ok_or(format!("{}: not an infra failure", t.id))?;
        ensure!(
            infra.attempts == 3 && t.attempts == 3,
            "{}: {} attempts with --retries 2",
            t.id,
            infra.attempts
        );
        ensure!(
            retries.get(&t.id) == Some(&vec![1, 2]),
            "{}: retried {:?}",
            t.id,
            retries.get(&t.id)
        );
        ensure!(
            !t.correct && t.expected_status.is_none(),
            "{}: an infra failure was scored",
            t.id
        );
        let class = doc
            .classes
            .iter()
            .find(|c| id.starts_with(&format!("{}/", c.class)))
            .ok_or("no class summary")?;
        let (arm, base) = (&class.arms["command"], &class.arms["baseline"]);
        ensure!(
            arm.n == 0 && arm.infra == 1 && arm.accuracy.is_none() && arm.harmful_rate.is_none(),
            "{}: the failure is in a denominator: {arm:?}",
            class.class
        );
        ensure!(base.n == 1, "{}: baseline n {}", class.class, base.n);
    }
    let overall = &doc.overall.arms["command"];
    ensure!(
        overall.n == 0 && overall.infra == 2 && overall.accuracy.is_none(),
        "overall counts infra failures: {overall:?}"
    );
    ensure!(
        doc.overall.contribution.is_none(),
        "a contribution was computed from infra failures: {:?}",
        doc.overall.contribution
    );
    ensure!(
        o.verdict == Verdict::Completed,
        "2 infra failures under the limit ended {:?}",
        o.verdict
    );
    Ok(())
}

fn more_infrastructure_failures_than_allowed_stop_the_battery_with_exit_5() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, CONFLICTED]);
    let out = f.out("out");
    let args = f.battery_args(&[
        "--out",
        out.to_str().unwrap(),
        "--no-controls",
        "--jobs",
        "1",
        "--retries",
        "0",
        "--max-infra-failures",
        "0",
        "--investigator",
        "command",
        "--backend",
        "native",
        "--allow-degraded-native",
        "--command",
        "sh",
        "-c",
        "exit 3",
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = f.cli(&args);
    ensure!(
        run.status.code() == Some(5),
        "expected exit 5, got {:?}\n{}\n{}",
        run.status.code(),
        stdout(&run),
        stderr(&run)
    );
    let doc = read_json(&out.join("results.json"));
    let infra: Vec<&Value> = doc["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| !t["infra"].is_null())
        .collect();
    ensure!(
        infra.len() == 1,
        "expected one infra failure, got {infra:?}"
    );
    // One job, scenario by scenario: the first scenario failed, the other never started.
    let first = infra[0]["scenario"].as_str().unwrap_or_default();
    let other = if first == PROPOSAL {
        CONFLICTED
    } else {
        PROPOSAL
    };
    let not_run: Vec<(String, String)> = doc["notRun"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["id"].as_str().unwrap_or_default().to_string(),
                n["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [Arm::Baseline, Arm::Command]
        .iter()
        .map(|a| (format!("{other}::{a}#0"), "infra_limit".to_string()))
        .collect();
    ensure!(
        not_run == want,
        "the trials left are not listed as stopped by the limit: {not_run:?}"
    );
    ensure!(
        doc["complete"] == false,
        "an interrupted battery says complete"
    );
    Ok(())
}

fn deterministic_arms_agree_with_themselves_across_repeats() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, CONFLICTED]);
    // The oracle stands in for a deterministic investigator: the heuristic is slow in a
    // debug build, and the battery test target repeats it over the whole corpus.
    let mut cfg = f.config("out", Arm::Oracle);
    cfg.repeats = 2;
    let o = battery_ok(&cfg)?;
    let doc = &o.results;
    ensure!(
        doc.trials.len() == 8,
        "expected 8 trials, got {}",
        doc.trials.len()
    );
    let mut outcomes: BTreeMap<(String, Arm), Vec<_>> = BTreeMap::new();
    for t in &doc.trials {
        outcomes
            .entry((t.scenario.clone(), t.arm))
            .or_default()
            .push((t.status.clone(), t.correct, t.tier.clone(), t.patch.clone()));
    }
    for ((s, a), o) in &outcomes {
        ensure!(
            o.len() == 2 && o[0] == o[1],
            "{s}::{a} disagrees with itself: {o:?}"
        );
    }
    ensure!(
        doc.nondeterministic.is_empty(),
        "listed as nondeterministic: {:?}",
        doc.nondeterministic
    );
    for arm in ["baseline", "oracle"] {
        ensure!(
            doc.overall.arms[arm].noise_floor == Some(0.0),
            "{arm}: noise floor {:?}",
            doc.overall.arms[arm].noise_floor
        );
    }
    ensure!(o.verdict == Verdict::Completed, "verdict {:?}", o.verdict);
    Ok(())
}

fn a_deterministic_arm_that_disagrees_fails_the_run() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let mut cfg = f.command_config("out", "true");
    cfg.controls = true;
    cfg.repeats = 2;
    let mut broken = synthetic("a/three", Arm::Heuristic, 1, true);
    broken.infra = Some(Infra {
        error: "gone".into(),
        attempts: 1,
    });
    let trials = vec![
        // A deterministic arm that disagrees.
        synthetic("a/one", Arm::Baseline, 0, false),
        synthetic("a/one", Arm::Baseline, 1, true),
        // A deterministic control that disagrees.
        synthetic("a/two", Arm::Oracle, 0, true),
        synthetic("a/two", Arm::Oracle, 1, false),
        // An agent may disagree with itself.
        synthetic("a/one", Arm::Command, 0, true),
        synthetic("a/one", Arm::Command, 1, false),
        // An infra failure is no outcome to disagree with.
        synthetic("a/three", Arm::Baseline, 0, false),
        synthetic("a/three", Arm::Baseline, 1, false),
        broken,
        synthetic("a/three", Arm::Heuristic, 0, false),
    ];
    let listed = nondeterministic(&trials);
    ensure!(
        listed == ["a/one::baseline", "a/two::oracle"],
        "expected exactly the two deterministic arms, got {listed:?}"
    );
    let doc = assemble(
        manifest(&cfg, "sha256:0".into(), "sha256:1".into(), true),
        trials,
        vec![],
        "sha256:1".into(),
        true,
    );
    ensure!(
        doc.nondeterministic == listed,
        "results.json lists {:?}",
        doc.nondeterministic
    );
    // The controls pass or not, a disagreement alone must fail the run.
    let mut doc = doc;
    doc.controls = anvil_bench::battery::summary::Controls::default();
    ensure!(
        verdict(&doc, false, false) == Verdict::Nondeterministic,
        "a disagreement did not fail the run"
    );
    Ok(())
}

/// Regression: a comparison of repeats that looked at correctness alone (or left the tier,
/// the status or the patch out) would take two different answers, both wrong, or one value
/// applied unattended and the other sent to a human, for the same outcome.
fn a_deterministic_arm_differing_only_in_tier_status_or_value_fails_the_run() -> Result<(), Failed>
{
    let pair = |scenario: &str, edit: fn(&mut anvil_bench::battery::results::TrialRecord)| {
        let first = synthetic(scenario, Arm::Heuristic, 0, false);
        let mut second = first.clone();
        second.repeat = 1;
        second.id = format!("{scenario}::heuristic#1");
        edit(&mut second);
        [first, second]
    };
    let mut trials = Vec::new();
    // Both wrong, and as wrong as each other: only one field differs.
    trials.extend(pair("a/tier", |t| t.tier = Some("review".into())));
    trials.extend(pair("a/status", |t| t.status = Some("conflicted".into())));
    trials.extend(pair("a/value", |t| {
        t.patch = Some([("unit".to_string(), json!("ms"))].into());
    }));
    // The same record twice is no disagreement.
    trials.extend(pair("a/same", |_| {}));
    let mut value = trials[4].clone();
    value.patch = Some([("unit".to_string(), json!("s"))].into());
    trials[4] = value;
    let listed = nondeterministic(&trials);
    ensure!(
        listed
            == [
                "a/status::heuristic",
                "a/tier::heuristic",
                "a/value::heuristic"
            ],
        "expected the repeats differing in tier, status and value alone, got {listed:?}"
    );
    Ok(())
}

/// Regression: an oracle judged on its status alone passes a proposal of the wrong value,
/// and one judged on its first repeat alone passes a scenario it fails on the next.
fn an_oracle_right_in_status_only_or_wrong_on_a_later_repeat_fails_its_control()
-> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let mut cfg = f.config("unused", Arm::Heuristic);
    cfg.controls = true;
    cfg.repeats = 2;
    // The right status with the wrong value: not the label.
    let mut wrong_value = synthetic("a/value", Arm::Oracle, 0, false);
    wrong_value.status = Some("proposal_generated".into());
    wrong_value.status_correct = true;
    wrong_value.patch = Some([("unit".to_string(), json!("furlong"))].into());
    let trials = vec![
        synthetic("a/fine", Arm::Oracle, 0, true),
        synthetic("a/fine", Arm::Oracle, 1, true),
        wrong_value,
        synthetic("a/value", Arm::Oracle, 1, true),
        // Right the first time, wrong the second.
        synthetic("a/later", Arm::Oracle, 0, true),
        synthetic("a/later", Arm::Oracle, 1, false),
    ];
    let c = controls(&trials, &cfg.arms())
        .oracle
        .ok_or("no oracle verdict")?;
    ensure!(!c.passed, "the positive control passed: {c:?}");
    for id in ["a/value", "a/later"] {
        ensure!(
            c.failures
                .iter()
                .filter(|f| f.starts_with(&format!("{id}: ")))
                .count()
                == 1,
            "{id} is not named once among the oracle's failures: {:?}",
            c.failures
        );
    }
    ensure!(
        c.failures.len() == 2 && c.ran == 6,
        "expected two failures of six oracle trials: {c:?}"
    );
    Ok(())
}

/// Regression: the binary's exit code is what CI reads; a failed control or a disagreeing
/// deterministic arm that exits 0 fails nothing.
fn a_failed_control_or_a_disagreeing_repeat_exits_1_from_the_binary() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let mut cfg = f.config("sound", Arm::Oracle);
    cfg.repeats = 2;
    let o = battery_ok(&cfg)?;
    ensure!(
        o.verdict == Verdict::Completed,
        "fixture: the sound battery ended {:?}",
        o.verdict
    );
    // A copy of the finished battery with one record saying otherwise, resumed by the
    // binary (nothing is left to run: the verdict is taken from the records).
    let cases: [(&str, Arm, &str); 2] = [
        ("controls", Arm::Oracle, "ControlsFailed"),
        ("repeats", Arm::Baseline, "Nondeterministic"),
    ];
    for (name, arm, want) in cases {
        let dir = f.out(name);
        copy_tree(&cfg.out, &dir);
        std::fs::remove_file(dir.join("results.json")).unwrap();
        let record = dir
            .join("trials")
            .join(trial_file_name(&format!("{PROPOSAL}::{arm}#1")));
        let mut r = read_json(&record);
        let other = if r["status"] == "conflicted" {
            "insufficient_evidence"
        } else {
            "conflicted"
        };
        r["status"] = json!(other);
        for k in ["statusCorrect", "valuesCorrect", "correct"] {
            r[k] = json!(false);
        }
        r["patch"] = Value::Null;
        r["tier"] = Value::Null;
        write_json(&record, &r);
        let args = f.battery_args(&["--resume", dir.to_str().unwrap(), "--no-controls", "--json"]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = f.cli(&args);
        let done: Value = stdout(&run)
            .lines()
            .last()
            .and_then(|l| serde_json::from_str(l).ok())
            .ok_or_else(|| failed(format!("{name}: no final JSON line: {}", stderr(&run))))?;
        ensure!(
            done["verdict"] == want,
            "{name}: the resumed battery ended {done}, not {want}\n{}",
            stderr(&run)
        );
        ensure!(
            run.status.code() == Some(1) && done["exitCode"] == 1,
            "{name}: {want} exited {:?} ({done})",
            run.status.code()
        );
    }
    let failures =
        read_json(&f.out("controls").join("results.json"))["controls"]["oracle"]["failures"]
            .clone();
    ensure!(
        failures.as_array().is_some_and(|a| a.len() == 1
            && a[0]
                .as_str()
                .is_some_and(|s| s.starts_with(&format!("{PROPOSAL}: ")))),
        "the failed control does not name {PROPOSAL} alone: {failures}"
    );
    Ok(())
}

/// Regression: "stop after more failures than this" read as "stop at this many" ends a
/// battery its limit allows.
fn as_many_infrastructure_failures_as_allowed_do_not_stop_the_battery() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, CONFLICTED]);
    for (limit, want) in [(2, Verdict::Completed), (1, Verdict::InfraLimit)] {
        let mut cfg = f.command_config(&format!("out-{limit}"), "exit 3");
        cfg.jobs = 1;
        cfg.max_infra_failures = limit;
        let o = battery_ok(&cfg)?;
        let infra = o
            .results
            .trials
            .iter()
            .filter(|t| t.infra.is_some())
            .count();
        ensure!(
            infra == 2 && o.results.trials.len() == 4 && o.results.not_run.is_empty(),
            "limit {limit}: {infra} infra failures of {} trials, not run {:?}",
            o.results.trials.len(),
            o.results.not_run
        );
        ensure!(
            o.verdict == want,
            "limit {limit}: 2 infra failures ended {:?}, expected {want:?}",
            o.verdict
        );
    }
    Ok(())
}

/// An infrastructure failure as the pool records it: no outcome, nothing spent.
fn infra(scenario: &str, arm: Arm, repeat: u32) -> TrialRecord {
    let mut t = synthetic(scenario, arm, repeat, false);
    t.infra = Some(Infra {
        error: "endpoint unreachable".into(),
        attempts: 3,
    });
    t.attempts = 3;
    t.status = None;
    t.expected_status = None;
    t.tier = None;
    t
}

/// Regression: a mean, a rate or a noise floor taken over every trial rather than the
/// counted ones moves with the infrastructure's failures.
fn an_infrastructure_failure_changes_no_figure_but_the_infra_count() -> Result<(), Failed> {
    let mut counted = Vec::new();
    for class in ["documented", "conflicting"] {
        for s in 0..8usize {
            let scenario = format!("{class}/s{s}");
            for r in 0..2u32 {
                let k = s + r as usize;
                counted.push(synthetic(&scenario, Arm::Baseline, r, s.is_multiple_of(2)));
                let mut h = synthetic(&scenario, Arm::Heuristic, r, !k.is_multiple_of(3));
                h.cost_usd = 0.25 * (k + 1) as f64;
                h.tokens_in = 100 * (k as u64 + 1);
                h.tokens_out = 10 * (k as u64 + 1);
                h.turns = k as u32 + 1;
                h.wall_ms = 1000;
                h.claims = 2;
                h.unsupported_claims = u32::from(s.is_multiple_of(2));
                h.evidence_recall = Some(0.5);
                counted.push(h);
            }
        }
    }
    // A third repeat of every scenario and arm failed on its infrastructure.
    let mut with = counted.clone();
    for class in ["documented", "conflicting"] {
        for s in 0..8 {
            for arm in [Arm::Baseline, Arm::Heuristic] {
                with.push(infra(&format!("{class}/s{s}"), arm, 2));
            }
        }
    }
    // A scenario whose every trial failed measured nothing: it is in no n either.
    for arm in [Arm::Baseline, Arm::Heuristic] {
        with.push(infra("documented/s-lost", arm, 0));
    }
    let arms = [Arm::Baseline, Arm::Heuristic];
    let (classes, overall) = summarize(&counted, &arms, Arm::Heuristic, 3);
    let (classes_with, overall_with) = summarize(&with, &arms, Arm::Heuristic, 3);
    let infra_counts =
        |s: &ClassSummary| -> Vec<usize> { s.arms.values().map(|a| a.infra).collect() };
    let counts: Vec<(String, Vec<usize>)> = classes_with
        .iter()
        .chain([&overall_with])
        .map(|c| (c.class.clone(), infra_counts(c)))
        .collect();
    let want: Vec<(String, Vec<usize>)> = [
        ("conflicting", vec![8, 8]),
        ("documented", vec![9, 9]),
        ("overall", vec![17, 17]),
    ]
    .into_iter()
    .map(|(c, n)| (c.to_string(), n))
    .collect();
    ensure!(
        counts == want,
        "the infra failures are not all counted apart: {counts:?}"
    );
    let without_infra = |mut s: ClassSummary| {
        for a in s.arms.values_mut() {
            a.infra = 0;
        }
        s
    };
    ensure!(
        overall.contribution.is_some() && overall.arms["heuristic"].noise_floor.is_some(),
        "fixture: no contribution or noise floor to compare"
    );
    for (a, b) in classes
        .into_iter()
        .chain([overall])
        .zip(classes_with.into_iter().chain([overall_with]))
    {
        let class = a.class.clone();
        let (a, b) = (without_infra(a), without_infra(b));
        ensure!(
            a == b,
            "{class}: infra failures moved the figures:\nwithout {a:?}\nwith    {b:?}"
        );
    }
    Ok(())
}

/// Regression: the arms held to their repeats are every deterministic one (the controls
/// and the adversary included), and a battery that did not finish is no less judged.
fn every_deterministic_arm_is_held_to_its_repeats_even_in_an_unfinished_run() -> Result<(), Failed>
{
    let mut trials = Vec::new();
    for arm in Arm::ALL {
        trials.push(synthetic("a/s", arm, 0, true));
        trials.push(synthetic("a/s", arm, 1, false));
    }
    let listed: std::collections::BTreeSet<String> =
        nondeterministic(&trials).into_iter().collect();
    for arm in [
        Arm::Baseline,
        Arm::Heuristic,
        Arm::Oracle,
        Arm::CheaterHanded,
        Arm::Overclaim,
    ] {
        ensure!(
            arm.deterministic() && listed.contains(&format!("a/s::{arm}")),
            "{arm} disagreed with itself and is not listed: {listed:?}"
        );
    }
    for arm in [Arm::ClaudeCode, Arm::Codex, Arm::Command] {
        ensure!(
            !listed.contains(&format!("a/s::{arm}")),
            "the agent {arm} is held to its repeats: {listed:?}"
        );
    }
    // Stopped by the budget before its last trial: the disagreement still fails it.
    let f = Fixture::new(&[PROPOSAL]);
    let mut cfg = f.command_config("unused", "true");
    cfg.repeats = 2;
    let doc = assemble(
        manifest(&cfg, "sha256:0".into(), "sha256:1".into(), true),
        vec![
            synthetic("a/s", Arm::Baseline, 0, true),
            synthetic("a/s", Arm::Baseline, 1, false),
            synthetic("a/s", Arm::Command, 0, true),
        ],
        vec![NotRun {
            id: "a/s::command#1".into(),
            reason: "budget".into(),
        }],
        "sha256:1".into(),
        false,
    );
    ensure!(
        verdict(&doc, false, false) == Verdict::Nondeterministic,
        "an unfinished battery whose baseline disagreed ended {:?}",
        verdict(&doc, false, false)
    );
    Ok(())
}

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "battery::a_label_the_oracle_cannot_reach_fails_the_run_naming_the_scenario",
            rules: &["R-BAT-8"],
            run: a_label_the_oracle_cannot_reach_fails_the_run_naming_the_scenario,
        },
        Check {
            name: "battery::infrastructure_failures_are_retried_then_left_out_of_every_denominator",
            rules: &["R-BAT-9"],
            run: infrastructure_failures_are_retried_then_left_out_of_every_denominator,
        },
        Check {
            name: "battery::more_infrastructure_failures_than_allowed_stop_the_battery_with_exit_5",
            rules: &["R-BAT-9"],
            run: more_infrastructure_failures_than_allowed_stop_the_battery_with_exit_5,
        },
        Check {
            name: "battery::deterministic_arms_agree_with_themselves_across_repeats",
            rules: &["R-BAT-10"],
            run: deterministic_arms_agree_with_themselves_across_repeats,
        },
        Check {
            name: "battery::a_deterministic_arm_differing_only_in_tier_status_or_value_fails_the_run",
            rules: &["R-BAT-10"],
            run: a_deterministic_arm_differing_only_in_tier_status_or_value_fails_the_run,
        },
        Check {
            name: "battery::a_deterministic_arm_that_disagrees_fails_the_run",
            rules: &["R-BAT-10"],
            run: a_deterministic_arm_that_disagrees_fails_the_run,
        },
        Check {
            name: "battery::an_oracle_right_in_status_only_or_wrong_on_a_later_repeat_fails_its_control",
            rules: &["R-BAT-8"],
            run: an_oracle_right_in_status_only_or_wrong_on_a_later_repeat_fails_its_control,
        },
        Check {
            name: "battery::a_failed_control_or_a_disagreeing_repeat_exits_1_from_the_binary",
            rules: &["R-BAT-8", "R-BAT-10"],
            run: a_failed_control_or_a_disagreeing_repeat_exits_1_from_the_binary,
        },
        Check {
            name: "battery::as_many_infrastructure_failures_as_allowed_do_not_stop_the_battery",
            rules: &["R-BAT-9"],
            run: as_many_infrastructure_failures_as_allowed_do_not_stop_the_battery,
        },
        Check {
            name: "battery::an_infrastructure_failure_changes_no_figure_but_the_infra_count",
            rules: &["R-BAT-9"],
            run: an_infrastructure_failure_changes_no_figure_but_the_infra_count,
        },
        Check {
            name: "battery::every_deterministic_arm_is_held_to_its_repeats_even_in_an_unfinished_run",
            rules: &["R-BAT-10"],
            run: every_deterministic_arm_is_held_to_its_repeats_even_in_an_unfinished_run,
        },
    ]
}
