//! Immutable runs: new on every open, explicit resume and replace, concurrency and
//! atomicity (R-ID-4, 5, 7, 9, 10; R-DOC-1).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anvil_bench::case::{OpenMode, open};
use libtest_mimic::Failed;

use crate::support::{EMAIL_TARGET, UNIT_TARGET, World, read_json, stderr, stdout, tree};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "runs::every_open_creates_a_new_run_directory",
            rules: &["R-ID-4"],
            run: new_run_each_open,
        },
        Check {
            name: "runs::open_never_writes_an_earlier_run",
            rules: &["R-ID-4", "R-DOC-1"],
            run: earlier_run_untouched,
        },
        Check {
            name: "runs::a_second_open_never_sees_the_first_runs_outputs",
            rules: &["R-ID-5"],
            run: fresh_output,
        },
        Check {
            name: "runs::a_replacing_run_starts_with_an_empty_output_and_workspace",
            rules: &["R-ID-5", "R-ID-7"],
            run: replace_fresh_output,
        },
        Check {
            name: "runs::replace_refuses_a_run_of_another_case",
            rules: &["R-ID-7"],
            run: replace_wrong_case,
        },
        Check {
            name: "runs::resume_names_the_run_and_writes_nothing",
            rules: &["R-ID-7"],
            run: resume_explicit,
        },
        Check {
            name: "runs::resume_of_another_cases_run_is_refused",
            rules: &["R-ID-7"],
            run: resume_wrong_case,
        },
        Check {
            name: "runs::replace_opens_a_new_run_and_keeps_the_old_one",
            rules: &["R-ID-7"],
            run: replace_keeps_history,
        },
        Check {
            name: "runs::concurrent_opens_of_one_case_key_give_distinct_complete_runs",
            rules: &["R-ID-9"],
            run: concurrent_opens,
        },
        Check {
            name: "durability::a_run_is_never_observed_half_written",
            rules: &["R-ID-10"],
            run: never_half_written,
        },
        Check {
            name: "durability::no_temporary_files_are_left_behind",
            rules: &["R-ID-10"],
            run: no_temp_left,
        },
    ]
}

const RUN_FILES: &[&str] = &[
    "case.json",
    "CASE.md",
    "expected-output.schema.json",
    "lifecycle.json",
    "journal.jsonl",
];
const RUN_DIRS: &[&str] = &["workspace", "output"];

fn run_dirs(case_dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(case_dir)
        .map(|it| it.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.retain(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'));
    out.sort();
    out
}

/// A complete run: every file present and parseable, both directories present.
fn is_complete(run: &Path) -> Result<(), String> {
    for f in RUN_FILES {
        let path = run.join(f);
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if Path::new(f)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            serde_json::from_slice::<serde_json::Value>(&bytes)
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        if *f == "CASE.md" && !String::from_utf8_lossy(&bytes).contains("## Working discipline") {
            return Err(format!("{} is truncated", path.display()));
        }
    }
    for d in RUN_DIRS {
        if !run.join(d).is_dir() {
            return Err(format!("{} has no {d}/", run.display()));
        }
    }
    Ok(())
}

fn new_run_each_open() -> Result<(), Failed> {
    let w = World::new();
    let a = w.open_unit()?;
    let b = w.open_unit()?;
    let c = w.open_unit()?;
    ensure!(
        a.run_dir != b.run_dir && b.run_dir != c.run_dir && a.run_dir != c.run_dir,
        "opens reused a run directory"
    );
    let runs = run_dirs(a.run_dir.parent().unwrap());
    ensure!(runs.len() == 3, "expected 3 runs, found {}", runs.len());
    // Run ids sort by creation.
    ensure!(
        a.run_id < b.run_id && b.run_id < c.run_id,
        "run ids do not sort by creation"
    );
    Ok(())
}

fn earlier_run_untouched() -> Result<(), Failed> {
    let w = World::new();
    let first = w.open_unit()?;
    std::fs::write(first.run_dir.join("output/proposal.json"), "{}").unwrap();
    let before = tree(&first.run_dir);
    w.open_unit()?;
    let mut req = w.request("annotate-unit", UNIT_TARGET);
    req.mode = OpenMode::Replace(first.run_dir.clone());
    open(&req).map_err(|e| Failed::from(e.to_string()))?;
    req.mode = OpenMode::Resume(first.run_dir.clone());
    open(&req).map_err(|e| Failed::from(e.to_string()))?;
    ensure!(
        tree(&first.run_dir) == before,
        "a later open changed the first run"
    );
    Ok(())
}

fn fresh_output() -> Result<(), Failed> {
    let w = World::new();
    let first = w.open_unit()?;
    for f in [
        "evidence.json",
        "claims.json",
        "proposal.json",
        "result.json",
    ] {
        std::fs::write(first.run_dir.join("output").join(f), "{\"stale\": true}").unwrap();
    }
    std::fs::write(first.run_dir.join("workspace/notes.md"), "old notes").unwrap();
    let second = w.open_unit()?;
    let out: Vec<_> = std::fs::read_dir(second.run_dir.join("output"))
        .unwrap()
        .collect();
    ensure!(
        out.is_empty(),
        "the new run's output/ is not empty: {out:?}"
    );
    let ws: Vec<_> = std::fs::read_dir(second.run_dir.join("workspace"))
        .unwrap()
        .collect();
    ensure!(ws.is_empty(), "the new run's workspace/ is not empty");
    Ok(())
}

fn resume_explicit() -> Result<(), Failed> {
    let w = World::new();
    let first = w.open_unit()?;
    let before = tree(&w.cases());
    let mut req = w.request("annotate-unit", UNIT_TARGET);
    req.mode = OpenMode::Resume(first.run_dir.clone());
    let resumed = open(&req).map_err(|e| Failed::from(e.to_string()))?;
    ensure!(
        resumed.resumed && resumed.run_dir == first.run_dir,
        "resume did not return the named run"
    );
    ensure!(
        tree(&w.cases()) == before,
        "resume wrote to the cases directory"
    );
    // Without --resume the default is a new run.
    let again = w.open_unit()?;
    ensure!(
        again.run_dir != first.run_dir && !again.resumed,
        "open without --resume continued a run"
    );
    // The CLI flag names the run too.
    let out = w.cli(&[
        "case",
        "open",
        "--air",
        "air.json",
        "--repo",
        "repo",
        "--skill",
        "annotate-unit",
        "--target",
        UNIT_TARGET,
        "--cases-dir",
        "cases",
        "--resume",
        first.run_dir.to_str().unwrap(),
    ]);
    ensure!(
        out.status.code() == Some(0),
        "CLI resume failed: {}",
        stderr(&out)
    );
    ensure!(
        stdout(&out).trim() == first.run_dir.display().to_string(),
        "CLI resume printed {}",
        stdout(&out)
    );
    Ok(())
}

fn resume_wrong_case() -> Result<(), Failed> {
    let w = World::new();
    let first = w.open_unit()?;
    let mut req = w.request("classify-sensitivity", EMAIL_TARGET);
    req.mode = OpenMode::Resume(first.run_dir.clone());
    let before = tree(&w.cases());
    match open(&req) {
        Ok(_) => Err("resumed another case's run".into()),
        Err(e) => {
            ensure!(e.kind() == "wrong_case", "unexpected refusal {e}");
            ensure!(
                tree(&w.cases()) == before,
                "refusal changed the cases directory"
            );
            Ok(())
        }
    }
}

fn replace_keeps_history() -> Result<(), Failed> {
    let w = World::new();
    let first = w.open_unit()?;
    let before = tree(&first.run_dir);
    let mut req = w.request("annotate-unit", UNIT_TARGET);
    req.mode = OpenMode::Replace(first.run_dir.clone());
    let second = open(&req).map_err(|e| Failed::from(e.to_string()))?;
    ensure!(
        second.run_dir != first.run_dir,
        "replace reused the run directory"
    );
    ensure!(
        tree(&first.run_dir) == before,
        "replace changed the replaced run"
    );
    let case = read_json(&second.run_dir.join("case.json"));
    ensure!(
        case["identity"]["supersedes"] == first.run_id.to_string(),
        "the new run does not record what it replaces"
    );
    ensure!(
        run_dirs(first.run_dir.parent().unwrap()).len() == 2,
        "history not kept"
    );
    Ok(())
}

fn concurrent_opens() -> Result<(), Failed> {
    let w = Arc::new(World::new());
    let handles: Vec<_> = (0..64)
        .map(|_| {
            let w = Arc::clone(&w);
            std::thread::spawn(move || {
                open(&w.request("annotate-unit", UNIT_TARGET))
                    .map(|o| o.run_dir)
                    .map_err(|e| e.to_string())
            })
        })
        .collect();
    let mut dirs = Vec::new();
    for h in handles {
        dirs.push(h.join().unwrap()?);
    }
    dirs.sort();
    dirs.dedup();
    ensure!(
        dirs.len() == 64,
        "64 opens gave {} distinct runs",
        dirs.len()
    );
    let on_disk = run_dirs(dirs[0].parent().unwrap());
    ensure!(on_disk.len() == 64, "{} runs on disk", on_disk.len());
    for d in &on_disk {
        is_complete(d)?;
    }
    Ok(())
}

fn never_half_written() -> Result<(), Failed> {
    let w = Arc::new(World::new());
    let case_dir = w.cases().join(format!("annotate-unit--{UNIT_TARGET}"));
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let done = Arc::clone(&done);
        let case_dir = case_dir.clone();
        std::thread::spawn(move || -> Result<usize, String> {
            let mut observations = 0;
            while !done.load(Ordering::Acquire) {
                for run in run_dirs(&case_dir) {
                    is_complete(&run)?;
                    observations += 1;
                }
            }
            Ok(observations)
        })
    };
    let writers: Vec<_> = (0..4)
        .map(|_| {
            let w = Arc::clone(&w);
            std::thread::spawn(move || {
                for _ in 0..10 {
                    open(&w.request("annotate-unit", UNIT_TARGET)).map_err(|e| e.to_string())?;
                }
                Ok::<_, String>(())
            })
        })
        .collect();
    for h in writers {
        h.join().unwrap()?;
    }
    done.store(true, Ordering::Release);
    let seen = reader.join().unwrap()?;
    ensure!(seen > 0, "the reader observed no runs");
    Ok(())
}

fn no_temp_left() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    for (path, _) in tree(&w.cases()) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        ensure!(!name.starts_with('.'), "left behind {}", path.display());
    }
    is_complete(&opened.run_dir)?;
    Ok(())
}

/// `--replace` starts over: the new run's output/ and workspace/ are empty however much
/// the replaced run holds, and the replaced run keeps all of it.
fn replace_fresh_output() -> Result<(), Failed> {
    let w = World::new();
    let first = w.open_unit()?;
    for f in ["evidence.json", "claims.json", "proposal.json"] {
        std::fs::write(first.run_dir.join("output").join(f), "{\"stale\": true}").unwrap();
    }
    std::fs::write(first.run_dir.join("workspace/notes.md"), "old notes").unwrap();
    let before = tree(&first.run_dir);
    let mut req = w.request("annotate-unit", UNIT_TARGET);
    req.mode = OpenMode::Replace(first.run_dir.clone());
    let second = open(&req).map_err(|e| Failed::from(e.to_string()))?;
    for dir in ["output", "workspace"] {
        let entries: Vec<_> = std::fs::read_dir(second.run_dir.join(dir))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        ensure!(
            entries.is_empty(),
            "the replacing run's {dir}/ is not empty: {entries:?}"
        );
    }
    ensure!(
        tree(&first.run_dir) == before,
        "replace changed the replaced run"
    );
    Ok(())
}

/// `--replace` names a run of this case only, as `--resume` does: replacing another case's
/// run is refused and writes nothing.
fn replace_wrong_case() -> Result<(), Failed> {
    let w = World::new();
    let first = w.open_unit()?;
    let mut req = w.request("classify-sensitivity", EMAIL_TARGET);
    req.mode = OpenMode::Replace(first.run_dir.clone());
    let before = tree(&w.cases());
    match open(&req) {
        Ok(o) => Err(format!(
            "replaced another case's run: {} now supersedes {}",
            o.run_dir.display(),
            first.run_dir.display()
        )
        .into()),
        Err(e) => {
            ensure!(
                e.kind() == "wrong_case",
                "unexpected refusal {}: {e}",
                e.kind()
            );
            ensure!(
                tree(&w.cases()) == before,
                "refusal changed the cases directory"
            );
            Ok(())
        }
    }
}
