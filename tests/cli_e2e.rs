//! A whole investigation through the CLI alone: open → add-evidence → add-claim →
//! freeze-research → (write proposal.json) → validate → finalize → close --apply, yielding
//! a patched AIR with provenance. And the demo command end to end.

use std::path::Path;
use std::process::{Command, Output};

fn cli(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = cli(dir, args);
    assert!(
        out.status.success(),
        "{args:?} failed ({:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn a_scripted_investigation_runs_end_to_end_through_the_cli() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    anvil_bench::demo::write_example(dir).unwrap();
    let target = "op.create_payment.input.body.capture_timeout";
    let run = ok(dir, &OPEN_UNIT);
    let ev1 = ok(
        dir,
        &[
            "case",
            "add-evidence",
            &run,
            "--path",
            "src/payments/service.py",
            "--start-line",
            "32",
            "--end-line",
            "39",
        ],
    );
    let ev2 = ok(
        dir,
        &[
            "case",
            "add-evidence",
            &run,
            "--path",
            "tests/test_capture.py",
            "--start-line",
            "6",
            "--end-line",
            "8",
        ],
    );
    assert!(ev1.starts_with("ev-") && ev2.starts_with("ev-") && ev1 != ev2);
    let claim = ok(
        dir,
        &[
            "case",
            "add-claim",
            &run,
            "--predicate",
            "field.unit",
            "--value",
            "\"s\"",
            "--artifact",
            &ev1,
            "--artifact",
            &ev2,
            "--confidence",
            "0.9",
        ],
    );
    assert!(claim.starts_with("cl-"));
    ok(dir, &["case", "freeze-research", &run]);
    let proposal = serde_json::json!({
        "format": "anvil-proposal", "formatVersion": 1, "skill": "annotate-unit", "skillVersion": 1,
        "deficiency": "unit_ambiguous_field", "target": target,
        "patch": {"target": target, "set": {"unit": "s"}},
        "grounding": {"unit": [claim]}, "confidence": 0.9,
        "rationale": "capture_window builds timedelta(seconds=capture_timeout)"
    });
    std::fs::write(
        dir.join(&run).join("output/proposal.json"),
        serde_json::to_vec_pretty(&proposal).unwrap(),
    )
    .unwrap();
    assert!(ok(dir, &["case", "validate", &run]).starts_with("verdict: pass"));
    assert_eq!(ok(dir, &["case", "finalize", &run]), "proposal_generated");
    let close: serde_json::Value = serde_json::from_str(&ok(
        dir,
        &["case", "close", &run, "--apply", "patched.json", "--json"],
    ))
    .unwrap();
    assert_eq!(close["tier"], "auto");
    let patched = anvil_bench::air::Air::load(&dir.join("patched.json")).unwrap();
    assert_eq!(patched.operations[0].fields[2].unit.as_deref(), Some("s"));
    let prov = &patched.provenance[0];
    assert_eq!(prov.target, target);
    assert_eq!(prov.artifact_ids.len(), 2);
    assert!(dir.join(&run).ends_with(&prov.run_id));
    // The run is closed and says so.
    let show: serde_json::Value =
        serde_json::from_str(&ok(dir, &["case", "show", &run, "--json"])).unwrap();
    assert_eq!(show["state"], "closed");
    assert!(show["tampered"].is_null());
}

#[test]
fn the_demo_runs_every_bundled_case_to_a_tier() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    let out = cli(
        tmp.path(),
        &["demo", "--dir", dir.to_str().unwrap(), "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tiers: Vec<&str> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tier"].as_str().unwrap())
        .collect();
    assert_eq!(tiers, ["auto", "auto", "review", "review", "auto", "auto"]);
    // Every auto result was applied in turn: the final AIR has only the review targets left.
    let air = anvil_bench::air::Air::load(Path::new(report["finalAir"].as_str().unwrap())).unwrap();
    let left: Vec<String> = anvil_bench::air::detect(&air)
        .iter()
        .map(|d| d.target.to_string())
        .collect();
    assert_eq!(
        left,
        [
            "op.create_payment.input.body.customer_email",
            "op.create_payment.error.RATE_LIMITED"
        ]
    );
    assert_eq!(air.provenance.len(), 4);
}

#[test]
fn investigate_plays_a_scripted_driver_from_a_script_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    anvil_bench::demo::write_example(dir).unwrap();
    let run = ok(
        dir,
        &[
            "case",
            "open",
            "--air",
            "air.json",
            "--repo",
            "repo",
            "--skill",
            "enrich-error",
            "--target",
            "op.create_payment.error.CARD_DECLINED",
        ],
    );
    let script = serde_json::json!({
        "format": "anvil-script", "formatVersion": 1,
        "steps": [
            {"addEvidence": {"path": "src/payments/service.py", "startLine": 45, "endLine": 47}},
            {"addClaim": {"predicate": "error.retryable", "value": false, "artifacts": ["@0"], "confidence": 0.9}},
            {"freezeResearch": {}},
            {"propose": {"value": false, "claims": ["@1"], "rationale": "a decline is final"}},
            {"validate": {}},
            {"finalize": {}}
        ]
    });
    std::fs::write(
        dir.join("script.json"),
        serde_json::to_vec(&script).unwrap(),
    )
    .unwrap();
    let out = ok(
        dir,
        &[
            "case",
            "investigate",
            &run,
            "--driver",
            "scripted",
            "--script",
            "script.json",
        ],
    );
    assert!(
        out.contains("finalized") && out.contains("proposal_generated"),
        "{out}"
    );
    // A script with an unknown step field is refused with its path.
    std::fs::write(
        dir.join("bad.json"),
        r#"{"format":"anvil-script","formatVersion":1,"steps":[{"freezeResearch":{"now":true}}]}"#,
    )
    .unwrap();
    let out = cli(
        dir,
        &[
            "case",
            "investigate",
            &run,
            "--driver",
            "scripted",
            "--script",
            "bad.json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("steps[0].freezeResearch.now"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Regression: `case investigate` with a relative run path handed the agent paths relative
/// to the caller's directory while running it inside the run, so they resolved to
/// `RUN/RUN/…` (the MCP config "not found", exit 5).
#[test]
fn investigate_with_a_relative_run_path_hands_the_agent_absolute_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    anvil_bench::demo::write_example(dir).unwrap();
    let run = ok(dir, &OPEN_UNIT);
    let rel = Path::new(&run)
        .strip_prefix(dir.canonicalize().unwrap())
        .or_else(|_| Path::new(&run).strip_prefix(dir))
        .map(|p| p.display().to_string())
        .unwrap_or(run.clone());
    assert!(Path::new(&rel).is_relative(), "{rel}");
    let out = cli(
        dir,
        &[
            "case",
            "investigate",
            &rel,
            "--driver",
            "command",
            "--backend",
            "native",
            "--allow-degraded-native",
            "--command",
            "sh",
            "-c",
            "test -f \"$ANVIL_CASE_MD\" && test -d \"$ANVIL_RUN/workspace\" && case \"$ANVIL_RUN\" in /*) ;; *) exit 9;; esac",
        ],
    );
    assert!(
        out.status.success(),
        "exit {:?}: {}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `ANVIL_LOG` selects what is logged to stderr: a command agent's output lines under
/// `anvil_bench::agent=info`, nothing of them under `warn`; a filter that does not parse is a
/// usage error (exit 2) that names the variable, before anything runs.
#[test]
fn anvil_log_streams_agent_lines_and_refuses_a_malformed_filter() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    anvil_bench::demo::write_example(dir).unwrap();
    let agent = dir.join("agent.sh");
    std::fs::write(&agent, "#!/bin/sh\necho marker-from-the-agent\n").unwrap();
    std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let investigate = |filter: &str| {
        let run = ok(dir, &OPEN_UNIT);
        let args = [
            "case",
            "investigate",
            &run,
            "--driver",
            "command",
            "--backend",
            "native",
            "--allow-degraded-native",
            "--command",
            agent.to_str().unwrap(),
        ];
        cli_logged(dir, &args, filter)
    };
    let stderr = |out: &Output| String::from_utf8_lossy(&out.stderr).into_owned();

    let logged = investigate("anvil_bench::agent=info");
    assert!(
        stderr(&logged).contains("marker-from-the-agent"),
        "{}",
        stderr(&logged)
    );
    let quiet = investigate("warn");
    assert!(
        !stderr(&quiet).contains("marker-from-the-agent"),
        "{}",
        stderr(&quiet)
    );

    let cases =
        dir.join(".refinement/cases/annotate-unit--op.create_payment.input.body.capture_timeout");
    let runs = || std::fs::read_dir(&cases).unwrap().count();
    let before = runs();
    let bad = cli_logged(dir, &OPEN_UNIT, "anvil_bench::agent==info");
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("ANVIL_LOG"), "{}", stderr(&bad));
    assert_eq!(runs(), before, "a refused ANVIL_LOG opened a run");
}

/// `case open` of the example's unit case, in the default cases directory.
const OPEN_UNIT: [&str; 10] = [
    "case",
    "open",
    "--air",
    "air.json",
    "--repo",
    "repo",
    "--skill",
    "annotate-unit",
    "--target",
    "op.create_payment.input.body.capture_timeout",
];

/// [`cli`] with `ANVIL_LOG` set to `filter`.
fn cli_logged(dir: &Path, args: &[&str], filter: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args(args)
        .env("ANVIL_LOG", filter)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// A repository's snapshots answer from the repository alone, not from the user's git
/// configuration: a file the user's default excludes file (`~/.config/git/ignore`) names,
/// written into the repository by a native agent, is a containment violation.
#[test]
fn a_file_the_users_own_excludes_name_is_still_a_containment_violation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    anvil_bench::demo::write_example(dir).unwrap();
    // The example committed as the battery commits a scenario, under `w/`.
    let w = dir.join("w");
    let template = anvil_bench::battery::workspace::prepare(
        &dir.join("repo"),
        &dir.join("air.json"),
        &w,
        true,
    )
    .unwrap();
    let repo = std::fs::canonicalize(&template.repo).unwrap();
    let home = dir.join("home");
    std::fs::create_dir_all(home.join(".config/git")).unwrap();
    std::fs::write(home.join(".config/git/ignore"), "*.swp\n").unwrap();
    let run = ok(&w, &OPEN_UNIT);
    let touch = format!("touch '{}'", repo.join("notes.swp").display());
    let out = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args(["case", "investigate", &run, "--driver", "command"])
        .args(["--backend", "native", "--allow-degraded-native"])
        .args(["--command", "sh", "-c", &touch])
        .current_dir(&w)
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        repo.join("notes.swp").exists(),
        "the agent did not run: {said}"
    );
    assert_eq!(out.status.code(), Some(4), "{said}");
    assert!(said.contains("notes.swp"), "{said}");
}
