//! Can the engine reach every label? The positive control run over a corpus outside a
//! battery: `scenarios check` runs the oracle on each scenario and names every label it
//! cannot pass (R-BAT-8: a label the engine cannot reach is a corpus or engine defect).
//!
//! Invariant: it uses the battery's own trial code and vault, so "reachable" means exactly
//! what the battery's oracle control will find.

use std::path::Path;
use std::sync::{Arc, Mutex};

use super::arm::Arm;
use super::corpus::{Problem, Scenario};
use super::trial::{self, DriverConfig, Prepared, TrialContext};
use super::vault::Vault;
use super::workspace;
use crate::process::CancelHandle;

/// Runs the oracle on every scenario that has a label; returns a problem per scenario it
/// cannot pass, naming the label file.
#[must_use]
pub fn oracle_problems(scenarios: &[Scenario], labels_dir: &Path) -> Vec<Problem> {
    let Ok(vault) = Vault::open(labels_dir) else {
        // The label set has problems of its own; they are reported by the check.
        return vec![];
    };
    let root = std::env::temp_dir().join(format!(
        "anvil-{}",
        ulid::Ulid::new().to_string().to_lowercase()
    ));
    let out = root.join("out");
    let git = workspace::git_available();
    let todo: Mutex<Vec<&Scenario>> = Mutex::new(
        scenarios
            .iter()
            .filter(|s| vault.has(&s.dir_id))
            .rev()
            .collect(),
    );
    let problems = Mutex::new(Vec::new());
    let driver = DriverConfig::in_process();
    let cancel = CancelHandle::new();
    let jobs = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let Some(s) = todo.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop() else {
                        break;
                    };
                    let label = labels_dir.join(format!("{}.json", s.dir_id));
                    let problem = |message: String| Problem::new(&label, "oracle_unreachable", message);
                    let found = match Prepared::new(s, &root, git) {
                        Err(e) => Some(problem(format!("cannot prepare the scenario: {e}"))),
                        Ok(prepared) => {
                            let prepared = Arc::new(prepared);
                            let dir = prepared.template.air.parent().map(Path::to_path_buf);
                            let ctx = TrialContext {
                                vault: &vault,
                                driver: &driver,
                                work_root: &root,
                                out_dir: &out,
                                budget_usd: None,
                                cancel: &cancel,
                            };
                            let verdict = match trial::run(&prepared, Arm::Oracle, 0, &ctx) {
                                Ok(r) if r.correct => None,
                                Ok(r) => Some(problem(format!(
                                    "the oracle, told this label, cannot reach it through the rails: expected {}, got {}{}",
                                    r.expected_status.as_deref().unwrap_or("?"),
                                    r.status.as_deref().unwrap_or("no result"),
                                    r.reason.map(|x| format!(" ({x})")).unwrap_or_default()
                                ))),
                                Err(e) => Some(problem(format!("the oracle's trial failed: {e}"))),
                            };
                            if let Some(dir) = dir {
                                let _ = std::fs::remove_dir_all(dir);
                            }
                            verdict
                        }
                    };
                    if let Some(p) = found {
                        problems.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(p);
                    }
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&root);
    let mut problems = problems
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    problems.sort_by(|a, b| a.file.cmp(&b.file));
    problems
}
