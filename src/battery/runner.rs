//! The battery runner: resolves the corpus and the labels, plans the trials, runs them in
//! the trial pool (`pool`: `jobs` workers with retries, a budget and cancellation, each
//! trial's record written as it ends), and assembles results.json. It emits [`Event`]s; it
//! formats no text.
//!
//! Invariant: nothing is scored from a trial that did not end; a trial record on disk is
//! whole (atomic rename) and final, so `--resume` keeps it and reruns only what is missing
//! (R-BAT-12); the label seal is taken before the first trial and re-taken after the last
//! (R-BAT-5); the labels are refused when a trial could reach them (R-BAT-1).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::arm::Arm;
use super::corpus::{Scenario, load_scenarios};
use super::plan::{Planned, plan};
use super::pool::execute;
use super::results::{
    FORMAT_VERSION, Host, MANIFEST_JSON, Manifest, NotRun, RESULTS_FORMAT, RESULTS_JSON,
    ResultsDoc, Selection, TRIAL_FORMAT, TRIALS_DIR, TrialRecord, read_versioned, trial_file_name,
    trial_id,
};
use super::summary::{controls, summarize};
use super::trial::Prepared;
use super::vault::Vault;
use super::workspace;
use crate::process::CancelHandle;
// The configuration, the events and the budget keep their paths here.
pub use super::config::{Config, Event};
pub use super::pool::{Admit, Budget};

/// How the battery ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Completed,
    ControlsFailed,
    LabelsChanged,
    Nondeterministic,
    InfraLimit,
    Cancelled,
}

#[derive(Debug)]
pub struct Outcome {
    pub results: ResultsDoc,
    pub dir: PathBuf,
    pub verdict: Verdict,
}

#[derive(Debug, thiserror::Error)]
pub enum BatteryError {
    /// Bad input: the corpus, the labels, the flags, a results directory.
    #[error("{0}")]
    Input(String),
    /// A manifest that differs from the one being resumed or merged.
    #[error("{0}")]
    Incompatible(String),
    #[error("{0}")]
    Fatal(String),
    /// The results directory is locked by another battery.
    #[error("{0}")]
    Busy(String),
}

fn canonical(p: &Path) -> Result<PathBuf, BatteryError> {
    std::fs::canonicalize(p).map_err(|e| BatteryError::Input(format!("`{}`: {e}", p.display())))
}

/// R-BAT-1: the labels are reachable from no trial. Trials see only their own copy of a
/// scenario repository (symlinks refused), so the labels must not lie inside the corpus,
/// nor the corpus or the results inside the labels.
///
/// # Errors
///
/// `BatteryError::Input` when `scenarios` or `labels` cannot be canonicalised, the labels
/// lie inside the scenarios (or the scenarios inside the labels), or the results directory
/// `out` and the labels overlap.
pub fn check_labels_unreachable(
    scenarios: &Path,
    labels: &Path,
    out: &Path,
) -> Result<(), BatteryError> {
    let s = canonical(scenarios)?;
    let l = canonical(labels)?;
    if l.starts_with(&s) {
        return Err(BatteryError::Input(format!(
            "the labels directory `{}` is inside the scenarios directory `{}`: a trial's repository copy could reach it; keep the labels outside the corpus",
            l.display(),
            s.display()
        )));
    }
    if s.starts_with(&l) {
        return Err(BatteryError::Input(format!(
            "the scenarios directory `{}` is inside the labels directory `{}`",
            s.display(),
            l.display()
        )));
    }
    // The results directory usually does not exist yet: resolve what does.
    let o = canonical_lenient(out);
    if o.starts_with(&l) || l.starts_with(&o) {
        return Err(BatteryError::Input(format!(
            "the results directory `{}` and the labels directory `{}` overlap: kept runs would sit beside the answer key",
            o.display(),
            l.display()
        )));
    }
    if o.starts_with(&s) || s.starts_with(&o) {
        return Err(BatteryError::Input(format!(
            "the results directory `{}` and the scenarios directory `{}` overlap: results hold every label's expected values and canary, and inside the corpus a trial's repository copy would carry them",
            o.display(),
            s.display()
        )));
    }
    Ok(())
}

/// `p` resolved through its nearest existing ancestor (symlinks and `..` included), the
/// rest appended as written.
#[must_use]
pub fn canonical_lenient(p: &Path) -> PathBuf {
    let p = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    for anc in p.ancestors() {
        if let Ok(c) = std::fs::canonicalize(anc) {
            return c.join(p.strip_prefix(anc).unwrap_or(Path::new("")));
        }
    }
    p
}

/// sha256 over every file of the corpus (relative paths and bytes).
///
/// # Errors
///
/// `BatteryError::Input` when a directory or file under `scenarios` cannot be listed,
/// inspected or read.
pub fn corpus_digest(scenarios: &Path) -> Result<String, BatteryError> {
    workspace::tree_digest(scenarios).map_err(|e| BatteryError::Input(e.to_string()))
}

fn skill_policy_hashes() -> BTreeMap<String, String> {
    let reg = crate::skill::registry();
    reg.skills
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                crate::case::doc::CasePolicy::build(s, reg.default_scopes.clone()).hash(),
            )
        })
        .collect()
}

/// The manifest of a run of `cfg` on a corpus with `digest` and labels with `seal`.
pub fn manifest(cfg: &Config, digest: String, seal: String, git: bool) -> Manifest {
    Manifest {
        anvil_bench_version: env!("CARGO_PKG_VERSION").into(),
        anvil_bench_revision: option_env!("ANVIL_BENCH_REVISION").map(str::to_string),
        corpus_digest: digest,
        label_seal: seal,
        investigator: super::results::Investigator {
            arm: cfg.investigator,
            version: cfg.investigator_version.clone(),
            model: cfg.driver.model.clone(),
            endpoint: cfg.endpoint.clone(),
            backend: if cfg.investigator.spawns() {
                match cfg.driver.backend {
                    crate::sandbox::Backend::Bubblewrap => "bubblewrap".into(),
                    crate::sandbox::Backend::Native { .. } => "native".into(),
                }
            } else {
                "in_process".into()
            },
            tools: matches!(cfg.investigator, Arm::ClaudeCode | Arm::Codex)
                .then(|| cfg.driver.claude_tools.as_str().to_string()),
            script: cfg
                .driver
                .script
                .as_ref()
                .filter(|_| cfg.investigator == Arm::Scripted)
                .map(|s| s.digest.clone()),
            command: if cfg.investigator == Arm::Command {
                cfg.driver.command.clone()
            } else {
                vec![]
            },
        },
        arms: cfg.arms(),
        brief_template_hash: crate::canon::bytes_hash(include_bytes!("../case/views.rs")),
        skill_policy_hashes: skill_policy_hashes(),
        tool_limits: serde_json::to_value(crate::tools::ToolLimits::default()).unwrap_or_default(),
        repeats: cfg.repeats,
        seed: cfg.seed,
        selection: Selection {
            classes: cfg.selector.classes.clone(),
            scenarios: cfg.selector.globs.clone(),
            limit: cfg.selector.limit,
        },
        trial_timeout_secs: cfg.driver.timeout.as_secs(),
        max_turns: cfg.driver.max_turns,
        max_budget_usd: cfg.max_budget_usd,
        retries: cfg.retries,
        git_commits: git,
        jobs: cfg.jobs,
        partition: cfg.partition.map(|p| p.to_string()),
        host: Host {
            os: std::env::consts::OS.into(),
            arch: std::env::consts::ARCH.into(),
            cores: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        },
        started_at: crate::case::lifecycle::now(),
        ended_at: None,
    }
}

/// Loads the finished trial records under `dir/trials/` (a leftover temp file from a kill is
/// swept; a record that does not parse is an error naming it).
///
/// # Errors
///
/// `BatteryError::Input` naming the file when a trial record does not parse as a versioned
/// trial record, or holds a trial whose record belongs in another file name. A missing
/// `trials/` directory is no trials.
pub fn load_trials(dir: &Path) -> Result<Vec<TrialRecord>, BatteryError> {
    let trials = dir.join(TRIALS_DIR);
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&trials) else {
        return Ok(out);
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') && name.contains(".tmp-") {
            let _ = std::fs::remove_file(&p);
            continue;
        }
        let rec: TrialRecord =
            read_versioned(&p, TRIAL_FORMAT).map_err(|e| BatteryError::Input(e.to_string()))?;
        if let Some((field, why)) = rec.inconsistency() {
            return Err(BatteryError::Input(format!(
                "`{}`: at `{field}`: {why}",
                p.display()
            )));
        }
        if trial_file_name(&rec.id) != name {
            return Err(BatteryError::Input(format!(
                "`{}`: holds trial `{}`, whose record belongs in `{}`",
                p.display(),
                rec.id,
                trial_file_name(&rec.id)
            )));
        }
        out.push(rec);
    }
    Ok(out)
}

/// Deterministic arms whose repeats disagree (R-BAT-10): `<scenario>::<arm>`.
pub fn nondeterministic(trials: &[TrialRecord]) -> Vec<String> {
    /// What must agree across repeats: status, correctness, tier and the patch (as
    /// canonical JSON): two different wrong values are two outcomes.
    type Outcome = (Option<String>, bool, Option<String>, Option<String>);
    let mut outcomes: BTreeMap<(String, Arm), BTreeSet<Outcome>> = BTreeMap::new();
    for t in trials
        .iter()
        .filter(|t| t.counted() && t.arm.deterministic())
    {
        outcomes
            .entry((t.scenario.clone(), t.arm))
            .or_default()
            .insert((
                t.status.clone(),
                t.correct,
                t.tier.clone(),
                t.patch.as_ref().map(crate::canon::canonical_json),
            ));
    }
    outcomes
        .into_iter()
        .filter(|(_, o)| o.len() > 1)
        .map(|((s, a), _)| format!("{s}::{a}"))
        .collect()
}

/// Sorts trial records the one way results.json lists them.
pub fn sort_trials(trials: &mut [TrialRecord], arms: &[Arm]) {
    let pos = |a: Arm| arms.iter().position(|x| *x == a).unwrap_or(usize::MAX);
    trials.sort_by(|a, b| {
        (&a.scenario, pos(a.arm), a.arm, a.repeat).cmp(&(&b.scenario, pos(b.arm), b.arm, b.repeat))
    });
}

/// Assembles results.json from trial records (also used by merge).
#[must_use]
pub fn assemble(
    manifest: Manifest,
    mut trials: Vec<TrialRecord>,
    not_run: Vec<NotRun>,
    label_seal_after: String,
    complete: bool,
) -> ResultsDoc {
    sort_trials(&mut trials, &manifest.arms);
    let (classes, overall) = summarize(
        &trials,
        &manifest.arms,
        manifest.investigator.arm,
        manifest.seed,
    );
    let controls = controls(&trials, &manifest.arms);
    ResultsDoc {
        format: RESULTS_FORMAT.into(),
        format_version: FORMAT_VERSION,
        nondeterministic: nondeterministic(&trials),
        manifest,
        trials,
        not_run,
        classes,
        overall,
        controls,
        label_seal_after,
        complete,
    }
}

/// The verdict of a finished results document.
#[must_use]
pub fn verdict(doc: &ResultsDoc, cancelled: bool, infra_limit: bool) -> Verdict {
    if doc.label_seal_after != doc.manifest.label_seal {
        Verdict::LabelsChanged
    } else if infra_limit {
        Verdict::InfraLimit
    } else if cancelled {
        Verdict::Cancelled
    } else if !doc.controls.passed() {
        Verdict::ControlsFailed
    } else if !doc.nondeterministic.is_empty() {
        Verdict::Nondeterministic
    } else {
        Verdict::Completed
    }
}

/// Runs the battery.
///
/// # Errors
///
/// `BatteryError::Input` for a corpus with problems or no scenario, labels reachable from a
/// trial, a label set that does not open, a `--scenario` glob that does not compile, a
/// selected scenario without a label, an unreadable corpus, a non-empty `--out` that is not
/// resumed, or a scenario template that cannot be prepared; `BatteryError::Incompatible`
/// when a resumed directory's manifest differs; `BatteryError::Fatal` when results.json
/// cannot be written or a trial failed fatally (the finished trials are kept for
/// `--resume`).
pub fn run(
    cfg: &Config,
    cancel: &CancelHandle,
    events: &mut (dyn FnMut(Event) + Send),
) -> Result<Outcome, BatteryError> {
    let (scenarios, vault, selected) = load_corpus(cfg)?;
    let selected: Vec<&str> = selected.iter().map(String::as_str).collect();
    let git = workspace::git_available();
    if !git {
        events(Event::Note(
            "git not found: trials run on uncommitted copies (source revision `none`); install it with `apt-get install git`".into(),
        ));
    }
    let arms = cfg.arms();
    let digest = corpus_digest(&cfg.scenarios)?;
    let mut manifest = manifest(cfg, digest, vault.seal().to_string(), git);

    // Held until the battery returns.
    let (mut done, _lock) = open_results_dir(cfg, &mut manifest)?;

    let planned = plan(&selected, &arms, cfg.repeats);
    let done_ids: BTreeSet<String> = done.iter().map(|t| t.id.clone()).collect();
    let todo: VecDeque<Planned> = planned
        .iter()
        .filter(|p| !done_ids.contains(&trial_id(&p.scenario, p.arm, p.repeat)))
        .cloned()
        .collect();
    events(Event::Planned {
        total: planned.len(),
        already_done: planned.len() - todo.len(),
        scenarios: selected.len(),
        arms: &arms,
        repeats: cfg.repeats,
        jobs: cfg.jobs,
    });

    // Prepare each scenario's starting state once, at a neutral path.
    let needed: BTreeSet<&str> = todo.iter().map(|p| p.scenario.as_str()).collect();
    let wanted: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| needed.contains(s.dir_id.as_str()))
        .collect();
    let scratch = scratch_dir(&arms, &wanted, cfg.jobs);
    if scratch == Path::new(SHM) {
        events(Event::Note(format!(
            "scratch (templates and trial worlds) on tmpfs, {SHM}: no trial runs an outside agent; set TMPDIR to keep it on a disk"
        )));
    }
    let work_root = scratch.join(format!(
        "anvil-{}",
        ulid::Ulid::new().to_string().to_lowercase()
    ));
    let prepared = prepare_templates(&wanted, &work_root, git, cfg.jobs)?;

    let result = execute(
        cfg,
        &vault,
        &prepared,
        todo,
        &work_root,
        cancel,
        planned.len(),
        done.len(),
        events,
    );
    let _ = std::fs::remove_dir_all(&work_root);
    let (new, not_run, infra_limit, fatal) = result;
    done.extend(new);
    let cancelled = cancel.is_cancelled();
    let seal_after = vault
        .reseal()
        .unwrap_or_else(|e| format!("unreadable: {e}"));
    manifest.ended_at = Some(crate::case::lifecycle::now());
    let complete = not_run.is_empty() && fatal.is_none() && done.len() == planned.len();
    let doc = assemble(manifest, done, not_run, seal_after, complete);
    crate::fsio::write_json_atomic(&cfg.out.join(RESULTS_JSON), &doc)
        .map_err(|e| BatteryError::Fatal(format!("writing results.json: {e}")))?;
    if let Some(f) = fatal {
        return Err(BatteryError::Fatal(format!(
            "{f}\nthe trials that finished are kept; continue with --resume {}",
            cfg.out.display()
        )));
    }
    let verdict = verdict(&doc, cancelled, infra_limit);
    Ok(Outcome {
        results: doc,
        dir: cfg.out.clone(),
        verdict,
    })
}

/// The corpus, the label vault and the scenarios selected (and in this partition), each
/// checked: no corpus problem, labels out of every trial's reach, a label for every one.
fn load_corpus(cfg: &Config) -> Result<(Vec<Scenario>, Vault, Vec<String>), BatteryError> {
    let (scenarios, problems) = load_scenarios(&cfg.scenarios);
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
        return Err(BatteryError::Input(format!(
            "the corpus at `{}` has problems (see `anvil-bench scenarios check`):\n{}",
            cfg.scenarios.display(),
            list.join("\n")
        )));
    }
    if scenarios.is_empty() {
        return Err(BatteryError::Input(format!(
            "no scenario under `{}` (expected <class>/<name>/scenario.json)",
            cfg.scenarios.display()
        )));
    }
    check_labels_unreachable(&cfg.scenarios, &cfg.labels, &cfg.out)?;
    // What `scenarios check` names (but the oracle's reach and the coverage, which take
    // their own runs): a label or scenario it refuses would be scored wrongly or fail a
    // control in a way that names neither — a scenario in the wrong class, a canary that
    // is not one, evidence outside the repository, a canary inside the corpus.
    let report = super::check::check_loaded(
        &cfg.scenarios,
        &scenarios,
        Vec::new(),
        &cfg.labels,
        super::check::Options {
            coverage: false,
            oracle: false,
        },
    );
    if !report.ok() {
        let list: Vec<String> = report.problems.iter().map(|p| format!("  {p}")).collect();
        return Err(BatteryError::Input(format!(
            "the corpus at `{}` or its labels at `{}` have problems (see `anvil-bench scenarios check`):\n{}",
            cfg.scenarios.display(),
            cfg.labels.display(),
            list.join("\n")
        )));
    }
    let vault = Vault::open(&cfg.labels).map_err(|e| BatteryError::Input(e.to_string()))?;
    let ids: Vec<(String, String)> = scenarios
        .iter()
        .map(|s| (s.dir_id.clone(), s.doc.class.to_string()))
        .collect();
    let selected = cfg.selector.select(&ids).map_err(BatteryError::Input)?;
    let selected: Vec<String> = selected
        .iter()
        .map(|(id, _)| id.clone())
        .filter(|id| cfg.partition.is_none_or(|p| p.takes(id)))
        .collect();
    for id in &selected {
        if !vault.has(id) {
            return Err(BatteryError::Input(format!(
                "scenario `{id}` has no label under `{}`",
                cfg.labels.display()
            )));
        }
    }
    Ok((scenarios, vault, selected))
}

/// The results directory: new (it must be empty; the manifest is written), or resumed
/// with the same manifest (its start time is kept). The trials already done in it.
fn open_results_dir(
    cfg: &Config,
    manifest: &mut Manifest,
) -> Result<(Vec<TrialRecord>, std::fs::File), BatteryError> {
    let manifest_file = cfg.out.join(MANIFEST_JSON);
    if cfg.resume {
        let lock = lock_results_dir(&cfg.out)?;
        let old: Manifest = read_manifest(&manifest_file)?;
        // The partition may differ between runs that are compared or merged, never between
        // a run and its resumption: the shard's trials are the ones it holds.
        let partition = |m: &Manifest| serde_json::json!(m.partition);
        let moved = (old.partition != manifest.partition).then(|| {
            (
                "partition".to_string(),
                partition(&old),
                partition(manifest),
            )
        });
        if let Some((field, a, b)) = old.differences(manifest, &[]).into_iter().next().or(moved) {
            return Err(BatteryError::Incompatible(format!(
                "cannot resume `{}`: the manifest field `{field}` was {a} and is now {b}",
                cfg.out.display()
            )));
        }
        manifest.started_at = old.started_at;
        return Ok((load_trials(&cfg.out)?, lock));
    }
    if cfg.out.exists() && std::fs::read_dir(&cfg.out).map_or(true, |mut d| d.next().is_some()) {
        return Err(BatteryError::Input(format!(
            "`{}` is not empty: name a new --out directory, or continue it with --resume {}",
            cfg.out.display(),
            cfg.out.display()
        )));
    }
    std::fs::create_dir_all(cfg.out.join(TRIALS_DIR))
        .map_err(|e| BatteryError::Input(format!("`{}`: {e}", cfg.out.display())))?;
    let lock = lock_results_dir(&cfg.out)?;
    write_manifest(&manifest_file, manifest)?;
    Ok((Vec::new(), lock))
}

/// The results directory's lock file, held while a battery writes into it.
pub const RESULTS_LOCK: &str = ".lock";

/// Locks the results directory `out` for this battery (never through a symlink): two
/// batteries resuming one directory would each run every remaining trial, and the last
/// to write results.json would win.
///
/// # Errors
///
/// `BatteryError::Busy` when another battery holds the lock; `Input` when the lock file
/// cannot be opened, is not a regular file (a symlink included), or cannot be locked.
fn lock_results_dir(out: &Path) -> Result<std::fs::File, BatteryError> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = out.join(RESULTS_LOCK);
    let bad = |e: &dyn std::fmt::Display| BatteryError::Input(format!("`{}`: {e}", path.display()));
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .map_err(|e| bad(&e))?;
    if !lock.metadata().map_err(|e| bad(&e))?.is_file() {
        return Err(bad(&"is not a regular file"));
    }
    // A lock is held by its open file, which a process forked in between (any `Command`
    // of this process, until its exec closes the copy) holds too: a lock just released may
    // still look held for that moment. Another battery holds it far longer than the grace.
    let deadline = std::time::Instant::now() + LOCK_GRACE;
    loop {
        match lock.try_lock() {
            Ok(()) => return Ok(lock),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(BatteryError::Busy(format!(
                    "`{}` is in use by another battery (it holds `{}`): wait for it to end",
                    out.display(),
                    path.display()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(bad(&e)),
        }
    }
}

/// How long a held results lock is waited for before the directory is called busy.
const LOCK_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// The tmpfs a battery may keep its scratch on.
const SHM: &str = "/dev/shm";

/// Where a battery keeps its disposable scratch, the scenario templates and trial worlds
/// (relaxed durability already: nothing in them outlives a trial but the case run, moved
/// out to the results). On a tmpfs when `TMPDIR` is unset, `/dev/shm` takes a file, and
/// its free space is at least four times what the scratch can hold; the system temporary
/// directory otherwise. A disk pays for every file created and removed: each trial copies
/// a repository and drops it, and on an ext4 without a journal an inode freed in the last
/// minutes makes the next allocations in its group slow — the default battery's own churn
/// tripled its wall time over a few runs. Never for a battery with an arm whose agent the
/// battery does not own: what such an agent writes is unbounded, and on tmpfs it is
/// memory.
fn scratch_dir(arms: &[Arm], wanted: &[&Scenario], jobs: usize) -> PathBuf {
    let owned = !arms.iter().any(|a| a.external());
    let tmpfs = std::env::var_os("TMPDIR").is_none()
        && owned
        && takes_a_file(Path::new(SHM))
        && free_bytes(Path::new(SHM)).is_some_and(|free| {
            scratch_fits(
                wanted.iter().map(|s| tree_bytes(&s.repo())).sum(),
                jobs,
                free,
            )
        });
    if tmpfs {
        PathBuf::from(SHM)
    } else {
        std::env::temp_dir()
    }
}

/// Whether scratch for a corpus of `corpus` bytes fits in `free` bytes with room to spare:
/// every template (a copy and its `.git`, at most twice the files) and a trial world per
/// job at a time, a quarter of the space at most.
fn scratch_fits(corpus: u64, jobs: usize, free: u64) -> bool {
    let jobs = u64::try_from(jobs).unwrap_or(u64::MAX);
    corpus
        .saturating_mul(jobs.saturating_add(2))
        .saturating_add(64 << 20)
        <= free / 4
}

/// Whether a new file can be made in `dir` (it is removed again).
fn takes_a_file(dir: &Path) -> bool {
    let probe = dir.join(format!(".anvil-probe-{}", ulid::Ulid::new()));
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .is_ok();
    if made {
        let _ = std::fs::remove_file(&probe);
    }
    made
}

/// The bytes of the regular files under `dir` (links are not followed; what cannot be
/// listed counts nothing, and the template copy will name it).
fn tree_bytes(dir: &Path) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => stack.push(entry.path()),
                Ok(m) if m.is_file() => total = total.saturating_add(m.len()),
                _ => {}
            }
        }
    }
    total
}

/// The bytes an unprivileged process may still write on the file system holding `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `path` is a NUL-terminated string and `stat` a zeroed struct statvfs fills.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statvfs(path.as_ptr(), &raw mut stat) };
    // Block counts and sizes are narrower than u64 on some targets.
    #[allow(clippy::useless_conversion)]
    let free = u64::from(stat.f_bavail).saturating_mul(u64::from(stat.f_frsize));
    (rc == 0).then_some(free)
}

/// Each wanted scenario's starting state, prepared once under `work_root`. On a failure
/// `work_root` is removed and the first failure returned.
fn prepare_templates(
    wanted: &[&Scenario],
    work_root: &Path,
    git: bool,
    jobs: usize,
) -> Result<BTreeMap<String, Arc<Prepared>>, BatteryError> {
    // Templates are prepared on the battery's jobs: each is a copy, a commit and a git
    // repack, and one after another they were a second of wall time with one core idle.
    let templates = crate::par::in_order(wanted, jobs.max(1), |s, _| {
        Prepared::new(s, work_root, git).map_err(|e| format!("scenario `{}`: {e}", s.dir_id))
    });
    let mut prepared: BTreeMap<String, Arc<Prepared>> = BTreeMap::new();
    for template in templates {
        // `in_order` leaves items after a failure undone; the failure comes first.
        let Some(Ok(p)) = template else {
            let _ = std::fs::remove_dir_all(work_root);
            return Err(BatteryError::Input(match template {
                Some(Err(e)) => e,
                _ => "a scenario template was not prepared".into(),
            }));
        };
        prepared.insert(p.id.clone(), Arc::new(p));
    }
    Ok(prepared)
}

/// Reads a results directory's `manifest.json`.
///
/// # Errors
///
/// `BatteryError::Input` when `file` cannot be read, is not JSON, is not an
/// `anvil-battery-manifest` of this version, or has unknown keys.
pub fn read_manifest(file: &Path) -> Result<Manifest, BatteryError> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Doc {
        #[allow(dead_code)]
        format: String,
        #[allow(dead_code)]
        format_version: u32,
        manifest: Manifest,
    }
    let doc: Doc = read_versioned(file, "anvil-battery-manifest")
        .map_err(|e| BatteryError::Input(format!("{e} (is this a battery results directory?)")))?;
    Ok(doc.manifest)
}

fn write_manifest(file: &Path, m: &Manifest) -> Result<(), BatteryError> {
    let doc = serde_json::json!({"format": "anvil-battery-manifest", "formatVersion": FORMAT_VERSION, "manifest": m});
    crate::fsio::write_json_atomic(file, &doc)
        .map_err(|e| BatteryError::Fatal(format!("writing `{}`: {e}", file.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scratch fits when the corpus, times the jobs plus two, and 64 MiB take at most a
    /// quarter of the free space; overflowing sizes never fit.
    #[test]
    fn scratch_fits_in_a_quarter_of_the_free_space() {
        let free = 4 * ((10 << 20) * 4 + (64 << 20));
        assert!(scratch_fits(10 << 20, 2, free));
        assert!(!scratch_fits(10 << 20, 2, free - 4));
        assert!(!scratch_fits(10 << 20, 3, free));
        assert!(!scratch_fits(u64::MAX, 2, u64::MAX));
        assert!(!scratch_fits(1, usize::MAX, u64::MAX));
    }

    /// A battery with an outside agent never keeps its scratch on tmpfs, whatever else
    /// holds; one whose agents are all the engine's does when `TMPDIR` is unset and
    /// `/dev/shm` takes a file, and that scratch is counted for what the corpus holds.
    #[test]
    fn scratch_goes_to_tmpfs_only_for_the_engines_own_agents() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        let (scenarios, problems) = load_scenarios(&corpus);
        assert!(problems.is_empty(), "{problems:?}");
        let wanted: Vec<&Scenario> = scenarios.iter().collect();
        assert!(tree_bytes(&corpus) > 0);
        for outside in [Arm::Command, Arm::ClaudeCode, Arm::Codex] {
            let arms = [Arm::Baseline, Arm::Heuristic, outside];
            assert_eq!(
                scratch_dir(&arms, &wanted, 2),
                std::env::temp_dir(),
                "{outside}"
            );
        }
        let owned = [
            Arm::Baseline,
            Arm::Heuristic,
            Arm::Oracle,
            Arm::CheaterReach,
        ];
        let expected = if std::env::var_os("TMPDIR").is_none() && takes_a_file(Path::new(SHM)) {
            PathBuf::from(SHM)
        } else {
            std::env::temp_dir()
        };
        assert_eq!(scratch_dir(&owned, &wanted, 2), expected);
        // No space is enough for a corpus larger than any disk.
        assert!(!scratch_fits(
            u64::MAX / 2,
            2,
            free_bytes(Path::new("/")).unwrap()
        ));
    }
}
