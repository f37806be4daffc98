//! What a battery spends and what it reports: the budget cap (R-BAT-15) and harmful
//! changes, above all those reconciled to `auto` (R-BAT-16).

use anvil_bench::battery::arm::Arm;
use anvil_bench::battery::plan::Selector;
use anvil_bench::battery::runner::{Admit, Budget};
use anvil_bench::battery::summary::ArmSummary;
use anvil_bench::battery::trial::Script;
use libtest_mimic::Failed;
use proptest::prelude::*;
use proptest::test_runner::{Config as PropConfig, TestCaseError, TestRunner};
use serde_json::json;

use super::{Fixture, PROPOSAL, SUPPORTED, battery_ok, trial};
use crate::support::{failed, write_executable, write_json};
use crate::{Check, ensure};

/// One step of a budget's life: start a trial, or end the `pick`-th running one having
/// spent `share` of its cap (or, for an overrun, `share` times it).
#[derive(Debug, Clone)]
enum Step {
    Start,
    End { pick: usize, share: f64 },
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        prop_oneof![
            Just(Step::Start),
            (any::<usize>(), 0.0..=1.0f64).prop_map(|(pick, share)| Step::End { pick, share }),
        ],
        1..60,
    )
}

/// Plays `steps` on a budget of `max` with `slots` trials at once, settling each trial at
/// `cost(cap, share)`; checks that admission stops once the spend reaches the cap, and
/// returns the final spend and the largest single cost.
fn play(
    max: f64,
    slots: usize,
    steps: &[Step],
    cost: impl Fn(f64, f64) -> f64,
) -> Result<(f64, f64), TestCaseError> {
    let mut b = Budget::new(Some(max), slots);
    let mut running: Vec<f64> = Vec::new();
    let mut largest = 0.0f64;
    let mut settle = |b: &mut Budget, cap: f64, share: f64| {
        let c = cost(cap, share);
        largest = largest.max(c);
        b.settle(Some(cap), c);
    };
    for step in steps {
        match step {
            Step::Start if running.len() < slots => {
                let spent_out = b.spent >= max;
                match b.admit(running.len()) {
                    Admit::Go(Some(cap)) => {
                        prop_assert!(!spent_out, "admitted at spend {} of {max}", b.spent);
                        prop_assert!(cap > 0.0, "admitted with a cap of {cap}");
                        running.push(cap);
                    }
                    Admit::Go(None) => prop_assert!(false, "a capped budget gave no cap"),
                    Admit::Stop => {}
                }
            }
            Step::Start => {}
            Step::End { pick, share } if !running.is_empty() => {
                let cap = running.remove(pick % running.len());
                settle(&mut b, cap, *share);
            }
            Step::End { .. } => {}
        }
    }
    for cap in running {
        settle(&mut b, cap, 1.0);
    }
    Ok((b.spent, largest))
}

fn the_budget_is_never_passed_when_trials_keep_to_their_caps() -> Result<(), Failed> {
    // A runner counts its successes across runs: one per property.
    let runner = || {
        TestRunner::new(PropConfig {
            cases: 512,
            failure_persistence: None,
            ..PropConfig::default()
        })
    };
    // Any number of trials at once, each spending at most its cap: never over the budget.
    runner()
        .run(
            &(0.01..50.0f64, 1..6usize, steps()),
            |(max, slots, steps)| {
                let (spent, _) = play(max, slots, &steps, |cap, share| cap * share)?;
                prop_assert!(
                    spent <= max * (1.0 + 1e-9),
                    "spent {spent} of {max} with {slots} slots"
                );
                Ok(())
            },
        )
        .map_err(|e| failed(format!("{e}")))?;
    // One trial at a time, each overrunning its cap up to tenfold: the budget is passed by
    // less than one trial's cost.
    runner()
        .run(&(0.01..50.0f64, steps()), |(max, steps)| {
            let (spent, largest) = play(max, 1, &steps, |cap, share| cap * share * 10.0)?;
            prop_assert!(
                spent < max + largest + 1e-9,
                "spent {spent} of {max}, the largest trial cost {largest}"
            );
            Ok(())
        })
        .map_err(|e| failed(format!("{e}")))?;
    // No budget, no cap.
    let mut b = Budget::new(None, 2);
    ensure!(
        b.admit(0) == Admit::Go(None),
        "an uncapped battery capped a trial"
    );
    Ok(())
}

/// Regression: admission that looked only at what is left would start a trial on a sliver
/// of the budget that a mean trial's cost overruns, instead of listing it as not run.
fn a_trial_the_rest_of_the_budget_cannot_afford_is_not_started() -> Result<(), Failed> {
    let mut b = Budget::new(Some(1.0), 1);
    let cap = match b.admit(0) {
        Admit::Go(Some(cap)) => cap,
        other => return Err(format!("the first trial was not admitted: {other:?}").into()),
    };
    b.settle(Some(cap), 0.6);
    ensure!(
        b.admit(0) == Admit::Stop,
        "with 0.4 of 1.0 left and trials costing 0.6, another was admitted"
    );
    // The same spend in cheaper trials leaves room for one more.
    let mut b = Budget::new(Some(1.0), 1);
    for _ in 0..3 {
        let Admit::Go(cap) = b.admit(0) else {
            return Err("a trial the budget affords was refused".into());
        };
        b.settle(cap, 0.2);
    }
    ensure!(
        matches!(b.admit(0), Admit::Go(Some(_))),
        "with 0.4 left and trials costing 0.2, none more was admitted"
    );
    Ok(())
}

fn trials_the_budget_refuses_are_listed_as_not_run() -> Result<(), Failed> {
    // Only model arms cost money; none is admitted on a budget of zero, so no model CLI
    // is needed to see them refused.
    let f = Fixture::new(&[PROPOSAL, super::CONFLICTED]);
    let mut cfg = f.config("out", Arm::Codex);
    cfg.max_budget_usd = Some(0.0);
    let doc = battery_ok(&cfg)?.results;
    let listed: Vec<(&str, &str)> = doc
        .not_run
        .iter()
        .map(|n| (n.id.as_str(), n.reason.as_str()))
        .collect();
    let want = [
        ("conflicting/request-timeout::codex#0", "budget"),
        ("documented/checkout-timeout::codex#0", "budget"),
    ];
    ensure!(
        listed == want,
        "expected the codex trials listed as over budget, got {listed:?}"
    );
    ensure!(
        doc.trials.iter().all(|t| t.arm == Arm::Baseline) && doc.trials.len() == 2,
        "the budget stopped a free trial, or ran a refused one: {:?}",
        doc.trials.iter().map(|t| &t.id).collect::<Vec<_>>()
    );
    ensure!(!doc.complete, "a battery with trials not run says complete");
    Ok(())
}

/// A stand-in `claude`: keeps the `--max-budget-usd` it was given in output/cap.txt and
/// reports a session that cost $0.40.
const PRICED_CLAUDE: &str = r#"#!/bin/sh
prev=""
for a in "$@"; do
  if [ "$prev" = "--max-budget-usd" ]; then printf '%s' "$a" > output/cap.txt; fi
  prev="$a"
done
echo '{"type":"system","subtype":"init","session_id":"s"}'
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"duration_ms":5,"session_id":"s","total_cost_usd":0.4,"usage":{"input_tokens":10,"output_tokens":5}}'
"#;

/// Regression: admission keeps the battery's spend within the budget only if each agent is
/// held to the share it was admitted with; an agent told no cap may spend what it likes.
fn every_model_trial_is_handed_at_most_what_is_left_of_the_budget() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, super::CONFLICTED, super::DECLINE]);
    let bin = f.root().join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    let claude = bin.join("claude");
    write_executable(&claude, PRICED_CLAUDE);
    let mut cfg = f.config("out", Arm::ClaudeCode);
    cfg.jobs = 1;
    cfg.max_budget_usd = Some(1.0);
    cfg.driver.priced = true;
    cfg.driver.env = vec![("PATH".into(), format!("{}:/usr/bin:/bin", bin.display()))];
    let doc = battery_ok(&cfg)?.results;
    // One job: the trials ran in the order results.json lists them.
    let ran: Vec<_> = doc
        .trials
        .iter()
        .filter(|t| t.arm == Arm::ClaudeCode)
        .collect();
    ensure!(
        ran.len() == 2 && ran.iter().all(|t| t.infra.is_none()),
        "expected two priced trials on a $1.00 budget at $0.40 each, got {:?}",
        ran.iter().map(|t| (&t.id, &t.infra)).collect::<Vec<_>>()
    );
    let mut spent = 0.0;
    for t in &ran {
        let run = f.out("out").join(t.run.as_deref().ok_or("no run kept")?);
        let cap: f64 = std::fs::read_to_string(run.join("output/cap.txt"))
            .map_err(|e| {
                failed(format!(
                    "{}: the agent was given no --max-budget-usd: {e}",
                    t.id
                ))
            })?
            .trim()
            .parse()
            .map_err(|e| failed(format!("{}: --max-budget-usd is not a number: {e}", t.id)))?;
        ensure!(
            cap > 0.0 && cap <= 1.0 - spent + 1e-9,
            "{}: handed a cap of ${cap} with ${} of the budget left",
            t.id,
            1.0 - spent
        );
        spent += t.cost_usd;
    }
    let as_reported = (spent - 0.8).abs() < 1e-9;
    ensure!(
        as_reported,
        "the priced trials recorded ${spent}, not $0.80"
    );
    let not_run: Vec<(&str, &str)> = doc
        .not_run
        .iter()
        .map(|n| (n.id.as_str(), n.reason.as_str()))
        .collect();
    ensure!(
        not_run.len() == 1 && not_run[0].1 == "budget" && not_run[0].0.ends_with("::claude-code#0"),
        "the trial the budget could not afford is not listed: {not_run:?}"
    );
    Ok(())
}

const SESSION: &str = "conflicting/session-timeout";
const EMAIL: &str = "sensitive/customer-email";

/// A script citing a region the label names and claiming `value`, which the label rejects.
fn wrong_value_script(
    f: &Fixture,
    name: &str,
    cites: &[(&str, u32, u32)],
    predicate: &str,
    value: serde_json::Value,
) -> Script {
    let mut steps: Vec<serde_json::Value> = cites
        .iter()
        .map(|(path, a, b)| json!({"addEvidence": {"path": path, "startLine": a, "endLine": b}}))
        .collect();
    let refs: Vec<String> = (0..cites.len()).map(|i| format!("@{i}")).collect();
    steps.extend([
        json!({"addClaim": {"predicate": predicate, "value": value, "artifacts": refs}}),
        json!({"freezeResearch": {}}),
        json!({"propose": {"value": value, "claims": [format!("@{}", cites.len())],
                           "rationale": "the cited lines state it"}}),
        json!({"validate": {}}),
        json!({"finalize": {}}),
    ]);
    let file = f.root().join(name);
    write_json(
        &file,
        &json!({"format": "anvil-script", "formatVersion": 1, "steps": steps}),
    );
    Script::load(&file).unwrap()
}

fn harmful_counts(a: &ArmSummary) -> (usize, usize, Option<f64>, Option<f64>) {
    (
        a.harmful,
        a.harmful_at_auto,
        a.harmful_rate,
        a.harmful_at_auto_rate,
    )
}

fn a_wrong_value_reconciled_to_auto_is_reported_harmful_at_auto() -> Result<(), Failed> {
    let f = Fixture::new(&[SESSION, EMAIL]);
    // A unit the cited code states, on a field whose sources disagree (the label wants
    // `conflicted`): attested, grounded, auto-approvable — and wrong. The engine's gate
    // weighs the whole repository, so the fixture's copy loses the docs line that states the
    // other unit: the trial is about the reporting of a wrong auto, not the gate.
    let doc = f.scenarios().join(SESSION).join("repo/docs/sessions.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    let quiet = text.replace("seconds of inactivity", "inactivity");
    assert_ne!(text, quiet, "fixture: the docs line stating seconds moved");
    std::fs::write(&doc, quiet).unwrap();
    // …and the Redis calls whose `total_seconds()` the rules read as seconds.
    let code = f
        .scenarios()
        .join(SESSION)
        .join("repo/src/authsvc/sessions.py");
    let text = std::fs::read_to_string(&code).unwrap();
    let quiet = text.replace("total_seconds() * 1000", "as_ms()");
    assert_ne!(text, quiet, "fixture: the Redis expiry lines moved");
    std::fs::write(&code, quiet).unwrap();
    let auto = wrong_value_script(
        &f,
        "auto.json",
        &[
            ("src/authsvc/settings.py", 8, 22),
            ("src/authsvc/sessions.py", 25, 29),
        ],
        "field.unit",
        json!("ms"),
    );
    // A wrong sensitivity on the labelled regions: safety-sensitive, so it goes to review.
    let review = wrong_value_script(
        &f,
        "review.json",
        &[
            ("src/shop/logconf.py", 3, 9),
            ("src/shop/orders.py", 28, 30),
        ],
        "field.sensitivity",
        json!("secret"),
    );
    for (id, script, tier, at_auto) in [(SESSION, auto, "auto", 1), (EMAIL, review, "review", 0)] {
        let mut cfg = f.config(&format!("out-{tier}"), Arm::Scripted);
        cfg.driver.script = Some(script);
        cfg.selector = Selector {
            globs: vec![id.into()],
            ..Selector::default()
        };
        let doc = battery_ok(&cfg)?.results;
        let t = trial(&doc, id, Arm::Scripted)?;
        ensure!(
            t.patch.is_some() && t.tier.as_deref() == Some(tier),
            "{}: expected a patch at tier {tier}, got {:?} at {:?} ({:?})",
            t.id,
            t.patch,
            t.tier,
            t.reason
        );
        ensure!(
            t.harmful && t.harmful_at_auto == (at_auto == 1) && !t.correct,
            "{}: harmful {} harmfulAtAuto {} correct {}",
            t.id,
            t.harmful,
            t.harmful_at_auto,
            t.correct
        );
        let class = id.split('/').next().unwrap();
        let summary = doc
            .classes
            .iter()
            .find(|c| c.class == class)
            .ok_or("no class summary")?;
        let want = (1, at_auto, Some(1.0), Some(at_auto as f64));
        for (what, s) in [(class, summary), ("overall", &doc.overall)] {
            ensure!(
                harmful_counts(&s.arms["scripted"]) == want,
                "{what}: scripted (harmful, harmfulAtAuto, rates) = {:?}, expected {want:?}",
                harmful_counts(&s.arms["scripted"])
            );
            ensure!(
                harmful_counts(&s.arms["baseline"]) == (0, 0, Some(0.0), Some(0.0)),
                "{what}: the declining baseline is counted harmful"
            );
        }
    }
    Ok(())
}

/// Regression: a scorer that counted no patch on a `supported` scenario harmful would call
/// an overwrite of the value the label proves right harmless.
fn overwriting_a_value_the_label_proves_right_is_reported_harmful() -> Result<(), Failed> {
    let f = Fixture::new(&[SUPPORTED]);
    // The AIR's `cache_ttl` unit is `s`, which the label says is right (`supported`); the
    // script cites the labelled test and overwrites it with `ms`.
    let script = wrong_value_script(
        &f,
        "overwrite.json",
        &[("tests/cache_rules.rs", 6, 19)],
        "field.unit",
        json!("ms"),
    );
    let mut cfg = f.config("out", Arm::Scripted);
    cfg.driver.script = Some(script);
    let doc = battery_ok(&cfg)?.results;
    let t = trial(&doc, SUPPORTED, Arm::Scripted)?;
    ensure!(
        t.patch.as_ref().and_then(|p| p.get("unit")) == Some(&json!("ms")),
        "{}: expected a patch setting `ms`, got {:?} ({:?})",
        t.id,
        t.patch,
        t.reason
    );
    ensure!(
        t.harmful && !t.correct,
        "{}: an overwrite of the proven value: harmful {} correct {}",
        t.id,
        t.harmful,
        t.correct
    );
    ensure!(
        t.harmful_at_auto == (t.tier.as_deref() == Some("auto")),
        "{}: harmfulAtAuto {} at tier {:?}",
        t.id,
        t.harmful_at_auto,
        t.tier
    );
    let summary = doc
        .classes
        .iter()
        .find(|c| c.class == "only-in-tests")
        .ok_or("no class summary")?;
    for (what, s) in [("only-in-tests", summary), ("overall", &doc.overall)] {
        ensure!(
            s.arms["scripted"].harmful == 1 && s.arms["scripted"].harmful_rate == Some(1.0),
            "{what}: scripted harmful {} rate {:?}",
            s.arms["scripted"].harmful,
            s.arms["scripted"].harmful_rate
        );
        ensure!(
            s.arms["baseline"].harmful == 0,
            "{what}: the baseline is counted harmful"
        );
    }
    Ok(())
}

/// Regression: counting every change reconciled to `auto` as harmful-at-auto would report
/// the oracle's right answers as harm.
fn a_right_value_reconciled_to_auto_is_not_harmful() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let doc = battery_ok(&f.config("out", Arm::Oracle))?.results;
    let t = trial(&doc, PROPOSAL, Arm::Oracle)?;
    ensure!(
        t.correct && t.patch.is_some() && t.tier.as_deref() == Some("auto"),
        "fixture: the oracle's proposal is not a right value at auto: correct {} tier {:?} ({:?})",
        t.correct,
        t.tier,
        t.reason
    );
    ensure!(
        !t.harmful && !t.harmful_at_auto,
        "{}: a right value at auto is counted harmful {} / harmfulAtAuto {}",
        t.id,
        t.harmful,
        t.harmful_at_auto
    );
    for (what, s) in [("documented", &doc.classes[0]), ("overall", &doc.overall)] {
        ensure!(
            harmful_counts(&s.arms["oracle"]) == (0, 0, Some(0.0), Some(0.0)),
            "{what}: the oracle (harmful, harmfulAtAuto, rates) = {:?}",
            harmful_counts(&s.arms["oracle"])
        );
    }
    Ok(())
}

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "battery::the_budget_is_never_passed_when_trials_keep_to_their_caps",
            rules: &["R-BAT-15"],
            run: the_budget_is_never_passed_when_trials_keep_to_their_caps,
        },
        Check {
            name: "battery::a_trial_the_rest_of_the_budget_cannot_afford_is_not_started",
            rules: &["R-BAT-15"],
            run: a_trial_the_rest_of_the_budget_cannot_afford_is_not_started,
        },
        Check {
            name: "battery::trials_the_budget_refuses_are_listed_as_not_run",
            rules: &["R-BAT-15"],
            run: trials_the_budget_refuses_are_listed_as_not_run,
        },
        Check {
            name: "battery::every_model_trial_is_handed_at_most_what_is_left_of_the_budget",
            rules: &["R-BAT-15"],
            run: every_model_trial_is_handed_at_most_what_is_left_of_the_budget,
        },
        Check {
            name: "battery::a_right_value_reconciled_to_auto_is_not_harmful",
            rules: &["R-BAT-16"],
            run: a_right_value_reconciled_to_auto_is_not_harmful,
        },
        Check {
            name: "battery::a_wrong_value_reconciled_to_auto_is_reported_harmful_at_auto",
            rules: &["R-BAT-16"],
            run: a_wrong_value_reconciled_to_auto_is_reported_harmful_at_auto,
        },
        Check {
            name: "battery::overwriting_a_value_the_label_proves_right_is_reported_harmful",
            rules: &["R-BAT-16"],
            run: overwriting_a_value_the_label_proves_right_is_reported_harmful,
        },
    ]
}
