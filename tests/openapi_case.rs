//! A scenario made from an imported `OpenAPI` description, end to end through the CLI:
//! `air import` → scenario.json → `case open` → evidence, claim, freeze, proposal, validate,
//! finalize → `case close --apply` → `air export`, whose diff against the original is the
//! one refined value and its provenance.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?} failed ({:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn a_case_on_an_imported_description_closes_and_exports_only_what_it_proved() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openapi/scenario");
    copy_dir(&fixture, dir);
    let original = std::fs::read_to_string(dir.join("openapi.yaml")).unwrap();

    // The scenario: an imported AIR beside its repository.
    ok(dir, &["air", "import", "openapi.yaml", "--out", "air.json"]);
    let target = "op.createJob.input.body.timeout";
    let scenario = json!({
        "format": "anvil-scenario", "formatVersion": 1, "id": "unit-bearing/jobs-timeout",
        "class": "unit-bearing", "skill": "annotate-unit", "target": target, "language": "python"
    });
    std::fs::write(
        dir.join("scenario.json"),
        serde_json::to_vec_pretty(&scenario).unwrap(),
    )
    .unwrap();
    let plan: Value =
        serde_json::from_str(&ok(dir, &["detect", "--air", "air.json", "--json"])).unwrap();
    assert!(
        plan["deficiencies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["target"] == target && d["code"] == "unit_ambiguous_field"),
        "{plan}"
    );

    let skill = scenario["skill"].as_str().unwrap();
    let run = ok(
        dir,
        &[
            "case", "open", "--air", "air.json", "--repo", "repo", "--skill", skill, "--target",
            target,
        ],
    );
    let ev1 = ok(
        dir,
        &[
            "case",
            "add-evidence",
            &run,
            "--path",
            "src/jobs/service.py",
            "--start-line",
            "9",
            "--end-line",
            "10",
        ],
    );
    let ev2 = ok(
        dir,
        &[
            "case",
            "add-evidence",
            &run,
            "--path",
            "tests/test_jobs.py",
            "--start-line",
            "6",
            "--end-line",
            "7",
        ],
    );
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
    ok(dir, &["case", "freeze-research", &run]);
    let proposal = json!({
        "format": "anvil-proposal", "formatVersion": 1, "skill": skill, "skillVersion": 1,
        "deficiency": "unit_ambiguous_field", "target": target,
        "patch": {"target": target, "set": {"unit": "s"}},
        "grounding": {"unit": [claim]}, "confidence": 0.9,
        "rationale": "run_window builds timedelta(seconds=timeout)"
    });
    std::fs::write(
        dir.join(&run).join("output/proposal.json"),
        serde_json::to_vec_pretty(&proposal).unwrap(),
    )
    .unwrap();
    assert!(ok(dir, &["case", "validate", &run]).starts_with("verdict: pass"));
    assert_eq!(ok(dir, &["case", "finalize", &run]), "proposal_generated");
    let close: Value = serde_json::from_str(&ok(
        dir,
        &[
            "case",
            "close",
            &run,
            "--apply",
            "patched.json",
            "--approved-by",
            "maintainer",
            "--json",
        ],
    ))
    .unwrap();
    assert!(close["applied"].is_object(), "{close}");

    // Back to OpenAPI: the diff is the unit beside the field and the provenance record.
    ok(
        dir,
        &[
            "air",
            "export",
            "--spec",
            "openapi.yaml",
            "--air",
            "patched.json",
            "--out",
            "refined.yaml",
        ],
    );
    let refined = std::fs::read_to_string(dir.join("refined.yaml")).unwrap();
    let run_id = Path::new(&run).file_name().unwrap().to_str().unwrap();
    let timeout_line = "        timeout:\n          type: integer\n          description: How long the worker lets the command run before killing it.\n";
    let expected_body = original.replace(
        timeout_line,
        &format!("{timeout_line}          x-anvil-unit: s\n"),
    );
    assert!(refined.starts_with(&expected_body), "{refined}");
    let tail = &refined[expected_body.len()..];
    assert!(tail.starts_with("x-anvil-provenance:\n  - {target: op.createJob.input.body.timeout, pointer: /components/schemas/NewJob/properties/timeout, attributes: [unit], caseKey: "), "{tail}");
    assert!(
        tail.contains(&format!("runId: {run_id}"))
            || tail.contains(&format!("runId: \"{run_id}\"")),
        "{tail}"
    );
    assert_eq!(tail.lines().count(), 2, "{tail}");

    // Read back, the case's value is the document's and the deficiency is gone.
    let plan: Value =
        serde_json::from_str(&ok(dir, &["detect", "--spec", "refined.yaml", "--json"])).unwrap();
    assert!(
        !plan["deficiencies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["target"] == target),
        "{plan}"
    );
    // Exporting again changes nothing.
    ok(
        dir,
        &[
            "air",
            "export",
            "--spec",
            "refined.yaml",
            "--air",
            "patched.json",
            "--out",
            "again.yaml",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("again.yaml")).unwrap(),
        refined
    );
}
