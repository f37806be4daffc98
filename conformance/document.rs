//! case.json and its generated views (R-DOC-1, 2, 3, 7).

use crate::support::rails::verify;
use anvil_bench::case::views::{WORKING_DISCIPLINE, render_views};
use anvil_bench::skill::{Attestation, ValueConstraint};
use libtest_mimic::Failed;

use crate::support::{UNIT_TARGET, World, stdout};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "document::case_json_is_never_rewritten_after_open",
            rules: &["R-DOC-1"],
            run: never_rewritten,
        },
        Check {
            name: "document::views_regenerate_byte_identical_from_case_json_alone",
            rules: &["R-DOC-2"],
            run: views_from_case_json,
        },
        Check {
            name: "document::a_fact_changed_in_case_json_changes_the_views",
            rules: &["R-DOC-2"],
            run: views_follow_case_json,
        },
        Check {
            name: "document::each_section_of_the_brief_states_its_fact_from_case_json",
            rules: &["R-DOC-2"],
            run: brief_sections_follow_case_json,
        },
        Check {
            name: "document::an_edited_brief_is_reported_as_drift",
            rules: &["R-DOC-3"],
            run: drift_case_md,
        },
        Check {
            name: "document::an_edited_schema_is_reported_as_drift",
            rules: &["R-DOC-3"],
            run: drift_schema,
        },
        Check {
            name: "document::a_view_edited_without_changing_its_length_is_still_drift",
            rules: &["R-DOC-3"],
            run: drift_same_length,
        },
        Check {
            name: "document::a_missing_view_is_reported_as_drift",
            rules: &["R-DOC-3"],
            run: drift_missing,
        },
        Check {
            name: "document::a_view_that_is_a_symlink_or_a_directory_is_refused_by_name_not_called_missing",
            rules: &["R-DOC-3"],
            run: drift_not_a_file,
        },
        Check {
            name: "document::the_brief_names_its_source_hash_and_carries_the_discipline_block",
            rules: &["R-DOC-7"],
            run: brief_provenance,
        },
        Check {
            name: "document::the_brief_names_every_input_it_is_built_from",
            rules: &["R-DOC-7"],
            run: brief_names_its_inputs,
        },
    ]
}

fn never_rewritten() -> Result<(), Failed> {
    let w = World::new();
    let first = w.open_unit()?;
    let bytes = std::fs::read(first.run_dir.join("case.json")).unwrap();
    let modified = std::fs::metadata(first.run_dir.join("case.json"))
        .unwrap()
        .modified()
        .unwrap();
    w.open_unit()?;
    let mut req = w.request("annotate-unit", UNIT_TARGET);
    req.mode = anvil_bench::case::OpenMode::Resume(first.run_dir.clone());
    anvil_bench::case::open(&req).map_err(|e| Failed::from(e.to_string()))?;
    verify(&first.run_dir, None, None).map_err(|e| Failed::from(e.to_string()))?;
    ensure!(
        std::fs::read(first.run_dir.join("case.json")).unwrap() == bytes,
        "case.json bytes changed"
    );
    ensure!(
        std::fs::metadata(first.run_dir.join("case.json"))
            .unwrap()
            .modified()
            .unwrap()
            == modified,
        "case.json was rewritten"
    );
    Ok(())
}

fn views_from_case_json() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    // Remove every other input: the AIR and the repository. The views must still
    // regenerate byte-identical, because they depend on case.json alone.
    std::fs::remove_file(w.air()).unwrap();
    std::fs::remove_dir_all(w.repo()).unwrap();
    let run = crate::support::rails::load_run(&opened.run_dir)
        .map_err(|e| Failed::from(e.to_string()))?;
    let (md, schema) = render_views(&run.doc, &run.case_hash);
    ensure!(
        md == std::fs::read_to_string(opened.run_dir.join("CASE.md")).unwrap(),
        "CASE.md differs from its regeneration"
    );
    ensure!(
        schema
            == std::fs::read_to_string(opened.run_dir.join("expected-output.schema.json")).unwrap(),
        "schema differs from its regeneration"
    );
    let report = verify(&opened.run_dir, None, None).map_err(|e| Failed::from(e.to_string()))?;
    ensure!(
        report.drift.is_empty(),
        "drift reported without inputs: {:?}",
        report.drift
    );
    Ok(())
}

fn views_follow_case_json() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    let mut run = crate::support::rails::load_run(&opened.run_dir)
        .map_err(|e| Failed::from(e.to_string()))?;
    let (md_before, schema_before) = render_views(&run.doc, &run.case_hash);
    run.doc.task.question = "A QUESTION ONLY CASE.JSON HOLDS".into();
    run.doc.identity.skill_version = 7;
    let (md_after, schema_after) = render_views(&run.doc, &run.case_hash);
    ensure!(
        md_after != md_before && md_after.contains("A QUESTION ONLY CASE.JSON HOLDS"),
        "CASE.md ignores case.json's task"
    );
    ensure!(
        schema_after != schema_before && schema_after.contains("\"const\": 7"),
        "schema ignores case.json's skillVersion"
    );
    Ok(())
}

fn drift_of(run: &std::path::Path) -> Result<Vec<String>, Failed> {
    let report = verify(run, None, None).map_err(|e| Failed::from(e.to_string()))?;
    Ok(report.drift.iter().map(|d| d.file.to_string()).collect())
}

fn drift_case_md() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    ensure!(drift_of(&opened.run_dir)?.is_empty(), "fresh run has drift");
    let path = opened.run_dir.join("CASE.md");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("read-only", "writable");
    std::fs::write(&path, text).unwrap();
    ensure!(
        drift_of(&opened.run_dir)? == ["CASE.md"],
        "edited CASE.md not reported"
    );
    let out = w.cli(&["case", "verify", opened.run_dir.to_str().unwrap()]);
    ensure!(
        out.status.code() == Some(1),
        "verify with drift exited {:?}",
        out.status.code()
    );
    ensure!(
        stdout(&out).contains("drift: CASE.md"),
        "verify output lacks the drift: {}",
        stdout(&out)
    );
    Ok(())
}

fn drift_schema() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    let path = opened.run_dir.join("expected-output.schema.json");
    let text = std::fs::read_to_string(&path).unwrap().replacen(
        "\"additionalProperties\": false",
        "\"additionalProperties\": true",
        1,
    );
    std::fs::write(&path, text).unwrap();
    ensure!(
        drift_of(&opened.run_dir)? == ["expected-output.schema.json"],
        "edited schema not reported"
    );
    Ok(())
}

/// Drift is any byte that differs, not a change of size: each view gets an edit that keeps
/// its length (CASE.md's `read-only` shouted, the schema's skillVersion const changed).
fn drift_same_length() -> Result<(), Failed> {
    for (file, from, to) in [
        ("CASE.md", "read-only", "READ-ONLY"),
        (
            "expected-output.schema.json",
            "\"const\": 1",
            "\"const\": 2",
        ),
    ] {
        let w = World::new();
        let opened = w.open_unit()?;
        let path = opened.run_dir.join(file);
        let before = std::fs::read_to_string(&path)?;
        let after = before.replacen(from, to, 1);
        ensure!(
            after != before && after.len() == before.len(),
            "test setup: {file} has no `{from}` to edit"
        );
        std::fs::write(&path, after)?;
        ensure!(
            drift_of(&opened.run_dir)? == [file],
            "{file} edited without changing its length is not reported as drift"
        );
    }
    Ok(())
}

fn drift_missing() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    std::fs::remove_file(opened.run_dir.join("CASE.md")).unwrap();
    ensure!(
        drift_of(&opened.run_dir)? == ["CASE.md"],
        "missing CASE.md not reported"
    );
    Ok(())
}

/// A view that is not a regular file is refused by name, not followed and not called
/// missing: CASE.md swapped for a symlink to a faithful copy outside the run (following it
/// would find no drift), the schema swapped for a directory.
fn drift_not_a_file() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let copy = w.root().join("CASE.md.copy");
    std::fs::rename(run.join("CASE.md"), &copy)?;
    std::os::unix::fs::symlink(&copy, run.join("CASE.md"))?;
    refused_by_name(&run, "CASE.md", "symlink")?;

    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let schema = run.join("expected-output.schema.json");
    std::fs::remove_file(&schema)?;
    std::fs::create_dir(&schema)?;
    refused_by_name(&run, "expected-output.schema.json", "not a regular file")
}

/// `verify` refuses the run with an error naming `file` and `why`.
fn refused_by_name(run: &std::path::Path, file: &str, why: &str) -> Result<(), Failed> {
    match verify(run, None, None) {
        Ok(report) => Err(format!(
            "{file} ({why}): verify reported drift {:?} instead of refusing it",
            report.drift
        )
        .into()),
        Err(e) => {
            let e = e.to_string();
            ensure!(
                e.contains(file) && e.contains(why),
                "{file} ({why}): the refusal does not name it: {e}"
            );
            Ok(())
        }
    }
}

/// The brief states what case.json asks of the agent, each fact in its own section, and
/// follows it: the operation's fields, the attestation rules, the prohibitions and the tool
/// limits appear when case.json holds them and a section with nothing to list is left out.
fn brief_sections_follow_case_json() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    let mut run = crate::support::rails::load_run(&opened.run_dir)
        .map_err(|e| Failed::from(e.to_string()))?;
    let doc = &mut run.doc;
    let predicates: Vec<String> = doc.policy.contract.attestation.keys().cloned().collect();
    ensure!(
        !predicates.is_empty(),
        "test setup: the unit skill has no attestation rules"
    );
    let op = doc
        .target
        .operation
        .as_mut()
        .ok_or("test setup: the unit target has no operation")?;
    op.field_names = vec!["input.body.field_only_case_json_names".into()];
    op.error_codes = vec!["ERROR_ONLY_CASE_JSON_NAMES".into()];
    doc.policy
        .prohibitions
        .push("A PROHIBITION ONLY CASE.JSON HOLDS".into());
    doc.tool_limits
        .insert("source.limit_only_case_json_sets".into(), 17);
    let (md, _) = render_views(doc, &run.case_hash);
    let section = |title: &str| -> Option<String> {
        let start = md.find(&format!("## {title}\n"))?;
        let rest = &md[start + title.len() + 4..];
        Some(rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string())
    };
    let target = section("Target").ok_or("CASE.md has no Target section")?;
    ensure!(
        target.contains("- Fields of the operation: `input.body.field_only_case_json_names`"),
        "the Target section does not list the operation's fields: {target}"
    );
    ensure!(
        target.contains("- Errors of the operation: `ERROR_ONLY_CASE_JSON_NAMES`"),
        "the Target section does not list the operation's errors: {target}"
    );
    let cite = section("Cite the lines that state the value")
        .ok_or("CASE.md has no section on citing the lines that state the value")?;
    for predicate in &predicates {
        ensure!(
            cite.contains(&format!("- `{predicate}`: ")),
            "the attestation section does not state the rule for `{predicate}`: {cite}"
        );
    }
    // The values the unit rules state: each once, in the vocabulary's order.
    let contract = &run.doc.policy.contract;
    let Some(Attestation::Patterns { rules }) = contract.attestation.get("field.unit") else {
        return Err("test setup: no pattern rules for field.unit".into());
    };
    let Some(ValueConstraint::Vocabulary { values: vocabulary }) =
        contract.value_constraints.get("unit")
    else {
        return Err("test setup: the unit has no vocabulary".into());
    };
    let stated: Vec<&str> = rules
        .iter()
        .flat_map(|r| r.values.iter().filter_map(serde_json::Value::as_str))
        .collect();
    ensure!(
        stated.len() > vocabulary.len() && stated.iter().all(|v| vocabulary.iter().any(|x| x == v)),
        "test setup: the rules do not repeat values of the vocabulary"
    );
    let expected: Vec<String> = vocabulary
        .iter()
        .filter(|x| stated.contains(&x.as_str()))
        .map(|x| format!("\"{x}\""))
        .collect();
    ensure!(
        cite.contains(&format!("state {}.", expected.join(", "))),
        "the unit rule does not list its values once each in vocabulary order: {cite}"
    );
    let may_not = section("You may not").ok_or("CASE.md has no prohibitions section")?;
    ensure!(
        may_not.contains("- A PROHIBITION ONLY CASE.JSON HOLDS"),
        "the prohibitions section does not list case.json's prohibitions: {may_not}"
    );
    ensure!(
        md.contains("`source.limit_only_case_json_sets` = 17"),
        "CASE.md does not state case.json's tool limits"
    );
    // With nothing to list, neither the fields line nor the limits line is written.
    run.doc.tool_limits.clear();
    if let Some(op) = run.doc.target.operation.as_mut() {
        op.field_names.clear();
        op.error_codes.clear();
    }
    let (bare, _) = render_views(&run.doc, &run.case_hash);
    ensure!(
        !bare.contains("Fields of the operation")
            && !bare.contains("Errors of the operation")
            && !bare.contains("tool limits for this case"),
        "an empty field list, error list or limit set still renders its line"
    );
    Ok(())
}

fn brief_provenance() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    let bytes = std::fs::read(opened.run_dir.join("case.json")).unwrap();
    let hash = anvil_bench::canon::bytes_hash(&bytes);
    let md = std::fs::read_to_string(opened.run_dir.join("CASE.md")).unwrap();
    ensure!(
        md.contains(&format!("Generated from `case.json` ({hash})")),
        "CASE.md does not name case.json's hash"
    );
    ensure!(
        md.contains(&format!("run `{}`", opened.run_id)),
        "CASE.md does not name the run"
    );
    ensure!(
        md.contains(WORKING_DISCIPLINE),
        "CASE.md lacks the working-discipline block"
    );
    for phrase in [
        "State your assumptions",
        "Keep the change minimal",
        "Touch nothing outside output/ and workspace/",
        "Verify before you claim",
    ] {
        ensure!(
            WORKING_DISCIPLINE.contains(phrase),
            "discipline block lacks {phrase:?}"
        );
    }
    Ok(())
}

/// The brief's provenance line names each input by the value case.json records: the AIR
/// hash, the source revision, the skill and its version, the policy hash, the executor.
fn brief_names_its_inputs() -> Result<(), Failed> {
    let w = World::new();
    w.git_init();
    let opened = w.open_unit()?;
    let case = crate::support::read_json(&opened.run_dir.join("case.json"));
    let id = &case["identity"];
    let text = |f: &str| {
        id[f]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| id[f].to_string())
    };
    let md = std::fs::read_to_string(opened.run_dir.join("CASE.md")).unwrap();
    ensure!(
        text("airHash") != text("sourceRevision"),
        "test setup: the AIR hash and the source revision are the same value"
    );
    for expected in [
        format!("AIR `{}`", text("airHash")),
        format!("source revision `{}`", text("sourceRevision")),
        format!("skill `{}@{}`", text("skill"), text("skillVersion")),
        format!("policy `{}`", text("policyHash")),
        format!("executor `{}`", text("executor")),
    ] {
        ensure!(md.contains(&expected), "CASE.md does not say {expected}");
    }
    // A repository without a commit: what the evidence is bound to is the digest of the
    // manifest taken at open, and the brief names it.
    let plain = World::new();
    let opened = plain.open_unit()?;
    let case = crate::support::read_json(&opened.run_dir.join("case.json"));
    let digest = case["identity"]["sourceDigest"].as_str().unwrap_or("");
    ensure!(
        !digest.is_empty(),
        "test setup: no sourceDigest without a commit"
    );
    let md = std::fs::read_to_string(opened.run_dir.join("CASE.md")).unwrap();
    ensure!(
        md.contains(&format!("source digest `{digest}`")),
        "CASE.md does not name the source digest {digest}"
    );
    Ok(())
}
