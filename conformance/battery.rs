//! The effectiveness battery keeps its answer key hidden, its controls honest and its
//! figures reproducible (R-BAT-1 … R-BAT-16).
//!
//! Each trial copies a few bundled scenarios and their labels into a temp dir (one
//! scenario per expected status: a proposal, a conflict, a decline and a supported value),
//! runs the battery on them through the library — or through the binary where a process
//! boundary is the point (kill and resume, exit codes) — and checks one rule's outcome.
//! `command` agents are small `sh -c` scripts run natively, so no model and no sandbox is
//! needed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use anvil_bench::battery::arm::Arm;
use anvil_bench::battery::plan::Selector;
use anvil_bench::battery::results::{ResultsDoc, TrialRecord};
use anvil_bench::battery::runner::{BatteryError, Config, Event, Outcome, run};
use anvil_bench::battery::trial::DriverConfig;
use anvil_bench::driver::ClaudeTools;
use anvil_bench::process::CancelHandle;
use anvil_bench::sandbox::Backend;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::Check;
use crate::support::{read_json, write_json};

mod controls;
mod isolation;
mod leaks;
mod records;
mod scoring;

/// One scenario per kind of expected outcome.
pub const PROPOSAL: &str = "documented/checkout-timeout";
pub const CONFLICTED: &str = "conflicting/request-timeout";
pub const DECLINE: &str = "generic-name/feature-flag";
pub const SUPPORTED: &str = "only-in-tests/cache-ttl-inferred";
pub const FOUR: [&str; 4] = [PROPOSAL, CONFLICTED, DECLINE, SUPPORTED];

pub const ENGINE: &str = env!("CARGO_BIN_EXE_anvil-bench");

fn bundled(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)
}

/// `from` copied whole to `to` (a scenario, or a results directory).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

/// A small corpus in a temp dir: `scenarios/<class>/<name>`, `labels/<class>/<name>.json`,
/// and `tmp/` (the binary's TMPDIR, so a killed battery leaves nothing behind).
pub struct Fixture {
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new(ids: &[&str]) -> Fixture {
        let f = Fixture {
            dir: tempfile::tempdir().unwrap(),
        };
        for id in ids {
            copy_tree(&bundled("scenarios").join(id), &f.scenarios().join(id));
            let label = f.label(id);
            std::fs::create_dir_all(label.parent().unwrap()).unwrap();
            std::fs::copy(bundled("labels-private").join(format!("{id}.json")), &label).unwrap();
        }
        std::fs::create_dir_all(f.root().join("tmp")).unwrap();
        f
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }
    pub fn scenarios(&self) -> PathBuf {
        self.root().join("scenarios")
    }
    pub fn labels(&self) -> PathBuf {
        self.root().join("labels")
    }
    pub fn label(&self, id: &str) -> PathBuf {
        self.labels().join(format!("{id}.json"))
    }
    pub fn out(&self, name: &str) -> PathBuf {
        self.root().join(name)
    }

    pub fn canary(&self, id: &str) -> String {
        read_json(&self.label(id))["canary"]
            .as_str()
            .unwrap()
            .to_string()
    }

    pub fn edit_label(&self, id: &str, edit: impl FnOnce(&mut Value)) {
        let mut v = read_json(&self.label(id));
        edit(&mut v);
        write_json(&self.label(id), &v);
    }

    /// The seal of the label set as it is on disk now.
    pub fn seal(&self) -> String {
        let (labels, problems) = anvil_bench::battery::load_labels(&self.labels());
        assert!(problems.is_empty(), "{problems:?}");
        anvil_bench::battery::seal(&labels)
    }

    /// Baseline against `investigator`, no controls, one repeat, two jobs, no retries,
    /// process agents native; results in `<root>/<out>`.
    pub fn config(&self, out: &str, investigator: Arm) -> Config {
        Config {
            scenarios: self.scenarios(),
            labels: self.labels(),
            investigator,
            controls: false,
            repeats: 1,
            jobs: 2,
            selector: Selector::default(),
            partition: None,
            out: self.out(out),
            resume: false,
            seed: 1,
            retries: 0,
            max_infra_failures: 10,
            max_budget_usd: None,
            driver: DriverConfig {
                script: None,
                command: vec![],
                claude_tools: ClaudeTools::Mcp,
                backend: Backend::Native {
                    allow_degraded_native: true,
                },
                model: None,
                env: vec![],
                timeout: Duration::from_mins(1),
                max_turns: None,
                hidden: vec![self.labels()],
                engine: PathBuf::from(ENGINE),
                priced: false,
            },
            investigator_version: format!("anvil-bench {}", env!("CARGO_PKG_VERSION")),
            endpoint: "none".into(),
        }
    }

    /// The `command` investigator running `sh -c script`.
    pub fn command_config(&self, out: &str, script: &str) -> Config {
        let mut cfg = self.config(out, Arm::Command);
        cfg.driver.command = sh(script);
        cfg
    }

    /// The binary, in the fixture, with its TMPDIR inside it.
    pub fn cli(&self, args: &[&str]) -> Output {
        Command::new(ENGINE)
            .args(args)
            .current_dir(self.root())
            .env("TMPDIR", self.root().join("tmp"))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// `battery --scenarios … --labels …` followed by `args`.
    pub fn battery_args<'a>(&'a self, args: &[&'a str]) -> Vec<String> {
        let mut all: Vec<String> = vec![
            "battery".into(),
            "--scenarios".into(),
            self.scenarios().display().to_string(),
            "--labels".into(),
            self.labels().display().to_string(),
        ];
        all.extend(args.iter().map(std::string::ToString::to_string));
        all
    }
}

pub fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

/// Runs the battery, ignoring its events.
pub fn battery(cfg: &Config) -> Result<Outcome, BatteryError> {
    run(cfg, &CancelHandle::new(), &mut |_: Event| {})
}

/// Runs the battery, which must end with results.
pub fn battery_ok(cfg: &Config) -> Result<Outcome, Failed> {
    battery(cfg).map_err(|e| Failed::from(format!("the battery failed: {e}")))
}

/// What a battery that should have been refused did instead, in a line.
pub fn outcome<T>(r: &Result<T, BatteryError>) -> String {
    match r {
        Ok(_) => "it ran".into(),
        Err(e) => format!("{e:?}"),
    }
}

/// The one trial of `scenario` by `arm` (repeat 0).
pub fn trial<'a>(doc: &'a ResultsDoc, scenario: &str, arm: Arm) -> Result<&'a TrialRecord, Failed> {
    doc.trials
        .iter()
        .find(|t| t.scenario == scenario && t.arm == arm && t.repeat == 0)
        .ok_or_else(|| Failed::from(format!("no trial {scenario}::{arm} in results")))
}

/// A trial record made up for the pure functions (summary, controls, determinism): every
/// figure neutral but the outcome given.
pub fn synthetic(scenario: &str, arm: Arm, repeat: u32, correct: bool) -> TrialRecord {
    let class = scenario.split('/').next().unwrap_or_default();
    let status = if correct {
        "proposal_generated"
    } else {
        "insufficient_evidence"
    };
    serde_json::from_value(json!({
        "format": "anvil-battery-trial", "formatVersion": 1,
        "id": format!("{scenario}::{arm}#{repeat}"),
        "scenario": scenario, "class": class, "skill": "annotate-unit",
        "arm": arm, "repeat": repeat,
        "status": status, "expectedStatus": "proposal_generated",
        "tier": if correct { Some("auto") } else { None }, "patch": null, "reason": null,
        "statusCorrect": correct, "valuesCorrect": correct, "correct": correct,
        "grounded": correct, "evidenceRecall": null, "claims": 0, "unsupportedClaims": 0,
        "harmful": false, "harmfulAtAuto": false,
        "contaminated": false, "contamination": [], "reachedLabels": null,
        "infra": null, "attempts": 1,
        "tokensIn": 0, "tokensOut": 0, "costUsd": 0.0, "turns": 0, "wallMs": 0,
        "startDigest": "sha256:0", "run": null
    }))
    .expect("the synthetic trial record matches TrialRecord")
}

/// A results document as two runs of the same battery must agree on it: timings, where a
/// run is kept, and the informative manifest fields are left out.
pub fn comparable(doc: &ResultsDoc) -> Value {
    let mut v = serde_json::to_value(doc).unwrap();
    for key in ["startedAt", "endedAt", "jobs", "partition", "host"] {
        v["manifest"].as_object_mut().unwrap().remove(key);
    }
    for t in v["trials"].as_array_mut().unwrap() {
        t["wallMs"] = json!(0);
        t.as_object_mut().unwrap().remove("phases");
        t["run"] = Value::Null;
    }
    let untimed = |c: &mut Value| {
        for arm in c["arms"].as_object_mut().unwrap().values_mut() {
            arm["meanWallMs"] = json!(0.0);
        }
    };
    v["classes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .for_each(untimed);
    untimed(&mut v["overall"]);
    v
}

/// Edits a results directory's results.json in place.
pub fn edit_results(dir: &Path, edit: impl FnOnce(&mut Value)) {
    let file = dir.join("results.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&file, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

pub fn checks() -> Vec<Check> {
    let mut all = isolation::checks();
    all.extend(leaks::checks());
    all.extend(controls::checks());
    all.extend(records::checks());
    all.extend(scoring::checks());
    all
}
