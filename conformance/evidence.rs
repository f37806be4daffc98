//! Evidence ingestion and freezing: the engine reads, classifies, hashes and freezes every
//! excerpt from a repository coordinate; the agent can only point (R-EV-1..9, R-EV-11,
//! R-PARSE-2).

use std::path::Path;

use anvil_bench::case::rails;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::support::*;
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        // R-EV-2: absolute paths, `..` escapes, symlinks leaving the repository.
        Check {
            name: "evidence::an_absolute_path_is_refused_even_inside_the_repository",
            rules: &["R-EV-2"],
            run: || {
                refused_path(
                    |w| {
                        w.repo()
                            .join("src/payments/service.py")
                            .display()
                            .to_string()
                    },
                    Some((32, 39)),
                    "absolute_path",
                )
            },
        },
        Check {
            name: "evidence::a_dotdot_escape_is_refused",
            rules: &["R-EV-2"],
            run: || refused_path(|_| "../air.json".into(), None, "path_escape"),
        },
        Check {
            name: "evidence::a_dotdot_escape_from_deep_inside_is_refused",
            rules: &["R-EV-2"],
            run: || {
                refused_path(
                    |_| "src/payments/../../../air.json".into(),
                    None,
                    "path_escape",
                )
            },
        },
        Check {
            name: "evidence::a_symlinked_file_leaving_the_repository_is_refused",
            rules: &["R-EV-2"],
            run: || {
                refused_path(
                    |w| {
                        std::os::unix::fs::symlink(w.air(), w.repo().join("src/payments/leak.py"))
                            .unwrap();
                        "src/payments/leak.py".into()
                    },
                    None,
                    "symlink_escape",
                )
            },
        },
        Check {
            name: "evidence::a_symlinked_directory_leaving_the_repository_is_refused",
            rules: &["R-EV-2"],
            run: || {
                refused_path(
                    |w| {
                        std::os::unix::fs::symlink(w.root(), w.repo().join("docs/outside"))
                            .unwrap();
                        "docs/outside/air.json".into()
                    },
                    None,
                    "symlink_escape",
                )
            },
        },
        Check {
            name: "evidence::a_symlink_inside_the_repository_is_recorded_at_its_canonical_path",
            rules: &["R-EV-2", "R-EV-6"],
            run: symlink_inside_canonical,
        },
        // R-EV-3
        Check {
            name: "evidence::a_path_outside_every_inspect_scope_is_refused",
            rules: &["R-EV-3"],
            run: || {
                refused_path(
                    |w| {
                        std::fs::write(w.repo().join("LICENSE"), "MIT\n").unwrap();
                        "LICENSE".into()
                    },
                    None,
                    "out_of_scope",
                )
            },
        },
        Check {
            name: "evidence::a_path_outside_the_cases_own_scopes_is_refused",
            rules: &["R-EV-3"],
            run: outside_custom_scopes,
        },
        // R-EV-4
        Check {
            name: "evidence::a_missing_file_is_refused",
            rules: &["R-EV-4"],
            run: || refused_path(|_| "src/payments/refunds.py".into(), None, "missing_file"),
        },
        Check {
            name: "evidence::a_directory_is_refused",
            rules: &["R-EV-4"],
            run: || refused_path(|_| "src/payments".into(), None, "not_a_file"),
        },
        Check {
            name: "evidence::a_binary_file_is_refused",
            rules: &["R-EV-4"],
            run: || {
                refused_path(
                    |w| {
                        std::fs::write(
                            w.repo().join("src/payments/blob.py"),
                            b"capture = 1\n\x00\x01\x02 seconds\n",
                        )
                        .unwrap();
                        "src/payments/blob.py".into()
                    },
                    None,
                    "binary_file",
                )
            },
        },
        Check {
            name: "evidence::a_non_utf8_file_is_refused",
            rules: &["R-EV-4"],
            run: || {
                refused_path(
                    |w| {
                        std::fs::write(
                            w.repo().join("docs/latin1.md"),
                            b"capture_timeout: dur\xe9e en secondes\n",
                        )
                        .unwrap();
                        "docs/latin1.md".into()
                    },
                    None,
                    "not_utf8",
                )
            },
        },
        // R-EV-5
        Check {
            name: "evidence::a_reversed_line_range_is_refused",
            rules: &["R-EV-5"],
            run: || {
                refused_path(
                    |_| "src/payments/service.py".into(),
                    Some((39, 32)),
                    "invalid_range",
                )
            },
        },
        Check {
            name: "evidence::a_line_range_past_the_end_of_the_file_is_refused",
            rules: &["R-EV-5"],
            run: || {
                refused_path(
                    |_| "src/payments/service.py".into(),
                    Some((50, 55)),
                    "invalid_range",
                )
            },
        },
        Check {
            name: "evidence::a_line_range_starting_after_the_last_line_is_refused",
            rules: &["R-EV-5"],
            run: || {
                refused_path(
                    |_| "src/payments/service.py".into(),
                    Some((55, 55)),
                    "invalid_range",
                )
            },
        },
        Check {
            name: "evidence::line_zero_is_refused",
            rules: &["R-EV-5"],
            run: || {
                refused_path(
                    |_| "src/payments/service.py".into(),
                    Some((0, 3)),
                    "invalid_range",
                )
            },
        },
        Check {
            name: "evidence::the_cli_refuses_a_bad_coordinate_with_exit_1_naming_it",
            rules: &["R-EV-2", "R-EV-5"],
            run: cli_refusals,
        },
        // R-EV-6
        Check {
            name: "evidence::the_excerpt_is_the_exact_bytes_read_with_their_hash_and_coordinate",
            rules: &["R-EV-6"],
            run: exact_bytes,
        },
        Check {
            name: "evidence::line_endings_and_a_missing_final_newline_are_kept_exactly",
            rules: &["R-EV-6"],
            run: exact_crlf,
        },
        Check {
            name: "evidence::no_range_means_the_whole_file",
            rules: &["R-EV-6"],
            run: whole_file,
        },
        // R-EV-7
        Check {
            name: "evidence::identical_text_in_two_files_gets_two_ids",
            rules: &["R-EV-7"],
            run: same_text_two_files,
        },
        Check {
            name: "evidence::identical_lines_at_two_places_in_one_file_get_two_ids",
            rules: &["R-EV-7"],
            run: same_text_two_ranges,
        },
        Check {
            name: "evidence::the_id_derives_from_the_coordinate_and_one_coordinate_is_one_artifact",
            rules: &["R-EV-7"],
            run: id_from_coordinate,
        },
        // R-EV-8
        Check {
            name: "evidence::the_kind_comes_from_the_matching_inspect_scope",
            rules: &["R-EV-8"],
            run: kind_from_scope,
        },
        Check {
            name: "evidence::the_first_matching_scope_decides_the_kind",
            rules: &["R-EV-8"],
            run: kind_first_match,
        },
        Check {
            name: "evidence::a_comment_only_excerpt_of_an_implementation_file_is_comment",
            rules: &["R-EV-8"],
            run: comment_kind,
        },
        Check {
            name: "evidence::the_cli_takes_no_kind_from_the_agent",
            rules: &["R-EV-8"],
            run: cli_no_kind,
        },
        Check {
            name: "evidence::a_hand_written_artifact_relabelled_with_a_stronger_kind_is_refused_at_freeze",
            rules: &["R-EV-8", "R-EV-11"],
            run: relabelled_kind,
        },
        // R-EV-9
        Check {
            name: "evidence::local_is_verified_and_external_unverified_with_a_reason_in_one_status_field",
            rules: &["R-EV-9"],
            run: verification_status,
        },
        Check {
            name: "evidence::an_external_artifact_claiming_to_be_verified_is_refused_at_freeze",
            rules: &["R-EV-9", "R-EV-1"],
            run: external_claims_verified,
        },
        // R-EV-1, R-EV-11
        Check {
            name: "evidence::a_forged_verified_excerpt_in_a_hand_written_evidence_json_is_refused_at_freeze",
            rules: &["R-EV-1", "R-EV-11"],
            run: forged_excerpt,
        },
        Check {
            name: "evidence::a_hand_written_but_exact_evidence_json_is_accepted_at_freeze",
            rules: &["R-EV-1"],
            run: honest_hand_written,
        },
        Check {
            name: "evidence::an_edit_of_frozen_evidence_json_is_detected_by_the_next_rail",
            rules: &["R-EV-11", "R-LC-3"],
            run: frozen_evidence_edit,
        },
        // R-PARSE-2
        Check {
            name: "evidence::an_inadmissible_kind_is_refused_at_the_rail",
            rules: &["R-PARSE-2"],
            run: inadmissible_at_rail,
        },
        Check {
            name: "evidence::a_hand_written_artifact_of_an_inadmissible_kind_grounds_nothing",
            rules: &["R-PARSE-2"],
            run: inadmissible_hand_written,
        },
    ]
}

/// Opens the unit case on a world prepared by `setup` (which returns the path to request),
/// deposits one good artifact, then asks for the bad coordinate: it must be refused with
/// `kind`, the message must name the path, and output/ must be byte-identical.
fn refused_path(
    setup: impl FnOnce(&World) -> String,
    lines: Option<(u32, u32)>,
    kind: &str,
) -> Result<(), Failed> {
    let w = World::new();
    let path = setup(&w);
    let run = w.open_unit()?.run_dir;
    ev(&run, "docs/payments.md", 3, 4)?;
    let before = tree(&run.join("output"));
    let e = refused_as(add_ev(&run, &path, lines), kind)?;
    let shown = path.trim_start_matches("./");
    ensure!(
        e.to_string().contains(shown) || e.to_string().contains(&path),
        "the refusal does not name `{path}`: {e}"
    );
    ensure!(
        tree(&run.join("output")) == before,
        "a refused coordinate changed output/"
    );
    let doc = read_json(&out(&run, "evidence.json"));
    ensure!(
        doc["artifacts"].as_array().map(Vec::len) == Some(1),
        "evidence.json gained or lost artifacts: {doc}"
    );
    Ok(())
}

fn symlink_inside_canonical() -> Result<(), Failed> {
    let w = World::new();
    std::os::unix::fs::symlink("payments.md", w.repo().join("docs/alias.md")).unwrap();
    let run = w.open_unit()?.run_dir;
    let a = add_ev(&run, "docs/alias.md", Some((3, 4))).map_err(failed)?;
    ensure!(
        a.path.as_deref() == Some("docs/payments.md"),
        "a symlink inside the repository was recorded as {:?}, not its canonical path",
        a.path
    );
    Ok(())
}

fn outside_custom_scopes() -> Result<(), Failed> {
    let w = World::new();
    let mut req = w.request("annotate-unit", UNIT_TARGET);
    req.scopes = vec!["src/**=implementation".into()];
    let run = anvil_bench::case::open(&req).map_err(failed)?.run_dir;
    ev(&run, "src/payments/service.py", 32, 39)?;
    let before = tree(&run.join("output"));
    let e = refused_as(
        add_ev(&run, "docs/payments.md", Some((3, 4))),
        "out_of_scope",
    )?;
    ensure!(
        e.to_string().contains("docs/payments.md"),
        "refusal does not name the path: {e}"
    );
    ensure!(tree(&run.join("output")) == before, "output/ changed");
    Ok(())
}

fn cli_refusals() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    for (args, named) in [
        (vec!["--path", "../air.json"], "../air.json"),
        (
            vec![
                "--path",
                "src/payments/service.py",
                "--start-line",
                "9",
                "--end-line",
                "3",
            ],
            "L9-L3",
        ),
    ] {
        let o = rail_cli(&w, "add-evidence", &run, &args);
        ensure!(
            o.status.code() == Some(1),
            "{args:?}: exit {:?}, expected 1",
            o.status.code()
        );
        ensure!(
            stderr(&o).contains(named),
            "{args:?}: stderr does not name `{named}`: {}",
            stderr(&o)
        );
        ensure!(stdout(&o).trim().is_empty(), "a refusal printed an id");
    }
    ensure!(
        !out(&run, "evidence.json").exists(),
        "refusals created evidence.json"
    );
    Ok(())
}

/// The file's lines with their endings.
fn lines_of(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.split_inclusive('\n').map(str::to_string).collect()
}

fn exact_bytes() -> Result<(), Failed> {
    let w = World::new();
    w.git_init();
    let head = git(&w.repo(), &["rev-parse", "HEAD"]);
    let run = w.open_unit()?.run_dir;
    let a = add_ev(&run, "src/payments/service.py", Some((32, 39))).map_err(failed)?;
    let expected: String = lines_of(&w.repo().join("src/payments/service.py"))[31..39].concat();
    ensure!(
        a.excerpt == expected,
        "excerpt is not the exact bytes of lines 32-39:\n{:?}\n---\n{expected:?}",
        a.excerpt
    );
    ensure!(
        a.excerpt
            .contains("timedelta(seconds=request.capture_timeout)"),
        "wrong lines read"
    );
    ensure!(
        a.content_hash == anvil_bench::canon::bytes_hash(expected.as_bytes()),
        "contentHash is not the sha256 of the excerpt"
    );
    let doc = read_json(&out(&run, "evidence.json"));
    let art = &doc["artifacts"][0];
    for (field, want) in [
        ("kind", json!("implementation")),
        ("revision", json!(head)),
        ("path", json!("src/payments/service.py")),
        ("startLine", json!(32)),
        ("endLine", json!(39)),
        ("contentHash", json!(a.content_hash)),
        ("excerpt", json!(expected)),
        ("id", json!(a.id)),
    ] {
        ensure!(
            art[field] == want,
            "evidence.json `{field}` is {}, expected {want}",
            art[field]
        );
    }
    let at = art["acquiredAt"].as_str().unwrap_or_default();
    ensure!(
        humantime::parse_rfc3339(at).is_ok(),
        "acquiredAt `{at}` is not an RFC 3339 time"
    );
    Ok(())
}

fn exact_crlf() -> Result<(), Failed> {
    let w = World::new();
    std::fs::write(
        w.repo().join("docs/crlf.md"),
        b"capture window\r\nin seconds\r\n  at most 600",
    )
    .unwrap();
    let run = w.open_unit()?.run_dir;
    let a = add_ev(&run, "docs/crlf.md", Some((2, 3))).map_err(failed)?;
    ensure!(
        a.excerpt == "in seconds\r\n  at most 600",
        "excerpt {:?} is not the exact bytes",
        a.excerpt
    );
    ensure!(
        a.content_hash == anvil_bench::canon::bytes_hash(b"in seconds\r\n  at most 600"),
        "hash is not over the exact bytes"
    );
    Ok(())
}

fn whole_file() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = add_ev(&run, "tests/test_capture.py", None).map_err(failed)?;
    let bytes = std::fs::read(w.repo().join("tests/test_capture.py")).unwrap();
    ensure!(
        a.excerpt.as_bytes() == bytes.as_slice(),
        "the whole-file excerpt differs from the file"
    );
    ensure!(
        a.start_line == Some(1) && a.end_line == Some(13),
        "whole-file lines recorded as {:?}-{:?}",
        a.start_line,
        a.end_line
    );
    Ok(())
}

fn same_text_two_files() -> Result<(), Failed> {
    let w = World::new();
    std::fs::copy(
        w.repo().join("src/payments/service.py"),
        w.repo().join("src/payments/service_copy.py"),
    )
    .unwrap();
    let run = w.open_unit()?.run_dir;
    let a = add_ev(&run, "src/payments/service.py", Some((32, 39))).map_err(failed)?;
    let b = add_ev(&run, "src/payments/service_copy.py", Some((32, 39))).map_err(failed)?;
    ensure!(a.content_hash == b.content_hash, "test setup: texts differ");
    ensure!(
        a.id != b.id,
        "identical text at two coordinates collapsed into one id `{}`",
        a.id
    );
    let doc = read_json(&out(&run, "evidence.json"));
    ensure!(
        doc["artifacts"].as_array().map(Vec::len) == Some(2),
        "evidence.json does not hold both artifacts"
    );
    Ok(())
}

fn same_text_two_ranges() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    // Lines 12 and 13 of service.py are both empty lines; 22 and 23 too.
    let a = add_ev(&run, "src/payments/service.py", Some((12, 13))).map_err(failed)?;
    let b = add_ev(&run, "src/payments/service.py", Some((22, 23))).map_err(failed)?;
    ensure!(
        a.excerpt == b.excerpt && a.content_hash == b.content_hash,
        "test setup: excerpts differ"
    );
    ensure!(a.id != b.id, "two ranges of one file share id `{}`", a.id);
    Ok(())
}

fn id_from_coordinate() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = add_ev(&run, "src/payments/service.py", Some((32, 39))).map_err(failed)?;
    std::thread::sleep(std::time::Duration::from_millis(5));
    let b = add_ev(&run, "src/payments/service.py", Some((32, 39))).map_err(failed)?;
    ensure!(a.id == b.id, "one coordinate gave two ids");
    let doc = read_json(&out(&run, "evidence.json"));
    ensure!(
        doc["artifacts"].as_array().map(Vec::len) == Some(1),
        "one coordinate was stored twice"
    );
    // The id is a function of the coordinate: another range of the same file, another id.
    let c = add_ev(&run, "src/payments/service.py", Some((32, 40))).map_err(failed)?;
    ensure!(c.id != a.id, "a different range kept the same id");
    let want = local_artifact_id(
        "implementation",
        a.revision.as_deref().unwrap_or_default(),
        "src/payments/service.py",
        32,
        39,
        &a.content_hash,
    );
    ensure!(
        a.id == want,
        "id {} does not derive from the coordinate (expected {want})",
        a.id
    );
    Ok(())
}

fn kind_from_scope() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    for (path, lines, kind) in [
        ("src/payments/service.py", (32, 39), "implementation"),
        ("tests/test_capture.py", (6, 8), "contract_test"),
        ("docs/payments.md", (3, 4), "doc"),
    ] {
        let a = add_ev(&run, path, Some(lines)).map_err(failed)?;
        ensure!(
            a.kind.as_str() == kind,
            "{path} classified {}, expected {kind}",
            a.kind.as_str()
        );
    }
    // A case with its own scopes classifies by them, not by the file's looks.
    let mut req = w.request("annotate-unit", UNIT_TARGET);
    req.scopes = vec!["docs/**=implementation".into(), "**=doc".into()];
    let run = anvil_bench::case::open(&req).map_err(failed)?.run_dir;
    let a = add_ev(&run, "docs/payments.md", Some((3, 4))).map_err(failed)?;
    ensure!(
        a.kind.as_str() == "implementation",
        "docs/payments.md under `docs/**=implementation` classified {}",
        a.kind.as_str()
    );
    let b = add_ev(&run, "src/payments/service.py", Some((32, 39))).map_err(failed)?;
    ensure!(
        b.kind.as_str() == "doc",
        "service.py under `**=doc` classified {}",
        b.kind.as_str()
    );
    Ok(())
}

fn kind_first_match() -> Result<(), Failed> {
    let w = World::new();
    let mut req = w.request("annotate-unit", UNIT_TARGET);
    req.scopes = vec!["tests/**=doc".into(), "**/*.py=implementation".into()];
    let run = anvil_bench::case::open(&req).map_err(failed)?.run_dir;
    let a = add_ev(&run, "tests/test_capture.py", Some((6, 8))).map_err(failed)?;
    ensure!(
        a.kind.as_str() == "doc",
        "the first matching scope did not win: {}",
        a.kind.as_str()
    );
    Ok(())
}

fn comment_kind() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    for (lines, kind) in [
        ((35, 35), "comment"),
        ((9, 9), "comment"),
        ((35, 36), "implementation"),
        ((9, 10), "implementation"),
    ] {
        let a = add_ev(&run, "src/payments/service.py", Some(lines)).map_err(failed)?;
        ensure!(
            a.kind.as_str() == kind,
            "service.py lines {lines:?} ({:?}) classified {}, expected {kind}",
            a.excerpt,
            a.kind.as_str()
        );
    }
    Ok(())
}

fn cli_no_kind() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let o = rail_cli(
        &w,
        "add-evidence",
        &run,
        &["--path", "docs/payments.md", "--kind", "implementation"],
    );
    ensure!(
        o.status.code() == Some(2),
        "an agent-given kind was not a usage error (exit {:?})",
        o.status.code()
    );
    ensure!(
        !out(&run, "evidence.json").exists(),
        "an agent-given kind produced evidence"
    );
    Ok(())
}

/// A genuine doc artifact relabelled `implementation` (0.9 instead of 0.6), with its id
/// re-derived so it is self-consistent, must not survive freeze-research: the kind is the
/// scope's, never the author's.
fn relabelled_kind() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let a = add_ev(&run, "docs/payments.md", Some((3, 4))).map_err(failed)?;
    ensure!(a.kind.as_str() == "doc", "test setup: not a doc");
    let mut doc = read_json(&out(&run, "evidence.json"));
    let art = &mut doc["artifacts"][0];
    art["kind"] = json!("implementation");
    art["id"] = json!(local_artifact_id(
        "implementation",
        a.revision.as_deref().unwrap_or_default(),
        "docs/payments.md",
        3,
        4,
        &a.content_hash,
    ));
    let forged_id = art["id"].as_str().unwrap().to_string();
    write_json(&out(&run, "evidence.json"), &doc);
    claim(&run, "field.unit", json!("s"), &[&forged_id])?;
    match rails::freeze_research(&run, None) {
        Err(_) => {
            ensure!(
                lifecycle_json(&run)["state"] == "open",
                "a refused freeze moved the run"
            );
            Ok(())
        }
        Ok(record) => {
            let v = record.values.iter().find(|v| v.predicate == "field.unit");
            Err(format!(
                "freeze-research accepted a doc excerpt relabelled `implementation` by hand; \
                 field.unit = \"s\" now has strength {:?} (a lone doc is 0.6)",
                v.map(|v| v.strength)
            )
            .into())
        }
    }
}

/// The keys of every object inside `v`, recursively.
fn all_keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.push(k.clone());
                all_keys(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| all_keys(x, out)),
        _ => {}
    }
}

fn verification_status() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    ev(&run, "src/payments/service.py", 32, 39)?;
    externals(&run, 1)?;
    let doc = read_json(&out(&run, "evidence.json"));
    let arts = doc["artifacts"].as_array().cloned().unwrap_or_default();
    ensure!(arts.len() == 2, "expected two artifacts");
    for art in &arts {
        let v = art["verification"].as_object().cloned().unwrap_or_default();
        let keys: Vec<&str> = v.keys().map(String::as_str).collect();
        if art["kind"] == "external" {
            ensure!(
                v.get("status") == Some(&json!("unverified")),
                "external artifact is {:?}",
                v.get("status")
            );
            ensure!(
                keys == ["status", "reason"] || keys == ["reason", "status"],
                "external verification has keys {keys:?}"
            );
            ensure!(
                v["reason"].as_str().is_some_and(|r| !r.trim().is_empty()),
                "external artifact has no reason"
            );
        } else {
            ensure!(
                v.get("status") == Some(&json!("verified")),
                "local artifact is {:?}",
                v.get("status")
            );
            ensure!(
                keys == ["status", "verifier"] || keys == ["verifier", "status"],
                "local verification has keys {keys:?}"
            );
        }
        let mut keys = Vec::new();
        all_keys(art, &mut keys);
        for k in keys {
            let lower = k.to_lowercase();
            ensure!(
                k == "verification" || k == "verifier" || !lower.contains("verif"),
                "artifact carries a second verification field `{k}`"
            );
        }
    }
    Ok(())
}

fn external_claims_verified() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    externals(&run, 1)?;
    let mut doc = read_json(&out(&run, "evidence.json"));
    doc["artifacts"][0]["verification"] = json!({"status": "verified", "verifier": "me"});
    write_json(&out(&run, "evidence.json"), &doc);
    let e = refused_as(rails::freeze_research(&run, None), "forged_artifact")?;
    ensure!(
        e.to_string()
            .contains(doc["artifacts"][0]["id"].as_str().unwrap()),
        "the refusal does not name the artifact: {e}"
    );
    ensure!(
        lifecycle_json(&run)["state"] == "open",
        "a refused freeze moved the run"
    );
    Ok(())
}

/// Three forgeries of a genuine artifact's excerpt (text only; text and hash; text, hash
/// and a re-derived id) and one wholly invented artifact: each refused at freeze-research.
fn forged_excerpt() -> Result<(), Failed> {
    let forged_text = "`capture_timeout` is given in milliseconds.\n";
    let forged_hash = anvil_bench::canon::bytes_hash(forged_text.as_bytes());
    type Forge = Box<dyn Fn(&mut Value, &str)>;
    let variants: Vec<(&str, Forge)> = vec![
        (
            "excerpt only",
            Box::new(move |a: &mut Value, _| a["excerpt"] = json!(forged_text)),
        ),
        (
            "excerpt and contentHash",
            Box::new({
                let h = forged_hash.clone();
                move |a: &mut Value, _| {
                    a["excerpt"] = json!(forged_text);
                    a["contentHash"] = json!(h);
                }
            }),
        ),
        (
            "excerpt, contentHash and a re-derived id",
            Box::new({
                let h = forged_hash.clone();
                move |a: &mut Value, rev: &str| {
                    a["excerpt"] = json!(forged_text);
                    a["contentHash"] = json!(h);
                    a["id"] = json!(local_artifact_id("doc", rev, "docs/payments.md", 3, 4, &h));
                }
            }),
        ),
    ];
    for (what, forge) in variants {
        let w = World::new();
        let run = w.open_unit()?.run_dir;
        let a = add_ev(&run, "docs/payments.md", Some((3, 4))).map_err(failed)?;
        let mut doc = read_json(&out(&run, "evidence.json"));
        forge(
            &mut doc["artifacts"][0],
            a.revision.as_deref().unwrap_or_default(),
        );
        write_json(&out(&run, "evidence.json"), &doc);
        let lc_before = bytes_of(&run.join("lifecycle.json"));
        match rails::freeze_research(&run, None) {
            Ok(_) => return Err(format!("forged excerpt ({what}) survived freeze-research").into()),
            Err(e) => ensure!(
                ["forged_artifact", "inconsistent_artifact", "source_changed"].contains(&e.kind()),
                "forged excerpt ({what}) refused for another reason: {} {e}",
                e.kind()
            ),
        }
        ensure!(
            bytes_of(&run.join("lifecycle.json")) == lc_before,
            "a refused freeze ({what}) changed lifecycle.json"
        );
    }
    // A wholly invented artifact: no rail call, consistent hash and id, forged text.
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let id = local_artifact_id("doc", "none", "docs/payments.md", 3, 4, &forged_hash);
    write_json(
        &out(&run, "evidence.json"),
        &json!({"format": "anvil-evidence", "formatVersion": 1, "artifacts": [{
            "id": id, "uri": "repo:docs/payments.md#L3-L4", "kind": "doc", "revision": "none",
            "path": "docs/payments.md", "startLine": 3, "endLine": 4,
            "contentHash": forged_hash, "excerpt": forged_text,
            "acquiredAt": "2026-01-01T00:00:00.000Z",
            "verification": {"status": "verified", "verifier": "anvil-bench/0.1.0"}
        }]}),
    );
    let e = refused_as(rails::freeze_research(&run, None), "source_changed")?;
    ensure!(
        e.to_string().contains(&id),
        "the refusal does not name the artifact: {e}"
    );
    Ok(())
}

fn honest_hand_written() -> Result<(), Failed> {
    let w = World::new();
    let run = w.open_unit()?.run_dir;
    let text: String = lines_of(&w.repo().join("docs/payments.md"))[2..4].concat();
    let hash = anvil_bench::canon::bytes_hash(text.as_bytes());
    let id = local_artifact_id("doc", "none", "docs/payments.md", 3, 4, &hash);
    write_json(
        &out(&run, "evidence.json"),
        &json!({"format": "anvil-evidence", "formatVersion": 1, "artifacts": [{
            "id": id, "uri": "repo:docs/payments.md#L3-L4", "kind": "doc", "revision": "none",
            "path": "docs/payments.md", "startLine": 3, "endLine": 4,
            "contentHash": hash, "excerpt": text,
            "acquiredAt": "2026-01-01T00:00:00.000Z",
            "verification": {"status": "verified", "verifier": "anvil-bench/0.1.0"}
        }]}),
    );
    freeze(&run)?;
    ensure!(
        lifecycle_json(&run)["state"] == "research_frozen",
        "an exact hand-written evidence.json did not freeze"
    );
    Ok(())
}

fn frozen_evidence_edit() -> Result<(), Failed> {
    let w = World::new();
    let u = frozen_unit(&w)?;
    write_proposal(&u.run, &unit_proposal("s", &[&u.claim]));
    let path = out(&u.run, "evidence.json");
    let mut doc = read_json(&path);
    doc["artifacts"][1]["excerpt"] = json!("def test_capture_timeout_is_milliseconds():\n");
    write_json(&path, &doc);
    let lc_before = bytes_of(&u.run.join("lifecycle.json"));
    for (rail, r) in [
        ("validate", rails::validate(&u.run, None, false).map(|_| ())),
        (
            "validate --dry-run",
            rails::validate(&u.run, None, true).map(|_| ()),
        ),
        (
            "finalize",
            anvil_bench::case::finalize::finalize(
                &u.run,
                Some(anvil_bench::case::finalize::Status::InsufficientEvidence),
                None,
                None,
            )
            .map(|_| ()),
        ),
    ] {
        let e = refused_as(r, "tamper")?;
        ensure!(
            e.to_string().contains("output/evidence.json"),
            "{rail}: the tamper error does not name the file: {e}"
        );
    }
    ensure!(
        bytes_of(&u.run.join("lifecycle.json")) == lc_before,
        "a tampered run moved on"
    );
    let shown = rails::show(&u.run).map_err(failed)?;
    ensure!(
        shown
            .tampered
            .is_some_and(|t| t.contains("output/evidence.json")),
        "show does not report the tamper"
    );
    Ok(())
}

fn inadmissible_at_rail() -> Result<(), Failed> {
    let w = World::new();
    let run = anvil_bench::case::open(&w.request("classify-sensitivity", EMAIL_TARGET))
        .map_err(failed)?
        .run_dir;
    ev(&run, "src/payments/receipts.py", 13, 15)?;
    let before = tree(&run.join("output"));
    let e = refused_as(
        rails::add_external_evidence(
            &run,
            "crm-wiki",
            "https://wiki.example/customer-email",
            "customer_email is personal data\n",
            None,
        ),
        "inadmissible_kind",
    )?;
    ensure!(
        e.to_string().contains("external"),
        "the refusal does not name the kind: {e}"
    );
    ensure!(tree(&run.join("output")) == before, "output/ changed");
    Ok(())
}

/// classify-sensitivity admits no external evidence: an external artifact written into
/// evidence.json by hand must not ground a claim (refused at freeze, or its claim rejected
/// naming the inadmissible kind).
fn inadmissible_hand_written() -> Result<(), Failed> {
    let w = World::new();
    let run = anvil_bench::case::open(&w.request("classify-sensitivity", EMAIL_TARGET))
        .map_err(failed)?
        .run_dir;
    let excerpt = "customer_email is personal data\n";
    let hash = anvil_bench::canon::bytes_hash(excerpt.as_bytes());
    let uri = "https://wiki.example/customer-email";
    let id = external_artifact_id("crm-wiki", uri, &hash);
    write_json(
        &out(&run, "evidence.json"),
        &json!({"format": "anvil-evidence", "formatVersion": 1, "artifacts": [{
            "id": id, "uri": uri, "kind": "external", "source": "crm-wiki",
            "contentHash": hash, "excerpt": excerpt,
            "acquiredAt": "2026-01-01T00:00:00.000Z",
            "verification": {"status": "unverified", "reason": "caller supplied"}
        }]}),
    );
    let value = json!("pii");
    let ids = vec![id.clone()];
    let cid = anvil_bench::case::research::claim_id("field.sensitivity", &value, &ids);
    write_json(
        &out(&run, "claims.json"),
        &json!({"format": "anvil-claims", "formatVersion": 1, "claims": [{
            "id": cid, "predicate": "field.sensitivity", "value": value,
            "artifactIds": ids, "confidence": 0.9
        }]}),
    );
    match rails::freeze_research(&run, None) {
        Err(e) => {
            ensure!(
                e.kind() == "inadmissible_kind" || e.to_string().contains("inadmissible"),
                "refused for another reason: {e}"
            );
        }
        Ok(record) => {
            let v = record.claims.iter().find(|c| c.id == cid);
            ensure!(
                v.is_some_and(
                    |v| v.status == anvil_bench::case::research::ClaimStatus::Rejected
                        && v.reasons.iter().any(|r| r.contains("inadmissible"))
                ),
                "a claim resting on inadmissible external evidence was not rejected: {v:?}"
            );
            ensure!(
                record.values.is_empty(),
                "inadmissible evidence supports a value: {:?}",
                record.values
            );
        }
    }
    Ok(())
}
