//! Snapshots of what people and agents read: CASE.md, the proposal schema, `--help`.
//! Run ids, times, hashes and temp paths are redacted.

use std::path::Path;
use std::process::Command;

use anvil_bench::case::{OpenMode, OpenRequest, open};

fn open_example(skill: &str, target: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/payments");
    let opened = open(&OpenRequest {
        air: example.join("air.json"),
        repo: example.join("repo"),
        skill: skill.into(),
        target: target.into(),
        deficiency: None,
        cases_dir: dir.path().join("cases"),
        executor: "snapshot".into(),
        scopes: vec![],
        mode: OpenMode::New,
        tool_limits: vec![],
        snapshots: vec![],
    })
    .unwrap();
    (dir, opened.run_dir)
}

fn redactions() -> Vec<(&'static str, &'static str)> {
    vec![
        (r"sha256:[0-9a-f]{64}", "sha256:[hash]"),
        (r"\b[0-9A-HJKMNP-TV-Z]{26}\b", "[run-id]"),
        (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z", "[time]"),
        (r"`[^`]*/examples/payments/repo`", "`[repo]`"),
    ]
}

#[test]
fn case_md_for_a_unit_case() {
    let (_dir, run) = open_example(
        "annotate-unit",
        "op.create_payment.input.body.capture_timeout",
    );
    let md = std::fs::read_to_string(run.join("CASE.md")).unwrap();
    insta::with_settings!({filters => redactions()}, {
        insta::assert_snapshot!(md);
    });
}

#[test]
fn proposal_schema_for_a_sensitivity_case() {
    let (_dir, run) = open_example(
        "classify-sensitivity",
        "op.create_payment.input.body.customer_email",
    );
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("expected-output.schema.json")).unwrap(),
    )
    .unwrap();
    insta::assert_json_snapshot!(schema);
}

#[test]
fn case_open_help() {
    let out = Command::new(env!("CARGO_BIN_EXE_anvil-bench"))
        .args(["case", "open", "--help"])
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert!(out.status.success());
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stdout));
}
