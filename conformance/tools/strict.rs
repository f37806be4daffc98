//! R-TOOL-3: the allowlist and strict request documents — an unknown operation or field,
//! an invalid argument or a repeated request id refuses the whole batch; the schemas agree.

use anvil_bench::tools::{self, ToolLimits};
use libtest_mimic::Failed;
use serde_json::{Value, json};

use super::{r, read_ctx, refused_doc, world};
use crate::ensure;
use crate::support::{failed, msg};

pub(super) fn allowlist() -> Result<(), Failed> {
    let names: Vec<&str> = tools::operations().iter().map(|o| o.name).collect();
    ensure!(
        names == tools::OPERATIONS,
        "operations() disagrees with the allowlist: {names:?}"
    );
    ensure!(
        names.len() == 7,
        "the allowlist is not the seven seed operations: {names:?}"
    );
    for o in tools::operations() {
        ensure!(
            o.arguments_schema["additionalProperties"] == false,
            "{} admits unknown arguments",
            o.name
        );
    }
    let q = world()?;
    for op in [
        "shell.exec",
        "source.write_file",
        "database.sql",
        "SOURCE.FIND_TEXT",
        "",
    ] {
        q.refused(
            vec![
                read_ctx("src/payments/service.py", 1, 1),
                r("Q2", op, json!({"text": "x"})),
            ],
            "unknown_operation",
        )?;
    }
    Ok(())
}

pub(super) fn unknown_fields() -> Result<(), Failed> {
    let q = world()?;
    let good = read_ctx("src/payments/service.py", 1, 1);
    let mut top = q.doc(vec![good.clone()]);
    top["debug"] = json!(true);
    refused_doc(&q.run, &top, "unknown_field", &ToolLimits::default())?;
    let mut item = good.clone();
    item["hypothesisId"] = json!("H1");
    q.refused(vec![item], "unknown_field")?;
    let e = q.refused(
        vec![
            good,
            r(
                "Q2",
                "source.find_text",
                json!({"text": "a", "regex": true}),
            ),
        ],
        "unknown_field",
    )?;
    ensure!(
        e.to_string().contains("regex"),
        "the refusal does not name the field: {e}"
    );
    Ok(())
}

pub(super) fn invalid_arguments() -> Result<(), Failed> {
    let q = world()?;
    let cases = [
        r("Q", "source.find_text", json!({"text": ""})),
        r("Q", "source.find_text", json!({"text": "a\nb"})),
        r("Q", "source.find_text", json!({"text": 7})),
        r("Q", "source.find_text", json!({"text": "a", "limit": 0})),
        r("Q", "source.find_text", json!({"text": "a", "offset": -1})),
        r("Q", "source.find_text", json!({"text": "a", "paths": []})),
        r(
            "Q",
            "source.find_symbol",
            json!({"symbol": "capture timeout"}),
        ),
        r("Q", "source.find_symbol", json!({"symbol": "9lives"})),
        r(
            "Q",
            "source.read_context",
            json!({"path": "src/payments/service.py", "startLine": 0, "endLine": 3}),
        ),
        r(
            "Q",
            "source.read_context",
            json!({"path": "src/payments/service.py", "startLine": 9, "endLine": 3}),
        ),
        r("Q", "source.list_files", json!({"glob": "src/[a"})),
        r(
            "Q",
            "database.lookup",
            json!({"table": "payments", "filters": {}}),
        ),
        r(
            "Q",
            "database.lookup",
            json!({"table": "payments", "filters": {"id": [1]}}),
        ),
        r(
            "Q",
            "database.find_references",
            json!({"table": "payments", "searchColumns": [], "value": 1}),
        ),
        r(
            "Q",
            "database.find_references",
            json!({"table": "payments", "searchColumns": ["id"], "value": {"$gt": 0}}),
        ),
        r("Q", "source.read_context", json!("src/payments/service.py")),
        // Regression (found by tests/tool_requests.rs): serde reads a struct from an array,
        // so `[]` once passed as empty arguments.
        r("Q", "database.describe", json!([])),
    ];
    for bad in cases {
        let shown = bad.to_string();
        q.refused(
            vec![read_ctx("src/payments/service.py", 1, 1), bad],
            "invalid_arguments",
        )
        .map_err(|e| failed(format!("{shown}: {}", msg(&e))))?;
    }
    // The same for a request given as an array of its fields.
    q.refused(
        vec![json!(["Q1", "source.list_files", {}])],
        "malformed_request",
    )?;
    Ok(())
}

pub(super) fn duplicate_ids() -> Result<(), Failed> {
    let q = world()?;
    q.refused(
        vec![
            read_ctx("src/payments/service.py", 1, 1),
            r("Q2", "source.list_files", json!({})),
            read_ctx("src/payments/gateway.py", 1, 1),
        ],
        "duplicate_request_id",
    )?;
    // Ids are exact strings: two that differ only in letter case are two requests.
    let doc = q.ok(vec![
        r("q", "source.list_files", json!({})),
        r("Q", "source.list_files", json!({})),
    ])?;
    ensure!(
        doc.results.len() == 2,
        "ids `q` and `Q` were not both answered"
    );
    Ok(())
}

/// A request id is 1 to 64 of `A-Z a-z 0-9 _ . -` (it names the request in the result and
/// in the journal); the longest is answered, and one byte more, an empty id or any other
/// character refuses the whole batch, the good request beside it included.
pub(super) fn request_ids() -> Result<(), Failed> {
    let q = world()?;
    let longest = "a.B_9-".repeat(11)[..64].to_string();
    let doc = q.ok(vec![r(&longest, "source.list_files", json!({}))])?;
    ensure!(
        doc.results.len() == 1 && doc.results[0].request_id == longest,
        "the 64-byte id was not answered under its own name"
    );
    let mut over = longest.clone();
    over.push('z');
    for bad in [over.as_str(), "", "a b", "a/b", "é", "a\u{0}"] {
        let e = q
            .refused(
                vec![
                    read_ctx("src/payments/service.py", 1, 1),
                    r(bad, "source.list_files", json!({})),
                ],
                "malformed_request",
            )
            .map_err(|e| failed(format!("id {bad:?}: {}", msg(&e))))?;
        ensure!(
            e.to_string().contains("requests[1].requestId"),
            "the refusal of id {bad:?} does not name its field: {e}"
        );
    }
    Ok(())
}

pub(super) fn schemas() -> Result<(), Failed> {
    let q = world()?;
    let request = tools::request_schema();
    let result = tools::result_schema();
    let valid = |schema: &Value, doc: &Value| {
        jsonschema::validator_for(schema)
            .expect("schema compiles")
            .is_valid(doc)
    };
    let doc = q.doc(vec![
        r("A", "source.list_files", json!({"glob": "src/**"})),
        r(
            "B",
            "source.find_text",
            json!({"text": "capture", "caseSensitive": true, "offset": 0, "limit": 5}),
        ),
        r(
            "C",
            "database.lookup",
            json!({"table": "payments", "filters": {"id": 1}}),
        ),
    ]);
    ensure!(
        valid(&request, &doc),
        "an accepted request is invalid against the request schema"
    );
    let answer = crate::support::rails::query(&q.run, &doc).map_err(failed)?;
    let answer = serde_json::to_value(&answer).unwrap();
    ensure!(
        valid(&result, &answer),
        "the result is invalid against the result schema"
    );
    let mut unknown = doc.clone();
    unknown["requests"][1]["arguments"]["regex"] = json!(true);
    ensure!(
        !valid(&request, &unknown),
        "the request schema admits an unknown argument"
    );
    let mut op = doc.clone();
    op["requests"][0]["operation"] = json!("shell.exec");
    ensure!(
        !valid(&request, &op),
        "the request schema admits an unknown operation"
    );
    let out = q.w.cli(&["case", "query", "--schema"]);
    let printed: Value = serde_json::from_slice(&out.stdout).map_err(failed)?;
    ensure!(
        printed["request"] == request && printed["result"] == result,
        "--schema prints other schemas"
    );
    Ok(())
}
