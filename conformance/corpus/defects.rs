//! One trial per kind of corpus defect: each breaks the tiny valid scenario one way and
//! expects `scenarios check` to exit 1 naming the file at fault.

use super::{
    BASE, Check, Corpus, Path, SERVICE, Value, base, ensure, fails_naming, json, passes, read_json,
    scenario_json, stdout, trial, write_json,
};
use std::fmt::Write as _;

pub(super) fn checks() -> Vec<Check> {
    vec![
        trial(
            "corpus::a_sound_scenario_and_its_label_pass",
            &["X-CORPUS-2"],
            || {
                let c = Corpus::one();
                passes(&c, false)?;
                let out = c.run(&["scenarios", "list", "--scenarios", "scenarios", "--json"]);
                let doc: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
                ensure!(
                    doc["scenarios"][0]["id"] == BASE
                        && doc["scenarios"][0]["status"] == "proposal_generated"
                        && doc["counts"]["documented"]["annotate-unit"] == 1,
                    "list does not show the scenario: {doc}"
                );
                Ok(())
            },
        ),
        trial(
            "corpus::unparseable_scenario_json_is_named",
            &["X-CORPUS-1"],
            || {
                let c = Corpus::one();
                std::fs::write(scenario_json(&c), "{ \"format\": ").unwrap();
                fails_naming(&c, false, "unparseable", &scenario_json(&c)).map(drop)
            },
        ),
        trial(
            "corpus::unknown_scenario_field_is_refused_with_its_path",
            &["X-CORPUS-1", "X-CORPUS-6"],
            || {
                let c = Corpus::one();
                c.edit(&scenario_json(&c), |v| v["colour"] = json!("red"));
                let m = fails_naming(&c, false, "unparseable", &scenario_json(&c))?;
                ensure!(m.contains("colour"), "message does not name the key: {m}");
                Ok(())
            },
        ),
        trial(
            "corpus::unknown_label_field_is_refused_with_its_path",
            &["X-CORPUS-1", "X-CORPUS-6"],
            || {
                let c = Corpus::one();
                let label = c.label(BASE);
                c.edit(&label, |v| v["expect"]["evidence"][0]["why"] = json!("x"));
                let m = fails_naming(&c, false, "unparseable", &label)?;
                ensure!(
                    m.contains("expect.evidence[0].why"),
                    "message does not give the path: {m}"
                );
                Ok(())
            },
        ),
        trial(
            "corpus::unknown_class_or_language_is_refused",
            &["X-CORPUS-1", "X-CORPUS-6"],
            || {
                let c = Corpus::one();
                c.edit(&scenario_json(&c), |v| v["language"] = json!("cobol"));
                let m = fails_naming(&c, false, "unparseable", &scenario_json(&c))?;
                ensure!(m.contains("language"), "message does not name the key: {m}");
                c.edit(&scenario_json(&c), |v| {
                    v["language"] = json!("go");
                    v["class"] = json!("obvious");
                });
                fails_naming(&c, false, "unparseable", &scenario_json(&c)).map(drop)
            },
        ),
        trial(
            "corpus::id_that_is_not_its_directory_is_named",
            &["X-CORPUS-1"],
            || {
                let c = Corpus::one();
                c.edit(&scenario_json(&c), |v| v["id"] = json!("documented/other"));
                fails_naming(&c, false, "id_mismatch", &scenario_json(&c)).map(drop)
            },
        ),
        trial("corpus::invalid_air_json_is_named", &["X-CORPUS-1"], || {
            let c = Corpus::one();
            let air = c.scenario(BASE).join("air.json");
            c.edit(&air, |v| v["operations"][0]["verb"] = json!("POST"));
            fails_naming(&c, false, "invalid_air", &air).map(drop)
        }),
        trial(
            "corpus::target_without_the_skills_deficiency_is_named",
            &["X-CORPUS-1", "X-CORPUS-2"],
            || {
                let c = Corpus::one();
                c.edit(&c.scenario(BASE).join("air.json"), |v| {
                    v["operations"][0]["fields"][1]["unit"] = json!("ms");
                });
                let m = fails_naming(&c, false, "no_deficiency", &scenario_json(&c))?;
                ensure!(
                    m.contains("capture_timeout"),
                    "message does not name the target: {m}"
                );
                Ok(())
            },
        ),
        trial(
            "corpus::declared_deficiency_that_is_not_detected_is_named",
            &["X-CORPUS-1", "X-CORPUS-2"],
            || {
                let c = Corpus::one();
                c.edit(&scenario_json(&c), |v| {
                    v["deficiency"] = json!("unproven_inferred_value");
                });
                let m = fails_naming(&c, false, "no_deficiency", &scenario_json(&c))?;
                ensure!(
                    m.contains("unproven_inferred_value") && m.contains("unit_ambiguous_field"),
                    "message does not say what was and was not detected: {m}"
                );
                c.edit(&scenario_json(&c), |v| {
                    v["deficiency"] = json!("unit_ambiguous_field");
                });
                passes(&c, false)
            },
        ),
        trial(
            "corpus::skill_of_the_wrong_target_kind_is_named",
            &["X-CORPUS-1", "X-CORPUS-2"],
            || {
                let c = Corpus::one();
                c.edit(&scenario_json(&c), |v| v["skill"] = json!("enrich-error"));
                fails_naming(&c, false, "no_deficiency", &scenario_json(&c)).map(drop)
            },
        ),
        trial(
            "corpus::scenario_without_a_label_is_named",
            &["X-CORPUS-1", "X-CORPUS-3"],
            || {
                let c = Corpus::one();
                std::fs::remove_file(c.label(BASE)).unwrap();
                fails_naming(&c, false, "missing_label", &scenario_json(&c)).map(drop)
            },
        ),
        trial(
            "corpus::label_without_a_scenario_is_named",
            &["X-CORPUS-1", "X-CORPUS-3"],
            || {
                let c = Corpus::one();
                let orphan = c.label("documented/ghost");
                let mut v = read_json(&c.label(BASE));
                v["scenario"] = json!("documented/ghost");
                v["canary"] = json!("ANVIL-CANARY-ghost0123456789abcdef");
                write_json(&orphan, &v);
                fails_naming(&c, false, "orphan_label", &orphan).map(drop)
            },
        ),
        trial(
            "corpus::label_naming_another_scenario_is_named",
            &["X-CORPUS-1", "X-CORPUS-3"],
            || {
                let c = Corpus::one();
                let mut second = base();
                second.name = "second".into();
                c.add(&second);
                let label = c.label("documented/second");
                c.edit(&label, |v| v["scenario"] = json!(BASE));
                fails_naming(&c, false, "duplicate_label", &label)?;
                fails_naming(&c, false, "id_mismatch", &label)?;
                let scenario = c.scenario("documented/second").join("scenario.json");
                fails_naming(&c, false, "missing_label", &scenario).map(drop)
            },
        ),
        trial(
            "corpus::evidence_path_missing_from_the_repo_is_named",
            &["X-CORPUS-1", "X-CORPUS-4"],
            || {
                let c = Corpus::one();
                let label = c.label(BASE);
                for path in ["src/payments/nope.py", "../air.json", "/etc/passwd", "src"] {
                    c.edit(&label, |v| v["expect"]["evidence"][0]["path"] = json!(path));
                    let m = fails_naming(&c, false, "evidence_missing", &label)?;
                    ensure!(m.contains(path), "message does not name `{path}`: {m}");
                }
                Ok(())
            },
        ),
        trial(
            "corpus::evidence_lines_outside_the_file_are_named",
            &["X-CORPUS-1", "X-CORPUS-4"],
            || {
                let c = Corpus::one();
                let label = c.label(BASE);
                for lines in [[39, 41], [0, 2], [5, 2]] {
                    c.edit(&label, |v| {
                        v["expect"]["evidence"][0]["lines"] = json!(lines);
                    });
                    fails_naming(&c, false, "evidence_lines", &label)?;
                }
                c.edit(&label, |v| {
                    v["expect"]["evidence"][0]["lines"] = json!([40, 40]);
                });
                passes(&c, false)
            },
        ),
        trial(
            "corpus::duplicate_canary_is_named",
            &["X-CORPUS-1", "X-CORPUS-5"],
            || {
                let c = Corpus::one();
                let mut second = base();
                second.name = "second".into();
                c.add(&second);
                let canary = read_json(&c.label(BASE))["canary"].clone();
                let label = c.label("documented/second");
                c.edit(&label, |v| v["canary"] = canary);
                fails_naming(&c, false, "duplicate_canary", &label).map(drop)
            },
        ),
        trial(
            "corpus::malformed_canary_is_named",
            &["X-CORPUS-1", "X-CORPUS-5"],
            || {
                let c = Corpus::one();
                let label = c.label(BASE);
                for canary in ["ANVIL-CANARY-short", "canary-0123456789abcdef0", ""] {
                    c.edit(&label, |v| v["canary"] = json!(canary));
                    fails_naming(&c, false, "bad_canary", &label)?;
                }
                Ok(())
            },
        ),
        trial(
            "corpus::canary_leaked_into_a_scenario_file_is_named",
            &["X-CORPUS-1", "X-CORPUS-5"],
            || {
                let c = Corpus::one();
                let canary = read_json(&c.label(BASE))["canary"]
                    .as_str()
                    .unwrap()
                    .to_string();
                let docs = c.scenario(BASE).join("repo/docs/payments.md");
                let mut text = std::fs::read_to_string(&docs).unwrap();
                let _ = writeln!(text, "<!-- {canary} -->");
                std::fs::write(&docs, text).unwrap();
                fails_naming(&c, false, "canary_leak", &docs)?;
                // Anywhere under scenarios/, not only in the scenario's own repository.
                std::fs::remove_file(&docs).unwrap();
                let readme = c.scenarios().join("README.md");
                std::fs::write(&readme, format!("example: {canary}\n")).unwrap();
                fails_naming(&c, false, "canary_leak", &readme).map(drop)
            },
        ),
        trial(
            "corpus::expected_phrase_stated_in_the_air_is_named",
            &["X-CORPUS-1", "X-CORPUS-5"],
            || {
                let c = Corpus::new();
                let mut spec = base();
                spec.skill = "describe-field";
                c.add(&spec);
                passes(&c, false)?;
                let air = c.scenario(BASE).join("air.json");
                c.edit(&air, |v| {
                    v["operations"][0]["description"] =
                        json!("Creates a payment and its Ledger entry.");
                });
                let m = fails_naming(&c, false, "phrase_leak", &air)?;
                ensure!(
                    m.contains("ledger"),
                    "message does not name the phrase: {m}"
                );
                Ok(())
            },
        ),
        trial(
            "corpus::expected_values_outside_the_skills_contract_are_named",
            &["X-CORPUS-1", "X-CORPUS-8"],
            || {
                let c = Corpus::one();
                let label = c.label(BASE);
                let wrong = [
                    json!({"unit": {"equals": "fortnights"}}),
                    json!({"sensitivity": {"equals": "pii"}}),
                    json!({"unit": {"mustMention": [["ms"]]}}),
                    json!({"unit": {"equals": "ms", "mustMention": [["ms"]]}}),
                    json!({"unit": {}}),
                    json!({}),
                ];
                for values in wrong {
                    c.edit(&label, |v| v["expect"]["values"] = values.clone());
                    fails_naming(&c, false, "label_values", &label)
                        .map_err(|e| format!("values {values}: {e:?}"))?;
                }
                // A decline carries no values.
                c.edit(&label, |v| {
                    v["expect"]["values"] = json!({"unit": {"equals": "ms"}});
                    v["expect"]["status"] = json!("conflicted");
                });
                fails_naming(&c, false, "label_values", &label)?;
                c.edit(&label, |v| v["expect"]["status"] = json!("guessed"));
                fails_naming(&c, false, "unparseable", &label).map(drop)
            },
        ),
        trial(
            "corpus::repository_with_too_few_files_is_named",
            &["X-CORPUS-1", "X-CORPUS-7"],
            || {
                let c = Corpus::one();
                let repo = c.scenario(BASE).join("repo");
                std::fs::remove_file(repo.join("docs/payments.md")).unwrap();
                fails_naming(&c, false, "repo_too_small", &repo).map(drop)
            },
        ),
        trial(
            "corpus::a_stray_file_among_the_labels_is_named_not_skipped",
            &["X-CORPUS-1"],
            || {
                let c = Corpus::one();
                let stray = c.label(BASE).with_file_name("notes.txt");
                std::fs::write(&stray, "answers\n").unwrap();
                fails_naming(&c, false, "unexpected_file", &stray).map(drop)
            },
        ),
        trial(
            "corpus::an_air_that_does_not_describe_the_whole_operation_is_named",
            &["X-CORPUS-1", "X-CORPUS-7"],
            || {
                let c = Corpus::one();
                let air = c.scenario(BASE).join("air.json");
                c.edit(&air, |v| {
                    let errors = v["operations"][0]["errors"].as_array_mut().unwrap();
                    errors.truncate(1);
                });
                let m = fails_naming(&c, false, "operation_too_thin", &air)?;
                ensure!(m.contains("1 errors"), "message does not count errors: {m}");
                Ok(())
            },
        ),
        trial(
            "corpus::repository_with_too_few_lines_is_named",
            &["X-CORPUS-1", "X-CORPUS-7"],
            || {
                let c = Corpus::one();
                let repo = c.scenario(BASE).join("repo");
                for f in ["docs/payments.md", "tests/test_service.py"] {
                    std::fs::write(repo.join(f), "short\n").unwrap();
                }
                std::fs::write(repo.join("README"), "more\n").unwrap();
                let m = fails_naming(&c, false, "repo_too_small", &repo)?;
                ensure!(m.contains("5 files"), "message does not count files: {m}");
                Ok(())
            },
        ),
        trial(
            "corpus::every_problem_is_listed_each_naming_its_file",
            &["X-CORPUS-1"],
            || {
                let c = Corpus::one();
                let mut second = base();
                second.name = "second".into();
                c.add(&second);
                std::fs::remove_file(c.label("documented/second")).unwrap();
                c.edit(&c.label(BASE), |v| {
                    v["expect"]["evidence"][0]["lines"] = json!([1, 999]);
                });
                let (text, doc) = c.check(false)?;
                ensure!(text.status.code() == Some(1), "expected exit 1");
                let problems = doc["problems"].as_array().cloned().unwrap_or_default();
                ensure!(problems.len() == 2, "expected two problems: {doc:#}");
                for p in &problems {
                    let file = p["file"].as_str().unwrap_or_default();
                    ensure!(
                        Path::new(file).exists() && stdout(&text).contains(file),
                        "problem does not name an existing file listed in the output: {p}"
                    );
                }
                Ok(())
            },
        ),
        trial(
            "corpus::a_symlinked_label_is_named_and_the_set_is_not_sealed",
            &["X-CORPUS-1", "X-CORPUS-9", "X-SEAL-1"],
            || {
                let c = Corpus::one();
                let label = c.label(BASE);
                let elsewhere = c.dir.path().join("elsewhere.json");
                std::fs::rename(&label, &elsewhere).unwrap();
                std::os::unix::fs::symlink(&elsewhere, &label).unwrap();
                fails_naming(&c, false, "not_a_regular_file", &label)?;
                let out = c.run(&["scenarios", "seal"]);
                ensure!(
                    out.status.code() == Some(1),
                    "seal of a set with a symlinked label exited {:?}: {}",
                    out.status.code(),
                    stdout(&out)
                );
                ensure!(
                    String::from_utf8_lossy(&out.stderr).contains(label.to_str().unwrap()),
                    "seal does not name the symlink"
                );
                Ok(())
            },
        ),
        trial(
            "corpus::a_symlink_inside_a_scenario_repository_is_named",
            &["X-CORPUS-1", "X-CORPUS-9"],
            || {
                let c = Corpus::one();
                let link = c.scenario(BASE).join("repo").join("docs-link");
                std::os::unix::fs::symlink(c.labels(), &link).unwrap();
                fails_naming(&c, false, "not_a_regular_file", &link).map(drop)
            },
        ),
        trial(
            "corpus::a_git_entry_inside_a_scenario_repository_is_named",
            &["X-CORPUS-1", "X-CORPUS-10"],
            || {
                let c = Corpus::one();
                // A `.git` file points git at a git directory anywhere on the host.
                let git = c.scenario(BASE).join("repo").join("docs").join(".git");
                std::fs::create_dir_all(git.parent().unwrap()).unwrap();
                std::fs::write(&git, "gitdir: /elsewhere\n").unwrap();
                fails_naming(&c, false, "git_entry", &git).map(drop)
            },
        ),
        trial(
            "corpus::a_label_with_a_key_given_twice_is_named_with_the_key",
            &["X-CORPUS-1", "X-DUP-1"],
            || {
                let c = Corpus::one();
                let label = c.label(BASE);
                let text = std::fs::read_to_string(&label).unwrap();
                // The second `status` would silently win in a lenient parser.
                let twice = text.replacen(
                    "\"status\": \"proposal_generated\"",
                    "\"status\": \"insufficient_evidence\", \"status\": \"proposal_generated\"",
                    1,
                );
                ensure!(twice != text, "fixture: the label has no status to repeat");
                std::fs::write(&label, twice).unwrap();
                let message = fails_naming(&c, false, "unparseable", &label)?;
                ensure!(
                    message.contains("expect.status") && message.contains("duplicate"),
                    "the problem does not name the repeated key: {message}"
                );
                Ok(())
            },
        ),
        trial(
            "corpus::check_runs_the_oracle_and_names_a_label_it_cannot_reach",
            &["X-CORPUS-1", "R-BAT-8"],
            || {
                let c = Corpus::one();
                let (text, doc) = c.check_with_oracle()?;
                ensure!(
                    text.status.success() && doc["ok"] == true,
                    "the oracle does not pass a sound scenario: {doc:#}"
                );
                // `supported` needs a current value; the target has none, so no rail
                // sequence can reach this label.
                c.edit(&c.label(BASE), |v| {
                    v["expect"] = json!({"status": "supported",
                                         "evidence": [{"path": SERVICE, "lines": [3, 4]}]});
                });
                let (text, doc) = c.check_with_oracle()?;
                ensure!(text.status.code() == Some(1), "expected exit 1: {doc:#}");
                let want = c.label(BASE);
                let hit = doc["problems"].as_array().into_iter().flatten().any(|p| {
                    p["kind"] == "oracle_unreachable"
                        && p["file"] == want.to_str().unwrap()
                        && p["message"]
                            .as_str()
                            .is_some_and(|m| m.contains("supported"))
                });
                ensure!(
                    hit,
                    "no oracle_unreachable problem naming the label: {doc:#}"
                );
                Ok(())
            },
        ),
    ]
}
