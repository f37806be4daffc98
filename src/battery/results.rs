//! `results.json` (`anvil-battery-results` v1) and the per-trial records under `trials/`.
//!
//! Invariant: every number a report shows is either stored in a [`TrialRecord`] or
//! recomputed from the trial records and the manifest's seed by [`super::summary`]; a
//! trial record is written whole (atomic rename) the moment its trial ends, so a killed
//! battery leaves only whole records behind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::arm::Arm;
use super::summary::{ClassSummary, Controls};
// Both the summaries and results.json are made of trial records, so the record lives
// below both; its path here stays as it was.
pub use super::trial_record::{Infra, Phases, TrialRecord};
use crate::limits::Limit;

pub const RESULTS_FORMAT: &str = "anvil-battery-results";
pub const TRIAL_FORMAT: &str = "anvil-battery-trial";
pub const FORMAT_VERSION: u32 = 1;
pub const RESULTS_JSON: &str = "results.json";
pub const MANIFEST_JSON: &str = "manifest.json";
pub const TRIALS_DIR: &str = "trials";
pub const RUNS_DIR: &str = "runs";

/// Who investigated: the arm, the agent's version and model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Investigator {
    pub arm: Arm,
    /// e.g. `claude --version`, or the anvil-bench version for in-process arms.
    pub version: String,
    pub model: Option<String>,
    /// Where the model was reached: `replay:heuristic`, a URL, or `none`.
    pub endpoint: String,
    /// The execution backend of process agents (`bubblewrap`, `native`, `in_process`).
    pub backend: String,
    /// How Claude Code and Codex reach the rails (`mcp`, `bash`); absent for other arms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<String>,
    /// `sha256:` of the `--script` file the scripted investigator played.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// The command investigator's program and arguments, as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
}

/// The machine a battery ran on (informative; never compared).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Host {
    pub os: String,
    pub arch: String,
    pub cores: usize,
}

/// Which scenarios were selected.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Selection {
    pub classes: Vec<String>,
    pub scenarios: Vec<String>,
    pub limit: Option<usize>,
}

/// Everything two runs must share to be compared (R-BAT-11), plus what is informative.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Manifest {
    pub anvil_bench_version: String,
    /// The git revision anvil-bench was built from, when known.
    pub anvil_bench_revision: Option<String>,
    /// sha256 over every file of the corpus (paths and bytes).
    pub corpus_digest: String,
    /// `scenarios seal` of the label set, taken before the first trial.
    pub label_seal: String,
    pub investigator: Investigator,
    /// Every arm run, controls included, in order.
    pub arms: Vec<Arm>,
    /// sha256 of the brief template (CASE.md generator) every agent reads.
    pub brief_template_hash: String,
    /// skill name → policy hash.
    pub skill_policy_hashes: BTreeMap<String, String>,
    /// The investigation tools' default limits.
    pub tool_limits: Value,
    pub repeats: u32,
    pub seed: u64,
    pub selection: Selection,
    pub trial_timeout_secs: u64,
    pub max_turns: Option<u32>,
    pub max_budget_usd: Option<f64>,
    pub retries: u32,
    /// Scenario trials are committed to a fresh git repository (false when git is missing).
    pub git_commits: bool,
    // Informative: allowed to differ between runs that are compared or merged.
    pub jobs: usize,
    /// `hash:K/N`, or `None` for the whole battery.
    pub partition: Option<String>,
    pub host: Host,
    pub started_at: String,
    pub ended_at: Option<String>,
}

/// Manifest fields allowed to differ between shards, resumed and compared runs.
pub const INFORMATIVE_FIELDS: &[&str] = &[
    "jobs",
    "partition",
    "host",
    "startedAt",
    "endedAt",
    "anvilBenchRevision",
];

impl Manifest {
    /// The first comparable field (camelCase name) whose value differs, with both values.
    #[must_use]
    pub fn first_difference(&self, other: &Manifest) -> Option<(String, Value, Value)> {
        self.differences(other, &[]).into_iter().next()
    }

    /// Every comparable field that differs, skipping `also_ignore` besides the informative
    /// ones.
    #[must_use]
    pub fn differences(
        &self,
        other: &Manifest,
        also_ignore: &[&str],
    ) -> Vec<(String, Value, Value)> {
        let a = serde_json::to_value(self).unwrap_or(Value::Null);
        let b = serde_json::to_value(other).unwrap_or(Value::Null);
        let (Value::Object(a), Value::Object(b)) = (a, b) else {
            return vec![];
        };
        let mut out = Vec::new();
        for (k, va) in &a {
            if INFORMATIVE_FIELDS.contains(&k.as_str()) || also_ignore.contains(&k.as_str()) {
                continue;
            }
            let vb = b.get(k).cloned().unwrap_or(Value::Null);
            if *va != vb {
                out.push((k.clone(), va.clone(), vb));
            }
        }
        out
    }
}

/// A trial that was planned but never ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NotRun {
    pub id: String,
    /// `budget` or `cancelled`.
    pub reason: String,
}

/// `results.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResultsDoc {
    pub format: String,
    pub format_version: u32,
    pub manifest: Manifest,
    pub trials: Vec<TrialRecord>,
    pub not_run: Vec<NotRun>,
    pub classes: Vec<ClassSummary>,
    pub overall: ClassSummary,
    pub controls: Controls,
    /// Deterministic arms whose repeats disagreed (R-BAT-10): `<scenario>::<arm>`.
    pub nondeterministic: Vec<String>,
    /// The label seal re-taken after the last trial (R-BAT-5).
    pub label_seal_after: String,
    /// Whether the battery completed every planned trial.
    pub complete: bool,
}

/// The file name of a trial record: the id with `/`, `::` and `#` made path-safe.
#[must_use]
pub fn trial_file_name(id: &str) -> String {
    let safe: String = id
        .replace("::", "--")
        .replace('#', "--r")
        .chars()
        .map(|c| if c == '/' { '_' } else { c })
        .collect();
    format!("{safe}.json")
}

pub use super::trial_record::trial_id;

/// An error reading a battery document, naming the file and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("`{file}`: {message}")]
pub struct DocError {
    pub file: PathBuf,
    pub message: String,
}

fn doc_error(file: &Path, message: impl Into<String>) -> DocError {
    DocError {
        file: file.to_path_buf(),
        message: message.into(),
    }
}

/// Reads a versioned battery document strictly (format, version, unknown keys by path).
///
/// # Errors
///
/// A [`DocError`] naming `file` when it cannot be read or is over the results size limit,
/// is not JSON, has another `format` or `formatVersion`, or does not match `T` strictly
/// (unknown keys named by path).
pub fn read_versioned<T: serde::de::DeserializeOwned>(
    file: &Path,
    format: &str,
) -> Result<T, DocError> {
    crate::json_path::read_versioned(file, format, FORMAT_VERSION, Limit::ResultsBytes)
        .map_err(|message| doc_error(file, message))
}

/// Reads `results.json` from a file or a results directory.
///
/// # Errors
///
/// The errors of [`read_versioned`] for `path` (or `path/results.json` for a directory):
/// unreadable, not JSON, another format or version, or unknown keys; and a trial record
/// that contradicts itself ([`TrialRecord::inconsistency`]), naming it.
pub fn read_results(path: &Path) -> Result<ResultsDoc, DocError> {
    let file = if path.is_dir() {
        path.join(RESULTS_JSON)
    } else {
        path.to_path_buf()
    };
    let doc: ResultsDoc = read_versioned(&file, RESULTS_FORMAT)?;
    for (i, t) in doc.trials.iter().enumerate() {
        if let Some((field, why)) = t.inconsistency() {
            return Err(doc_error(
                &file,
                format!("at `trials[{i}].{field}`: {why} (trial `{}`)", t.id),
            ));
        }
    }
    Ok(doc)
}

/// The JSON Schema of results.json, from the types.
#[must_use]
pub fn schema() -> Value {
    serde_json::to_value(schemars::schema_for!(ResultsDoc)).unwrap_or(Value::Null)
}
