//! Case keys and run identity (R-ID-1, 2, 3, 6, 8).

use crate::support::rails::verify;
use anvil_bench::air::{Air, TargetKey};
use anvil_bench::case::CaseKey;
use libtest_mimic::Failed;

use crate::support::{UNIT_TARGET, World, git, read_json, tree};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "identity::case_key_is_skill_and_target_joined_deterministically",
            rules: &["R-ID-1"],
            run: key_deterministic,
        },
        Check {
            name: "identity::case_keys_are_path_safe_for_hostile_targets",
            rules: &["R-ID-2"],
            run: key_path_safe,
        },
        Check {
            name: "identity::distinct_pairs_never_share_a_case_key_even_when_folded",
            rules: &["R-ID-3"],
            run: key_injective,
        },
        Check {
            name: "identity::every_character_outside_the_safe_class_is_folded_wherever_it_stands",
            rules: &["R-ID-2", "R-ID-3"],
            run: key_every_character,
        },
        Check {
            name: "identity::case_json_records_every_identity_field_with_true_values",
            rules: &["R-ID-6"],
            run: identity_fields,
        },
        Check {
            name: "identity::source_revision_is_git_head_of_the_repository",
            rules: &["R-ID-6"],
            run: identity_revision,
        },
        Check {
            name: "stale::a_changed_air_makes_the_run_stale",
            rules: &["R-ID-8"],
            run: stale_air,
        },
        Check {
            name: "stale::a_new_commit_makes_the_run_stale",
            rules: &["R-ID-8"],
            run: stale_revision,
        },
        Check {
            name: "stale::a_different_skill_version_makes_the_run_stale",
            rules: &["R-ID-8"],
            run: stale_skill_version,
        },
        Check {
            name: "stale::a_different_policy_hash_makes_the_run_stale",
            rules: &["R-ID-8"],
            run: stale_policy,
        },
        Check {
            name: "stale::resume_refuses_a_stale_run",
            rules: &["R-ID-8", "R-ID-7"],
            run: stale_resume_refused,
        },
    ]
}

fn key_deterministic() -> Result<(), Failed> {
    let target: TargetKey = UNIT_TARGET.parse().unwrap();
    let a = CaseKey::new("annotate-unit", &target);
    let b = CaseKey::new("annotate-unit", &target);
    ensure!(a == b, "same pair gave {a} and {b}");
    ensure!(
        a.as_str() == format!("annotate-unit--{UNIT_TARGET}"),
        "unexpected key {a}"
    );
    // Opening twice through the engine lands under the same case key directory.
    let w = World::new();
    let r1 = w.open_unit()?;
    let r2 = w.open_unit()?;
    ensure!(
        r1.run_dir.parent() == r2.run_dir.parent(),
        "two opens used different case directories"
    );
    ensure!(
        r1.case_key.as_str() == a.as_str(),
        "engine key {} differs from {a}",
        r1.case_key
    );
    Ok(())
}

const HOSTILE_NAMES: &[&str] = &[
    "a/b",
    "a\\b",
    "x/../../etc",
    "$(rm -rf ~)",
    "`id`",
    "a;b",
    "a|b",
    "a&b",
    "a*b",
    "a?b",
    "a'b",
    "a\"b",
    "a b",
    "~root",
    "a>b",
    "a<b",
    "a{b}",
    "a[0]",
    "é.ü",
    "a\u{7f}b",
    "-rf",
    ".hidden",
    "a.b.c",
];

fn key_path_safe() -> Result<(), Failed> {
    for name in HOSTILE_NAMES {
        let target = TargetKey::Field {
            op: "op".into(),
            location: anvil_bench::air::Location::InputBody,
            name: (*name).into(),
        };
        let key = CaseKey::new("describe-field", &target);
        let s = key.as_str();
        ensure!(
            s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')),
            "key {s:?} for {name:?} has an unsafe character"
        );
        ensure!(!s.contains(".."), "key {s:?} contains `..`");
        ensure!(
            !s.starts_with('.') && !s.starts_with('-'),
            "key {s:?} starts with `.` or `-`"
        );
        ensure!(s.len() < 200, "key {s:?} is too long for a path segment");
    }
    let long = TargetKey::Field {
        op: "op".into(),
        location: anvil_bench::air::Location::InputBody,
        name: "x".repeat(400).into(),
    };
    ensure!(
        CaseKey::new("describe-field", &long).as_str().len() < 200,
        "long target gave an over-long key"
    );
    Ok(())
}

/// Every ASCII character (and a few beyond), alone, inside and at the start of a field
/// name, and at the start of the skill name (`CaseKey::new` takes any string): the key
/// keeps only `[A-Za-z0-9._-]`, never holds `..`, never starts with `.` or `-`, and no
/// two of these pairs share a key.
fn key_every_character() -> Result<(), Failed> {
    let mut chars: Vec<char> = (0u8..=0x7f).map(char::from).collect();
    chars.extend(['\u{a0}', 'é', '\u{2028}', '\u{202e}', '\u{ff0f}']);
    let mut seen = std::collections::BTreeMap::new();
    for skill in ["describe-field", "-describe-field", ".describe-field"] {
        for c in &chars {
            for name in [format!("{c}"), format!("a{c}b"), format!("{c}b")] {
                let target = TargetKey::Field {
                    op: "op".into(),
                    location: anvil_bench::air::Location::InputBody,
                    name: name.as_str().into(),
                };
                let key = CaseKey::new(skill, &target);
                let s = key.as_str();
                ensure!(
                    s.chars()
                        .all(|k| k.is_ascii_alphanumeric() || matches!(k, '.' | '_' | '-')),
                    "key {s:?} for ({skill:?}, {name:?}) has an unsafe character"
                );
                ensure!(!s.contains(".."), "key {s:?} for {name:?} contains `..`");
                ensure!(
                    !s.starts_with('.') && !s.starts_with('-'),
                    "key {s:?} for skill {skill:?} starts with `.` or `-`"
                );
                if let Some(prev) = seen.insert(key.clone(), (skill, name.clone())) {
                    return Err(
                        format!("{prev:?} and ({skill:?}, {name:?}) share key {key}").into(),
                    );
                }
            }
        }
    }
    Ok(())
}

fn key_injective() -> Result<(), Failed> {
    let mut seen = std::collections::BTreeMap::new();
    let skills = ["describe-field", "annotate-unit"];
    let mut names: Vec<String> = ["a/b", "a:b", "a_b", "a b", "a?b", "a.b"]
        .map(String::from)
        .to_vec();
    names.push("x".repeat(300));
    names.push("x".repeat(301));
    for skill in skills {
        for name in &names {
            for location in [
                anvil_bench::air::Location::InputBody,
                anvil_bench::air::Location::OutputBody,
            ] {
                let target = TargetKey::Field {
                    op: "op".into(),
                    location,
                    name: name.as_str().into(),
                };
                let key = CaseKey::new(skill, &target);
                if let Some(prev) = seen.insert(key.clone(), (skill, target.to_string())) {
                    return Err(format!("{prev:?} and ({skill}, {target}) share key {key}").into());
                }
            }
        }
    }
    Ok(())
}

fn identity_fields() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    let case = read_json(&opened.run_dir.join("case.json"));
    let id = &case["identity"];
    for field in [
        "runId",
        "caseKey",
        "airHash",
        "sourceRevision",
        "skill",
        "skillVersion",
        "policyHash",
        "executor",
        "createdAt",
    ] {
        ensure!(!id[field].is_null(), "identity.{field} is missing");
    }
    let air = Air::load(&w.air()).unwrap();
    ensure!(
        id["airHash"] == air.hash(),
        "airHash {} is not the AIR's hash {}",
        id["airHash"],
        air.hash()
    );
    ensure!(
        id["runId"] == opened.run_id.to_string(),
        "runId differs from the run"
    );
    ensure!(
        opened.run_dir.file_name().unwrap().to_string_lossy() == opened.run_id.to_string(),
        "directory name is not the run id"
    );
    ensure!(id["caseKey"] == opened.case_key.as_str(), "caseKey differs");
    ensure!(
        id["skill"] == "annotate-unit" && id["skillVersion"] == 1,
        "skill/version wrong: {id}"
    );
    ensure!(
        id["executor"] == "conformance",
        "executor not recorded: {}",
        id["executor"]
    );
    ensure!(
        id["sourceRevision"] == "none",
        "a non-git repository must record `none`, got {}",
        id["sourceRevision"]
    );
    let policy_hash = anvil_bench::canon::canonical_hash(&case["policy"]);
    ensure!(
        id["policyHash"] == policy_hash,
        "policyHash is not the hash of the recorded policy"
    );
    ensure!(
        humantime::parse_rfc3339(id["createdAt"].as_str().unwrap_or("")).is_ok(),
        "createdAt is not RFC 3339"
    );
    Ok(())
}

fn identity_revision() -> Result<(), Failed> {
    let w = World::new();
    w.git_init();
    let head = git(&w.repo(), &["rev-parse", "HEAD"]);
    let opened = w.open_unit()?;
    let case = read_json(&opened.run_dir.join("case.json"));
    ensure!(
        case["identity"]["sourceRevision"] == head,
        "sourceRevision {} is not HEAD {head}",
        case["identity"]["sourceRevision"]
    );
    Ok(())
}

fn stale_fields(run: &std::path::Path) -> Result<Vec<String>, Failed> {
    let report = verify(run, None, None).map_err(|e| Failed::from(e.to_string()))?;
    Ok(report.stale.iter().map(|s| s.field.to_string()).collect())
}

fn stale_air() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    ensure!(
        stale_fields(&opened.run_dir)?.is_empty(),
        "fresh run reported stale"
    );
    w.edit_air(|v| v["service"]["version"] = "2027-01-01".into());
    let stale = stale_fields(&opened.run_dir)?;
    ensure!(
        stale == ["airHash"],
        "expected airHash stale, got {stale:?}"
    );
    // Reformatting or reordering the same AIR is not a change.
    Ok(())
}

fn stale_revision() -> Result<(), Failed> {
    let w = World::new();
    w.git_init();
    let opened = w.open_unit()?;
    std::fs::write(w.repo().join("NOTES.md"), "new\n").unwrap();
    git(&w.repo(), &["add", "-A"]);
    git(&w.repo(), &["commit", "-q", "-m", "more"]);
    let stale = stale_fields(&opened.run_dir)?;
    ensure!(
        stale == ["sourceRevision"],
        "expected sourceRevision stale, got {stale:?}"
    );
    Ok(())
}

/// Rewrites one identity field of a run and regenerates its views, so only staleness —
/// not drift — can flag it.
fn rewrite_identity(run: &std::path::Path, field: &str, value: serde_json::Value) {
    let path = run.join("case.json");
    let mut case = read_json(&path);
    case["identity"][field] = value;
    let mut bytes = serde_json::to_vec_pretty(&case).unwrap();
    bytes.push(b'\n');
    std::fs::write(&path, &bytes).unwrap();
    let loaded = crate::support::rails::load_run(run).unwrap();
    let (md, schema) = anvil_bench::case::views::render_views(&loaded.doc, &loaded.case_hash);
    std::fs::write(run.join("CASE.md"), md).unwrap();
    std::fs::write(run.join("expected-output.schema.json"), schema).unwrap();
}

fn stale_skill_version() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    rewrite_identity(&opened.run_dir, "skillVersion", 0.into());
    let report = verify(&opened.run_dir, None, None).map_err(|e| Failed::from(e.to_string()))?;
    ensure!(
        report.drift.is_empty(),
        "views should be in sync: {:?}",
        report.drift
    );
    let stale: Vec<_> = report.stale.iter().map(|s| s.field).collect();
    ensure!(
        stale == ["skillVersion"],
        "expected skillVersion stale, got {stale:?}"
    );
    Ok(())
}

fn stale_policy() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    rewrite_identity(&opened.run_dir, "policyHash", "sha256:0000".into());
    let stale = stale_fields(&opened.run_dir)?;
    ensure!(
        stale == ["policyHash"],
        "expected policyHash stale, got {stale:?}"
    );
    Ok(())
}

fn stale_resume_refused() -> Result<(), Failed> {
    let w = World::new();
    let opened = w.open_unit()?;
    w.edit_air(|v| v["service"]["version"] = "2027-01-01".into());
    let before = tree(&w.cases());
    let mut req = w.request("annotate-unit", UNIT_TARGET);
    req.mode = anvil_bench::case::OpenMode::Resume(opened.run_dir.clone());
    match anvil_bench::case::open(&req) {
        Ok(_) => return Err("resuming a stale run was allowed".into()),
        Err(e) => ensure!(
            e.kind() == "stale_run" && e.to_string().contains("airHash"),
            "unexpected refusal: {e}"
        ),
    }
    ensure!(
        tree(&w.cases()) == before,
        "a refused resume changed the cases directory"
    );
    Ok(())
}
