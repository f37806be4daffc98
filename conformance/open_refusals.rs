//! Every refusal of `case open` exits 1, names the bad input, and leaves the cases
//! directory as it was (X-OPEN-1); AIR unknown keys are named by path (X-AIR-1).

use libtest_mimic::Failed;

use crate::support::{UNIT_TARGET, World, stderr, tree};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "open_refusals::unknown_skill",
            rules: &["X-OPEN-1"],
            run: || refused(&["--skill", "guess-everything"], "guess-everything"),
        },
        Check {
            name: "open_refusals::malformed_target",
            rules: &["X-OPEN-1"],
            run: || {
                refused(
                    &["--target", "field.capture_timeout"],
                    "field.capture_timeout",
                )
            },
        },
        Check {
            name: "open_refusals::target_not_in_the_air",
            rules: &["X-OPEN-1"],
            run: || {
                refused(
                    &["--target", "op.create_payment.input.body.nope"],
                    "op.create_payment.input.body.nope",
                )
            },
        },
        Check {
            name: "open_refusals::target_of_the_wrong_kind_for_the_skill",
            rules: &["X-OPEN-1"],
            run: || {
                refused(
                    &["--target", "op.create_payment.error.CARD_DECLINED"],
                    "CARD_DECLINED",
                )
            },
        },
        Check {
            name: "open_refusals::no_deficiency_of_the_skill_on_the_target",
            rules: &["X-OPEN-1"],
            run: || {
                refused(
                    &["--target", "op.create_payment.input.body.amount"],
                    "op.create_payment.input.body.amount",
                )
            },
        },
        Check {
            name: "open_refusals::deficiency_not_detected_on_the_target",
            rules: &["X-OPEN-1"],
            run: || {
                refused(
                    &["--deficiency", "unproven_inferred_value"],
                    "unproven_inferred_value",
                )
            },
        },
        Check {
            name: "open_refusals::repository_is_not_a_directory",
            rules: &["X-OPEN-1"],
            run: || refused(&["--repo", "air.json"], "air.json"),
        },
        Check {
            name: "open_refusals::repository_is_missing",
            rules: &["X-OPEN-1"],
            run: || refused(&["--repo", "no-such-repo"], "no-such-repo"),
        },
        Check {
            name: "open_refusals::scope_escaping_through_dotdot",
            rules: &["X-OPEN-1"],
            run: || refused(&["--scope", "../**/*.py=implementation"], "../**/*.py"),
        },
        Check {
            name: "open_refusals::scope_with_an_absolute_glob",
            rules: &["X-OPEN-1"],
            run: || refused(&["--scope", "/etc/**=doc"], "/etc/**"),
        },
        Check {
            name: "open_refusals::scope_naming_an_unknown_kind",
            rules: &["X-OPEN-1"],
            run: || refused(&["--scope", "**/*.py=gospel"], "gospel"),
        },
        Check {
            name: "open_refusals::scope_assigning_a_derived_kind",
            rules: &["X-OPEN-1"],
            run: || refused(&["--scope", "**/*.py=comment"], "comment"),
        },
        Check {
            name: "open_refusals::resume_of_a_missing_run",
            rules: &["X-OPEN-1", "R-ID-7"],
            run: || {
                refused(
                    &["--resume", "cases/nothing/01ARZ3NDEKTSV4RRFFQ69G5FAV"],
                    "01ARZ3NDEKTSV4RRFFQ69G5FAV",
                )
            },
        },
        Check {
            name: "open_refusals::air_that_is_not_json",
            rules: &["X-OPEN-1"],
            run: air_not_json,
        },
        Check {
            name: "air::an_unknown_key_is_refused_with_its_path",
            rules: &["X-AIR-1", "X-OPEN-1"],
            run: air_unknown_key,
        },
        Check {
            name: "open_refusals::json_output_carries_the_error_kind",
            rules: &["X-OPEN-1"],
            run: json_error,
        },
    ]
}

fn base_args() -> Vec<String> {
    [
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
    ]
    .map(String::from)
    .to_vec()
}

/// Runs `case open` with `overrides` replacing or adding flags, and checks the refusal.
fn refused(overrides: &[&str], named: &str) -> Result<(), Failed> {
    let w = World::new();
    // One run already exists: a refusal must leave it and everything else untouched.
    w.open_unit()?;
    let mut args = base_args();
    for pair in overrides.chunks(2) {
        match args.iter().position(|a| a == pair[0]) {
            Some(i) => args[i + 1] = pair[1].to_string(),
            None => args.extend(pair.iter().map(std::string::ToString::to_string)),
        }
    }
    check_refusal(&w, &args, named)
}

fn check_refusal(w: &World, args: &[String], named: &str) -> Result<(), Failed> {
    let before = tree(w.root());
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = w.cli(&argv);
    ensure!(
        out.status.code() == Some(1),
        "exit {:?}, stderr: {}",
        out.status.code(),
        stderr(&out)
    );
    let err = stderr(&out);
    ensure!(
        err.starts_with("error: "),
        "stderr does not start with `error: `: {err}"
    );
    ensure!(
        err.contains(named),
        "the message does not name `{named}`: {err}"
    );
    ensure!(!err.contains("panicked"), "panic: {err}");
    ensure!(
        tree(w.root()) == before,
        "the refusal changed files on disk"
    );
    Ok(())
}

fn air_not_json() -> Result<(), Failed> {
    let w = World::new();
    std::fs::write(w.air(), "{ not json").unwrap();
    let out = w.cli(&base_args().iter().map(String::as_str).collect::<Vec<_>>());
    ensure!(
        !w.cases().exists(),
        "a refused open created the cases directory"
    );
    ensure!(out.status.code() == Some(1), "exit {:?}", out.status.code());
    ensure!(
        stderr(&out).contains("air.json") && stderr(&out).contains("not valid JSON"),
        "message: {}",
        stderr(&out)
    );
    Ok(())
}

fn air_unknown_key() -> Result<(), Failed> {
    let w = World::new();
    w.edit_air(|v| v["operations"][0]["fields"][2]["colour"] = "blue".into());
    let args = base_args();
    check_refusal(&w, &args, "at `operations[0].fields[2].colour`:")?;
    ensure!(
        !w.cases().exists(),
        "a refused open created the cases directory"
    );
    // The library reports the same path.
    let err = anvil_bench::air::Air::load(&w.air())
        .unwrap_err()
        .to_string();
    ensure!(
        err.contains("at `operations[0].fields[2].colour`:"),
        "library error lacks the path: {err}"
    );
    Ok(())
}

fn json_error() -> Result<(), Failed> {
    let w = World::new();
    let mut args = base_args();
    args.push("--json".into());
    let i = args.iter().position(|a| a == "--skill").unwrap();
    args[i + 1] = "nope".into();
    let out = w.cli(&args.iter().map(String::as_str).collect::<Vec<_>>());
    ensure!(out.status.code() == Some(1), "exit {:?}", out.status.code());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| Failed::from(format!("stdout is not JSON: {e}")))?;
    ensure!(doc["error"]["kind"] == "unknown_skill", "error kind: {doc}");
    Ok(())
}
