//! `battery merge`: shards of one battery joined into one results directory.
//!
//! Invariant: shards merge only when their manifests agree on every comparable field
//! (R-BAT-11; the partition itself may differ) and together cover the battery exactly once
//! — one whole run, or the shards `hash:1/N` … `hash:N/N` once each — unless forced, and a
//! forced merge that does not is marked incomplete; a trial id present in two shards must
//! be the same record; the merged summaries are recomputed from the union of trial
//! records, so all shards merged equal the unpartitioned run (R-BAT-13).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::plan::Partition;
use super::results::{
    Manifest, NotRun, RESULTS_JSON, ResultsDoc, TRIALS_DIR, TrialRecord, read_results,
    trial_file_name,
};
use super::runner::{BatteryError, assemble};

/// Merges the results directories `shards` into `out` (which must be new or empty);
/// `force` merges despite differing manifests (the differences are still returned).
///
/// # Errors
///
/// `BatteryError::Input` when `shards` is empty, a shard's results.json cannot be read,
/// `out` exists and is not empty, or the merged directory cannot be written;
/// `BatteryError::Incompatible` when two shards' manifests differ or the shards do not
/// cover the battery exactly once (each unless `force`), or the same trial is in two
/// shards with different outcomes.
pub fn merge(
    shards: &[PathBuf],
    out: &Path,
    force: bool,
) -> Result<(ResultsDoc, Vec<String>), BatteryError> {
    if shards.is_empty() {
        return Err(BatteryError::Input(
            "battery merge needs at least one results directory".into(),
        ));
    }
    let docs: Vec<(PathBuf, ResultsDoc)> = shards
        .iter()
        .map(|p| read_results(p).map(|d| (p.clone(), d)))
        .collect::<Result<_, _>>()
        .map_err(|e| BatteryError::Input(e.to_string()))?;
    let mut warnings = manifest_differences(&docs, force)?;
    let union = union_of_shards(&docs)?;
    let gaps = coverage_gaps(&docs)?;
    if let Some(first) = gaps.first()
        && !force
    {
        return Err(BatteryError::Incompatible(format!(
            "{first} (merge every shard of one battery once, or use --force to merge anyway; \
             the result is then marked incomplete)"
        )));
    }
    if out.exists() && std::fs::read_dir(out).map_or(true, |mut d| d.next().is_some()) {
        return Err(BatteryError::Input(format!(
            "`{}` is not empty: name a new --out directory",
            out.display()
        )));
    }
    std::fs::create_dir_all(out.join(TRIALS_DIR))
        .map_err(|e| BatteryError::Input(format!("`{}`: {e}", out.display())))?;
    let manifest = merged_manifest(&docs);
    for t in &union.trials {
        crate::fsio::write_json_atomic(&out.join(TRIALS_DIR).join(trial_file_name(&t.id)), t)
            .map_err(|e| BatteryError::Fatal(e.to_string()))?;
    }
    let complete = gaps.is_empty() && docs.iter().all(|(_, d)| d.complete);
    warnings.extend(gaps);
    let doc = assemble(
        manifest,
        union.trials,
        union.not_run,
        union.seal_after,
        complete,
    );
    crate::fsio::write_json_atomic(&out.join(RESULTS_JSON), &doc)
        .map_err(|e| BatteryError::Fatal(e.to_string()))?;
    Ok((doc, warnings))
}

/// Each manifest field in which a later shard differs from the first, as a warning;
/// unless `force`, the first difference is refused instead.
fn manifest_differences(
    docs: &[(PathBuf, ResultsDoc)],
    force: bool,
) -> Result<Vec<String>, BatteryError> {
    let (first_path, first) = &docs[0];
    let mut warnings = Vec::new();
    for (path, doc) in &docs[1..] {
        for (field, a, b) in first.manifest.differences(&doc.manifest, &[]) {
            let msg = format!(
                "manifest field `{field}` differs: {a} in `{}`, {b} in `{}`",
                first_path.display(),
                path.display()
            );
            if !force {
                return Err(BatteryError::Incompatible(format!(
                    "{msg} (use --force to merge anyway)"
                )));
            }
            warnings.push(msg);
        }
    }
    Ok(warnings)
}

/// Why the shards do not cover the battery exactly once (R-BAT-13), each gap naming the
/// results directories concerned: a whole run (no partition) beside any other directory,
/// shards of different counts, a shard given twice, a shard missing. Empty when the
/// directories are one whole run, or the shards `hash:1/N` … `hash:N/N` once each.
///
/// # Errors
///
/// `BatteryError::Input` naming the results file when a recorded partition is not
/// `hash:K/N`.
fn coverage_gaps(docs: &[(PathBuf, ResultsDoc)]) -> Result<Vec<String>, BatteryError> {
    let mut shards: BTreeMap<(u32, u32), Vec<&Path>> = BTreeMap::new();
    let mut whole: Vec<&Path> = Vec::new();
    for (path, doc) in docs {
        match &doc.manifest.partition {
            None => whole.push(path),
            Some(text) => {
                let p = Partition::parse(text).map_err(|e| {
                    BatteryError::Input(format!(
                        "`{}`: at `manifest.partition`: {e}",
                        path.join(RESULTS_JSON).display()
                    ))
                })?;
                shards.entry((p.n, p.k)).or_default().push(path);
            }
        }
    }
    let list = |paths: &[&Path]| {
        paths
            .iter()
            .map(|p| format!("`{}`", p.display()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut gaps = Vec::new();
    if !whole.is_empty() && docs.len() > 1 {
        gaps.push(format!(
            "{} {} a whole run (no --partition): merged with {} other results \
             director{}, its trials would be counted twice",
            list(&whole),
            if whole.len() == 1 { "is" } else { "are each" },
            docs.len() - 1,
            if docs.len() == 2 { "y" } else { "ies" }
        ));
    }
    let counts: std::collections::BTreeSet<u32> = shards.keys().map(|(n, _)| *n).collect();
    if counts.len() > 1 {
        gaps.push(format!(
            "the shards split the battery in different counts ({}): they do not partition it",
            counts
                .iter()
                .map(|n| format!("N = {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for ((n, k), paths) in &shards {
        if paths.len() > 1 {
            gaps.push(format!(
                "shard hash:{k}/{n} is given {} times: {}",
                paths.len(),
                list(paths)
            ));
        }
    }
    for n in &counts {
        let missing: Vec<String> = (1..=*n)
            .filter(|k| !shards.contains_key(&(*n, *k)))
            .map(|k| format!("hash:{k}/{n}"))
            .collect();
        if !missing.is_empty() {
            let (noun, verb) = if missing.len() == 1 {
                ("shard", "is")
            } else {
                ("shards", "are")
            };
            gaps.push(format!("{noun} {} {verb} missing", missing.join(", ")));
        }
    }
    Ok(gaps)
}

/// What the shards hold together.
struct Union {
    /// Each trial once, in id order.
    trials: Vec<TrialRecord>,
    not_run: Vec<NotRun>,
    seal_after: String,
}

/// The union of the shards' trials, not-run entries and label seal; refuses a trial that
/// two shards hold with different outcomes.
fn union_of_shards(docs: &[(PathBuf, ResultsDoc)]) -> Result<Union, BatteryError> {
    let first = &docs[0].1;
    let mut by_id: BTreeMap<String, (PathBuf, TrialRecord)> = BTreeMap::new();
    let mut not_run = Vec::new();
    let mut seal_after = first.label_seal_after.clone();
    for (path, doc) in docs {
        if doc.label_seal_after != first.label_seal_after {
            seal_after = format!(
                "differs between shards: {} and {}",
                first.label_seal_after, doc.label_seal_after
            );
        }
        not_run.extend(doc.not_run.iter().cloned());
        for t in &doc.trials {
            if let Some((other, prev)) = by_id.get(&t.id) {
                if !same_outcome(prev, t) {
                    return Err(BatteryError::Incompatible(format!(
                        "trial `{}` is in `{}` and `{}` with different outcomes",
                        t.id,
                        other.display(),
                        path.display()
                    )));
                }
                continue;
            }
            by_id.insert(t.id.clone(), (path.clone(), t.clone()));
        }
    }
    Ok(Union {
        trials: by_id.into_values().map(|(_, t)| t).collect(),
        not_run,
        seal_after,
    })
}

/// The first shard's manifest, unpartitioned, spanning from the earliest shard's start to
/// the latest shard's end.
fn merged_manifest(docs: &[(PathBuf, ResultsDoc)]) -> Manifest {
    let mut manifest = docs[0].1.manifest.clone();
    manifest.partition = None;
    manifest.started_at = docs
        .iter()
        .map(|(_, d)| d.manifest.started_at.clone())
        .min()
        .unwrap_or_default();
    manifest.ended_at = docs
        .iter()
        .filter_map(|(_, d)| d.manifest.ended_at.clone())
        .max();
    manifest
}

/// The same trial in two places: equal in everything but timing (its wall time and phases)
/// and where its run lives.
#[must_use]
pub fn same_outcome(a: &TrialRecord, b: &TrialRecord) -> bool {
    let strip = |t: &TrialRecord| {
        let mut t = t.clone();
        t.wall_ms = 0;
        t.phases = None;
        t.run = None;
        t
    };
    strip(a) == strip(b)
}
