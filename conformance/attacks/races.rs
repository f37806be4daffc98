//! X-CONC: 64-way races through the library, as 64 agents (or one agent's 64 threads)
//! would run them: opens of one case, rails on one run, one idempotency key.

use std::path::PathBuf;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::support::rails;
use anvil_bench::case::evidence::EvidenceRequest;
use libtest_mimic::Failed;

use super::{leftovers, outside, verifies};
use crate::support::{World, failed, journal, out, read_json};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "attacks::sixty_four_concurrent_opens_of_one_case_give_distinct_runs_that_verify",
            rules: &["X-CONC-1", "R-ID-9"],
            run: opens,
        },
        Check {
            name: "attacks::sixty_four_concurrent_add_evidence_calls_all_land_while_a_verifier_races_them",
            rules: &["X-CONC-2", "R-RAIL-3"],
            run: rails_race,
        },
        Check {
            name: "attacks::sixty_four_calls_racing_on_one_idempotency_key_execute_once",
            rules: &["X-CONC-3", "R-RAIL-1", "R-RAIL-2"],
            run: key_race,
        },
    ]
}

const N: usize = 64;

/// Runs `f(i)` for i in 0..N on N threads released together.
fn together<T: Send>(f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let start = Barrier::new(N);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..N)
            .map(|i| {
                let (f, start) = (&f, &start);
                s.spawn(move || {
                    start.wait();
                    f(i)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// A git work tree, so every rail reads the revision from `.git` instead of spawning git.
fn world() -> World {
    let w = World::new();
    w.git_init();
    w
}

fn opens() -> Result<(), Failed> {
    let w = world();
    let runs: Vec<Result<PathBuf, String>> = together(|_| {
        anvil_bench::case::open(&w.request("annotate-unit", crate::support::UNIT_TARGET))
            .map(|o| o.run_dir)
            .map_err(|e| format!("{} ({})", e, e.kind()))
    });
    let mut dirs = Vec::new();
    for r in runs {
        dirs.push(r.map_err(|e| failed(format!("a concurrent open failed: {e}")))?);
    }
    let distinct: std::collections::BTreeSet<_> = dirs.iter().collect();
    ensure!(
        distinct.len() == N,
        "{} distinct runs of {N} opens",
        distinct.len()
    );
    let case_dir = dirs[0].parent().unwrap();
    let listed = std::fs::read_dir(case_dir).unwrap().count();
    ensure!(
        listed == N,
        "the case dir holds {listed} entries, not {N} runs (staging left behind?)"
    );
    for run in &dirs {
        for f in ["case.json", "lifecycle.json", "journal.jsonl", "CASE.md"] {
            ensure!(run.join(f).is_file(), "{} has no {f}", run.display());
        }
        let report = crate::support::rails::verify(run, None, None).map_err(failed)?;
        ensure!(
            report.is_clean(),
            "{} does not verify: {report:?}",
            run.display()
        );
    }
    verifies(&w, &dirs[N - 1])?;
    Ok(())
}

/// 64 distinct coordinates of service.py: lines 1..=k for k in 1..=54, then 2..=k.
fn coordinate(i: usize) -> (u32, u32) {
    let i = i as u32;
    if i < 54 { (1, i + 1) } else { (2, i - 54 + 45) }
}

fn rails_race() -> Result<(), Failed> {
    let w = world();
    let run = w.open_unit()?.run_dir;
    let world_before = outside(&w, &run);
    let done = AtomicBool::new(false);
    let checks = AtomicUsize::new(0);
    let (results, seen) = std::thread::scope(|s| {
        // A verifier racing the rails must never see a half-committed rail.
        let verifier = s.spawn(|| {
            let mut seen = Vec::new();
            while !done.load(Ordering::SeqCst) {
                match crate::support::rails::tamper(&run) {
                    Ok(b) if b.is_empty() => {}
                    Ok(b) => seen.push(format!("{b:?}")),
                    Err(e) => seen.push(e.to_string()),
                }
                checks.fetch_add(1, Ordering::SeqCst);
            }
            seen
        });
        let results = together(|i| {
            let (start, end) = coordinate(i);
            let req = EvidenceRequest {
                path: "src/payments/service.py".into(),
                start_line: Some(start),
                end_line: Some(end),
            };
            rails::add_evidence(&run, &req, None)
                .map(|a| a.id)
                .map_err(|e| e.to_string())
        });
        done.store(true, Ordering::SeqCst);
        (results, verifier.join().unwrap())
    });
    ensure!(
        seen.is_empty(),
        "a verifier racing the rails saw a broken run: {seen:?}"
    );
    let ids: Vec<String> = results
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(failed)?;
    let doc = read_json(&out(&run, "evidence.json"));
    let on_disk: Vec<&str> = doc["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    ensure!(
        on_disk.len() == N && ids.iter().all(|id| on_disk.contains(&id.as_str())),
        "{} artifacts on disk for {N} rails",
        on_disk.len()
    );
    let lines = journal(&run);
    let fences: std::collections::BTreeSet<_> = lines.iter().map(|l| l["fence"].as_u64()).collect();
    ensure!(
        lines.len() == N
            && fences.len() == N
            && lines
                .iter()
                .all(|l| l["rail"] == "add-evidence" && l["outcome"] == "ok"),
        "the journal has {} lines ({} distinct fences) for {N} rails",
        lines.len(),
        fences.len()
    );
    ensure!(
        leftovers(&run).is_empty(),
        "leftovers: {:?}",
        leftovers(&run)
    );
    verifies(&w, &run)?;
    ensure!(outside(&w, &run) == world_before, "the world changed");
    Ok(())
}

fn key_race() -> Result<(), Failed> {
    let w = world();
    for same_body in [true, false] {
        let run = w.open_unit()?.run_dir;
        let results = together(|i| {
            let (start, end) = if same_body { (32, 39) } else { coordinate(i) };
            let req = EvidenceRequest {
                path: "src/payments/service.py".into(),
                start_line: Some(start),
                end_line: Some(end),
            };
            rails::add_evidence(&run, &req, Some("one-key"))
                .map(|a| a.id)
                .map_err(|e| e.kind().to_string())
        });
        let ok: Vec<&String> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        let lines = journal(&run);
        let executed = lines
            .iter()
            .filter(|l| l["replayed"] != true && l["conflict"] != true)
            .count();
        let artifacts = read_json(&out(&run, "evidence.json"))["artifacts"]
            .as_array()
            .map_or(0, Vec::len);
        ensure!(
            executed == 1 && artifacts == 1 && lines.len() == N,
            "same body {same_body}: {executed} executions, {artifacts} artifacts, {} lines",
            lines.len()
        );
        if same_body {
            ensure!(
                ok.len() == N && ok.iter().all(|id| *id == ok[0]),
                "a replay of one key returned another outcome: {results:?}"
            );
        } else {
            let conflicts = results
                .iter()
                .filter(|r| {
                    r.as_ref()
                        .err()
                        .is_some_and(|k| k == "idempotency_conflict")
                })
                .count();
            ensure!(
                ok.len() == 1 && conflicts == N - 1,
                "{} successes and {conflicts} conflicts for one key with {N} bodies",
                ok.len()
            );
        }
        verifies(&w, &run)?;
    }
    Ok(())
}
