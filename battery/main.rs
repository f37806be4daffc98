//! The battery test target (`cargo test --test battery`): every bundled scenario × arm is a
//! trial named `<class>/<scenario>::<arm>`.
//!
//! The deterministic arms and the controls are in the gate: the battery runs once, lazily,
//! over the scenarios the selected trials need (all of them by default; one with
//! `--exact <class>/<scenario>::<arm>`), and each trial checks its own record — finished,
//! scored, its case kept and closed; the oracle correct, the cheaters caught, the measured
//! arms clean and deterministic. The real-driver trials `<class>/<scenario>::claude-code`
//! and `<class>/<scenario>::codex` are ignored unless asked for (`--include-ignored`): they
//! run Claude Code or Codex under bubblewrap against the replay model, with no network and
//! no key.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;
use std::time::Duration;

use anvil_bench::battery::arm::Arm;
use anvil_bench::battery::load_scenarios;
use anvil_bench::battery::plan::Selector;
use anvil_bench::battery::results::{ResultsDoc, TrialRecord};
use anvil_bench::battery::runner::{Config, Event, Verdict, run};
use anvil_bench::battery::trial::DriverConfig;
use anvil_bench::driver::ClaudeTools;
use anvil_bench::process::CancelHandle;
use anvil_bench::sandbox::Backend;
use libtest_mimic::{Arguments, Failed, Trial};

const ENGINE: &str = env!("CARGO_BIN_EXE_anvil-bench");
/// The arms in the gate.
const ARMS: [Arm; 5] = [
    Arm::Baseline,
    Arm::Heuristic,
    Arm::Oracle,
    Arm::CheaterReach,
    Arm::CheaterHanded,
];
/// Repeats of every trial (`ANVIL_BATTERY_REPEATS`, default 1: the whole corpus twice is
/// minutes in a debug build). With 2 or more, a deterministic arm whose repeats disagree
/// fails its trial; the conformance suite repeats a small corpus either way (R-BAT-10).
fn repeats() -> u32 {
    std::env::var("ANVIL_BATTERY_REPEATS")
        .ok()
        .and_then(|r| r.parse().ok())
        .filter(|r| *r >= 1)
        .unwrap_or(1)
}

fn bundled(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)
}

/// Where the shared battery writes, and the scenarios it covers.
struct Plan {
    out: PathBuf,
    scenarios: Vec<String>,
    /// Scenarios in the bundled corpus (all selected: the README's main command as it is).
    total: usize,
}

static PLAN: OnceLock<Plan> = OnceLock::new();
static RESULTS: OnceLock<Result<ResultsDoc, String>> = OnceLock::new();

fn config(scenarios: &[String], out: &Path, investigator: Arm) -> Config {
    Config {
        scenarios: bundled("scenarios"),
        labels: bundled("labels-private"),
        investigator,
        controls: true,
        repeats: repeats(),
        jobs: std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
        selector: Selector {
            classes: vec![],
            globs: scenarios.to_vec(),
            limit: None,
        },
        partition: None,
        out: out.to_path_buf(),
        resume: false,
        seed: 1,
        retries: 0,
        max_infra_failures: usize::MAX,
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
            timeout: Duration::from_mins(10),
            max_turns: None,
            hidden: vec![bundled("labels-private")],
            engine: PathBuf::from(ENGINE),
            priced: false,
        },
        investigator_version: format!("anvil-bench {}", env!("CARGO_PKG_VERSION")),
        endpoint: "none".into(),
    }
}

/// The shared battery's results, run on first use: the README's main command
/// (`anvil-bench battery`, its defaults) through the real binary, with `--out` and `--json`
/// (and `--scenario` globs when the trials were filtered); its results.json must validate
/// against the schema `battery --schema` prints, and the command must exit 0.
fn results() -> Result<&'static ResultsDoc, Failed> {
    RESULTS
        .get_or_init(|| {
            let plan = PLAN
                .get()
                .expect("main sets the plan before any trial runs");
            let started = std::time::Instant::now();
            let mut cmd = std::process::Command::new(ENGINE);
            cmd.arg("battery")
                .arg("--out")
                .arg(&plan.out)
                .arg("--json")
                .arg("--repeats")
                .arg(repeats().to_string())
                .stdin(std::process::Stdio::null());
            if plan.scenarios.len() < plan.total {
                for s in &plan.scenarios {
                    cmd.arg("--scenario").arg(s);
                }
            }
            let out = cmd
                .output()
                .map_err(|e| format!("cannot run {ENGINE}: {e}"))?;
            eprintln!(
                "battery: {} scenarios × {} arms × {} repeats in {:.1}s",
                plan.scenarios.len(),
                ARMS.len(),
                repeats(),
                started.elapsed().as_secs_f64()
            );
            if !out.status.success() {
                return Err(format!(
                    "`anvil-bench battery` exited {:?}: {}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            let bytes = std::fs::read(plan.out.join("results.json"))
                .map_err(|e| format!("no results.json: {e}"))?;
            let doc: serde_json::Value =
                serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
            let schema = std::process::Command::new(ENGINE)
                .args(["battery", "--schema"])
                .output()
                .map_err(|e| e.to_string())?;
            let schema: serde_json::Value =
                serde_json::from_slice(&schema.stdout).map_err(|e| e.to_string())?;
            let validator = jsonschema::validator_for(&schema).map_err(|e| e.to_string())?;
            let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
            if !errors.is_empty() {
                return Err(format!(
                    "results.json does not match its schema: {errors:#?}"
                ));
            }
            serde_json::from_value::<ResultsDoc>(doc).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| Failed::from(e.as_str()))
}

fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Result<(), Failed> {
    if cond { Ok(()) } else { Err(msg().into()) }
}

/// The case a trial kept is under `runs/`, with its result and its close.
fn kept(out: &Path, t: &TrialRecord) -> Result<(), Failed> {
    let rel = t
        .run
        .as_ref()
        .ok_or_else(|| format!("{}: no run kept", t.id))?;
    let run = out.join(rel);
    ensure(rel.starts_with("runs/") && run.is_dir(), || {
        format!("{}: the kept run `{rel}` is missing", t.id)
    })?;
    for file in ["output/result.json", "close.json"] {
        ensure(run.join(file).is_file(), || {
            format!("{}: the kept run has no {file}", t.id)
        })?;
    }
    Ok(())
}

fn check(scenario: &str, arm: Arm) -> Result<(), Failed> {
    let doc = results()?;
    let out = &PLAN.get().expect("set in main").out;
    let mine: Vec<&TrialRecord> = doc
        .trials
        .iter()
        .filter(|t| t.scenario == scenario && t.arm == arm)
        .collect();
    let repeats = repeats();
    ensure(mine.len() == repeats as usize, || {
        format!(
            "{scenario}::{arm}: {} records, expected {repeats}",
            mine.len()
        )
    })?;
    for t in &mine {
        if let Some(i) = &t.infra {
            return Err(format!("{}: infrastructure failure: {}", t.id, i.error).into());
        }
        ensure(t.expected_status.is_some(), || {
            format!("{}: not scored against its label", t.id)
        })?;
        kept(out, t)?;
        match arm {
            Arm::Oracle => ensure(t.correct, || {
                format!(
                    "{}: the oracle cannot reach this label: expected {:?}, got {:?} ({:?})",
                    t.id, t.expected_status, t.status, t.reason
                )
            })?,
            Arm::CheaterReach | Arm::CheaterHanded => ensure(t.contaminated, || {
                format!("{}: the cheater was not caught", t.id)
            })?,
            _ => ensure(!t.contaminated, || {
                format!("{}: contaminated: {:?}", t.id, t.contamination)
            })?,
        }
    }
    if arm.deterministic() {
        let first = (
            &mine[0].status,
            mine[0].correct,
            &mine[0].tier,
            &mine[0].patch,
        );
        for t in &mine[1..] {
            ensure((&t.status, t.correct, &t.tier, &t.patch) == first, || {
                format!(
                    "{scenario}::{arm} disagrees with itself: {:?} at {:?}, then {:?} at {:?}",
                    first.0, first.2, t.status, t.tier
                )
            })?;
        }
    }
    Ok(())
}

/// A real agent on one scenario — Claude Code, or Codex — under bubblewrap with the MCP
/// tools, against the replay model on loopback.
fn real_driver(scenario: &str, arm: Arm) -> Result<(), Failed> {
    let (program, package) = match arm {
        Arm::Codex => ("codex", "@openai/codex"),
        _ => ("claude", "@anthropic-ai/claude-code"),
    };
    let missing: Vec<&str> = [program, "bwrap"]
        .into_iter()
        .filter(|t| find_on_path(t).is_none())
        .collect();
    if !missing.is_empty() {
        let msg = format!(
            "{missing:?} not on PATH (.ci/run installs them: apt bubblewrap, npm {package})"
        );
        if std::env::var("CI").as_deref() == Ok("true") {
            return Err(msg.into());
        }
        eprintln!("skipped {scenario}::{arm}: {msg}");
        return Ok(());
    }
    let endpoint = anvil_bench::battery::endpoint::start("replay:heuristic", None)
        .map_err(|e| format!("cannot start the replay model: {e}"))?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut cfg = config(&[scenario.to_string()], &dir.path().join("out"), arm);
    cfg.controls = false;
    cfg.repeats = 1;
    cfg.jobs = 1;
    cfg.driver.backend = Backend::Bubblewrap;
    let var = if arm == Arm::Codex {
        // Codex drives the models it knows in code mode: give it one it does not.
        cfg.driver.model = Some("replay".into());
        "OPENAI"
    } else {
        "ANTHROPIC"
    };
    cfg.driver.env = vec![
        (format!("{var}_BASE_URL"), endpoint.url.clone()),
        (format!("{var}_API_KEY"), "replay".into()),
    ];
    cfg.endpoint.clone_from(&endpoint.name);
    cfg.investigator_version = std::process::Command::new(program)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let o = run(&cfg, &CancelHandle::new(), &mut |_: Event| {})
        .map_err(|e| format!("the battery failed: {e}"))?;
    let t = o
        .results
        .trials
        .iter()
        .find(|t| t.arm == arm)
        .ok_or_else(|| format!("no {arm} trial in the results"))?;
    if let Some(i) = &t.infra {
        return Err(format!("{}: infrastructure failure: {}", t.id, i.error).into());
    }
    ensure(t.status.is_some() && t.expected_status.is_some(), || {
        format!("{}: the case did not finish: {:?}", t.id, t.reason)
    })?;
    eprintln!(
        "{}: {} (expected {}) at tier {:?} after {} turns",
        t.id,
        t.status.as_deref().unwrap_or("-"),
        t.expected_status.as_deref().unwrap_or("-"),
        t.tier,
        t.turns
    );
    ensure(o.verdict != Verdict::LabelsChanged, || {
        "the label set changed".into()
    })?;
    kept(&dir.path().join("out"), t)
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Whether libtest-mimic will run a trial named `name` (its own filter rules).
fn selected(args: &Arguments, name: &str, ignored: bool) -> bool {
    let matches = |pat: &str| {
        if args.exact {
            name == pat
        } else {
            name.contains(pat)
        }
    };
    if args.list || (ignored && !(args.ignored || args.include_ignored)) {
        return false;
    }
    if args.ignored && !ignored {
        return false;
    }
    args.filter.as_deref().is_none_or(matches) && !args.skip.iter().any(|s| matches(s))
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let (scenarios, problems) = load_scenarios(&bundled("scenarios"));
    assert!(
        problems.is_empty(),
        "the bundled corpus has problems: {problems:?}"
    );
    let mut ids: Vec<String> = scenarios.into_iter().map(|s| s.dir_id).collect();
    ids.sort();
    let mut trials = Vec::new();
    let mut needed = Vec::new();
    for id in &ids {
        for arm in ARMS {
            let name = format!("{id}::{arm}");
            if selected(&args, &name, false) && !needed.contains(id) {
                needed.push(id.clone());
            }
            let scenario = id.clone();
            trials.push(Trial::test(name, move || check(&scenario, arm)));
        }
        for arm in [Arm::ClaudeCode, Arm::Codex] {
            let scenario = id.clone();
            trials.push(
                Trial::test(format!("{id}::{arm}"), move || real_driver(&scenario, arm))
                    .with_ignored_flag(true),
            );
        }
    }
    // A typo in discovery must never turn the gate green.
    assert!(!trials.is_empty(), "battery discovery found zero trials");
    let dir = tempfile::tempdir().expect("a temp dir for the battery's results");
    let _ = PLAN.set(Plan {
        out: dir.path().join("out"),
        scenarios: needed,
        total: ids.len(),
    });
    let code = libtest_mimic::run(&args, trials).exit_code();
    drop(dir);
    code
}
