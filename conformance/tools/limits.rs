//! R-TOOL-5: every tool limit rejects excess input or output instead of dropping it; the
//! one display limit (characters per line) shortens a line, marks it, and still reports it.

use anvil_bench::tools::{OperationResult, ToolLimits};
use libtest_mimic::Failed;
use serde_json::json;
use std::fmt::Write as _;

use super::{Q, r, refused_doc, world};
use crate::support::{UNIT_TARGET, failed, read_json, tree};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    vec![
        Check {
            name: "tools::limits::a_request_document_over_64_kib_is_refused",
            rules: &["R-TOOL-5"],
            run: request_bytes,
        },
        Check {
            name: "tools::limits::a_batch_over_16_requests_is_refused",
            rules: &["R-TOOL-5"],
            run: batch_requests,
        },
        Check {
            name: "tools::limits::more_distinct_files_than_the_limit_are_refused_not_dropped",
            rules: &["R-TOOL-5"],
            run: selected_files,
        },
        Check {
            name: "tools::limits::a_file_over_8_mib_is_refused",
            rules: &["R-TOOL-5"],
            run: file_bytes,
        },
        Check {
            name: "tools::limits::a_selection_over_the_byte_limit_is_refused",
            rules: &["R-TOOL-5"],
            run: selected_bytes,
        },
        Check {
            name: "tools::limits::a_snapshot_over_the_row_limit_is_refused",
            rules: &["R-TOOL-5"],
            run: database_rows,
        },
        Check {
            name: "tools::limits::a_case_sets_its_own_limits_and_they_are_enforced",
            rules: &["R-TOOL-5", "X-OPEN-1"],
            run: per_case_limits,
        },
        Check {
            name: "tools::limits::a_page_over_100_matches_is_refused",
            rules: &["R-TOOL-5"],
            run: matches_per_query,
        },
        Check {
            name: "tools::limits::more_than_200_context_lines_are_refused",
            rules: &["R-TOOL-5"],
            run: context_lines,
        },
        Check {
            name: "tools::limits::a_long_line_is_marked_text_truncated_and_still_reported",
            rules: &["R-TOOL-5", "R-TOOL-6"],
            run: line_chars,
        },
        Check {
            name: "tools::limits::a_result_over_the_byte_limit_is_refused_whole",
            rules: &["R-TOOL-5"],
            run: result_bytes,
        },
    ]
}

fn with(
    q: &Q,
    requests: Vec<serde_json::Value>,
    kind: &str,
    limits: ToolLimits,
) -> Result<(), Failed> {
    refused_doc(&q.run, &q.doc(requests), kind, &limits).map(|_| ())
}

/// The batch is answered under `limits` (the limit itself is not an excess).
fn answered(q: &Q, requests: Vec<serde_json::Value>, limits: ToolLimits) -> Result<(), Failed> {
    crate::support::rails::query_with_limits(&q.run, &q.doc(requests), &limits)
        .map(|_| ())
        .map_err(|e| failed(format!("refused within the limit: {}: {e}", e.kind())))
}

fn find_all(text: &str) -> serde_json::Value {
    r("A", "source.find_text", json!({"text": text}))
}

fn request_bytes() -> Result<(), Failed> {
    let q = world()?;
    // Each text is at the per-line limit, so only the document's size can refuse it.
    let big = "x".repeat(4096);
    let n = |count: usize| -> Vec<serde_json::Value> {
        (0..count)
            .map(|i| r(&format!("Q{i}"), "source.find_text", json!({"text": big})))
            .collect()
    };
    ensure!(
        serde_json::to_string(&q.doc(n(15))).unwrap().len() < 64 * 1024,
        "the control batch is not under 64 KiB"
    );
    q.ok(n(15))?;
    with(&q, n(16), "request_too_large", ToolLimits::default())
}

fn batch_requests() -> Result<(), Failed> {
    let q = world()?;
    let n = |count: usize| -> Vec<serde_json::Value> {
        (0..count)
            .map(|i| {
                r(
                    &format!("Q{i}"),
                    "source.read_context",
                    json!({"path": "src/payments/service.py", "startLine": 1, "endLine": 1}),
                )
            })
            .collect()
    };
    q.ok(n(16))?;
    with(&q, n(17), "batch_too_large", ToolLimits::default())
}

fn selected_files() -> Result<(), Failed> {
    let q = world()?;
    let limits = ToolLimits {
        selected_files: 3,
        ..ToolLimits::default()
    };
    with(&q, vec![find_all("capture")], "too_many_files", limits)?;
    let three = json!([
        "src/payments/service.py",
        "docs/payments.md",
        "tests/test_capture.py"
    ]);
    answered(
        &q,
        vec![r(
            "A",
            "source.find_text",
            json!({"paths": three, "text": "capture"}),
        )],
        limits,
    )?;
    // Distinct across the batch: two requests naming two files each make four.
    with(
        &q,
        vec![
            r(
                "A",
                "source.find_text",
                json!({"paths": ["src/payments/service.py", "docs/payments.md"], "text": "a"}),
            ),
            r(
                "B",
                "source.find_text",
                json!({"paths": ["tests/test_capture.py", "src/payments/gateway.py"], "text": "a"}),
            ),
        ],
        "too_many_files",
        limits,
    )
}

fn file_bytes() -> Result<(), Failed> {
    let q = world()?;
    let line = "# capture padding line\n".repeat(400_000); // ~9 MiB
    std::fs::write(q.w.repo().join("docs/huge.md"), line).unwrap();
    let e = refused_doc(
        &q.run,
        &q.doc(vec![r(
            "A",
            "source.read_context",
            json!({"path": "docs/huge.md", "startLine": 1, "endLine": 1}),
        )]),
        "file_too_large",
        &ToolLimits::default(),
    )?;
    ensure!(
        e.to_string().contains("docs/huge.md"),
        "the refusal does not name the file: {e}"
    );
    with(
        &q,
        vec![find_all("capture")],
        "file_too_large",
        ToolLimits::default(),
    )
}

fn selected_bytes() -> Result<(), Failed> {
    let q = world()?;
    let limits = ToolLimits {
        selected_bytes: 2000,
        ..ToolLimits::default()
    };
    with(&q, vec![find_all("capture")], "selection_too_large", limits)?;
    q.ok(vec![find_all("capture")])?;
    Ok(())
}

fn database_rows() -> Result<(), Failed> {
    let q = world()?;
    let limits = ToolLimits {
        database_rows: 3,
        ..ToolLimits::default()
    };
    let lookup = r(
        "A",
        "database.lookup",
        json!({"table": "payments", "filters": {"id": 1}}),
    );
    with(&q, vec![lookup.clone()], "too_many_rows", limits)?;
    let limits = ToolLimits {
        database_rows: 4,
        ..ToolLimits::default()
    };
    answered(&q, vec![lookup], limits)
}

fn matches_per_query() -> Result<(), Failed> {
    let q = world()?;
    q.ok(vec![r(
        "A",
        "source.find_text",
        json!({"text": "a", "limit": 100}),
    )])?;
    with(
        &q,
        vec![r(
            "A",
            "source.find_text",
            json!({"text": "a", "limit": 101}),
        )],
        "limit_exceeded",
        ToolLimits::default(),
    )?;
    with(
        &q,
        vec![r("A", "source.list_files", json!({"limit": 101}))],
        "limit_exceeded",
        ToolLimits::default(),
    )
}

fn context_lines() -> Result<(), Failed> {
    let q = world()?;
    let body = (1..=300).fold(String::new(), |mut body, i| {
        let _ = writeln!(body, "line {i}");
        body
    });
    std::fs::write(q.w.repo().join("docs/long.md"), body).unwrap();
    let ctx = |end: u32| {
        r(
            "A",
            "source.read_context",
            json!({"path": "docs/long.md", "startLine": 1, "endLine": end}),
        )
    };
    let doc = q.ok(vec![ctx(200)])?;
    let OperationResult::ReadContext(c) = &doc.results[0].result else {
        return Err("wrong operation".into());
    };
    ensure!(c.lines.len() == 200, "200 lines are answered whole");
    with(&q, vec![ctx(201)], "limit_exceeded", ToolLimits::default())
}

fn line_chars() -> Result<(), Failed> {
    let q = world()?;
    let long = format!("{}capture_timeout{}\n", "x ".repeat(2500), " y".repeat(10));
    std::fs::write(q.w.repo().join("docs/wide.md"), format!("short\n{long}")).unwrap();
    let doc = q.ok(vec![
        r(
            "A",
            "source.find_symbol",
            json!({"paths": ["docs/wide.md"], "symbol": "capture_timeout"}),
        ),
        r(
            "B",
            "source.read_context",
            json!({"path": "docs/wide.md", "startLine": 1, "endLine": 2}),
        ),
    ])?;
    let OperationResult::FindSymbol(s) = &doc.results[0].result else {
        return Err("wrong operation".into());
    };
    ensure!(
        s.matches.len() == 1 && s.matches[0].line == 2,
        "a match beyond the display limit was dropped"
    );
    ensure!(
        s.matches[0].text_truncated && s.matches[0].text.chars().count() == 4096,
        "the long line is not marked and cut at 4096"
    );
    let OperationResult::ReadContext(c) = &doc.results[1].result else {
        return Err("wrong operation".into());
    };
    ensure!(
        !c.lines[0].text_truncated && c.lines[1].text_truncated,
        "textTruncated marks the wrong lines"
    );
    Ok(())
}

fn result_bytes() -> Result<(), Failed> {
    let q = world()?;
    let limits = ToolLimits {
        result_bytes: 1500,
        ..ToolLimits::default()
    };
    with(
        &q,
        vec![r(
            "A",
            "source.find_text",
            json!({"text": "capture", "limit": 100}),
        )],
        "result_too_large",
        limits,
    )?;
    q.ok(vec![r(
        "A",
        "source.find_text",
        json!({"text": "capture", "limit": 100}),
    )])?;
    Ok(())
}

/// `case open --tool-limit` records overrides in case.json; queries on that run obey them,
/// and an unknown name or a zero is refused at open.
fn per_case_limits() -> Result<(), Failed> {
    let q = world()?;
    let mut req = q.w.request("annotate-unit", UNIT_TARGET);
    req.tool_limits = vec!["matchesPerQuery=3".into(), "contextLines=5".into()];
    let opened = anvil_bench::case::open(&req).map_err(|e| Failed::from(e.to_string()))?;
    let case = read_json(&opened.run_dir.join("case.json"));
    ensure!(
        case["toolLimits"]["matchesPerQuery"] == 3,
        "case.json lacks the override: {}",
        case["toolLimits"]
    );
    let doc = |requests: Vec<serde_json::Value>| {
        json!({"format": "anvil-investigation-request", "formatVersion": 1,
               "runId": opened.run_id.to_string(), "requests": requests})
    };
    let within = crate::support::rails::query(
        &opened.run_dir,
        &doc(vec![r(
            "A",
            "source.find_text",
            json!({"text": "a", "limit": 3}),
        )]),
    );
    ensure!(
        within.is_ok(),
        "a page within the case limit was refused: {:?}",
        within.err().map(|e| e.to_string())
    );
    match crate::support::rails::query(
        &opened.run_dir,
        &doc(vec![r(
            "A",
            "source.find_text",
            json!({"text": "a", "limit": 4}),
        )]),
    ) {
        Err(e) => ensure!(e.kind() == "limit_exceeded", "refused as {}", e.kind()),
        Ok(_) => return Err("a page over the case's own limit was answered".into()),
    }
    // The default case still allows the default.
    q.ok(vec![r(
        "A",
        "source.find_text",
        json!({"text": "a", "limit": 100}),
    )])?;
    for bad in ["matchesPerPage=3", "matchesPerQuery=0", "matchesPerQuery"] {
        let mut req = q.w.request("annotate-unit", UNIT_TARGET);
        req.tool_limits = vec![bad.into()];
        let before = tree(&q.w.cases());
        match anvil_bench::case::open(&req) {
            Ok(_) => return Err(format!("open accepted tool limit `{bad}`").into()),
            Err(e) => ensure!(
                e.kind() == "bad_tool_limit"
                    && e.to_string().contains(bad.split('=').next().unwrap_or(bad)),
                "unexpected refusal: {e}"
            ),
        }
        ensure!(
            tree(&q.w.cases()) == before,
            "a refused open changed the cases directory"
        );
    }
    Ok(())
}
