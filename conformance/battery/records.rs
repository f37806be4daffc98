//! Results that can be trusted later: manifests that refuse an incompatible resume or
//! merge (R-BAT-11), a killed battery that resumes to the same results (R-BAT-12), shards
//! that merge into the unpartitioned run (R-BAT-13), and figures recomputable from
//! results.json alone (R-BAT-14).

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anvil_bench::battery::arm::Arm;
use anvil_bench::battery::merge::merge;
use anvil_bench::battery::plan::Partition;
use anvil_bench::battery::results::{INFORMATIVE_FIELDS, Manifest, read_results, trial_file_name};
use anvil_bench::battery::runner::{BatteryError, Event, Verdict, manifest};
use anvil_bench::battery::summary::{ClassSummary, summarize};
use anvil_bench::battery::trial::Script;
use anvil_bench::driver::ClaudeTools;
use anvil_bench::process::CancelHandle;
use anvil_bench::report::ReportError;
use anvil_bench::report::diff::diff_paths;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use super::{
    CONFLICTED, DECLINE, ENGINE, Fixture, PROPOSAL, battery, battery_ok, comparable, copy_tree,
    edit_results, outcome, synthetic,
};
use crate::support::{failed, read_json, stderr, stdout, write_json};
use crate::{Check, ensure};

fn incompatible<T>(r: Result<T, BatteryError>, field: &str) -> Result<String, Failed> {
    match r {
        Err(BatteryError::Incompatible(msg)) => {
            ensure!(
                msg.contains(&format!("`{field}`")),
                "the refusal does not name `{field}`: {msg}"
            );
            Ok(msg)
        }
        other => Err(format!(
            "expected a refusal naming `{field}`, got {}",
            outcome(&other)
        )
        .into()),
    }
}

fn resuming_with_another_seed_is_refused_naming_the_field() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let cfg = f.config("out", Arm::Baseline);
    let first = battery_ok(&cfg)?.results;
    let manifest_json = std::fs::read(f.out("out").join("manifest.json")).unwrap();
    let mut again = cfg.clone();
    again.resume = true;
    again.seed = 2;
    let msg = incompatible(battery(&again), "seed")?;
    ensure!(
        msg.contains('1') && msg.contains('2'),
        "the refusal does not give both seeds: {msg}"
    );
    ensure!(
        std::fs::read(f.out("out").join("manifest.json")).unwrap() == manifest_json,
        "a refused resume rewrote the manifest"
    );
    // The same manifest resumes, and finds nothing left to do.
    again.seed = 1;
    let resumed = battery_ok(&again)?.results;
    ensure!(
        comparable(&resumed) == comparable(&first),
        "resuming a finished battery changed its results"
    );
    Ok(())
}

fn merging_shards_with_another_seed_is_refused_unless_forced() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, CONFLICTED]);
    let mut shards = Vec::new();
    for k in 1..=2 {
        let mut cfg = f.config(&format!("shard{k}"), Arm::Baseline);
        cfg.partition = Some(Partition { k, n: 2 });
        cfg.seed = u64::from(k);
        battery_ok(&cfg)?;
        shards.push(cfg.out);
    }
    let out = f.out("merged");
    incompatible(merge(&shards, &out, false), "seed")?;
    ensure!(!out.exists(), "a refused merge wrote {}", out.display());
    // The binary says the same, exit 1.
    let cli = f.cli(&[
        "battery",
        "merge",
        shards[0].to_str().unwrap(),
        shards[1].to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    ensure!(
        cli.status.code() == Some(1) && stderr(&cli).contains("`seed`"),
        "battery merge: exit {:?}, {}",
        cli.status.code(),
        stderr(&cli)
    );
    let (doc, warnings) = merge(&shards, &out, true).map_err(failed)?;
    ensure!(
        warnings.len() == 1 && warnings[0].contains("`seed`"),
        "--force does not report the one difference: {warnings:?}"
    );
    ensure!(doc.trials.len() == 2, "merged {} trials", doc.trials.len());
    Ok(())
}

/// A value of the same type that differs from `v`.
fn changed(key: &str, v: &Value) -> Value {
    match v {
        Value::String(s) => json!(format!("{s}-other")),
        Value::Bool(b) => json!(!b),
        Value::Number(n) => match n.as_u64() {
            Some(u) => json!(u + 1),
            None => json!(n.as_f64().unwrap_or(0.0) + 1.0),
        },
        Value::Array(a) => {
            let mut a = a.clone();
            if key == "arms" {
                a.pop();
            } else {
                a.push(json!("other"));
            }
            Value::Array(a)
        }
        Value::Object(o) => {
            let mut o = o.clone();
            // A field the object's type leaves free (`investigator.arm` is an enum).
            let pick = if o.contains_key("version") {
                "version".to_string()
            } else {
                o.keys().next().cloned().unwrap_or_default()
            };
            let inner = changed(&pick, &o[&pick]);
            o.insert(pick, inner);
            Value::Object(o)
        }
        Value::Null => match key {
            "maxTurns" => json!(7),
            "maxBudgetUsd" => json!(1.5),
            "partition" => json!("hash:1/2"),
            _ => json!("other"),
        },
    }
}

fn only_the_informative_manifest_fields_may_differ() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let base = manifest(
        &f.config("out", Arm::Heuristic),
        "sha256:corpus".into(),
        "sha256:labels".into(),
        true,
    );
    let informative: BTreeSet<&str> = INFORMATIVE_FIELDS.iter().copied().collect();
    let want: BTreeSet<&str> = [
        "jobs",
        "partition",
        "host",
        "startedAt",
        "endedAt",
        "anvilBenchRevision",
    ]
    .into();
    ensure!(
        informative == want,
        "the informative fields are {informative:?}"
    );
    let value = serde_json::to_value(&base).unwrap();
    let keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
    for key in &keys {
        let mut other = value.clone();
        other[key] = changed(key, &value[key]);
        let other: Manifest = serde_json::from_value(other)
            .map_err(|e| failed(format!("`{key}` changed does not parse: {e}")))?;
        let diff: Vec<String> = base
            .differences(&other, &[])
            .into_iter()
            .map(|(k, _, _)| k)
            .collect();
        if informative.contains(key.as_str()) {
            ensure!(diff.is_empty(), "informative `{key}` is compared: {diff:?}");
        } else {
            ensure!(
                diff == [key.clone()],
                "a change of `{key}` is reported as {diff:?}"
            );
        }
    }
    for must in [
        "seed",
        "corpusDigest",
        "labelSeal",
        "investigator",
        "repeats",
    ] {
        ensure!(
            keys.iter().any(|k| k == must),
            "the manifest has no `{must}`"
        );
    }
    Ok(())
}

fn a_killed_battery_resumed_equals_one_never_interrupted() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, CONFLICTED]);
    // Every command trial takes a while and ends with no answer: the kill lands mid-run.
    let args = |flag: &str, dir: &std::path::Path| -> Vec<String> {
        f.battery_args(&[
            flag,
            dir.to_str().unwrap(),
            "--no-controls",
            "--jobs",
            "1",
            "--investigator",
            "command",
            "--backend",
            "native",
            "--allow-degraded-native",
            "--command",
            "sh",
            "-c",
            "sleep 0.2",
        ])
    };
    let killed = f.out("killed");
    let mut child = Command::new(ENGINE)
        .args(args("--out", &killed))
        .current_dir(f.root())
        .env("TMPDIR", f.root().join("tmp"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let trials = killed.join("trials");
    let start = Instant::now();
    let records = |dir: &std::path::Path| {
        std::fs::read_dir(dir).map_or(0, |d| {
            d.flatten()
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .count()
        })
    };
    while records(&trials) == 0 {
        if start.elapsed() > Duration::from_mins(1) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            return Err("the battery wrote no trial record to kill it after".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: a plain signal to the child this trial spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    let done = records(&trials);
    ensure!(done < 4, "the battery finished before it was killed");
    ensure!(
        !killed.join("results.json").exists(),
        "a killed battery wrote results.json"
    );
    let stray = trials.join(".x.json.tmp-01KILLED");
    std::fs::write(&stray, "{\"half\": ").unwrap();

    let resume = args("--resume", &killed);
    let resume: Vec<&str> = resume.iter().map(String::as_str).collect();
    let resumed = f.cli(&resume);
    ensure!(
        resumed.status.success(),
        "--resume failed: {}\n{}",
        stdout(&resumed),
        stderr(&resumed)
    );
    ensure!(!stray.exists(), "the stray temp file was not swept");
    let whole = f.out("whole");
    let once = args("--out", &whole);
    let once: Vec<&str> = once.iter().map(String::as_str).collect();
    let uninterrupted = f.cli(&once);
    ensure!(
        uninterrupted.status.success(),
        "the uninterrupted battery failed: {}",
        stderr(&uninterrupted)
    );
    let a = read_results(&killed).map_err(failed)?;
    let b = read_results(&whole).map_err(failed)?;
    ensure!(
        a.trials.len() == 4 && a.complete,
        "the resumed battery is not whole"
    );
    ensure!(
        comparable(&a) == comparable(&b),
        "killed at {done} of 4 and resumed, the results differ from an uninterrupted run:\n{:#}\n{:#}",
        comparable(&a),
        comparable(&b)
    );
    Ok(())
}

/// Regression: a resume that matched finished trials without their repeat would take the
/// first repeat for all of them and never run the rest.
fn a_battery_resumed_with_repeats_missing_runs_exactly_those() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let mut cfg = f.config("whole", Arm::Heuristic);
    cfg.repeats = 3;
    let whole = battery_ok(&cfg)?.results;
    // A battery stopped after the first repeat of each arm: only those records are kept.
    let cut = f.out("cut");
    cfg.out.clone_from(&cut);
    battery_ok(&cfg)?;
    std::fs::remove_file(cut.join("results.json")).unwrap();
    let mut removed = 0;
    for entry in std::fs::read_dir(cut.join("trials")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let first = anvil_bench::battery::results::trial_file_name("x#0");
        let first = first.trim_start_matches('x');
        if !name.ends_with(first) {
            std::fs::remove_file(entry.path()).unwrap();
            removed += 1;
        }
    }
    let mut ran = Vec::new();
    cfg.resume = true;
    let resumed = anvil_bench::battery::runner::run(
        &cfg,
        &anvil_bench::process::CancelHandle::new(),
        &mut |e| {
            if let anvil_bench::battery::runner::Event::Finished { record, .. } = e {
                ran.push(record.id.clone());
            }
        },
    )
    .map_err(failed)?
    .results;
    ran.sort();
    ensure!(
        removed == 4 && ran.len() == 4 && ran.iter().all(|id| !id.ends_with("#0")),
        "removed {removed} records of later repeats; the resume ran {ran:?}"
    );
    ensure!(
        resumed.trials.len() == 6 && resumed.complete,
        "the resumed battery holds {} of 6 trials",
        resumed.trials.len()
    );
    ensure!(
        comparable(&resumed) == comparable(&whole),
        "resumed with repeats missing, the results differ from a whole run"
    );
    Ok(())
}

fn all_shards_merged_equal_the_unpartitioned_run() -> Result<(), Failed> {
    // Two scenarios in the first of two shards, one in the second.
    let three = [PROPOSAL, CONFLICTED, DECLINE];
    let f = Fixture::new(&three);
    let whole = battery_ok(&f.config("whole", Arm::Oracle))?.results;
    let mut shards = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for k in 1..=2 {
        let mut cfg = f.config(&format!("shard{k}"), Arm::Oracle);
        cfg.partition = Some(Partition { k, n: 2 });
        let doc = battery_ok(&cfg)?.results;
        let scenarios: BTreeSet<String> = doc.trials.iter().map(|t| t.scenario.clone()).collect();
        ensure!(!scenarios.is_empty(), "shard {k}/2 is empty");
        ensure!(
            doc.trials.len() == 2 * scenarios.len(),
            "shard {k}/2 split a scenario's trials"
        );
        seen.extend(scenarios);
        shards.push(cfg.out);
    }
    seen.sort();
    let mut all: Vec<String> = three.iter().map(std::string::ToString::to_string).collect();
    all.sort();
    ensure!(
        seen == all,
        "the shards do not hold every scenario exactly once: {seen:?}"
    );
    let (merged, warnings) = merge(&shards, &f.out("merged"), false).map_err(failed)?;
    ensure!(
        warnings.is_empty(),
        "shards of one battery differ: {warnings:?}"
    );
    ensure!(
        merged.manifest.partition.is_none(),
        "the merged manifest names a partition"
    );
    ensure!(
        comparable(&merged) == comparable(&whole),
        "merged shards differ from the unpartitioned run:\n{:#}\n{:#}",
        comparable(&merged),
        comparable(&whole)
    );
    Ok(())
}

/// Every contribution interval of a summary, classes then overall.
fn bounds(s: &(Vec<ClassSummary>, ClassSummary)) -> Vec<Option<(f64, f64)>> {
    s.0.iter()
        .chain(std::iter::once(&s.1))
        .map(|c| c.contribution.as_ref().map(|k| (k.low, k.high)))
        .collect()
}

fn every_interval_is_recomputed_from_results_json_alone() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, CONFLICTED]);
    battery_ok(&f.config("out", Arm::Oracle))?;
    let doc = read_results(&f.out("out")).map_err(failed)?;
    let (classes, overall) = summarize(
        &doc.trials,
        &doc.manifest.arms,
        doc.manifest.investigator.arm,
        doc.manifest.seed,
    );
    ensure!(
        classes == doc.classes,
        "the class summaries do not recompute from results.json"
    );
    ensure!(
        overall == doc.overall,
        "the overall summary does not recompute"
    );
    // On a corpus big enough for intervals to spread: the seed is what they depend on.
    let mut trials = Vec::new();
    for class in ["documented", "conflicting"] {
        for i in 0..20 {
            let s = format!("{class}/s{i}");
            for r in 0..2 {
                let k = i + r as usize;
                trials.push(synthetic(&s, Arm::Baseline, r, k.is_multiple_of(4)));
                trials.push(synthetic(&s, Arm::Heuristic, r, !(k * 7).is_multiple_of(3)));
            }
        }
    }
    let arms = [Arm::Baseline, Arm::Heuristic];
    let one = summarize(&trials, &arms, Arm::Heuristic, 1);
    let two = summarize(&trials, &arms, Arm::Heuristic, 2);
    ensure!(
        bounds(&one).iter().all(Option::is_some),
        "no interval on the synthetic corpus"
    );
    ensure!(
        bounds(&one) != bounds(&two),
        "another seed gave the same intervals: the resampling ignores the seed"
    );
    Ok(())
}

/// Regression: a manifest that left a setting out (the budget, the timeout, …) would let a
/// resume or a merge join runs that did not share it.
fn every_setting_two_runs_must_share_is_in_the_manifest() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let base_cfg = f.command_config("out", "true");
    let build = |cfg: &anvil_bench::battery::runner::Config, digest: &str, seal: &str, git| {
        manifest(cfg, digest.into(), seal.into(), git)
    };
    let base = build(&base_cfg, "sha256:corpus", "sha256:labels", true);
    type Edit = fn(&mut anvil_bench::battery::runner::Config);
    let edits: [(&str, &str, Edit); 15] = [
        ("seed", "seed", |c| c.seed += 1),
        ("repeats", "repeats", |c| c.repeats += 1),
        ("retries", "retries", |c| c.retries += 1),
        ("timeout", "trialTimeoutSecs", |c| {
            c.driver.timeout += Duration::from_secs(1);
        }),
        ("max turns", "maxTurns", |c| c.driver.max_turns = Some(7)),
        ("budget", "maxBudgetUsd", |c| c.max_budget_usd = Some(1.5)),
        ("class selection", "selection", |c| {
            c.selector.classes = vec!["documented".into()];
        }),
        ("scenario selection", "selection", |c| {
            c.selector.globs = vec!["documented/*".into()];
        }),
        ("limit", "selection", |c| c.selector.limit = Some(1)),
        ("investigator version", "investigator", |c| {
            c.investigator_version.push_str("-other");
        }),
        ("model", "investigator", |c| {
            c.driver.model = Some("other-model".into());
        }),
        ("endpoint", "investigator", |c| {
            c.endpoint = "http://other".into();
        }),
        ("backend", "investigator", |c| {
            c.driver.backend = anvil_bench::sandbox::Backend::Bubblewrap;
        }),
        ("controls", "arms", |c| c.controls = true),
        ("command", "investigator", |c| {
            c.driver.command.push("--other".into());
        }),
    ];
    for (what, field, edit) in edits {
        let mut cfg = base_cfg.clone();
        edit(&mut cfg);
        let other = build(&cfg, "sha256:corpus", "sha256:labels", true);
        let diff: Vec<String> = base
            .differences(&other, &[])
            .into_iter()
            .map(|(k, _, _)| k)
            .collect();
        ensure!(
            diff.contains(&field.to_string()),
            "another {what} leaves `{field}` unchanged in the manifest: differences {diff:?}"
        );
    }
    for (what, field, other) in [
        (
            "corpus",
            "corpusDigest",
            build(&base_cfg, "sha256:other", "sha256:labels", true),
        ),
        (
            "label set",
            "labelSeal",
            build(&base_cfg, "sha256:corpus", "sha256:other", true),
        ),
        (
            "git",
            "gitCommits",
            build(&base_cfg, "sha256:corpus", "sha256:labels", false),
        ),
    ] {
        let diff: Vec<String> = base
            .differences(&other, &[])
            .into_iter()
            .map(|(k, _, _)| k)
            .collect();
        ensure!(
            diff == [field.to_string()],
            "another {what} gives differences {diff:?}, expected [`{field}`]"
        );
    }
    // A changed investigator is named, both as the investigator and among the arms.
    let other = build(
        &f.config("out", Arm::Heuristic),
        "sha256:corpus",
        "sha256:labels",
        true,
    );
    let diff: Vec<String> = base
        .differences(&other, &[])
        .into_iter()
        .map(|(k, _, _)| k)
        .collect();
    ensure!(
        diff.contains(&"investigator".to_string()) && diff.contains(&"arms".to_string()),
        "another investigator gives differences {diff:?}"
    );
    agents_differing_only_in_their_tools_or_script_are_told_apart(&f)
}

/// Claude Code through MCP and through bash are two investigators, and so are two scripts;
/// the same script's bytes at another path are the same one (shards run on other machines).
fn agents_differing_only_in_their_tools_or_script_are_told_apart(
    f: &Fixture,
) -> Result<(), Failed> {
    let of = |cfg: &anvil_bench::battery::runner::Config| {
        manifest(cfg, "sha256:corpus".into(), "sha256:labels".into(), true)
    };
    let fields = |a: &Manifest, b: &Manifest| -> Vec<String> {
        a.differences(b, &[])
            .into_iter()
            .map(|(k, _, _)| k)
            .collect()
    };
    for arm in [Arm::ClaudeCode, Arm::Codex] {
        let mcp = f.config("out", arm);
        let mut bash = mcp.clone();
        bash.driver.claude_tools = ClaudeTools::Bash;
        let diff = fields(&of(&mcp), &of(&bash));
        ensure!(
            diff == ["investigator"],
            "{arm} through MCP and through bash give differences {diff:?}"
        );
    }
    let script = |name: &str, value: &str| {
        let file = f.root().join(name);
        write_json(
            &file,
            &json!({"format": "anvil-script", "formatVersion": 1,
                    "steps": [{"addClaim": {"predicate": "field.unit", "value": value, "artifacts": []}}]}),
        );
        Script::load(&file).unwrap()
    };
    let with = |s: Script| {
        let mut cfg = f.config("out", Arm::Scripted);
        cfg.driver.script = Some(s);
        of(&cfg)
    };
    let one = with(script("one.json", "ms"));
    let diff = fields(&one, &with(script("two.json", "s")));
    ensure!(
        diff == ["investigator"],
        "two different scripts give differences {diff:?}"
    );
    let diff = fields(&one, &with(script("copy.json", "ms")));
    ensure!(
        diff.is_empty(),
        "the same script at another path gives differences {diff:?}"
    );
    Ok(())
}

/// Regression: a merge that kept the first of two different records of one trial, dropped
/// the shards' trials not run, or kept the first shard's label seal would report a whole,
/// clean battery that was not.
fn a_merge_keeps_what_the_shards_say_against_it() -> Result<(), Failed> {
    let three = [PROPOSAL, CONFLICTED, DECLINE];
    let f = Fixture::new(&three);
    let mut shards = Vec::new();
    for k in 1..=2 {
        let mut cfg = f.config(&format!("shard{k}"), Arm::Baseline);
        cfg.partition = Some(Partition { k, n: 2 });
        battery_ok(&cfg)?;
        shards.push(cfg.out);
    }
    // One trial in two shards with different outcomes: refused, naming it.
    let twin = f.out("twin");
    copy_tree(&shards[0], &twin);
    let mut id = String::new();
    edit_results(&twin, |v| {
        let t = &mut v["trials"][0];
        id = t["id"].as_str().unwrap().to_string();
        // Another answer, consistent in itself: its status right where it was wrong.
        let status = !t["statusCorrect"].as_bool().unwrap();
        t["statusCorrect"] = json!(status);
        t["correct"] = json!(status && t["valuesCorrect"].as_bool().unwrap());
    });
    match merge(
        &[shards[0].clone(), twin, shards[1].clone()],
        &f.out("m1"),
        false,
    ) {
        Err(BatteryError::Incompatible(msg)) => ensure!(
            msg.contains(&id),
            "the refusal does not name the trial `{id}`: {msg}"
        ),
        other => {
            return Err(format!(
                "two records of `{id}` with different outcomes merged: {}",
                outcome(&other)
            )
            .into());
        }
    }
    // A trial a shard did not run stays listed, and the merge is not complete.
    edit_results(&shards[1], |v| {
        v["notRun"] = json!([{"id": "documented/elsewhere::baseline#0", "reason": "budget"}]);
        v["complete"] = json!(false);
    });
    let (doc, _) = merge(&shards, &f.out("m2"), false).map_err(failed)?;
    ensure!(
        doc.not_run
            .iter()
            .any(|n| n.id == "documented/elsewhere::baseline#0" && n.reason == "budget"),
        "the merge dropped a shard's trial not run: {:?}",
        doc.not_run
    );
    ensure!(!doc.complete, "a merge with a trial not run says complete");
    // A shard whose labels changed during its run fails the merged run.
    edit_results(&shards[1], |v| {
        v["labelSealAfter"] = json!("sha256:changed");
    });
    let (doc, _) = merge(&shards, &f.out("m3"), false).map_err(failed)?;
    ensure!(
        doc.label_seal_after != doc.manifest.label_seal
            && anvil_bench::battery::runner::verdict(&doc, false, false)
                == anvil_bench::battery::runner::Verdict::LabelsChanged,
        "a shard's changed labels vanished in the merge: sealed {}, after {}",
        doc.manifest.label_seal,
        doc.label_seal_after
    );
    Ok(())
}

/// Regression: resampling seeded from anything but results.json (the process, the clock)
/// recomputes the same in the process that ran the battery and differently anywhere else.
fn every_interval_recomputes_the_same_in_another_process() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let mut trials = Vec::new();
    for class in ["documented", "conflicting"] {
        for i in 0..20 {
            let s = format!("{class}/s{i}");
            for r in 0..2 {
                let k = i + r as usize;
                trials.push(synthetic(&s, Arm::Baseline, r, k.is_multiple_of(4)));
                trials.push(synthetic(&s, Arm::Heuristic, r, !(k * 7).is_multiple_of(3)));
            }
        }
    }
    let mut cfg = f.config("unused", Arm::Heuristic);
    cfg.repeats = 2;
    let doc = anvil_bench::battery::runner::assemble(
        manifest(&cfg, "sha256:corpus".into(), "sha256:labels".into(), true),
        trials,
        vec![],
        "sha256:labels".into(),
        true,
    );
    let s = (doc.classes.clone(), doc.overall.clone());
    ensure!(
        bounds(&s).iter().all(Option::is_some),
        "no interval on the synthetic corpus"
    );
    let here = f.out("here");
    std::fs::create_dir_all(here.join("trials")).unwrap();
    std::fs::write(
        here.join("results.json"),
        serde_json::to_vec_pretty(&doc).unwrap(),
    )
    .unwrap();
    // `battery merge` of the one directory recomputes every figure in a process of its own.
    let there = f.out("there");
    let o = f.cli(&[
        "battery",
        "merge",
        here.to_str().unwrap(),
        "--out",
        there.to_str().unwrap(),
    ]);
    ensure!(o.status.success(), "battery merge failed: {}", stderr(&o));
    let again = read_results(&there).map_err(failed)?;
    ensure!(
        again.classes == doc.classes && again.overall == doc.overall,
        "another process recomputed other figures from the same results.json: {:?} vs {:?}",
        bounds(&(again.classes.clone(), again.overall.clone())),
        bounds(&s)
    );
    Ok(())
}

/// Regression: a resume or a merge that let one comparable field through (the budget "may
/// be raised", the retries "change nothing", a field the other side lacks) joins runs that
/// did not share it. Each field, changed alone, is refused by name.
fn every_comparable_manifest_field_refuses_a_resume_and_a_merge_by_name() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let cfg = f.config("out", Arm::Baseline);
    battery_ok(&cfg)?;
    let manifest_file = cfg.out.join("manifest.json");
    let pristine_manifest = std::fs::read(&manifest_file).unwrap();
    let stored = read_json(&manifest_file);
    let twin = f.out("twin");
    copy_tree(&cfg.out, &twin);
    // An unchanged copy, so the changed shard can also come third of three: every shard is
    // compared with the first, not only the second.
    let same = f.out("same");
    copy_tree(&cfg.out, &same);
    let pristine_results = std::fs::read(twin.join("results.json")).unwrap();
    let mut again = cfg.clone();
    again.resume = true;
    let keys: Vec<String> = stored["manifest"]
        .as_object()
        .ok_or("manifest.json holds no manifest")?
        .keys()
        .filter(|k| !INFORMATIVE_FIELDS.contains(&k.as_str()))
        .cloned()
        .collect();
    for (i, key) in keys.iter().enumerate() {
        let value = changed(key, &stored["manifest"][key]);
        let mut m = stored.clone();
        m["manifest"][key] = value.clone();
        write_json(&manifest_file, &m);
        incompatible(battery(&again), key)
            .map_err(|e| failed(format!("resume: {}", e.message().unwrap_or_default())))?;
        std::fs::write(&manifest_file, &pristine_manifest).unwrap();
        edit_results(&twin, |v| v["manifest"][key] = value);
        let orders = [
            (
                "the changed shard second",
                vec![cfg.out.clone(), twin.clone()],
            ),
            (
                "the changed shard first",
                vec![twin.clone(), cfg.out.clone()],
            ),
            (
                "the changed shard third of three",
                vec![cfg.out.clone(), same.clone(), twin.clone()],
            ),
        ];
        for (j, (order, shards)) in orders.iter().enumerate() {
            incompatible(merge(shards, &f.out(&format!("m{i}-{j}")), false), key).map_err(|e| {
                failed(format!(
                    "merge, {order}: {}",
                    e.message().unwrap_or_default()
                ))
            })?;
        }
        std::fs::write(twin.join("results.json"), &pristine_results).unwrap();
    }
    ensure!(
        keys.len() >= 15,
        "only {} comparable manifest fields: {keys:?}",
        keys.len()
    );
    Ok(())
}

/// Regression: `report diff` is the other comparison R-BAT-11 holds: runs on another corpus
/// or another label set are refused by name unless forced.
fn report_diff_refuses_runs_on_another_corpus_or_label_set_unless_forced() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let cfg = f.config("out", Arm::Baseline);
    battery_ok(&cfg)?;
    for key in ["corpusDigest", "labelSeal"] {
        let other = f.out(&format!("other-{key}"));
        copy_tree(&cfg.out, &other);
        edit_results(&other, |v| v["manifest"][key] = json!("sha256:other"));
        match diff_paths(&cfg.out, &other, false) {
            Err(ReportError::Incompatible(msg)) => ensure!(
                msg.contains(&format!("`{key}`")) && msg.contains("--force"),
                "the refusal does not name `{key}`: {msg}"
            ),
            Err(e) => return Err(format!("another {key}: not a refusal but {e}").into()),
            Ok(_) => return Err(format!("runs with another {key} were compared").into()),
        }
        let forced = diff_paths(&cfg.out, &other, true).map_err(failed)?;
        let named: Vec<&str> = forced.forced.iter().map(|d| d.field.as_str()).collect();
        ensure!(
            named == [key],
            "--force lists {named:?} as forced, not `{key}`"
        );
    }
    Ok(())
}

/// Regression: a resume that trusted a record's place over its content would take one
/// trial for another and never run the one missing.
fn a_trial_record_under_another_trials_name_is_refused_on_resume() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, CONFLICTED]);
    let mut cfg = f.config("out", Arm::Baseline);
    battery_ok(&cfg)?;
    let trials = cfg.out.join("trials");
    let theirs = trial_file_name(&format!("{CONFLICTED}::baseline#0"));
    std::fs::copy(
        trials.join(trial_file_name(&format!("{PROPOSAL}::baseline#0"))),
        trials.join(&theirs),
    )
    .unwrap();
    cfg.resume = true;
    match battery(&cfg) {
        Err(BatteryError::Input(msg)) => ensure!(
            msg.contains(&theirs) && msg.contains(PROPOSAL),
            "the refusal does not name the file and the trial it holds: {msg}"
        ),
        other => {
            return Err(format!(
                "a record under another trial's name was resumed: {}",
                outcome(&other)
            )
            .into());
        }
    }
    Ok(())
}

/// Regression: a record was checked for its type and its file name only, so one edited
/// to contradict itself (another arm than its id, another class, correct without its
/// status and values, a recall over 1, a negative cost) was resumed, merged and reported
/// as a trial. Each is refused naming the record and the member, on resume and on read.
fn a_trial_record_that_contradicts_itself_is_refused_naming_the_member() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let mut cfg = f.config("out", Arm::Baseline);
    battery_ok(&cfg)?;
    cfg.resume = true;
    let record = cfg
        .out
        .join("trials")
        .join(trial_file_name(&format!("{PROPOSAL}::baseline#0")));
    let pristine = std::fs::read(&record).unwrap();
    let results = cfg.out.join("results.json");
    let pristine_results = std::fs::read(&results).unwrap();
    let edits: [(&str, Value); 6] = [
        ("id", json!("oracle")),
        ("class", json!("conflicting")),
        ("correct", Value::Null),
        ("evidenceRecall", json!(7.5)),
        ("costUsd", json!(-5.0)),
        ("unsupportedClaims", json!(1000)),
    ];
    for (field, value) in edits {
        let mut rec: Value = serde_json::from_slice(&pristine).unwrap();
        match field {
            // The id is right; the arm is not the id's.
            "id" => rec["arm"] = value,
            "correct" => rec["correct"] = json!(!rec["correct"].as_bool().unwrap()),
            _ => rec[field] = value,
        }
        write_json(&record, &rec);
        match battery(&cfg) {
            Err(BatteryError::Input(msg)) => ensure!(
                msg.contains(&record.display().to_string()) && msg.contains(&format!("`{field}`")),
                "the refusal does not name the record and `{field}`: {msg}"
            ),
            other => {
                return Err(format!(
                    "a record with an edited `{field}` was resumed: {}",
                    outcome(&other)
                )
                .into());
            }
        }
        ensure!(
            std::fs::read(&results).unwrap() == pristine_results,
            "a refused resume rewrote results.json"
        );
        // The same edit in results.json is refused by every reader of it.
        let mut doc: Value = serde_json::from_slice(&pristine_results).unwrap();
        doc["trials"][0] = rec;
        let edited = f.out(&format!("edited-{field}"));
        std::fs::create_dir_all(&edited).unwrap();
        write_json(&edited.join("results.json"), &doc);
        match read_results(&edited) {
            Err(e) => ensure!(
                e.to_string().contains(&format!("trials[0].{field}")),
                "reading results.json does not name `trials[0].{field}`: {e}"
            ),
            Ok(_) => return Err(format!("results.json with an edited `{field}` was read").into()),
        }
    }
    std::fs::write(&record, &pristine).unwrap();
    battery_ok(&cfg)?;
    Ok(())
}

/// Regression: a trial the cancel killed, kept as an infrastructure failure, would never
/// be rerun on resume: the resumed battery would hold a failure the uninterrupted one has
/// not.
fn a_cancelled_battery_keeps_no_killed_trial_and_resumes_to_the_whole_run() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    // The agent waits to be stopped until `go` exists; then it ends at once.
    let go = f.root().join("go");
    let script = format!("[ -e '{}' ] || exec sleep 600", go.display());
    let mut cfg = f.command_config("out", &script);
    cfg.jobs = 2;
    let cancel = CancelHandle::new();
    let stop = cancel.clone();
    // The baseline is in-process: it ends while the agent waits, and then the battery is
    // cancelled.
    let o = anvil_bench::battery::runner::run(&cfg, &cancel, &mut move |e| {
        if let Event::Finished { record, .. } = e
            && record.arm == Arm::Baseline
        {
            stop.cancel();
        }
    })
    .map_err(failed)?;
    let command = format!("{PROPOSAL}::command#0");
    ensure!(
        o.verdict == Verdict::Cancelled,
        "verdict {:?}, not Cancelled",
        o.verdict
    );
    ensure!(
        o.results.trials.iter().all(|t| t.arm == Arm::Baseline) && o.results.trials.len() == 1,
        "the killed trial is among the results: {:?}",
        o.results.trials
    );
    ensure!(
        o.results.not_run.len() == 1
            && o.results.not_run[0].id == command
            && o.results.not_run[0].reason == "cancelled",
        "the killed trial is not listed as cancelled: {:?}",
        o.results.not_run
    );
    ensure!(
        !cfg.out
            .join("trials")
            .join(trial_file_name(&command))
            .exists(),
        "the killed trial left a record for --resume to keep"
    );
    ensure!(!o.results.complete, "a cancelled battery says complete");
    std::fs::write(&go, "").unwrap();
    let mut again = cfg.clone();
    again.resume = true;
    let resumed = battery_ok(&again)?.results;
    let mut once = cfg.clone();
    once.out = f.out("whole");
    let whole = battery_ok(&once)?.results;
    ensure!(
        resumed.complete && resumed.trials.iter().all(|t| t.infra.is_none()),
        "the resumed battery is not whole: {:?}",
        resumed.trials
    );
    ensure!(
        comparable(&resumed) == comparable(&whole),
        "cancelled and resumed, the results differ from an uninterrupted run:\n{:#}\n{:#}",
        comparable(&resumed),
        comparable(&whole)
    );
    Ok(())
}

/// Regression: a shard that applied `--limit` to its own share rather than to the
/// selection would run scenarios the unpartitioned battery never selects.
fn shards_of_a_limited_selection_merge_into_the_unpartitioned_run() -> Result<(), Failed> {
    let three = [PROPOSAL, CONFLICTED, DECLINE];
    let f = Fixture::new(&three);
    let limited = |out: &str| {
        let mut cfg = f.config(out, Arm::Baseline);
        cfg.selector.limit = Some(2);
        cfg
    };
    let whole = battery_ok(&limited("whole"))?.results;
    ensure!(
        whole.trials.len() == 2,
        "fixture: --limit 2 ran {} trials",
        whole.trials.len()
    );
    let mut shards = Vec::new();
    for k in 1..=2 {
        let mut cfg = limited(&format!("shard{k}"));
        cfg.partition = Some(Partition { k, n: 2 });
        battery_ok(&cfg)?;
        shards.push(cfg.out);
    }
    let (merged, _) = merge(&shards, &f.out("merged"), false).map_err(failed)?;
    let ids = |d: &anvil_bench::battery::results::ResultsDoc| -> Vec<String> {
        d.trials.iter().map(|t| t.id.clone()).collect()
    };
    ensure!(
        comparable(&merged) == comparable(&whole),
        "the shards of --limit 2 merged hold {:?}, the unpartitioned run {:?}",
        ids(&merged),
        ids(&whole)
    );
    Ok(())
}

/// The refusal of an incomplete or repeated set of results directories: Incompatible,
/// holding every `needle`, and nothing written to `out`.
fn refused_cover(
    shards: &[std::path::PathBuf],
    out: &std::path::Path,
    needles: &[&str],
) -> Result<(), Failed> {
    match merge(shards, out, false) {
        Err(BatteryError::Incompatible(msg)) => {
            for n in needles {
                ensure!(msg.contains(n), "the refusal does not say `{n}`: {msg}");
            }
        }
        other => {
            return Err(format!(
                "{shards:?} merged though they do not cover the battery once: {}",
                outcome(&other)
            )
            .into());
        }
    }
    ensure!(!out.exists(), "a refused merge wrote {}", out.display());
    Ok(())
}

/// Regression: a merge that checked only that the shards agree took one shard of three,
/// the same shard twice, or a whole run beside a shard, and called the result a complete,
/// unpartitioned run. Each is refused naming the gap; forced, the merge is incomplete.
fn shards_that_do_not_cover_the_battery_once_are_refused_naming_the_gap() -> Result<(), Failed> {
    let three = [PROPOSAL, CONFLICTED, DECLINE];
    let f = Fixture::new(&three);
    let whole = f.config("whole", Arm::Baseline);
    battery_ok(&whole)?;
    let shard = |k: u32, n: u32| -> Result<std::path::PathBuf, Failed> {
        let mut cfg = f.config(&format!("shard{k}of{n}"), Arm::Baseline);
        cfg.partition = Some(Partition { k, n });
        battery_ok(&cfg)?;
        Ok(cfg.out)
    };
    let (one, two) = (shard(1, 2)?, shard(2, 2)?);
    let other_count = shard(1, 3)?;
    let again = f.out("shard1of2-again");
    copy_tree(&one, &again);
    refused_cover(
        std::slice::from_ref(&one),
        &f.out("m-missing"),
        &["hash:2/2", "missing"],
    )?;
    refused_cover(
        &[one.clone(), two.clone(), again.clone()],
        &f.out("m-twice"),
        &[
            "hash:1/2",
            "2 times",
            &one.display().to_string(),
            &again.display().to_string(),
        ],
    )?;
    refused_cover(
        &[whole.out.clone(), two.clone()],
        &f.out("m-whole"),
        &[&whole.out.display().to_string(), "whole run"],
    )?;
    refused_cover(
        &[one.clone(), two.clone(), other_count],
        &f.out("m-counts"),
        &["N = 2", "N = 3"],
    )?;
    let (forced, warnings) =
        merge(std::slice::from_ref(&one), &f.out("m-forced"), true).map_err(failed)?;
    ensure!(
        !forced.complete && warnings.iter().any(|w| w.contains("hash:2/2")),
        "a forced merge of one shard of two says complete {} with warnings {warnings:?}",
        forced.complete
    );
    let (all, warnings) = merge(&[one, two], &f.out("m-all"), false).map_err(failed)?;
    ensure!(
        all.complete && warnings.is_empty(),
        "both shards merged: complete {}, warnings {warnings:?}",
        all.complete
    );
    Ok(())
}

/// Regression: the partition is informative between runs that are compared, and a resume
/// compared only the rest, so a shard resumed as another shard claimed trials it does
/// not hold.
fn resuming_as_another_shard_is_refused_naming_the_partition() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL, CONFLICTED]);
    let mut cfg = f.config("out", Arm::Baseline);
    cfg.partition = Some(Partition { k: 1, n: 2 });
    battery_ok(&cfg)?;
    let before = std::fs::read(cfg.out.join("results.json")).unwrap();
    for (label, partition) in [
        ("another shard", Some(Partition { k: 2, n: 2 })),
        ("the whole battery", None),
    ] {
        let mut again = f.config("out", Arm::Baseline);
        again.resume = true;
        again.partition = partition;
        incompatible(battery(&again), "partition").map_err(|e| {
            failed(format!(
                "resumed as {label}: {}",
                e.message().unwrap_or_default()
            ))
        })?;
    }
    ensure!(
        std::fs::read(cfg.out.join("results.json")).unwrap() == before,
        "a refused resume rewrote results.json"
    );
    Ok(())
}

/// Regression: filters that select nothing ran an empty battery that "passed" both
/// controls, and an empty shard wrote a results.json its own reader refused (the
/// minimum detectable effect of no trial is infinite, which JSON writes as null).
fn an_empty_selection_is_refused_and_an_empty_shard_reads_back() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let selections = [
        ("--class", vec!["nope".to_string()], vec![], None),
        ("--scenario", vec![], vec!["zzz/*".to_string()], None),
        ("--limit", vec![], vec![], Some(0)),
    ];
    for (i, (flag, classes, globs, limit)) in selections.into_iter().enumerate() {
        let mut cfg = f.config(&format!("empty{i}"), Arm::Baseline);
        cfg.selector.classes = classes;
        cfg.selector.globs = globs;
        cfg.selector.limit = limit;
        match battery(&cfg) {
            Err(BatteryError::Input(msg)) => ensure!(
                msg.contains(flag) && msg.contains("matches no scenario"),
                "the refusal of an empty {flag} selection: {msg}"
            ),
            other => {
                return Err(format!("an empty {flag} selection ran: {}", outcome(&other)).into());
            }
        }
        ensure!(!cfg.out.exists(), "a refused battery created --out");
    }
    // One scenario in two shards: one of them is empty, and reads back.
    let whole = battery_ok(&f.config("whole", Arm::Baseline))?.results;
    let mut shards = Vec::new();
    for k in 1..=2 {
        let mut cfg = f.config(&format!("shard{k}"), Arm::Baseline);
        cfg.partition = Some(Partition { k, n: 2 });
        battery_ok(&cfg)?;
        let doc = read_results(&cfg.out).map_err(failed)?;
        if doc.trials.is_empty() {
            ensure!(
                doc.overall.minimum_detectable_effect.is_none(),
                "an empty shard has a detectable effect: {:?}",
                doc.overall.minimum_detectable_effect
            );
        }
        shards.push((cfg.out, doc.trials.len()));
    }
    ensure!(
        shards.iter().any(|(_, n)| *n == 0),
        "fixture: neither shard of one scenario is empty"
    );
    let dirs: Vec<_> = shards.into_iter().map(|(d, _)| d).collect();
    let (merged, _) = merge(&dirs, &f.out("merged"), false).map_err(failed)?;
    ensure!(
        comparable(&merged) == comparable(&whole),
        "an empty shard merged with the other differs from the whole run"
    );
    Ok(())
}

/// Regression: nothing kept two batteries out of one results directory, so two resumes
/// of it each ran every remaining trial and the last to write results.json won. A
/// battery holds the directory's lock while it writes; another is refused (exit 3, the
/// conflict code) and changes nothing; a lock file that is a symlink is not followed.
fn a_results_directory_in_use_by_another_battery_is_refused() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let cfg = f.config("out", Arm::Baseline);
    battery_ok(&cfg)?;
    let before = std::fs::read(cfg.out.join("results.json")).unwrap();
    let mut again = f.config("out", Arm::Baseline);
    again.resume = true;
    {
        let held = std::fs::OpenOptions::new()
            .write(true)
            .open(cfg.out.join(".lock"))
            .map_err(|e| failed(format!("the battery left no lock file: {e}")))?;
        held.lock().unwrap();
        match battery(&again) {
            Err(BatteryError::Busy(msg)) => ensure!(
                msg.contains(&cfg.out.display().to_string()) && msg.contains("another battery"),
                "the refusal does not name the directory: {msg}"
            ),
            other => {
                return Err(format!(
                    "a locked results directory was resumed: {}",
                    outcome(&other)
                )
                .into());
            }
        }
        ensure!(
            std::fs::read(cfg.out.join("results.json")).unwrap() == before,
            "a refused resume rewrote results.json"
        );
        let o = f.cli(&["battery", "--resume", cfg.out.to_str().unwrap()]);
        ensure!(
            o.status.code() == Some(3),
            "the binary exits {:?} on a locked results directory: {}",
            o.status.code(),
            stderr(&o)
        );
    }
    battery_ok(&again)?;
    let target = f.root().join("elsewhere.lock");
    std::fs::remove_file(cfg.out.join(".lock")).unwrap();
    std::os::unix::fs::symlink(&target, cfg.out.join(".lock")).unwrap();
    match battery(&again) {
        Err(BatteryError::Input(msg)) => ensure!(msg.contains(".lock"), "{msg}"),
        other => {
            return Err(format!("a symlinked lock was accepted: {}", outcome(&other)).into());
        }
    }
    ensure!(!target.exists(), "the lock's symlink was followed");
    Ok(())
}

/// Regression: a merge that compared two records of one trial by correctness alone would
/// keep either of two different answers (another status, tier or value, as wrong).
fn a_trial_in_two_shards_differing_in_status_tier_or_value_is_refused() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let cfg = f.config("out", Arm::Baseline);
    battery_ok(&cfg)?;
    let edits: [(&str, Value); 3] = [
        ("status", json!("conflicted")),
        ("tier", json!("review")),
        ("patch", json!({"unit": "furlong"})),
    ];
    for (i, (field, value)) in edits.into_iter().enumerate() {
        let twin = f.out(&format!("twin-{field}"));
        copy_tree(&cfg.out, &twin);
        let mut id = String::new();
        edit_results(&twin, |v| {
            let t = &mut v["trials"][0];
            id = t["id"].as_str().unwrap_or_default().to_string();
            ensure_changed(t, field, value);
        });
        match merge(&[cfg.out.clone(), twin], &f.out(&format!("m{i}")), false) {
            Err(BatteryError::Incompatible(msg)) => ensure!(
                msg.contains(&id),
                "the refusal does not name the trial `{id}`: {msg}"
            ),
            other => {
                return Err(format!(
                    "two records of `{id}` with another {field} merged: {}",
                    outcome(&other)
                )
                .into());
            }
        }
    }
    Ok(())
}

/// Sets `t[field]` to `value`, which must change it.
fn ensure_changed(t: &mut Value, field: &str, value: Value) {
    assert_ne!(
        t[field], value,
        "fixture: the trial's {field} is already {value}"
    );
    t[field] = value;
}

/// Regression: resampling seeded from anything but the manifest's seed (mixed with the
/// jobs, the host, …) is still deterministic, yet not recomputable from results.json.
fn every_figure_recomputes_from_the_trials_and_the_seed_in_results_json() -> Result<(), Failed> {
    let f = Fixture::new(&[PROPOSAL]);
    let mut trials = Vec::new();
    for class in ["documented", "conflicting"] {
        for i in 0..20 {
            let s = format!("{class}/s{i}");
            for r in 0..2 {
                let k = i + r as usize;
                trials.push(synthetic(&s, Arm::Baseline, r, k.is_multiple_of(4)));
                trials.push(synthetic(&s, Arm::Heuristic, r, !(k * 7).is_multiple_of(3)));
            }
        }
    }
    let mut cfg = f.config("unused", Arm::Heuristic);
    cfg.repeats = 2;
    cfg.seed = 5;
    cfg.jobs = 3;
    let doc = anvil_bench::battery::runner::assemble(
        manifest(&cfg, "sha256:corpus".into(), "sha256:labels".into(), true),
        trials,
        vec![],
        "sha256:labels".into(),
        true,
    );
    let dir = f.out("here");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("results.json"),
        serde_json::to_vec_pretty(&doc).unwrap(),
    )
    .unwrap();
    let doc = read_results(&dir).map_err(failed)?;
    let s = (doc.classes.clone(), doc.overall.clone());
    ensure!(
        bounds(&s).iter().all(Option::is_some),
        "no interval on the synthetic corpus"
    );
    let again = summarize(
        &doc.trials,
        &doc.manifest.arms,
        doc.manifest.investigator.arm,
        doc.manifest.seed,
    );
    ensure!(
        again == s,
        "the figures recomputed from results.json's trials and seed differ: {:?} vs {:?}",
        bounds(&again),
        bounds(&s)
    );
    Ok(())
}

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "battery::resuming_with_another_seed_is_refused_naming_the_field",
            rules: &["R-BAT-11"],
            run: resuming_with_another_seed_is_refused_naming_the_field,
        },
        Check {
            name: "battery::merging_shards_with_another_seed_is_refused_unless_forced",
            rules: &["R-BAT-11"],
            run: merging_shards_with_another_seed_is_refused_unless_forced,
        },
        Check {
            name: "battery::only_the_informative_manifest_fields_may_differ",
            rules: &["R-BAT-11"],
            run: only_the_informative_manifest_fields_may_differ,
        },
        Check {
            name: "battery::every_setting_two_runs_must_share_is_in_the_manifest",
            rules: &["R-BAT-11"],
            run: every_setting_two_runs_must_share_is_in_the_manifest,
        },
        Check {
            name: "battery::a_killed_battery_resumed_equals_one_never_interrupted",
            rules: &["R-BAT-12"],
            run: a_killed_battery_resumed_equals_one_never_interrupted,
        },
        Check {
            name: "battery::a_merge_keeps_what_the_shards_say_against_it",
            rules: &["R-BAT-5", "R-BAT-13", "R-BAT-15"],
            run: a_merge_keeps_what_the_shards_say_against_it,
        },
        Check {
            name: "battery::a_battery_resumed_with_repeats_missing_runs_exactly_those",
            rules: &["R-BAT-12"],
            run: a_battery_resumed_with_repeats_missing_runs_exactly_those,
        },
        Check {
            name: "battery::all_shards_merged_equal_the_unpartitioned_run",
            rules: &["R-BAT-13"],
            run: all_shards_merged_equal_the_unpartitioned_run,
        },
        Check {
            name: "battery::every_interval_recomputes_the_same_in_another_process",
            rules: &["R-BAT-14"],
            run: every_interval_recomputes_the_same_in_another_process,
        },
        Check {
            name: "battery::every_interval_is_recomputed_from_results_json_alone",
            rules: &["R-BAT-14"],
            run: every_interval_is_recomputed_from_results_json_alone,
        },
        Check {
            name: "battery::every_comparable_manifest_field_refuses_a_resume_and_a_merge_by_name",
            rules: &["R-BAT-11"],
            run: every_comparable_manifest_field_refuses_a_resume_and_a_merge_by_name,
        },
        Check {
            name: "battery::report_diff_refuses_runs_on_another_corpus_or_label_set_unless_forced",
            rules: &["R-BAT-11"],
            run: report_diff_refuses_runs_on_another_corpus_or_label_set_unless_forced,
        },
        Check {
            name: "battery::a_trial_record_under_another_trials_name_is_refused_on_resume",
            rules: &["R-BAT-12"],
            run: a_trial_record_under_another_trials_name_is_refused_on_resume,
        },
        Check {
            name: "battery::a_cancelled_battery_keeps_no_killed_trial_and_resumes_to_the_whole_run",
            rules: &["R-BAT-12"],
            run: a_cancelled_battery_keeps_no_killed_trial_and_resumes_to_the_whole_run,
        },
        Check {
            name: "battery::shards_of_a_limited_selection_merge_into_the_unpartitioned_run",
            rules: &["R-BAT-13"],
            run: shards_of_a_limited_selection_merge_into_the_unpartitioned_run,
        },
        Check {
            name: "battery::shards_that_do_not_cover_the_battery_once_are_refused_naming_the_gap",
            rules: &["R-BAT-13"],
            run: shards_that_do_not_cover_the_battery_once_are_refused_naming_the_gap,
        },
        Check {
            name: "battery::resuming_as_another_shard_is_refused_naming_the_partition",
            rules: &["R-BAT-12", "R-BAT-13"],
            run: resuming_as_another_shard_is_refused_naming_the_partition,
        },
        Check {
            name: "battery::an_empty_selection_is_refused_and_an_empty_shard_reads_back",
            rules: &["R-BAT-13"],
            run: an_empty_selection_is_refused_and_an_empty_shard_reads_back,
        },
        Check {
            name: "battery::a_results_directory_in_use_by_another_battery_is_refused",
            rules: &["R-BAT-12"],
            run: a_results_directory_in_use_by_another_battery_is_refused,
        },
        Check {
            name: "battery::a_trial_record_that_contradicts_itself_is_refused_naming_the_member",
            rules: &["R-BAT-12", "R-BAT-14"],
            run: a_trial_record_that_contradicts_itself_is_refused_naming_the_member,
        },
        Check {
            name: "battery::a_trial_in_two_shards_differing_in_status_tier_or_value_is_refused",
            rules: &["R-BAT-13"],
            run: a_trial_in_two_shards_differing_in_status_tier_or_value_is_refused,
        },
        Check {
            name: "battery::every_figure_recomputes_from_the_trials_and_the_seed_in_results_json",
            rules: &["R-BAT-14"],
            run: every_figure_recomputes_from_the_trials_and_the_seed_in_results_json,
        },
    ]
}
