//! The corpus-wide coverage rules (on a generated 45-scenario corpus) and the labels seal.

use super::{
    BASE, Check, Corpus, Value, base, ensure, fails_naming, json, passes, read_json, stdout, trial,
};

pub(super) fn checks() -> Vec<Check> {
    vec![
        trial(
            "corpus::a_corpus_meeting_every_coverage_rule_passes",
            &["X-CORPUS-7"],
            || passes(&Corpus::full(Some), true),
        ),
        trial(
            "corpus::a_partial_corpus_fails_coverage_unless_it_is_skipped",
            &["X-CORPUS-1", "X-CORPUS-7"],
            || {
                let c = Corpus::one();
                let m = fails_naming(&c, true, "coverage", &c.scenarios())?;
                ensure!(m.contains("class"), "unexpected coverage message: {m}");
                fails_naming(&c, true, "coverage", &c.labels())?;
                passes(&c, false)
            },
        ),
        trial(
            "corpus::a_class_with_four_scenarios_fails_coverage",
            &["X-CORPUS-1", "X-CORPUS-7"],
            || {
                let c = Corpus::full(|s| (s.id() != "tautological/s4").then_some(s));
                let m = fails_naming(&c, true, "coverage", &c.scenarios())?;
                ensure!(
                    m.contains("`tautological` has 4"),
                    "message does not name the class: {m}"
                );
                Ok(())
            },
        ),
        trial(
            "corpus::a_language_over_forty_percent_fails_coverage",
            &["X-CORPUS-1", "X-CORPUS-7"],
            || {
                // 9 python + 9 go + 1 rust = 19 of 45 (42%).
                let c = Corpus::full(|mut s| {
                    if s.language == "go" || s.id() == "documented/s2" {
                        s.language = "python";
                    }
                    Some(s)
                });
                let m = fails_naming(&c, true, "coverage", &c.scenarios())?;
                ensure!(
                    m.contains("are python"),
                    "message does not name python: {m}"
                );
                Ok(())
            },
        ),
        trial(
            "corpus::fewer_than_four_languages_fails_coverage",
            &["X-CORPUS-1", "X-CORPUS-7"],
            || {
                let c = Corpus::full(|mut s| {
                    if s.language != "python" && s.language != "go" {
                        s.language = "rust";
                    }
                    Some(s)
                });
                let m = fails_naming(&c, true, "coverage", &c.scenarios())?;
                ensure!(m.contains("3 languages"), "unexpected message: {m}");
                Ok(())
            },
        ),
        trial(
            "corpus::a_skill_in_two_classes_fails_coverage",
            &["X-CORPUS-1", "X-CORPUS-7"],
            || {
                let c = Corpus::full(|mut s| {
                    let keep = ["documented", "sensitive"];
                    if s.skill == "classify-sensitivity" && !keep.contains(&s.class) {
                        s.skill = "annotate-unit";
                    }
                    Some(s)
                });
                let m = fails_naming(&c, true, "coverage", &c.scenarios())?;
                ensure!(
                    m.contains("`classify-sensitivity` appears in 2"),
                    "message does not name the skill: {m}"
                );
                Ok(())
            },
        ),
        trial(
            "corpus::fewer_than_a_third_declines_fails_coverage",
            &["X-CORPUS-1", "X-CORPUS-7"],
            || {
                // 14 of 45 declines.
                let c = Corpus::full(|mut s| {
                    if s.id() == "documented/s0" {
                        s.decline = false;
                    }
                    Some(s)
                });
                let m = fails_naming(&c, true, "coverage", &c.labels())?;
                ensure!(m.contains("14 of 45"), "unexpected message: {m}");
                Ok(())
            },
        ),
        trial(
            "corpus::seal_ignores_key_order_and_changes_with_any_label",
            &["X-SEAL-1"],
            || {
                let c = Corpus::one();
                let mut second = base();
                second.name = "second".into();
                second.decline = true;
                c.add(&second);
                let before = c.seal()?;
                ensure!(
                    before.len() == "sha256:".len() + 64 && before.starts_with("sha256:"),
                    "seal is not sha256:<hex>: {before}"
                );
                // Same labels, keys reversed at every level and compact whitespace.
                let label = c.label(BASE);
                let reversed = reverse_keys(&read_json(&label));
                std::fs::write(&label, serde_json::to_string(&reversed).unwrap()).unwrap();
                ensure!(c.seal()? == before, "reordering keys changed the seal");
                c.edit(&label, |v| {
                    v["expect"]["evidence"][0]["lines"] = json!([3, 5]);
                });
                let changed = c.seal()?;
                ensure!(
                    changed != before,
                    "changing a label left the seal unchanged"
                );
                let json = c.run(&["scenarios", "seal", "--json"]);
                let doc: Value = serde_json::from_slice(&json.stdout).map_err(|e| e.to_string())?;
                ensure!(
                    doc["seal"] == changed.as_str() && doc["labels"] == 2,
                    "seal --json disagrees: {doc}"
                );
                Ok(())
            },
        ),
        trial(
            "corpus::seal_refuses_an_unreadable_label",
            &["X-SEAL-1"],
            || {
                let c = Corpus::one();
                c.edit(&c.label(BASE), |v| v["extra"] = json!(1));
                let out = c.run(&["scenarios", "seal"]);
                ensure!(
                    out.status.code() == Some(1) && stdout(&out).is_empty(),
                    "seal of an unreadable label set did not refuse: {out:?}"
                );
                let err = String::from_utf8_lossy(&out.stderr).into_owned();
                ensure!(
                    err.contains(c.label(BASE).to_str().unwrap()),
                    "refusal does not name the file: {err}"
                );
                Ok(())
            },
        ),
    ]
}

/// `value` with every object's keys in reverse order.
fn reverse_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .rev()
                .map(|(k, v)| (k.clone(), reverse_keys(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(reverse_keys).collect()),
        other => other.clone(),
    }
}
