//! The investigation tool router (R-TOOL-1..9): read-only, scoped with the evidence path
//! rules, strict whole-batch validation and preflight, typed equality, stable pagination,
//! provenance on every match, and refusal of runs that may no longer be investigated.
//! Trials by area live in `tools/` (strict documents, batch preflight and pages,
//! provenance and refusals, limits); the shared world and helpers are here.

mod batch;
mod limits;
mod provenance;
mod strict;

use std::path::{Path, PathBuf};

use anvil_bench::tools::{self, OperationResult, ResultDoc, ToolError, ToolLimits};
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::support::{World, failed, tree};
use crate::{Check, ensure};

pub fn checks() -> Vec<Check> {
    let mut all = vec![
        // R-TOOL-1
        Check {
            name: "tools::answered_and_refused_batches_leave_repository_and_run_byte_identical",
            rules: &["R-TOOL-1"],
            run: read_only,
        },
        // R-TOOL-2
        Check {
            name: "tools::an_absolute_path_is_refused_even_inside_the_repository",
            rules: &["R-TOOL-2"],
            run: || {
                path_refused(
                    |w| {
                        w.repo()
                            .join("src/payments/service.py")
                            .display()
                            .to_string()
                    },
                    "absolute_path",
                )
            },
        },
        Check {
            name: "tools::a_dotdot_escape_is_refused",
            rules: &["R-TOOL-2"],
            run: || path_refused(|_| "src/payments/../../air.json".into(), "path_escape"),
        },
        Check {
            name: "tools::a_symlink_leaving_the_repository_is_refused_and_never_listed",
            rules: &["R-TOOL-2"],
            run: symlink_escape,
        },
        Check {
            name: "tools::a_file_outside_every_inspect_scope_is_refused_and_never_searched",
            rules: &["R-TOOL-2"],
            run: out_of_scope,
        },
        // R-TOOL-3
        Check {
            name: "tools::the_allowlist_is_exactly_seven_operations_and_others_reject_the_batch",
            rules: &["R-TOOL-3"],
            run: strict::allowlist,
        },
        Check {
            name: "tools::an_unknown_field_anywhere_rejects_the_batch",
            rules: &["R-TOOL-3"],
            run: strict::unknown_fields,
        },
        Check {
            name: "tools::invalid_arguments_reject_the_batch",
            rules: &["R-TOOL-3"],
            run: strict::invalid_arguments,
        },
        Check {
            name: "tools::a_duplicate_request_id_rejects_the_batch",
            rules: &["R-TOOL-3"],
            run: strict::duplicate_ids,
        },
        Check {
            name: "tools::a_request_id_is_1_to_64_safe_characters_and_any_other_rejects_the_batch",
            rules: &["R-TOOL-3"],
            run: strict::request_ids,
        },
        Check {
            name: "tools::schemas_accept_what_the_router_accepts_and_describe_its_answers",
            rules: &["R-TOOL-3", "R-TOOL-7"],
            run: strict::schemas,
        },
        // R-TOOL-4
        Check {
            name: "tools::one_bad_request_refuses_the_whole_batch_with_nothing_partial",
            rules: &["R-TOOL-4"],
            run: batch::whole_batch,
        },
        Check {
            name: "tools::a_binary_or_non_utf8_file_refuses_the_batch",
            rules: &["R-TOOL-4"],
            run: batch::encodings,
        },
        Check {
            name: "tools::a_range_outside_the_file_refuses_the_batch",
            rules: &["R-TOOL-4"],
            run: batch::ranges,
        },
        Check {
            name: "tools::unknown_tables_and_columns_refuse_the_batch",
            rules: &["R-TOOL-4"],
            run: batch::columns,
        },
        Check {
            name: "tools::only_snapshots_declared_at_open_are_tables_and_a_changed_one_is_refused",
            rules: &["R-TOOL-2", "R-TOOL-7"],
            run: batch::declared_snapshots,
        },
        Check {
            name: "tools::inconsistent_snapshots_are_refused",
            rules: &["R-TOOL-4", "R-TOOL-8"],
            run: batch::inconsistent_snapshots,
        },
        // R-TOOL-6
        Check {
            name: "tools::pages_concatenate_to_the_whole_answer_in_file_then_line_order",
            rules: &["R-TOOL-6"],
            run: batch::pagination,
        },
        // R-TOOL-7
        Check {
            name: "tools::every_match_carries_its_file_sha256_and_1_based_line",
            rules: &["R-TOOL-7"],
            run: provenance::provenance_source,
        },
        Check {
            name: "tools::rows_carry_their_json_pointer_and_batches_their_hashes",
            rules: &["R-TOOL-7"],
            run: provenance::provenance_rows,
        },
        Check {
            name: "tools::case_query_answers_and_journals_every_call",
            rules: &["R-TOOL-4", "R-TOOL-7", "R-RAIL-4"],
            run: provenance::cli,
        },
        // R-TOOL-8
        Check {
            name: "tools::true_1_string_1_and_1_0_are_different_values",
            rules: &["R-TOOL-8"],
            run: provenance::typed_equality,
        },
        Check {
            name: "tools::a_row_without_the_column_never_matches_it",
            rules: &["R-TOOL-8"],
            run: provenance::sparse_rows,
        },
        Check {
            name: "tools::sql_like_text_is_compared_as_data",
            rules: &["R-TOOL-8", "R-TOOL-1"],
            run: provenance::sql_like,
        },
        // R-TOOL-9
        Check {
            name: "tools::a_batch_for_another_run_is_refused",
            rules: &["R-TOOL-9"],
            run: provenance::other_run,
        },
        Check {
            name: "tools::a_finalized_or_closed_run_refuses_queries",
            rules: &["R-TOOL-9"],
            run: provenance::finished_runs,
        },
        Check {
            name: "tools::a_stale_run_refuses_queries",
            rules: &["R-TOOL-9"],
            run: provenance::stale_run,
        },
    ];
    all.extend(limits::checks());
    all
}

/// The payments snapshot: `id` holds 1, "1", 1.0 and true on four rows.
pub const PAYMENTS: &str = r#"{"format": "anvil-database-snapshot", "formatVersion": 1,
 "table": "payments",
 "columns": [{"name": "id", "type": "json"}, {"name": "status", "type": "string"},
             {"name": "parent", "type": "json"}, {"name": "note", "type": "string"}],
 "rows": [
  {"id": 1, "status": "captured", "parent": null, "note": "plain"},
  {"id": "1", "status": "pending", "parent": 1, "note": "1 OR 1=1"},
  {"id": 1.0, "status": "failed", "parent": "1", "note": "'; DROP TABLE payments; --"},
  {"id": true, "status": "voided", "parent": true, "note": "SELECT * FROM payments"}
 ],
 "coverage": "partial"}
"#;

/// A raw-rows snapshot: no declared table, coverage unknown.
pub const REFUNDS: &str = r#"[{"refund": 7, "payment": 1}, {"refund": 8, "payment": "1"}]"#;

/// A world with snapshots and an open unit run.
pub struct Q {
    pub w: World,
    pub run: PathBuf,
    pub run_id: String,
}

pub fn world() -> Result<Q, Failed> {
    world_with(&[])
}

/// The payments world with two snapshots, plus `extra` (repo-relative path, text) files
/// written before the case is opened, so snapshots among them are declared.
pub fn world_with(extra: &[(&str, &str)]) -> Result<Q, Failed> {
    let w = World::new();
    let fixtures = w.repo().join("fixtures");
    std::fs::create_dir_all(&fixtures).unwrap();
    std::fs::write(fixtures.join("payments.snapshot.json"), PAYMENTS).unwrap();
    std::fs::write(fixtures.join("refunds.snapshot.json"), REFUNDS).unwrap();
    for (path, text) in extra {
        std::fs::write(w.repo().join(path), text).unwrap();
    }
    let opened = w.open_unit()?;
    Ok(Q {
        w,
        run: opened.run_dir,
        run_id: opened.run_id.to_string(),
    })
}

pub fn r(id: &str, op: &str, args: Value) -> Value {
    json!({"requestId": id, "operation": op, "arguments": args})
}

impl Q {
    pub fn doc(&self, requests: Vec<Value>) -> Value {
        json!({"format": "anvil-investigation-request", "formatVersion": 1,
               "runId": self.run_id, "requests": requests})
    }

    pub fn ok(&self, requests: Vec<Value>) -> Result<ResultDoc, Failed> {
        crate::support::rails::query(&self.run, &self.doc(requests))
            .map_err(|e| failed(format!("{}: {e}", e.kind())))
    }

    pub fn refused(&self, requests: Vec<Value>, kind: &str) -> Result<ToolError, Failed> {
        refused_doc(&self.run, &self.doc(requests), kind, &ToolLimits::default())
    }
}

/// The batch is refused with `kind`, and the message carries no text of the sources.
pub fn refused_doc(
    run: &Path,
    doc: &Value,
    kind: &str,
    limits: &ToolLimits,
) -> Result<ToolError, Failed> {
    match crate::support::rails::query_with_limits(run, doc, limits) {
        Ok(d) => Err(format!(
            "expected a `{kind}` refusal, got {} result(s)",
            d.results.len()
        )
        .into()),
        Err(e) if e.kind() == kind => {
            let shown = e.to_string();
            for secret in ["timedelta(seconds", "DROP TABLE", "captured", "\u{0}"] {
                ensure!(
                    !shown.contains(secret),
                    "the refusal leaks source text: {shown}"
                );
            }
            ensure!(
                tools::ERROR_KINDS.contains(&e.kind()),
                "untyped code {}",
                e.kind()
            );
            Ok(e)
        }
        Err(e) => Err(format!("expected a `{kind}` refusal, got `{}`: {e}", e.kind()).into()),
    }
}

pub fn read_ctx(path: &str, start: u32, end: u32) -> Value {
    r(
        "Q1",
        "source.read_context",
        json!({"path": path, "startLine": start, "endLine": end}),
    )
}

fn path_refused(path: impl FnOnce(&World) -> String, kind: &str) -> Result<(), Failed> {
    let q = world()?;
    let path = path(&q.w);
    q.refused(vec![read_ctx(&path, 1, 1)], kind)?;
    q.refused(
        vec![r(
            "Q1",
            "source.find_text",
            json!({"paths": [path], "text": "a"}),
        )],
        kind,
    )?;
    Ok(())
}

fn list_paths(doc: &ResultDoc) -> Vec<String> {
    doc.results
        .iter()
        .flat_map(|r| match &r.result {
            OperationResult::ListFiles(l) => l.files.iter().map(|f| f.path.clone()).collect(),
            OperationResult::FindText(t) => {
                t.checked_files.iter().map(|f| f.path.clone()).collect()
            }
            _ => vec![],
        })
        .collect()
}

fn symlink_escape() -> Result<(), Failed> {
    let q = world()?;
    std::os::unix::fs::symlink(q.w.air(), q.w.repo().join("src/payments/leak.py")).unwrap();
    std::os::unix::fs::symlink(q.w.root(), q.w.repo().join("docs/outside")).unwrap();
    q.refused(
        vec![read_ctx("src/payments/leak.py", 1, 1)],
        "symlink_escape",
    )?;
    q.refused(
        vec![read_ctx("docs/outside/air.json", 1, 1)],
        "symlink_escape",
    )?;
    let doc = q.ok(vec![
        r("L", "source.list_files", json!({"limit": 50})),
        r(
            "T",
            "source.find_text",
            json!({"text": "operations", "limit": 50}),
        ),
    ])?;
    let seen = list_paths(&doc);
    ensure!(
        !seen
            .iter()
            .any(|p| p.contains("leak") || p.contains("outside")),
        "a link leaving the repository was listed or searched: {seen:?}"
    );
    Ok(())
}

fn out_of_scope() -> Result<(), Failed> {
    let q = world()?;
    std::fs::write(q.w.repo().join("LICENSE"), "capture_timeout\n").unwrap();
    q.refused(vec![read_ctx("LICENSE", 1, 1)], "out_of_scope")?;
    let doc = q.ok(vec![
        r("L", "source.list_files", json!({"limit": 50})),
        r(
            "T",
            "source.find_text",
            json!({"text": "capture_timeout", "limit": 50}),
        ),
    ])?;
    let seen = list_paths(&doc);
    ensure!(
        seen.contains(&"src/payments/service.py".to_string()),
        "scoped file missing: {seen:?}"
    );
    ensure!(
        !seen.iter().any(|p| p == "LICENSE"),
        "an out-of-scope file was read: {seen:?}"
    );
    Ok(())
}

fn read_only() -> Result<(), Failed> {
    let q = world()?;
    let repo_before = tree(&q.w.repo());
    let run_before = tree(&q.run);
    q.ok(vec![
        r("A", "source.list_files", json!({})),
        r("B", "source.find_text", json!({"text": "capture", "caseSensitive": false})),
        r("C", "source.find_symbol", json!({"symbol": "capture_window"})),
        read_ctx("src/payments/service.py", 30, 40),
        r("D", "database.describe", json!({})),
        r("E", "database.lookup", json!({"table": "payments", "filters": {"note": "'; DROP TABLE payments; --"}})),
        r("F", "database.find_references", json!({"table": "fixtures/refunds.snapshot.json", "searchColumns": ["payment"], "value": 1})),
    ])?;
    q.refused(
        vec![
            read_ctx("src/payments/service.py", 1, 1),
            read_ctx("missing.py", 1, 1),
        ],
        "duplicate_request_id",
    )?;
    q.refused(
        vec![read_ctx("src/payments/missing.py", 1, 1)],
        "missing_file",
    )?;
    ensure!(
        tree(&q.w.repo()) == repo_before,
        "a batch changed the repository"
    );
    ensure!(
        tree(&q.run) == run_before,
        "the library query wrote into the run"
    );
    Ok(())
}
