//! R-TOOL-4 and R-TOOL-6: whole-batch preflight (paths, encodings, ranges, tables,
//! columns, snapshot consistency) and stable pagination.

use anvil_bench::tools::{OperationResult, ResultDoc};
use libtest_mimic::Failed;
use serde_json::json;

use super::{r, read_ctx, world, world_with};
use crate::ensure;
use crate::support::{failed, msg, read_json};

pub(super) fn whole_batch() -> Result<(), Failed> {
    let q = world()?;
    let good = vec![
        r("A", "source.find_text", json!({"text": "capture_timeout"})),
        r(
            "B",
            "database.lookup",
            json!({"table": "payments", "filters": {"id": 1}}),
        ),
    ];
    q.ok(good.clone())?;
    for (bad, kind) in [
        (read_ctx("src/payments/refunds.py", 1, 2), "missing_file"),
        (read_ctx("src/payments/service.py", 50, 60), "invalid_range"),
        (
            r(
                "C",
                "database.lookup",
                json!({"table": "payments", "filters": {"colour": 1}}),
            ),
            "unknown_column",
        ),
        (
            r(
                "C",
                "source.find_text",
                json!({"text": "a", "paths": ["src"]}),
            ),
            "not_a_file",
        ),
    ] {
        let mut batch = good.clone();
        batch.push(bad);
        q.refused(batch, kind)?;
    }
    Ok(())
}

pub(super) fn encodings() -> Result<(), Failed> {
    let q = world()?;
    std::fs::write(
        q.w.repo().join("src/payments/blob.py"),
        b"capture = 1\n\x00\x01 seconds\n",
    )
    .unwrap();
    q.refused(vec![read_ctx("src/payments/blob.py", 1, 1)], "binary_file")?;
    // Searching every file in scope meets the binary file too: the whole batch is refused.
    q.refused(
        vec![r("T", "source.find_text", json!({"text": "capture"}))],
        "binary_file",
    )?;
    std::fs::remove_file(q.w.repo().join("src/payments/blob.py")).unwrap();
    std::fs::write(q.w.repo().join("docs/latin1.md"), b"caf\xe9 capture\n").unwrap();
    q.refused(
        vec![r(
            "T",
            "source.find_symbol",
            json!({"symbol": "capture", "paths": ["docs/latin1.md"]}),
        )],
        "not_utf8",
    )?;
    Ok(())
}

pub(super) fn ranges() -> Result<(), Failed> {
    let q = world()?;
    let lines = std::fs::read_to_string(q.w.repo().join("src/payments/service.py"))
        .unwrap()
        .lines()
        .count() as u32;
    let doc = q.ok(vec![read_ctx("src/payments/service.py", lines, lines)])?;
    ensure!(doc.results.len() == 1, "the last line is readable");
    q.refused(
        vec![read_ctx("src/payments/service.py", lines, lines + 1)],
        "invalid_range",
    )?;
    Ok(())
}

pub(super) fn columns() -> Result<(), Failed> {
    let q = world()?;
    q.refused(
        vec![r("D", "database.describe", json!({"table": "orders"}))],
        "unknown_table",
    )?;
    q.refused(
        vec![r(
            "D",
            "database.lookup",
            json!({"table": "payments", "filters": {"id": 1}, "projection": ["amount"]}),
        )],
        "unknown_column",
    )?;
    q.refused(
        vec![r(
            "D",
            "database.find_references",
            json!({"table": "payments", "searchColumns": ["id", "payment"], "value": 1}),
        )],
        "unknown_column",
    )?;
    // A raw array has no table name: it is addressed by its path, its columns are its keys.
    q.refused(
        vec![r(
            "D",
            "database.lookup",
            json!({"table": "refunds", "filters": {"refund": 7}}),
        )],
        "unknown_table",
    )?;
    q.ok(vec![r(
        "D",
        "database.lookup",
        json!({"table": "fixtures/refunds.snapshot.json", "filters": {"refund": 7}}),
    )])?;
    let q = world_with(&[("fixtures/empty.snapshot.json", "[]")])?;
    q.refused(
        vec![r(
            "D",
            "database.lookup",
            json!({"table": "fixtures/empty.snapshot.json", "filters": {"id": 1}}),
        )],
        "unknown_column",
    )?;
    Ok(())
}

pub(super) fn inconsistent_snapshots() -> Result<(), Failed> {
    let snapshot = |columns: &str, rows: &str, coverage: &str| {
        format!(
            r#"{{"format": "anvil-database-snapshot", "formatVersion": 1, "table": "t", "columns": {columns}, "rows": {rows}, "coverage": "{coverage}"}}"#
        )
    };
    let id = r#"[{"name": "id", "type": "integer"}]"#;
    for (name, text) in [
        (
            "duplicate column",
            snapshot(
                r#"[{"name": "id", "type": "integer"}, {"name": "id", "type": "string"}]"#,
                "[]",
                "partial",
            ),
        ),
        (
            "undeclared column",
            snapshot(id, r#"[{"id": 1, "secret": 2}]"#, "partial"),
        ),
        (
            "rows in schema_only",
            snapshot(id, r#"[{"id": 1}]"#, "schema_only"),
        ),
        ("unknown coverage", snapshot(id, "[]", "everything")),
        (
            "a row that is not an object",
            snapshot(id, "[1]", "partial"),
        ),
    ] {
        let q = world_with(&[("fixtures/t.snapshot.json", &text)])?;
        q.refused(
            vec![r("D", "database.describe", json!({}))],
            "invalid_snapshot",
        )
        .map_err(|e| failed(format!("{name}: {}", msg(&e))))?;
    }
    let q = world_with(&[(
        "fixtures/t.snapshot.json",
        &snapshot(id, "[]", "schema_only"),
    )])?;
    let doc = q.ok(vec![r("D", "database.describe", json!({"table": "t"}))])?;
    let OperationResult::Describe(d) = &doc.results[0].result else {
        return Err("describe answered with another operation".into());
    };
    ensure!(
        d.tables.len() == 1 && d.tables[0].row_count == 0,
        "a schema-only descriptor is describable: {d:?}"
    );
    Ok(())
}

pub(super) fn matches_of(doc: &ResultDoc) -> Vec<(String, u64)> {
    doc.results
        .iter()
        .flat_map(|r| match &r.result {
            OperationResult::FindText(t) => {
                t.matches.iter().map(|m| (m.path.clone(), m.line)).collect()
            }
            OperationResult::FindSymbol(t) => {
                t.matches.iter().map(|m| (m.path.clone(), m.line)).collect()
            }
            _ => vec![],
        })
        .collect()
}

pub(super) fn pagination() -> Result<(), Failed> {
    let q = world()?;
    let paths = json!([
        "tests/test_capture.py",
        "src/payments/service.py",
        "docs/payments.md"
    ]);
    let all = q.ok(vec![r(
        "A",
        "source.find_text",
        json!({"paths": paths, "text": "capture", "limit": 100}),
    )])?;
    let whole = matches_of(&all);
    ensure!(whole.len() >= 6, "too few matches to page: {whole:?}");
    // Requested file order, then line order.
    let order: Vec<usize> = whole
        .iter()
        .map(|(p, _)| {
            paths
                .as_array()
                .unwrap()
                .iter()
                .position(|x| x == p)
                .unwrap()
        })
        .collect();
    ensure!(
        order.windows(2).all(|w| w[0] <= w[1]),
        "not in requested file order: {whole:?}"
    );
    ensure!(
        whole
            .windows(2)
            .all(|w| w[0].0 != w[1].0 || w[0].1 < w[1].1),
        "not in line order within a file: {whole:?}"
    );
    // Pages of every size concatenate to the whole: one match a page, two, three.
    for limit in [1u64, 2, 3] {
        let mut offset = 0u64;
        let mut paged = Vec::new();
        loop {
            let page = json!({"paths": paths, "text": "capture", "offset": offset, "limit": limit});
            let doc = q.ok(vec![r("A", "source.find_text", page.clone())])?;
            let again = q.ok(vec![r("A", "source.find_text", page)])?;
            ensure!(doc == again, "the same page differs between two calls");
            let OperationResult::FindText(t) = &doc.results[0].result else {
                return Err("wrong operation".into());
            };
            ensure!(
                t.page.total == whole.len() as u64,
                "total changes between pages"
            );
            ensure!(
                t.page.truncated == t.page.next_offset.is_some(),
                "truncated and nextOffset disagree"
            );
            paged.extend(matches_of(&doc));
            match t.page.next_offset {
                Some(next) => {
                    ensure!(
                        next == offset + limit,
                        "nextOffset {next} does not follow offset {offset} by {limit}"
                    );
                    offset = next;
                }
                None => break,
            }
        }
        ensure!(
            paged == whole,
            "pages of {limit} do not concatenate to the whole answer"
        );
    }
    let past = q.ok(vec![r("A", "source.list_files", json!({"offset": 1000}))])?;
    let OperationResult::ListFiles(l) = &past.results[0].result else {
        return Err("wrong operation".into());
    };
    ensure!(
        l.files.is_empty() && !l.page.truncated && l.page.next_offset.is_none(),
        "a page past the end is not empty and final"
    );
    Ok(())
}

/// The tables are exactly the snapshots case.json declares: a snapshot added after open is
/// not one, and a declared snapshot whose bytes changed is refused.
pub(super) fn declared_snapshots() -> Result<(), Failed> {
    let q = world()?;
    let case = read_json(&q.run.join("case.json"));
    let declared: Vec<&str> = case["databaseSnapshots"]
        .as_array()
        .map(|a| a.iter().filter_map(|d| d["path"].as_str()).collect())
        .unwrap_or_default();
    ensure!(
        declared
            == [
                "fixtures/payments.snapshot.json",
                "fixtures/refunds.snapshot.json"
            ],
        "declared: {declared:?}"
    );
    std::fs::write(
        q.w.repo().join("fixtures/late.snapshot.json"),
        r#"[{"id": 1}]"#,
    )
    .unwrap();
    q.refused(
        vec![r(
            "D",
            "database.lookup",
            json!({"table": "fixtures/late.snapshot.json", "filters": {"id": 1}}),
        )],
        "unknown_table",
    )?;
    let payments = q.w.repo().join("fixtures/payments.snapshot.json");
    let text = std::fs::read_to_string(&payments).unwrap();
    std::fs::write(&payments, text.replacen("captured", "refunded", 1)).unwrap();
    let e = q.refused(
        vec![r("D", "database.describe", json!({}))],
        "invalid_snapshot",
    )?;
    ensure!(
        e.to_string().contains("changed since the case was opened"),
        "refusal: {e}"
    );
    Ok(())
}
