//! X-TRAV: evidence paths that leave the boundary, through the CLI: `..`, absolute paths,
//! a symlink in the repository pointing out of it, an out-of-scope file, and — when the
//! cases dir lies inside the repository, as the default `.refinement/cases` does — the
//! run's own workspace. Each is refused with its kind; the refusal is journaled and
//! nothing else is written; the run still verifies.

use std::os::unix::fs::symlink;
use std::path::Path;

use libtest_mimic::Failed;
use serde_json::json;

use super::{SECRET, files_containing, outside, rail, refused, run_files, secret_file, verifies};
use crate::support::{World, failed, journal, out, read_json, write_json};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "attacks::dotdot_paths_are_refused_through_the_cli_and_write_nothing",
            rules: &["X-TRAV-1", "R-EV-2"],
            run: || {
                table(
                    |_| {
                        vec![
                            "../air.json".into(),
                            "src/payments/../../../air.json".into(),
                            "./../cases".into(),
                        ]
                    },
                    "path_escape",
                )
            },
        },
        Check {
            name: "attacks::absolute_paths_are_refused_through_the_cli_and_write_nothing",
            rules: &["X-TRAV-1", "R-EV-2"],
            run: || {
                table(
                    |w| {
                        vec![
                            w.repo()
                                .join("src/payments/service.py")
                                .display()
                                .to_string(),
                            "/etc/passwd".into(),
                        ]
                    },
                    "absolute_path",
                )
            },
        },
        Check {
            name: "attacks::a_repository_symlink_to_a_secret_outside_is_refused_and_never_read",
            rules: &["X-TRAV-1", "R-EV-2"],
            run: || {
                table(
                    |w| {
                        let secret = secret_file(w, "leak.json", SECRET);
                        symlink(secret, w.repo().join("src/payments/leak.py")).unwrap();
                        vec!["src/payments/leak.py".into()]
                    },
                    "symlink_escape",
                )
            },
        },
        Check {
            name: "attacks::a_repository_symlink_into_the_cases_dir_is_refused",
            rules: &["X-TRAV-1", "R-EV-2"],
            run: || {
                table(
                    |w| {
                        std::fs::create_dir_all(w.cases()).unwrap();
                        symlink(w.cases(), w.repo().join("src/runs")).unwrap();
                        vec!["src/runs".into()]
                    },
                    "symlink_escape",
                )
            },
        },
        Check {
            name: "attacks::an_out_of_scope_file_is_refused_through_the_cli_and_writes_nothing",
            rules: &["X-TRAV-1", "R-EV-3"],
            run: || {
                table(
                    |w| {
                        std::fs::write(w.repo().join("deploy.ini"), "timeout_unit = s\n").unwrap();
                        vec!["deploy.ini".into()]
                    },
                    "out_of_scope",
                )
            },
        },
        Check {
            name: "attacks::the_runs_own_workspace_inside_the_repository_is_never_evidence",
            rules: &["X-TRAV-2", "R-EV-1"],
            run: own_workspace,
        },
        Check {
            name: "attacks::a_hand_written_artifact_citing_the_runs_workspace_is_refused_at_freeze",
            rules: &["X-TRAV-2", "R-EV-1"],
            run: workspace_artifact,
        },
        Check {
            name: "attacks::a_repository_directory_with_only_a_case_json_is_not_a_run",
            rules: &["X-TRAV-2", "R-EV-1"],
            run: case_json_alone,
        },
        Check {
            name: "attacks::another_runs_workspace_inside_the_repository_is_never_evidence",
            rules: &["X-TRAV-2", "R-EV-1"],
            run: other_runs_workspace,
        },
    ]
}

/// Each path `plant` returns (planting what it needs before the run opens) is refused by
/// `add-evidence` through the CLI with `kind`: exit 1, one rejected journal line, nothing
/// else written, the run verifying, the world unchanged.
fn table(plant: fn(&World) -> Vec<String>, kind: &str) -> Result<(), Failed> {
    let w = World::new();
    let paths = plant(&w);
    let run = w.open_unit()?.run_dir;
    let world = outside(&w, &run);
    for path in &paths {
        let mut before = run_files(&run);
        let lines = journal(&run).len();
        let o = rail(
            &w,
            "add-evidence",
            &run,
            &["--path", path, "--start-line", "1", "--end-line", "1"],
        );
        refused(&o, kind, &[])
            .map_err(|e| failed(format!("{path}: {}", crate::support::msg(&e))))?;
        let mut after = run_files(&run);
        before.remove(Path::new("journal.jsonl"));
        after.remove(Path::new("journal.jsonl"));
        let entries = journal(&run);
        ensure!(
            after == before
                && entries.len() == lines + 1
                && entries[lines]["outcome"] == "rejected"
                && entries[lines]["error"]["kind"] == kind,
            "{path}: the refusal wrote more than its journal line"
        );
    }
    ensure!(
        files_containing(&run, SECRET).is_empty(),
        "a refused path's target reached the run"
    );
    verifies(&w, &run)?;
    ensure!(outside(&w, &run) == world, "the world changed");
    Ok(())
}

/// A cases dir inside the repository, and an in-scope file the agent wrote in its own
/// workspace: the engine must not read it as a verified source.
fn open_in_repo(w: &World) -> Result<(std::path::PathBuf, String), Failed> {
    let mut req = w.request("annotate-unit", crate::support::UNIT_TARGET);
    req.cases_dir = w.repo().join(".refinement/cases");
    let run = anvil_bench::case::open(&req).map_err(failed)?.run_dir;
    std::fs::write(
        run.join("workspace/fake.py"),
        "def capture_window(p):\n    return timedelta(seconds=p.capture_timeout)\n",
    )
    .unwrap();
    let rel = run
        .join("workspace/fake.py")
        .strip_prefix(w.repo())
        .unwrap()
        .display()
        .to_string();
    Ok((run, rel))
}

fn own_workspace() -> Result<(), Failed> {
    let w = World::new();
    let (run, rel) = open_in_repo(&w)?;
    let world = outside(&w, &run);
    let mut before = run_files(&run);
    for path in [rel.as_str(), &rel.replace("workspace/fake.py", "case.json")] {
        let o = rail(&w, "add-evidence", &run, &["--path", path]);
        refused(&o, "inside_a_run", &[path])?;
    }
    let mut after = run_files(&run);
    before.remove(Path::new("journal.jsonl"));
    after.remove(Path::new("journal.jsonl"));
    ensure!(
        after == before && !out(&run, "evidence.json").exists(),
        "a refused workspace path wrote evidence"
    );
    verifies(&w, &run)?;
    ensure!(outside(&w, &run) == world, "the world changed");
    Ok(())
}

/// An earlier run left inside the repository, under a cases dir this run does not use:
/// its workspace is still a run's, written by an agent, and never evidence for this run.
fn other_runs_workspace() -> Result<(), Failed> {
    let w = World::new();
    let (earlier, rel) = open_in_repo(&w)?;
    let run = w.open_unit()?.run_dir;
    ensure!(
        !run.starts_with(w.repo()) && run != earlier,
        "the second run opened inside the repository"
    );
    let world = outside(&w, &run);
    let o = rail(&w, "add-evidence", &run, &["--path", &rel]);
    refused(&o, "inside_a_run", &[&rel])?;
    ensure!(
        !out(&run, "evidence.json").exists(),
        "a refused path in another run wrote evidence"
    );
    verifies(&w, &run)?;
    ensure!(outside(&w, &run) == world, "the world changed");
    Ok(())
}

/// A run directory holds both case.json and lifecycle.json; a repository's own `case.json`
/// (a fixture, a config) does not make its directory a run, and the files beside it stay
/// citable.
fn case_json_alone() -> Result<(), Failed> {
    let w = World::new();
    let dir = w.repo().join("docs/fixtures");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("case.json"), "{\"name\": \"fixture\"}\n").unwrap();
    std::fs::write(dir.join("units.md"), "capture_timeout is in seconds.\n").unwrap();
    let run = w.open_unit()?.run_dir;
    let a = crate::support::add_ev(&run, "docs/fixtures/units.md", None).map_err(failed)?;
    ensure!(
        a.excerpt.contains("seconds"),
        "the excerpt is {:?}",
        a.excerpt
    );
    Ok(())
}

fn workspace_artifact() -> Result<(), Failed> {
    let w = World::new();
    let (run, rel) = open_in_repo(&w)?;
    // The artifact the engine would derive for the workspace file, written by hand.
    let excerpt = std::fs::read_to_string(run.join("workspace/fake.py")).unwrap();
    let hash = anvil_bench::canon::bytes_hash(excerpt.as_bytes());
    let revision = read_json(&run.join("case.json"))["identity"]["sourceRevision"]
        .as_str()
        .unwrap()
        .to_string();
    let id = crate::support::local_artifact_id("implementation", &revision, &rel, 1, 2, &hash);
    let artifact = json!({
        "id": id, "uri": format!("repo:{rel}#L1-L2"), "kind": "implementation",
        "revision": revision, "path": rel, "startLine": 1, "endLine": 2,
        "contentHash": hash, "excerpt": excerpt, "acquiredAt": "2026-01-01T00:00:00.000Z",
        "verification": {"status": "verified",
                         "verifier": format!("anvil-bench/{}", env!("CARGO_PKG_VERSION"))},
    });
    write_json(
        &out(&run, "evidence.json"),
        &json!({"format": "anvil-evidence", "formatVersion": 1, "artifacts": [artifact]}),
    );
    let o = rail(&w, "freeze-research", &run, &[]);
    refused(&o, "inside_a_run", &[&rel])?;
    ensure!(
        crate::support::lifecycle_json(&run)["state"] == "open",
        "a refused freeze moved the run"
    );
    verifies(&w, &run)?;
    Ok(())
}
