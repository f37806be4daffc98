//! X-CRASH: a rail run through the CLI binary and killed (`ANVIL_CRASH_AT`, debug builds)
//! at each commit point: half a staged file, a staged file complete, everything staged,
//! the journal line written, the first rename done. After the kill, `case verify` passes
//! and writes nothing; the rerun of the rail with the same idempotency key completes or
//! sweeps the interrupted rail under the lock, leaves no pending or temporary file, and
//! succeeds; and the rail's effect is wholly present exactly when its journal line
//! committed — the rerun replays it, every file that line names holds its hash, every
//! other file is as before — or wholly absent, the rerun running it afresh.

use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use libtest_mimic::Failed;
use serde_json::Value;

use super::{finalized, leftovers, outside, rail, run_files, validated};
use crate::support::{
    World, ev, failed, frozen_unit, journal, lifecycle_json, msg, out, read_json, unit_proposal,
    unit_research, write_proposal,
};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "attacks::add_evidence_of_a_large_file_killed_at_every_commit_point_is_all_or_nothing",
            rules: &["X-CRASH-1", "R-ID-10"],
            run: || table(&ADD_EVIDENCE),
        },
        Check {
            name: "attacks::add_claim_killed_at_every_commit_point_is_all_or_nothing",
            rules: &["X-CRASH-1", "R-ID-10"],
            run: || table(&ADD_CLAIM),
        },
        Check {
            name: "attacks::freeze_research_killed_at_every_commit_point_is_all_or_nothing",
            rules: &["X-CRASH-1", "R-ID-10"],
            run: || table(&FREEZE),
        },
        Check {
            name: "attacks::validate_killed_at_every_commit_point_is_all_or_nothing",
            rules: &["X-CRASH-1", "R-ID-10"],
            run: || table(&VALIDATE),
        },
        Check {
            name: "attacks::finalize_killed_at_every_commit_point_is_all_or_nothing",
            rules: &["X-CRASH-1", "R-ID-10"],
            run: || table(&FINALIZE),
        },
        Check {
            name: "attacks::close_killed_at_every_commit_point_is_all_or_nothing",
            rules: &["X-CRASH-1", "R-ID-10"],
            run: || table(&CLOSE),
        },
    ]
}

/// Each crash point, and whether the rail's journal line has committed when it fires.
const POINTS: [(&str, bool); 7] = [
    // The lock's new fence written over the old one, before the body runs.
    ("fence-written", false),
    ("stage-partial", false),
    ("stage-written", false),
    ("staged", false),
    ("journaled", true),
    ("renamed-one", true),
    // The lock's new anchor written over the old one, after the files moved into place.
    ("anchor-written", true),
];

/// A run in the state a rail needs, and the rail's arguments.
type Prepared = (PathBuf, Vec<String>);

struct Target {
    rail: &'static str,
    /// Builds a run in the state the rail needs; returns it and the rail's arguments.
    setup: fn(&World) -> Result<Prepared, Failed>,
    /// Whether the rail's effect is in the run.
    effect: fn(&Path) -> bool,
}

fn table(t: &Target) -> Result<(), Failed> {
    let w = World::new();
    w.git_init();
    for (point, commits) in POINTS {
        let (run, args) = super::quick(|| (t.setup)(&w))?;
        killed_at(&w, t, &run, &args, point, commits)
            .map_err(|e| failed(format!("{} killed at `{point}`: {}", t.rail, msg(&e))))?;
    }
    Ok(())
}

fn killed_at(
    w: &World,
    t: &Target,
    run: &Path,
    args: &[String],
    point: &str,
    commits: bool,
) -> Result<(), Failed> {
    let world = outside(w, run);
    let before = run_files(run);
    let lines_before = journal(run).len();
    ensure!(
        !(t.effect)(run),
        "fixture: the effect is there before the rail"
    );
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.extend(["--idempotency-key", "crash-1"]);

    let died = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args(["case", t.rail])
        .arg(run)
        .args(&args)
        .env("ANVIL_CRASH_AT", point)
        .current_dir(w.root())
        .stdin(Stdio::null())
        .output()
        .map_err(failed)?;
    ensure!(
        died.status.signal() == Some(libc::SIGABRT),
        "the rail was not killed there (status {:?}): {}",
        died.status,
        String::from_utf8_lossy(&died.stderr)
    );

    // `case verify` sees the run as recovery of the interrupted rail would leave it and
    // passes, writing nothing (recovery is the next rail's): `case verify` itself right
    // after the commit point, the same library call (whose report the CLI maps to its exit
    // code) at the others, to keep the table fast.
    let killed = super::snapshot(run);
    if point == "journaled" {
        super::verifies(w, run)?;
    } else {
        let report = crate::support::rails::verify(run, None, None).map_err(failed)?;
        ensure!(
            report.is_clean(),
            "the run does not verify after the kill: {report:?}"
        );
    }
    let verified = super::snapshot(run);
    ensure!(
        verified == killed,
        "`case verify` changed the interrupted run: {:?}",
        super::changed(&killed, &verified)
    );
    let lines_killed = journal(run).len();
    if commits {
        ensure!(
            lines_killed == lines_before + 1,
            "{lines_killed} journal lines after a kill past the commit point, {lines_before} before"
        );
    } else {
        let mut left = run_files(run);
        left.retain(|p, _| !leftovers(run).contains(p));
        ensure!(
            lines_killed == lines_before && left == before,
            "a rail killed before its journal line left a trace: {:?}",
            super::changed(&before, &left)
        );
    }

    // The rerun with the same key recovers the interrupted rail under the lock (completes
    // or sweeps it), then replays the committed outcome or runs afresh.
    let again = rail(w, t.rail, run, &args);
    ensure!(
        again.status.code() == Some(0),
        "the rerun fails (exit {:?}): {}{}",
        again.status.code(),
        String::from_utf8_lossy(&again.stdout),
        String::from_utf8_lossy(&again.stderr)
    );
    ensure!(leftovers(run).is_empty(), "leftovers after the rerun");
    let entries = journal(run);
    ensure!(
        entries.len() == lines_killed + 1,
        "the rerun journaled {} lines",
        entries.len() - lines_killed
    );
    let rerun = &entries[lines_killed];
    ensure!(
        (rerun["replayed"] == true) == commits,
        "the rerun {} though the killed rail's line {}: {rerun}",
        if commits { "ran afresh" } else { "replayed" },
        if commits {
            "committed"
        } else {
            "never committed"
        }
    );
    if commits {
        let last = &entries[lines_before];
        ensure!(
            last["rail"] == t.rail && last["outcome"] == "ok",
            "the committed line is not the rail's success: {last}"
        );
        // A replay writes no file: what changed is the killed rail's, recovered.
        whole(last, &before, &run_files(run))?;
    }
    ensure!((t.effect)(run), "the rerun left no effect");
    let seal = anvil_bench::case::rail::check(run).map_err(failed)?;
    ensure!(
        seal.is_empty(),
        "the seal is broken after the rerun: {seal:?}"
    );
    ensure!(
        outside(w, run) == world,
        "the crash or recovery changed something outside the run"
    );
    Ok(())
}

/// Every file the committed line names holds the hash it names; every other file of the
/// run (but the journal) is as it was before the rail.
fn whole(
    line: &Value,
    before: &std::collections::BTreeMap<PathBuf, String>,
    after: &std::collections::BTreeMap<PathBuf, String>,
) -> Result<(), Failed> {
    let writes = line["writes"].as_object().cloned().unwrap_or_default();
    ensure!(!writes.is_empty(), "the committed line names no file");
    for (rel, hash) in &writes {
        ensure!(
            after.get(Path::new(rel)).map(String::as_str) == hash.as_str(),
            "`{rel}` does not hold what the committed line names ({hash})"
        );
    }
    for (rel, what) in after {
        if rel == Path::new("journal.jsonl") || writes.contains_key(&*rel.to_string_lossy()) {
            continue;
        }
        ensure!(
            before.get(rel) == Some(what),
            "`{}` changed though the committed line does not name it",
            rel.display()
        );
    }
    for rel in before.keys() {
        ensure!(after.contains_key(rel), "`{}` vanished", rel.display());
    }
    Ok(())
}

fn state(run: &Path) -> String {
    lifecycle_json(run)["state"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A repository file of about 2 MB, so a staged evidence.json is cut mid-write.
const BIG: &str = "src/payments/big.py";

const ADD_EVIDENCE: Target = Target {
    rail: "add-evidence",
    setup: |w| {
        let big = w.repo().join(BIG);
        if !big.exists() {
            let text = (0..30_000).fold(String::new(), |mut text, i| {
                let _ = writeln!(
                    text,
                    "value_{i} = {i}  # padding so the staged evidence is large"
                );
                text
            });
            std::fs::write(&big, text).unwrap();
            // Evidence is what the repository holds committed (R-GATE-3).
            crate::support::git(&w.repo(), &["add", "-A"]);
            crate::support::git(&w.repo(), &["commit", "-q", "-m", "big"]);
        }
        let run = w.open_unit()?.run_dir;
        Ok((run, vec!["--path".into(), BIG.into()]))
    },
    effect: |run| {
        out(run, "evidence.json").exists()
            && read_json(&out(run, "evidence.json"))["artifacts"]
                .as_array()
                .is_some_and(|a| a.iter().any(|a| a["path"] == BIG))
    },
};

const ADD_CLAIM: Target = Target {
    rail: "add-claim",
    setup: |w| {
        let run = w.open_unit()?.run_dir;
        let a = ev(&run, "src/payments/service.py", 32, 39)?;
        let b = ev(&run, "tests/test_capture.py", 6, 8)?;
        let args = [
            "--predicate",
            "field.unit",
            "--value",
            "\"s\"",
            "--artifact",
        ]
        .into_iter()
        .map(str::to_string)
        .chain([a, "--artifact".into(), b])
        .collect();
        Ok((run, args))
    },
    effect: |run| {
        out(run, "claims.json").exists()
            && read_json(&out(run, "claims.json"))["claims"]
                .as_array()
                .is_some_and(|c| !c.is_empty())
    },
};

const FREEZE: Target = Target {
    rail: "freeze-research",
    setup: |w| Ok((unit_research(w)?.run, vec![])),
    effect: |run| state(run) == "research_frozen",
};

const VALIDATE: Target = Target {
    rail: "validate",
    setup: |w| {
        let u = frozen_unit(w)?;
        write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
        Ok((u.run, vec![]))
    },
    effect: |run| state(run) == "proposal_frozen" && out(run, "critique.json").exists(),
};

const FINALIZE: Target = Target {
    rail: "finalize",
    setup: |w| Ok((validated(w, "s")?.run, vec![])),
    effect: |run| state(run) == "finalized" && out(run, "result.json").exists(),
};

const CLOSE: Target = Target {
    rail: "close",
    setup: |w| Ok((finalized(w)?.run, vec![])),
    effect: |run| state(run) == "closed" && run.join("close.json").exists(),
};
