//! The battery through its CLI: the real `claude` and the real `codex` scored end to end
//! against the replay model, and the refusals a user meets first. (The README's main command over the whole
//! bundled corpus runs in the `battery` test target.)

mod common;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn battery(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .arg("battery")
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn results(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap()
}

/// results.json validates against the schema `battery --schema` prints.
fn assert_valid(doc: &Value) {
    let out = battery(Path::new("."), &["--schema"]);
    assert!(out.status.success());
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(
        errors.is_empty(),
        "results.json does not match its schema: {errors:#?}"
    );
}

#[test]
fn the_real_claude_is_scored_end_to_end_against_the_replay_model() {
    if !common::tools_or_skip(&["claude", "bwrap"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let out = battery(
        tmp.path(),
        &[
            "--real-driver",
            "--model-endpoint",
            "replay:heuristic",
            "--scenario",
            "documented/*",
            "--scenario",
            "sensitive/*",
            "--limit",
            "3",
            "--no-controls",
            "--jobs",
            "2",
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "exit {:?}\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = results(&out_dir);
    assert_valid(&doc);
    let m = &doc["manifest"];
    assert_eq!(m["investigator"]["arm"], "claude-code");
    assert_eq!(m["investigator"]["backend"], "bubblewrap");
    assert_eq!(m["investigator"]["endpoint"], "replay:heuristic");
    assert!(
        m["investigator"]["version"]
            .as_str()
            .unwrap()
            .contains("Claude Code"),
        "{}",
        m["investigator"]["version"]
    );
    let claude: Vec<&Value> = doc["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["arm"] == "claude-code")
        .collect();
    assert_eq!(claude.len(), 3);
    for t in &claude {
        assert!(t["infra"].is_null(), "{t}");
        assert!(t["status"].is_string(), "the agent finalized: {t}");
        assert!(t["expectedStatus"].is_string(), "scored: {t}");
        assert!(t["turns"].as_u64().unwrap() > 0, "{t}");
        assert!(t["tokensIn"].as_u64().unwrap() > 0, "{t}");
        // A replay model is never paid for.
        assert_eq!(t["costUsd"], 0.0);
        assert_eq!(t["contaminated"], false);
        let run = out_dir.join(t["run"].as_str().unwrap());
        let exec: Value =
            serde_json::from_slice(&std::fs::read(run.join("execution.json")).unwrap()).unwrap();
        // The labels were named hidden, so the sandbox attests they were unreachable.
        assert!(
            exec["attestation"]["enforced"]
                .as_array()
                .unwrap()
                .contains(&Value::from("labels_unreachable")),
            "{}",
            exec["attestation"]
        );
    }
    // Per class: both arms are summarised and a contribution is given.
    let overall = &doc["overall"];
    assert_eq!(overall["n"], 3);
    assert!(overall["arms"]["claude-code"]["accuracy"].is_number());
    assert!(overall["contribution"]["estimate"].is_number());
}

#[test]
fn the_real_codex_is_scored_end_to_end_against_the_replay_model() {
    if !common::tools_or_skip(&["codex", "bwrap"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let out = battery(
        tmp.path(),
        &[
            "--investigator",
            "codex",
            "--model-endpoint",
            "replay:heuristic",
            "--scenario",
            "unit-bearing/*",
            "--scenario",
            "sensitive/*",
            "--scenario",
            "conflicting/*",
            "--limit",
            "3",
            "--no-controls",
            "--jobs",
            "2",
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "exit {:?}\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = results(&out_dir);
    assert_valid(&doc);
    let m = &doc["manifest"]["investigator"];
    assert_eq!(m["arm"], "codex");
    assert_eq!(m["backend"], "bubblewrap");
    assert_eq!(m["endpoint"], "replay:heuristic");
    // Against a replay model Codex is given a model outside its catalogue.
    assert_eq!(m["model"], "replay");
    assert!(
        m["version"].as_str().unwrap().contains("codex"),
        "{}",
        m["version"]
    );
    let codex: Vec<&Value> = doc["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["arm"] == "codex")
        .collect();
    assert_eq!(codex.len(), 3);
    for t in &codex {
        assert!(t["infra"].is_null(), "{t}");
        assert!(t["status"].is_string(), "the agent finalized: {t}");
        assert!(t["expectedStatus"].is_string(), "scored: {t}");
        assert!(t["turns"].as_u64().unwrap() > 0, "{t}");
        assert!(t["tokensIn"].as_u64().unwrap() > 0, "{t}");
        // A replay model is never paid for, whatever the driver priced its tokens at.
        assert_eq!(t["costUsd"], 0.0);
        assert_eq!(t["contaminated"], false);
        let run = out_dir.join(t["run"].as_str().unwrap());
        let exec: Value =
            serde_json::from_slice(&std::fs::read(run.join("execution.json")).unwrap()).unwrap();
        assert_eq!(exec["driver"], "codex");
        assert!(
            exec["usage"]["totalCostUsd"]
                .as_f64()
                .is_some_and(|c| c > 0.0)
        );
        assert!(
            exec["attestation"]["enforced"]
                .as_array()
                .unwrap()
                .contains(&Value::from("labels_unreachable")),
            "{}",
            exec["attestation"]
        );
    }
    let overall = &doc["overall"];
    assert_eq!(overall["n"], 3);
    assert!(overall["arms"]["codex"]["accuracy"].is_number());
    assert!(overall["contribution"]["estimate"].is_number());
}

#[test]
fn the_real_driver_without_a_model_says_what_to_set() {
    if !common::tools_or_skip(&["claude", "bwrap"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args(["battery", "--real-driver", "--out"])
        .arg(tmp.path().join("out"))
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ANTHROPIC_API_KEY") && err.contains("--model-endpoint"),
        "{err}"
    );
    assert!(!tmp.path().join("out").exists(), "nothing was written");
}

#[test]
fn codex_without_a_model_says_what_to_set() {
    if !common::tools_or_skip(&["codex", "bwrap"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args(["battery", "--investigator", "codex", "--out"])
        .arg(tmp.path().join("out"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("OPENAI_API_KEY") && err.contains("--model-endpoint"),
        "{err}"
    );
    assert!(!tmp.path().join("out").exists(), "nothing was written");
}

#[test]
fn usage_errors_name_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (&["--partition", "3/2"][..], "hash:K/N"),
        (&["--partition", "hash:4/3"][..], "between 1 and N"),
        (&["--investigator", "scripted"][..], "--script"),
        (&["--scenarios", "x"][..], "--labels"),
        (&["--jobs", "0"][..], "--jobs"),
        (&["--max-budget-usd=-1"][..], "--max-budget-usd"),
        // A trial timed out at once and retried, or an agent allowed no turn, measures
        // nothing.
        (&["--trial-timeout", "0"][..], "--trial-timeout"),
        (&["--max-turns", "0"][..], "--max-turns"),
    ] {
        let out = battery(tmp.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// `case investigate` likewise: a zero timeout or turn limit is a usage error.
#[test]
fn investigate_refuses_a_zero_timeout_or_turn_limit() {
    for (flag, value) in [("--timeout", "0"), ("--max-turns", "0")] {
        let out = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
            .args(["case", "investigate", "no-such-run", "--driver", "scripted"])
            .args([flag, value])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(flag),
            "{flag}"
        );
    }
}

#[test]
fn a_bad_script_is_refused_before_any_trial_naming_the_file_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"format": "anvil-script", "formatVersion": 1, "steps": [{"freezeResearch": {"when": 1}}]}"#,
    )
    .unwrap();
    let good = tmp.path().join("good.json");
    std::fs::write(
        &good,
        r#"{"format": "anvil-script", "formatVersion": 1, "steps": []}"#,
    )
    .unwrap();
    let link = tmp.path().join("link.json");
    std::os::unix::fs::symlink(&good, &link).unwrap();
    for (script, needles) in [
        (&bad, &["bad.json", "when"][..]),
        (&link, &["link.json", "symlink"][..]),
        (&tmp.path().join("missing.json"), &["missing.json"][..]),
    ] {
        let out_dir = tmp.path().join("out");
        let out = battery(
            tmp.path(),
            &[
                "--investigator",
                "scripted",
                "--script",
                script.to_str().unwrap(),
                "--out",
                out_dir.to_str().unwrap(),
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{script:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        for needle in needles {
            assert!(err.contains(needle), "{script:?}: {err}");
        }
        assert!(!out_dir.exists(), "{script:?}: nothing was written");
    }
}

#[test]
fn a_results_directory_that_is_not_empty_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    std::fs::write(out_dir.join("keep.txt"), "mine").unwrap();
    let out = battery(
        tmp.path(),
        &[
            "--class",
            "documented",
            "--limit",
            "1",
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not empty") && err.contains("--resume"),
        "{err}"
    );
    let names: Vec<_> = std::fs::read_dir(&out_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, ["keep.txt"]);
}

/// Ctrl-C: scheduling stops, what finished is written, the exit is 130 and the message
/// says how to resume; resuming completes the battery.
#[test]
fn an_interrupted_battery_keeps_what_finished_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let child = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args([
            "battery",
            "--class",
            "unit-bearing",
            "--class",
            "sensitive",
            "--jobs",
            "1",
            "--out",
        ])
        .arg(&out_dir)
        .current_dir(tmp.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let trials = out_dir.join("trials");
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(2);
    while std::fs::read_dir(&trials).map_or(0, std::iter::Iterator::count) < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "no trial finished in time"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("--resume"), "{err}");
    let doc = results(&out_dir);
    assert_eq!(doc["complete"], false);
    let done = doc["trials"].as_array().unwrap().len();
    let not_run = doc["notRun"].as_array().unwrap();
    assert!(
        done >= 2 && !not_run.is_empty(),
        "{done} done, {} not run",
        not_run.len()
    );
    assert!(
        not_run.iter().all(|n| n["reason"] == "cancelled"),
        "{not_run:?}"
    );
    // Every finished trial's record is on disk.
    assert_eq!(std::fs::read_dir(&trials).unwrap().count(), done);

    let out = battery(
        tmp.path(),
        &["--resume", out_dir.to_str().unwrap(), "--jobs", "2"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = results(&out_dir);
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["trials"].as_array().unwrap().len(), 10 * 5);
    assert!(doc["notRun"].as_array().unwrap().is_empty());
}

/// A run made without the controls resumes with `--resume DIR` alone, whichever
/// investigator it scored, the oracle included (its arm is then the investigator's, not a
/// control's).
#[test]
fn a_run_without_controls_resumes_from_its_manifest_alone() {
    for investigator in ["heuristic", "oracle"] {
        let tmp = tempfile::tempdir().unwrap();
        let out_dir = tmp.path().join("out");
        let out_arg = out_dir.to_str().unwrap();
        let first = battery(
            tmp.path(),
            &[
                "--investigator",
                investigator,
                "--no-controls",
                "--limit",
                "1",
                "--out",
                out_arg,
            ],
        );
        assert!(
            first.status.success(),
            "{}",
            String::from_utf8_lossy(&first.stderr)
        );
        let before = results(&out_dir);
        let resumed = battery(tmp.path(), &["--resume", out_arg]);
        assert!(
            resumed.status.success(),
            "{investigator}: {}",
            String::from_utf8_lossy(&resumed.stderr)
        );
        let after = results(&out_dir);
        assert_eq!(
            after["manifest"]["arms"], before["manifest"]["arms"],
            "{investigator}"
        );
        assert_eq!(after["trials"], before["trials"], "{investigator}");
    }
}

/// Every trial's record says where its wall time went: phases that add up to it, the
/// agent's process inside the investigation for a process arm, none for an in-process one.
#[test]
fn a_trial_record_accounts_for_its_wall_time_by_phase() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let out = battery(
        tmp.path(),
        &[
            "--investigator",
            "command",
            "--backend",
            "native",
            "--allow-degraded-native",
            "--limit",
            "1",
            "--out",
            out_dir.to_str().unwrap(),
            "--command",
            "sh",
            "-c",
            "sleep 0.3",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = results(&out_dir);
    assert_valid(&doc);
    let trials = doc["trials"].as_array().unwrap();
    assert!(trials.len() >= 2, "{trials:?}");
    let mut process_arms = 0;
    for t in trials {
        let id = t["id"].as_str().unwrap();
        let p = t["phases"]
            .as_object()
            .unwrap_or_else(|| panic!("{id}: no phases"));
        let us = |k: &str| p[k].as_u64().unwrap_or_else(|| panic!("{id}: no {k}"));
        let sum: u64 = [
            "prepareUs",
            "openUs",
            "investigateUs",
            "endUs",
            "scanUs",
            "scoreUs",
            "keepUs",
        ]
        .iter()
        .map(|k| us(k))
        .sum();
        // wallMs is the whole in milliseconds, truncated; the phases leave out only the
        // clock reads between them.
        let wall_us = t["wallMs"].as_u64().unwrap() * 1000;
        assert!(
            sum + 1000 >= wall_us && sum < wall_us + 1000,
            "{id}: phases sum to {sum} µs, wall {wall_us} µs: {p:?}"
        );
        let arm = t["arm"].as_str().unwrap();
        if ["command", "cheater-reach", "cheater-handed"].contains(&arm) {
            process_arms += 1;
            let agent = us("agentProcessUs");
            let least = if arm == "command" { 300_000 } else { 1 };
            assert!(
                agent >= least && agent <= us("investigateUs"),
                "{id}: the agent's process {agent} µs, the investigation {} µs",
                us("investigateUs")
            );
        } else {
            assert!(
                !p.contains_key("agentProcessUs"),
                "{id}: an in-process arm with an agent process: {p:?}"
            );
        }
    }
    assert_eq!(process_arms, 3, "{trials:?}");
}
