//! R-TOOL-7..9: provenance on every answer, the journaled CLI, typed equality and
//! SQL-like text, and refusal of runs that may no longer be investigated.

use anvil_bench::tools::{self, OperationResult, ResultDoc, ToolLimits};
use libtest_mimic::Failed;
use serde_json::{Value, json};

use super::{PAYMENTS, r, read_ctx, refused_doc, world};
use crate::ensure;
use crate::support::{failed, journal, lifecycle_json, rail_cli, stderr, write_json};

pub(super) fn provenance_source() -> Result<(), Failed> {
    let q = world()?;
    let doc = q.ok(vec![
        r(
            "A",
            "source.find_symbol",
            json!({"symbol": "capture_timeout"}),
        ),
        read_ctx("src/payments/service.py", 1, 3),
        r("C", "source.list_files", json!({"glob": "src/**/*.py"})),
    ])?;
    let file = |p: &str| std::fs::read(q.w.repo().join(p)).unwrap();
    let OperationResult::FindSymbol(s) = &doc.results[0].result else {
        return Err("wrong operation".into());
    };
    ensure!(!s.matches.is_empty(), "no symbol matches");
    ensure!(
        s.note.contains("not distinguished"),
        "the symbol result does not say what it cannot tell"
    );
    for m in &s.matches {
        let bytes = file(&m.path);
        ensure!(
            m.sha256 == anvil_bench::canon::bytes_hash(&bytes),
            "{} carries a wrong sha256",
            m.path
        );
        let text = String::from_utf8(bytes).unwrap();
        let line = text.lines().nth(m.line as usize - 1).unwrap_or("");
        ensure!(
            line == m.text,
            "{}:{} is not that 1-based line",
            m.path,
            m.line
        );
        ensure!(
            !m.text.contains("test_capture_timeout_is_seconds"),
            "matched inside a longer identifier"
        );
    }
    let OperationResult::ReadContext(c) = &doc.results[1].result else {
        return Err("wrong operation".into());
    };
    let text = String::from_utf8(file("src/payments/service.py")).unwrap();
    ensure!(
        c.lines[0].line == 1 && c.lines[0].text == text.lines().next().unwrap(),
        "read_context is not 1-based"
    );
    ensure!(
        c.sha256 == anvil_bench::canon::bytes_hash(text.as_bytes()),
        "read_context sha256 is wrong"
    );
    let OperationResult::ListFiles(l) = &doc.results[2].result else {
        return Err("wrong operation".into());
    };
    for f in &l.files {
        ensure!(
            f.sha256 == anvil_bench::canon::bytes_hash(&file(&f.path)),
            "{} listed with a wrong sha256",
            f.path
        );
        ensure!(
            f.size == file(&f.path).len() as u64,
            "{} listed with a wrong size",
            f.path
        );
    }
    Ok(())
}

pub(super) fn provenance_rows() -> Result<(), Failed> {
    let q = world()?;
    let requests = vec![
        r(
            "A",
            "database.lookup",
            json!({"table": "payments", "filters": {"status": "failed"}, "projection": ["status"]}),
        ),
        r(
            "B",
            "database.find_references",
            json!({"table": "fixtures/refunds.snapshot.json", "searchColumns": ["payment"], "value": "1"}),
        ),
    ];
    let request = q.doc(requests.clone());
    let doc = crate::support::rails::query(&q.run, &request).map_err(failed)?;
    ensure!(
        doc.batch_hash == anvil_bench::canon::canonical_hash(&request),
        "batch hash is not the request's"
    );
    for (res, req) in doc.results.iter().zip(&requests) {
        ensure!(
            res.request_hash == anvil_bench::canon::canonical_hash(req),
            "request hash of {} is not its request's",
            res.request_id
        );
    }
    ensure!(
        doc.case_hash
            == anvil_bench::canon::bytes_hash(&std::fs::read(q.run.join("case.json")).unwrap()),
        "caseHash"
    );
    let payments: Value = serde_json::from_str(PAYMENTS).unwrap();
    let OperationResult::Lookup(l) = &doc.results[0].result else {
        return Err("wrong operation".into());
    };
    ensure!(
        l.rows.len() == 1 && l.rows[0].pointer == "/rows/2",
        "lookup pointer: {:?}",
        l.rows
    );
    ensure!(
        payments.pointer(&l.rows[0].pointer).unwrap()["status"] == "failed",
        "the pointer names another row"
    );
    ensure!(l.rows[0].row.len() == 1, "projection not applied");
    ensure!(
        l.sha256 == anvil_bench::canon::bytes_hash(PAYMENTS.as_bytes()),
        "snapshot sha256"
    );
    let OperationResult::FindReferences(f) = &doc.results[1].result else {
        return Err("wrong operation".into());
    };
    ensure!(
        f.rows.len() == 1 && f.rows[0].pointer == "/1",
        "raw pointer: {:?}",
        f.rows
    );
    ensure!(
        f.coverage == tools::Coverage::Unknown,
        "raw rows must have unknown coverage"
    );
    Ok(())
}

pub(super) fn cli() -> Result<(), Failed> {
    let q = world()?;
    let file = q.w.root().join("request.json");
    write_json(
        &file,
        &q.doc(vec![r(
            "A",
            "source.find_text",
            json!({"text": "capture_timeout", "limit": 2}),
        )]),
    );
    let before = journal(&q.run).len();
    let out = rail_cli(
        &q.w,
        "query",
        &q.run,
        &["--request", file.to_str().unwrap(), "--json"],
    );
    ensure!(out.status.success(), "case query failed: {}", stderr(&out));
    let doc: ResultDoc = serde_json::from_slice(&out.stdout).map_err(failed)?;
    ensure!(doc.results.len() == 1, "one result expected");
    write_json(
        &file,
        &q.doc(vec![
            r("A", "source.find_text", json!({"text": "capture_timeout"})),
            read_ctx("src/payments/nope.py", 1, 1),
        ]),
    );
    let out = rail_cli(
        &q.w,
        "query",
        &q.run,
        &["--request", file.to_str().unwrap(), "--json"],
    );
    ensure!(
        out.status.code() == Some(1),
        "a refused batch exits 1, got {:?}",
        out.status.code()
    );
    let shown: Value = serde_json::from_slice(&out.stdout).map_err(failed)?;
    ensure!(
        shown.get("results").is_none() && shown["error"]["kind"] == "missing_file",
        "partial output: {shown}"
    );
    let entries = journal(&q.run);
    ensure!(
        entries.len() == before + 2,
        "each call is journaled once: {entries:?}"
    );
    ensure!(
        entries[before]["rail"] == "query" && entries[before]["outcome"] == "ok",
        "answered call not journaled"
    );
    ensure!(
        entries[before]["result"]["batchHash"] == json!(doc.batch_hash),
        "journal lacks the batch hash"
    );
    ensure!(
        entries[before + 1]["outcome"] == "rejected",
        "refused call not journaled as rejected"
    );
    Ok(())
}

pub(super) fn typed_equality() -> Result<(), Failed> {
    let q = world()?;
    for (value, pointer) in [
        (json!(1), "/rows/0"),
        (json!("1"), "/rows/1"),
        (json!(1.0), "/rows/2"),
        (json!(true), "/rows/3"),
    ] {
        let doc = q.ok(vec![r(
            "A",
            "database.lookup",
            json!({"table": "payments", "filters": {"id": value}}),
        )])?;
        let OperationResult::Lookup(l) = &doc.results[0].result else {
            return Err("wrong operation".into());
        };
        let got: Vec<&str> = l.rows.iter().map(|r| r.pointer.as_str()).collect();
        ensure!(
            got == [pointer],
            "{value} matched {got:?}, expected only {pointer}"
        );
    }
    let doc = q.ok(vec![r(
        "A",
        "database.find_references",
        json!({"table": "payments", "searchColumns": ["id", "parent"], "value": 1}),
    )])?;
    let OperationResult::FindReferences(f) = &doc.results[0].result else {
        return Err("wrong operation".into());
    };
    let got: Vec<(&str, &Vec<String>)> = f
        .rows
        .iter()
        .map(|r| (r.pointer.as_str(), &r.matched_columns))
        .collect();
    ensure!(
        got == [
            ("/rows/0", &vec!["id".to_string()]),
            ("/rows/1", &vec!["parent".to_string()])
        ],
        "find_references coerced types: {got:?}"
    );
    Ok(())
}

/// Raw rows need not all have every column: a row without the filtered or searched column
/// is not a match (a missing value equals nothing, `null` included).
pub(super) fn sparse_rows() -> Result<(), Failed> {
    let table = "fixtures/sparse.snapshot.json";
    let q = super::world_with(&[(
        table,
        r#"[{"k": 1, "v": 1}, {"k": 2}, {"v": 1}, {"v": null}]"#,
    )])?;
    let doc = q.ok(vec![
        r(
            "A",
            "database.lookup",
            json!({"table": table, "filters": {"v": 1}}),
        ),
        r(
            "B",
            "database.find_references",
            json!({"table": table, "searchColumns": ["v"], "value": 1}),
        ),
        r(
            "C",
            "database.lookup",
            json!({"table": table, "filters": {"v": null}}),
        ),
    ])?;
    let pointers = |i: usize| -> Result<Vec<String>, Failed> {
        Ok(match &doc.results[i].result {
            OperationResult::Lookup(l) => l.rows.iter().map(|r| r.pointer.clone()).collect(),
            OperationResult::FindReferences(f) => {
                f.rows.iter().map(|r| r.pointer.clone()).collect()
            }
            _ => return Err("wrong operation".into()),
        })
    };
    ensure!(
        pointers(0)? == ["/0", "/2"],
        "lookup matched {:?}",
        pointers(0)?
    );
    ensure!(
        pointers(1)? == ["/0", "/2"],
        "find_references matched {:?}",
        pointers(1)?
    );
    ensure!(
        pointers(2)? == ["/3"],
        "a null filter matched {:?}",
        pointers(2)?
    );
    Ok(())
}

pub(super) fn sql_like() -> Result<(), Failed> {
    let q = world()?;
    let snapshot = q.w.repo().join("fixtures/payments.snapshot.json");
    let before = std::fs::read(&snapshot).unwrap();
    let count = |v: Value| -> Result<Vec<String>, Failed> {
        let doc = q.ok(vec![r(
            "A",
            "database.lookup",
            json!({"table": "payments", "filters": {"note": v}}),
        )])?;
        let OperationResult::Lookup(l) = &doc.results[0].result else {
            return Err("wrong operation".into());
        };
        Ok(l.rows.iter().map(|r| r.pointer.clone()).collect())
    };
    ensure!(
        count(json!("1 OR 1=1"))? == ["/rows/1"],
        "`1 OR 1=1` is not just text"
    );
    ensure!(
        count(json!("x' OR '1'='1"))?.is_empty(),
        "an injection matched rows"
    );
    ensure!(
        count(json!("'; DROP TABLE payments; --"))? == ["/rows/2"],
        "SQL text is not compared as data"
    );
    ensure!(
        count(json!("*"))?.is_empty() && count(json!("%"))?.is_empty(),
        "wildcards matched"
    );
    ensure!(
        std::fs::read(&snapshot).unwrap() == before,
        "the snapshot changed"
    );
    Ok(())
}

pub(super) fn other_run() -> Result<(), Failed> {
    let q = world()?;
    let second = q.w.open_unit()?;
    let mut doc = q.doc(vec![read_ctx("src/payments/service.py", 1, 1)]);
    doc["runId"] = json!(second.run_id.to_string());
    refused_doc(&q.run, &doc, "wrong_run", &ToolLimits::default())?;
    doc["runId"] = json!("not-a-run-id");
    refused_doc(&q.run, &doc, "wrong_run", &ToolLimits::default())?;
    // Only the exact id names the run: not a prefix of it, nor it with more after it, nor
    // it in another case.
    let actual = q.run_id.clone();
    for near in [
        actual[..10].to_string(),
        format!("{actual}0"),
        actual.to_lowercase(),
    ] {
        doc["runId"] = json!(near);
        refused_doc(&q.run, &doc, "wrong_run", &ToolLimits::default())?;
    }
    Ok(())
}

pub(super) fn finished_runs() -> Result<(), Failed> {
    use crate::support::rails::finalize;
    use anvil_bench::case::finalize::Status;
    let q = world()?;
    let batch = vec![read_ctx("src/payments/service.py", 1, 1)];
    q.ok(batch.clone())?;
    finalize(
        &q.run,
        Some(Status::InsufficientEvidence),
        Some("nothing grounded"),
        None,
    )
    .map_err(failed)?;
    q.refused(batch.clone(), "run_not_queryable")?;
    crate::support::rails::close(
        &q.run,
        &anvil_bench::reconcile::CloseRequest::default(),
        None,
    )
    .map_err(failed)?;
    ensure!(
        lifecycle_json(&q.run)["state"] == "closed",
        "the run did not close"
    );
    q.refused(batch, "run_not_queryable")?;
    Ok(())
}

pub(super) fn stale_run() -> Result<(), Failed> {
    let q = world()?;
    let batch = vec![read_ctx("src/payments/service.py", 1, 1)];
    q.ok(batch.clone())?;
    q.w.edit_air(|air| air["operations"][0]["description"] = json!("changed after open"));
    q.refused(batch, "stale_run")?;
    Ok(())
}
