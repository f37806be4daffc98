//! R-EV-6..9: what an artifact is: the exact bytes read with their hash and coordinate,
//! an id derived from the coordinate, the kind from the matching inspect scope, and one
//! verification status.

use libtest_mimic::Failed;
use serde_json::{Value, json};

use super::lines_of;
use crate::ensure;
use crate::support::{
    UNIT_TARGET, World, add_ev, ev, externals, failed, git, local_artifact_id, out, rail_cli,
    read_json,
};

pub(super) fn exact_bytes() -> Result<(), Failed> {
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

pub(super) fn exact_crlf() -> Result<(), Failed> {
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

pub(super) fn whole_file() -> Result<(), Failed> {
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

pub(super) fn same_text_two_files() -> Result<(), Failed> {
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

pub(super) fn same_text_two_ranges() -> Result<(), Failed> {
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

pub(super) fn id_from_coordinate() -> Result<(), Failed> {
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

pub(super) fn kind_from_scope() -> Result<(), Failed> {
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

pub(super) fn kind_first_match() -> Result<(), Failed> {
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

pub(super) fn comment_kind() -> Result<(), Failed> {
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

pub(super) fn cli_no_kind() -> Result<(), Failed> {
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

pub(super) fn verification_status() -> Result<(), Failed> {
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
