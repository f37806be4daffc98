//! The effectiveness battery's cost: one trial per arm that runs in this process or as the
//! engine's own binary (`battery_trial/…`), and the trial pool's `--jobs` scaling against a
//! latency-bound agent (`battery_jobs/…`).
//!
//! `cargo bench --bench battery` (add `-- --quick` for a short run, `-- battery_trial/` or
//! `-- battery_jobs/` for one group).
//!
//! * `battery_trial/<arm>` times [`trial::run`] — exactly what a worker of the battery's pool
//!   calls for one planned trial: a fresh copy of the scenario's prepared repository, the
//!   case opened, the arm's investigation, finalize and close to a scratch AIR, the
//!   contamination scan, the label fetched and the score, the case kept under the results'
//!   `runs/`. Preparing the scenario's template (once per battery) and writing the trial's
//!   record (the pool's) are outside it. The arms are those that need no sandbox, network
//!   or model: baseline, heuristic, overclaim and the oracle in process, and both cheaters,
//!   which run the engine's `battery-cheater` natively as the battery runs them. The
//!   scripted arm needs a `--script` file, the command arm a command (see `battery_jobs`),
//!   and claude-code and codex their CLIs.
//! * `battery_jobs/jobs_{1,8}` times [`runner::run`] — the whole battery as `anvil-bench
//!   battery --investigator command --no-controls --limit 8 --jobs N` runs it: 8 scenarios ×
//!   (baseline + the command arm), the command agent being `sh` thinking [`THINK_MS`] per turn
//!   for [`TURNS`] turns and calling no rail (the harness then finalizes its case
//!   `insufficient_evidence`). The latency-injected replay model (`replay-model
//!   --latency-ms`) only reaches agents that call a model — the claude-code and codex arms,
//!   which need their CLIs and bubblewrap — so the agent's think time is its own, as in
//!   `benches/side_by_side.sh`. The agent runs under bubblewrap when `bwrap` is on `PATH`
//!   (the CLI's default backend) and natively otherwise; the bench prints which.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anvil_bench::battery::arm::Arm;
use anvil_bench::battery::load_scenarios;
use anvil_bench::battery::plan::Selector;
use anvil_bench::battery::runner::{self, Config, Event};
use anvil_bench::battery::trial::{self, DriverConfig, Prepared, TrialContext};
use anvil_bench::battery::vault::Vault;
use anvil_bench::battery::workspace::git_available;
use anvil_bench::driver::ClaudeTools;
use anvil_bench::process::CancelHandle;
use anvil_bench::sandbox::Backend;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

const ENGINE: &str = env!("CARGO_BIN_EXE_anvil-bench");
/// The scenario every `battery_trial` bench runs.
const SCENARIO: &str = "unit-bearing/retry-delay";
/// The arms `battery_trial` times.
const TRIAL_ARMS: [Arm; 6] = [
    Arm::Baseline,
    Arm::Heuristic,
    Arm::Overclaim,
    Arm::Oracle,
    Arm::CheaterHanded,
    Arm::CheaterReach,
];
/// Scenarios of the `battery_jobs` battery (each run by the baseline and the command arm).
const JOBS_SCENARIOS: usize = 8;
/// The command agent's turns per trial, and its think time per turn.
const TURNS: u32 = 5;
const THINK_MS: u64 = 100;

fn bundled(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)
}

fn driver(backend: Backend) -> DriverConfig {
    DriverConfig {
        script: None,
        command: vec![],
        claude_tools: ClaudeTools::Mcp,
        backend,
        model: None,
        env: vec![],
        timeout: Duration::from_secs(120),
        max_turns: None,
        hidden: vec![bundled("labels-private")],
        engine: PathBuf::from(ENGINE),
        priced: false,
    }
}

fn bench_trial(c: &mut Criterion) {
    let (scenarios, problems) = load_scenarios(&bundled("scenarios"));
    assert!(problems.is_empty(), "the bundled corpus: {problems:?}");
    let scenario = scenarios
        .iter()
        .find(|s| s.dir_id == SCENARIO)
        .expect("the bench's scenario is bundled");
    let vault = Vault::open(&bundled("labels-private")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let prepared = Arc::new(Prepared::new(scenario, work.path(), git_available()).unwrap());
    // The cheaters choose their own backend (native, nothing hidden); the others spawn
    // nothing.
    let driver = driver(Backend::Native {
        allow_degraded_native: false,
    });
    let cancel = CancelHandle::new();

    let mut g = c.benchmark_group("battery_trial");
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(5));
    for arm in TRIAL_ARMS {
        g.bench_function(arm.as_str(), |b| {
            b.iter_batched(
                // A fresh results directory: the trial keeps its case under it.
                || tempfile::tempdir().unwrap(),
                |out| {
                    let ctx = TrialContext {
                        vault: &vault,
                        driver: &driver,
                        work_root: work.path(),
                        out_dir: out.path(),
                        budget_usd: None,
                        cancel: &cancel,
                    };
                    black_box(trial::run(&prepared, arm, 0, &ctx).unwrap());
                    // Returned, so removing it is not timed.
                    out
                },
                BatchSize::PerIteration,
            );
        });
    }
    g.finish();
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// The `battery_jobs` battery writing to `out`, on `jobs` workers.
fn jobs_config(out: &Path, jobs: usize, backend: Backend) -> Config {
    let mut driver = driver(backend);
    driver.command = vec![
        "sh".into(),
        "-c".into(),
        format!(
            "for i in $(seq {TURNS}); do sleep {}; done",
            THINK_MS as f64 / 1000.0
        ),
    ];
    Config {
        scenarios: bundled("scenarios"),
        labels: bundled("labels-private"),
        investigator: Arm::Command,
        controls: false,
        repeats: 1,
        jobs,
        selector: Selector {
            classes: vec![],
            globs: vec![],
            limit: Some(JOBS_SCENARIOS),
        },
        partition: None,
        out: out.to_path_buf(),
        resume: false,
        seed: 1,
        retries: 0,
        max_infra_failures: usize::MAX,
        max_budget_usd: None,
        driver,
        investigator_version: format!("anvil-bench {}", env!("CARGO_PKG_VERSION")),
        endpoint: "none".into(),
    }
}

fn bench_jobs(c: &mut Criterion) {
    let backend = if on_path("bwrap") {
        Backend::Bubblewrap
    } else {
        Backend::Native {
            allow_degraded_native: true,
        }
    };
    eprintln!(
        "battery_jobs: {JOBS_SCENARIOS} scenarios × (baseline, command), the command agent \
         thinking {THINK_MS} ms × {TURNS} turns, run {}",
        if backend == Backend::Bubblewrap {
            "under bubblewrap"
        } else {
            "natively (bwrap is not on PATH)"
        }
    );
    let cancel = CancelHandle::new();
    let mut g = c.benchmark_group("battery_jobs");
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(10));
    for jobs in [1usize, 8] {
        g.bench_function(format!("jobs_{jobs}"), |b| {
            b.iter_batched(
                || {
                    let dir = tempfile::tempdir().unwrap();
                    let cfg = jobs_config(&dir.path().join("out"), jobs, backend);
                    (dir, cfg)
                },
                |(dir, cfg)| {
                    let outcome = runner::run(&cfg, &cancel, &mut |_: Event| {}).unwrap();
                    let infra: Vec<_> = outcome
                        .results
                        .trials
                        .iter()
                        .filter_map(|t| t.infra.as_ref())
                        .collect();
                    assert!(infra.is_empty(), "a trial failed to run: {infra:?}");
                    black_box(outcome);
                    dir
                },
                BatchSize::PerIteration,
            );
        });
    }
    g.finish();
}

criterion_group!(benches, bench_trial, bench_jobs);
criterion_main!(benches);
