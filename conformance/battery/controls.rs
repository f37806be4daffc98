//! What fails a run: a label the oracle cannot reach (R-BAT-8), infrastructure failures
//! past their retries and their limit (R-BAT-9), a deterministic arm that disagrees with
//! itself (R-BAT-10).

use std::collections::BTreeMap;

use anvil_bench::battery::arm::Arm;
use anvil_bench::battery::results::Infra;
use anvil_bench::battery::runner::{Event, Verdict, assemble, manifest, nondeterministic, verdict};
use anvil_bench::battery::summary::controls;
use anvil_bench::process::CancelHandle;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use super::{CONFLICTED, Fixture, PROPOSAL, SUPPORTED, battery_ok, synthetic, trial};
use crate::support::{failed, read_json, stderr, stdout};
use crate::{Check, ensure};

fn a_label_the_oracle_cannot_reach_fails_the_run_naming_the_scenario() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, SUPPORTED]);
    // A value the skill does not admit: no rail takes it.
    f.edit_label(PROPOSAL, |l| {
        l["expect"]["values"] = json!({"unit": {"equals": "furlong"}});
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
    ]
}
