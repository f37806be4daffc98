//! `case query`: one investigation batch through the read-only tool router, journaled in
//! the run's `journal.jsonl`; `--schema` prints the request and result schemas.
//!
//! Invariant: the request is a regular file or stdin, bounded before it is parsed, and a
//! refused batch prints only the typed refusal — never part of an answer.

use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};

use crate::case::{CaseError, RunHandle};
use crate::cli::exit;
use crate::limits::{self, Limit};
use crate::tools::{self, OperationResult, ResultDoc, ToolError, ToolLimits};

#[derive(Debug, Args)]
pub struct QueryArgs {
    /// The run directory (`.` from inside it).
    #[arg(required_unless_present = "schema")]
    pub run: Option<PathBuf>,
    /// The anvil-investigation-request v1 document: a file, or `-` for stdin.
    #[arg(long, value_name = "FILE|-", required_unless_present = "schema")]
    pub request: Option<String>,
    /// Print the result document (or the refusal) as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print the JSON Schemas of the request and result documents and exit.
    #[arg(long)]
    pub schema: bool,
}

pub fn run(a: QueryArgs) -> u8 {
    if a.schema {
        super::print_json(&json!({
            "request": tools::request_schema(),
            "result": tools::result_schema(),
        }));
        return exit::OK;
    }
    let (Some(run), Some(source)) = (a.run, a.request) else {
        eprintln!("error: give RUN and --request, or --schema");
        return exit::USAGE;
    };
    // A run that does not open still has its request checked first (with the default
    // limits): a malformed request is refused as such wherever it is sent.
    let opened = RunHandle::open(&run);
    let limits = opened
        .as_ref()
        .map_or_else(|_| ToolLimits::default(), tools::case_limits);
    let request = match read_request(&source, limits.request_bytes) {
        Ok(v) => v,
        Err(e) => return refuse(&e, a.json),
    };
    let handle = match opened {
        Ok(handle) => handle,
        Err(e) => {
            let e = tools::check_request(&request, &limits).map_or_else(|bad| bad, |()| e.into());
            return refuse(&e, a.json);
        }
    };
    match tools::query_journaled(&handle, &request) {
        Ok(doc) if a.json => {
            super::print_json(&doc);
            exit::OK
        }
        Ok(doc) => {
            print_plain(&doc);
            exit::OK
        }
        Err(e) => refuse(&e, a.json),
    }
}

fn refuse(e: &ToolError, json: bool) -> u8 {
    let err = CaseError::Rail {
        rail: tools::QUERY_RAIL,
        kind: e.kind(),
        reason: e.to_string(),
    };
    super::fail(&err, json)
}

/// Reads the request: stdin, or a regular file (never a FIFO or device), either bounded by
/// [`Limit::ToolRequestBytes`] before anything is parsed; then the case's own
/// `requestBytes` limit applies.
fn read_request(source: &str, limit: usize) -> Result<Value, ToolError> {
    let read = if source == "-" {
        limits::read_stream_capped(std::io::stdin().lock(), Limit::ToolRequestBytes)
    } else {
        limits::read_capped(std::path::Path::new(source), Limit::ToolRequestBytes)
    };
    let bytes = read.map_err(|e| match e {
        limits::ReadError::Limit(l) => ToolError::RequestOverCap {
            input: source.to_string(),
            reason: l.to_string(),
        },
        limits::ReadError::Io(io) => ToolError::io("read", source)(io),
    })?;
    if bytes.len() > limit {
        return Err(ToolError::RequestTooLarge {
            size: bytes.len(),
            limit,
        });
    }
    crate::json_path::parse_slice(&bytes).map_err(|e| ToolError::Malformed {
        reason: if e.path == "." {
            e.message.replacen("not valid JSON", "not JSON", 1)
        } else {
            e.message
        },
        field: e.path,
    })
}

fn print_plain(doc: &ResultDoc) {
    println!("batch {} on run {}", doc.batch_hash, doc.run_id);
    for r in &doc.results {
        match &r.result {
            OperationResult::ListFiles(x) => {
                println!(
                    "{} source.list_files: {} of {}",
                    r.request_id, x.page.returned, x.page.total
                );
                for f in &x.files {
                    println!(
                        "  {} [{}] {} bytes {}",
                        f.path,
                        f.kind.as_str(),
                        f.size,
                        f.sha256
                    );
                }
            }
            OperationResult::FindText(x) => {
                print_lines(&r.request_id, "source.find_text", &x.page, &x.matches);
            }
            OperationResult::FindSymbol(x) => {
                print_lines(&r.request_id, "source.find_symbol", &x.page, &x.matches);
            }
            OperationResult::ReadContext(x) => {
                println!(
                    "{} source.read_context: {} ({})",
                    r.request_id, x.path, x.sha256
                );
                for l in &x.lines {
                    println!("  {:>5} {}", l.line, l.text);
                }
            }
            OperationResult::Describe(x) => {
                println!(
                    "{} database.describe: {} table(s)",
                    r.request_id,
                    x.tables.len()
                );
                for t in &x.tables {
                    println!(
                        "  {} at {}: {} row(s), {} column(s)",
                        t.table,
                        t.path,
                        t.row_count,
                        t.columns.len()
                    );
                }
            }
            OperationResult::Lookup(x) => {
                println!(
                    "{} database.lookup: {} of {} row(s)",
                    r.request_id, x.page.returned, x.page.total
                );
                for row in &x.rows {
                    println!(
                        "  {}#{} {}",
                        x.path,
                        row.pointer,
                        Value::Object(row.row.clone())
                    );
                }
            }
            OperationResult::FindReferences(x) => {
                println!(
                    "{} database.find_references: {} of {} row(s)",
                    r.request_id, x.page.returned, x.page.total
                );
                for row in &x.rows {
                    println!(
                        "  {}#{} {}",
                        x.path,
                        row.pointer,
                        Value::Object(row.row.clone())
                    );
                }
            }
        }
        if let Some(next) = page_of(&r.result).and_then(|p| p.next_offset) {
            println!("  (more: offset {next})");
        }
    }
}

fn page_of(r: &OperationResult) -> Option<tools::PageInfo> {
    match r {
        OperationResult::ListFiles(x) => Some(x.page),
        OperationResult::FindText(x) => Some(x.page),
        OperationResult::FindSymbol(x) => Some(x.page),
        OperationResult::Lookup(x) => Some(x.page),
        OperationResult::FindReferences(x) => Some(x.page),
        _ => None,
    }
}

/// One page of line matches, as `find_text` and `find_symbol` both return.
fn print_lines(id: &str, op: &str, page: &tools::PageInfo, matches: &[tools::LineMatch]) {
    println!("{id} {op}: {} of {} line(s)", page.returned, page.total);
    for m in matches {
        println!("  {}:{}: {}", m.path, m.line, m.text);
    }
}
