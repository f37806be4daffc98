//! The battery through its CLI: the real `claude` scored end to end against the replay
//! model, and the refusals a user meets first. (The README's main command over the whole
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
fn usage_errors_name_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (&["--partition", "3/2"][..], "hash:K/N"),
        (&["--partition", "hash:4/3"][..], "between 1 and N"),
        (&["--investigator", "scripted"][..], "--script"),
        (&["--scenarios", "x"][..], "--labels"),
        (&["--jobs", "0"][..], "--jobs"),
        (&["--max-budget-usd=-1"][..], "--max-budget-usd"),
    ] {
        let out = battery(tmp.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
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
