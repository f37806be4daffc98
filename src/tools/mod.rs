//! The read-only investigation tool router (DESIGN §9, seed investigation-tools-v1): strict,
//! versioned request batches of allowlisted source and snapshot queries over a run's
//! inspect scopes, answered with typed, provenance-carrying results.
//!
//! Invariant: a batch is validated whole (no I/O), the run is checked (this run, not
//! stale, not finalized or closed), and every request is preflighted — paths through the
//! evidence rules, scopes, encodings, ranges, tables, columns and every limit — before any
//! request is answered; a refusal anywhere refuses the batch and returns nothing partial.
//! The router never writes to the repository: files are only opened for reading, and
//! [`query_journaled`] writes only the run's own journal.
//!
//! The database tables are the snapshots case.json declares (`databaseSnapshots`, found at
//! open as the files inside an inspect scope named `*.snapshot.json` ([`SNAPSHOT_SUFFIX`])
//! unless named with `--snapshot`), holding `anvil-database-snapshot` v1 or a bare array of
//! row objects (see `database.rs`). Limits are [`ToolLimits::default`] (the seed's) with the
//! case's `toolLimits` overrides ([`case_limits`]); [`query_with_limits`] takes others.

mod args;
mod database;
mod error;
mod files;
mod request;
mod result;
mod scan;
mod schema;
mod source;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use database::{SNAPSHOT_FORMAT, SNAPSHOT_FORMAT_VERSION};
pub use error::{ERROR_KINDS, ToolError};
pub use request::{OPERATIONS, REQUEST_FORMAT, REQUEST_FORMAT_VERSION};
pub use result::*;
pub use schema::{OperationInfo, operations, request_schema, result_schema};
// The limits are the case's (case.json records them), so they live in `case`.
pub use crate::case::ToolLimits;
// Which snapshots a case declares is the case's, decided at open.
pub use crate::case::snapshots::SNAPSHOT_SUFFIX;

use crate::case::evidence::walk::ScopedFile;
use crate::case::lifecycle::State;
use crate::case::rail::with_rail;
use crate::case::{CaseError, RunHandle};
use database::Snapshot;
use files::{Repo, Selection};
use request::{Batch, Item, Op};

/// The rail name under which `case query` calls are journaled.
pub const QUERY_RAIL: &str = "query";

/// Validates, preflights and answers a whole batch with the case's limits. Read-only.
///
/// # Errors
///
/// As [`query_with_limits`], with the case's own limits.
pub fn query(handle: &RunHandle, request: &Value) -> Result<ResultDoc, ToolError> {
    query_with_limits(handle, request, &case_limits(handle))
}

/// The limits of the case: the defaults with the case's overrides (the defaults when the
/// overrides do not apply; case open refuses those, so only a hand-edited case has them).
#[must_use]
pub fn case_limits(handle: &RunHandle) -> ToolLimits {
    ToolLimits::default()
        .with_overrides(&handle.doc().tool_limits)
        .unwrap_or_default()
}

/// Validates a request batch against `limits` without reading anything: what a query
/// refuses on the request alone, before it looks at the run.
///
/// # Errors
///
/// `ToolError` for a request refused on its own (malformed, unknown field or operation,
/// over a limit, duplicate id, empty or too large a batch).
pub fn check_request(request: &Value, limits: &ToolLimits) -> Result<(), ToolError> {
    request::parse(request, limits).map(drop)
}

/// [`query`] with explicit limits.
///
/// # Errors
///
/// `ToolError` for a request refused on its own (see [`check_request`]),
/// `ToolError::WrongRun` when it names another run, `ToolError::RunNotQueryable` when the
/// run is finalized or closed, a run error when the run is stale or its lifecycle cannot
/// be read, a preflight or answer refusal for a path, file, table or column (out of
/// scope, missing, binary, too large, unknown…), and `ToolError::ResultTooLarge` when the
/// answer is over `limits.result_bytes`.
pub fn query_with_limits(
    handle: &RunHandle,
    request: &Value,
    limits: &ToolLimits,
) -> Result<ResultDoc, ToolError> {
    let batch = request::parse(request, limits)?;
    let actual = handle.doc().identity.run_id.to_string();
    if batch.run_id != actual {
        return Err(ToolError::WrongRun {
            requested: batch.run_id.chars().take(64).collect(),
            actual,
        });
    }
    let state = handle.lifecycle()?.state;
    if matches!(state, State::Finalized | State::Closed) {
        return Err(ToolError::RunNotQueryable {
            run: actual,
            state: state.as_str(),
        });
    }
    let run = handle.current()?;
    let repo = Repo::new(
        Path::new(&run.doc.inputs.repository),
        &run.doc.policy.inspect_scopes,
    )?;
    let prepared = preflight(&repo, &batch, &run.doc.database_snapshots, limits)?;
    let mut results = Vec::with_capacity(batch.items.len());
    for (index, (item, plan)) in batch.items.iter().zip(&prepared.plans).enumerate() {
        results.push(RequestResult {
            request_id: item.id.clone(),
            request_hash: item.hash.clone(),
            result: answer(index, item, plan, &prepared)?,
        });
    }
    let doc = ResultDoc {
        format: RESULT_FORMAT.into(),
        format_version: RESULT_FORMAT_VERSION,
        run_id: actual,
        case_hash: run.case_hash.clone(),
        source_revision: run.doc.identity.source_revision.clone(),
        batch_hash: batch.hash,
        limits: *limits,
        results,
    };
    let size = serde_json::to_string(&doc).map_or(0, |s| s.len());
    if size > limits.result_bytes {
        return Err(ToolError::ResultTooLarge {
            size,
            limit: limits.result_bytes,
        });
    }
    Ok(doc)
}

/// What `journal.jsonl` records of a query: hashes, not the (possibly large) result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryRecord {
    pub batch_hash: String,
    pub result_hash: String,
    pub requests: usize,
}

/// [`query`] as a rail: under the run lock, appended to the run's `journal.jsonl` (rail
/// `query`) whether it answers or refuses.
///
/// # Errors
///
/// As [`query`]; also a `ToolError` from the rail when the run lock cannot be taken or the
/// journal cannot be written, and `ToolError::Run` (kind `io`) when the rail returned
/// without running the query.
pub fn query_journaled(handle: &RunHandle, request: &Value) -> Result<ResultDoc, ToolError> {
    let mut outcome = None;
    let rail = with_rail(handle.dir(), QUERY_RAIL, None, request, |_| {
        let answered = query(handle, request);
        let record = match &answered {
            Ok(doc) => Ok(QueryRecord {
                batch_hash: doc.batch_hash.clone(),
                result_hash: crate::canon::canonical_hash(doc),
                requests: doc.results.len(),
            }),
            Err(e) => Err(CaseError::Rail {
                rail: QUERY_RAIL,
                kind: e.kind(),
                reason: e.to_string(),
            }),
        };
        outcome = Some(answered);
        record
    });
    match (rail, outcome) {
        (Ok(_), Some(Ok(doc))) => Ok(doc),
        (_, Some(Err(e))) => Err(e),
        (Err(e), _) => Err(e.into()),
        (Ok(_), _) => Err(ToolError::Run {
            kind: "io",
            message: "the query was not executed".into(),
        }),
    }
}

/// How each request is answered, fixed by preflight.
enum Plan {
    /// A listing page: its files, already counted.
    List(PageInfo, Vec<String>),
    /// The files a search or read uses, in order.
    Files(Vec<String>),
    Database,
}

struct Prepared {
    plans: Vec<Plan>,
    read: scan::Read,
    snapshots: Vec<Snapshot>,
    /// Each search's page, by request index.
    pages: Vec<Option<(PageInfo, Vec<LineMatch>)>>,
}

/// How `item` is answered, adding the files it reads to `selection`. The repository is
/// walked at most once per batch: `walked` keeps the first walk.
fn plan_for(
    repo: &Repo,
    item: &Item,
    walked: &mut Option<Vec<ScopedFile>>,
    selection: &mut Selection,
) -> Result<Plan, ToolError> {
    let mut walk = || -> Result<Vec<ScopedFile>, ToolError> {
        if walked.is_none() {
            *walked = Some(repo.walk()?);
        }
        Ok(walked.clone().unwrap_or_default())
    };
    let id = item.id.as_str();
    Ok(match &item.op {
        Op::ListFiles { glob, page } => {
            let all = walk()?;
            let matched: Vec<&ScopedFile> = all
                .iter()
                .filter(|f| glob.as_ref().is_none_or(|(_, m)| m.is_match(&f.rel)))
                .collect();
            let (info, range) = PageInfo::of(matched.len(), page.offset, page.limit);
            let page_files = &matched[range];
            for f in page_files {
                selection.add(id, f);
            }
            Plan::List(info, page_files.iter().map(|f| f.rel.clone()).collect())
        }
        Op::FindText { paths, .. } | Op::FindSymbol { paths, .. } => {
            let files = match paths {
                Some(paths) => paths
                    .iter()
                    .map(|p| repo.resolve(id, p))
                    .collect::<Result<Vec<_>, _>>()?,
                None => walk()?,
            };
            let mut rels: Vec<String> = Vec::with_capacity(files.len());
            let mut seen = BTreeSet::new();
            for f in &files {
                selection.add(id, f);
                // Two names for one file (a link inside the repository) search it once.
                if seen.insert(f.rel.as_str()) {
                    rels.push(f.rel.clone());
                }
            }
            Plan::Files(rels)
        }
        Op::ReadContext { path, .. } => {
            let f = repo.resolve(id, path)?;
            selection.add(id, &f);
            Plan::Files(vec![f.rel])
        }
        _ => Plan::Database,
    })
}

/// Every I/O the batch needs, and every check, before any request is answered.
fn preflight(
    repo: &Repo,
    batch: &Batch,
    declared: &[crate::case::doc::DeclaredSnapshot],
    limits: &ToolLimits,
) -> Result<Prepared, ToolError> {
    let mut walked: Option<Vec<ScopedFile>> = None;
    let mut selection = Selection::default();
    let mut plans = Vec::with_capacity(batch.items.len());
    for item in &batch.items {
        plans.push(plan_for(repo, item, &mut walked, &mut selection)?);
    }
    // Any database request reads every declared snapshot: a table is found by its name.
    let first_db = batch.items.iter().find(|i| i.op.is_database());
    // The tables are exactly the snapshots case.json declares, as they were at open.
    let mut whole = Vec::new();
    if let Some(item) = first_db {
        for declared in declared {
            let f = repo.resolve(&item.id, &declared.path)?;
            selection.add(&item.id, &f);
            whole.push(f.rel);
        }
    }
    let (matchers, wants) = wants(batch, &plans, &whole);
    let read = scan::read(selection, &wants, &matchers, limits)?;
    let mut snapshots = Vec::new();
    if let Some(item) = first_db {
        for declared in declared {
            let Some(file) = read.whole.get(&declared.path) else {
                continue;
            };
            if file.sha256 != declared.sha256 {
                return Err(ToolError::InvalidSnapshot {
                    path: declared.path.clone(),
                    reason: "its bytes changed since the case was opened".into(),
                });
            }
            snapshots.push(database::parse(&item.id, file, limits)?);
        }
    }
    let mut prepared = Prepared {
        plans,
        read,
        snapshots,
        pages: Vec::new(),
    };
    for (item, plan) in batch.items.iter().zip(&prepared.plans) {
        check(item, plan, &prepared)?;
    }
    // The pages last, once every check has passed: each reads the files holding its
    // matches a second time, refused if they changed since the first.
    for ((index, item), matcher) in batch.items.iter().enumerate().zip(&matchers) {
        let page = match (&item.op, &prepared.plans[index], matcher) {
            (
                Op::FindText { page, .. } | Op::FindSymbol { page, .. },
                Plan::Files(rels),
                Some(matcher),
            ) => {
                let read = &prepared.read;
                Some(read.page(&item.id, index, rels, matcher, *page, limits)?)
            }
            _ => None,
        };
        prepared.pages.push(page);
    }
    Ok(prepared)
}

/// What each request wants of each file it reads, and each search's matcher (by request
/// index); `whole` are the snapshots, kept whole.
fn wants(
    batch: &Batch,
    plans: &[Plan],
    whole: &[String],
) -> (Vec<Option<source::Matcher>>, BTreeMap<String, scan::Wants>) {
    let mut wants: BTreeMap<String, scan::Wants> = BTreeMap::new();
    let mut matchers = Vec::with_capacity(plans.len());
    for (index, (item, plan)) in batch.items.iter().zip(plans).enumerate() {
        let matcher = match &item.op {
            Op::FindText {
                text,
                case_sensitive,
                ..
            } => Some(source::Matcher::text(text, *case_sensitive)),
            Op::FindSymbol { symbol, .. } => Some(source::Matcher::symbol(symbol)),
            _ => None,
        };
        if let Plan::Files(rels) = plan {
            for rel in rels {
                let want = wants.entry(rel.clone()).or_default();
                match &item.op {
                    Op::ReadContext { start, end, .. } => {
                        want.contexts.push((index, *start, *end));
                    }
                    _ if matcher.is_some() => want.searches.push(index),
                    _ => {}
                }
            }
        }
        matchers.push(matcher);
    }
    for rel in whole {
        wants.entry(rel.clone()).or_default().whole = true;
    }
    (matchers, wants)
}

/// The per-request checks that need the bytes: encodings, ranges, tables and columns.
fn check(item: &Item, plan: &Plan, p: &Prepared) -> Result<(), ToolError> {
    let id = item.id.as_str();
    match (&item.op, plan) {
        (Op::FindText { .. } | Op::FindSymbol { .. }, Plan::Files(rels)) => {
            p.read.check_text(id, rels)?;
        }
        (Op::ReadContext { start, end, .. }, Plan::Files(rels)) => {
            for rel in rels {
                p.read.check_context(id, rel, *start, *end)?;
            }
        }
        (Op::Describe { table: Some(t) }, _) => {
            database::find(id, &p.snapshots, t)?;
        }
        (
            Op::Lookup {
                table,
                filters,
                projection,
                ..
            },
            _,
        ) => {
            let snap = database::find(id, &p.snapshots, table)?;
            database::check_columns(id, snap, "filters", filters.iter().map(|(c, _)| c))?;
            database::check_columns(id, snap, "projection", projection.iter().flatten())?;
        }
        (
            Op::FindReferences {
                table,
                columns,
                projection,
                ..
            },
            _,
        ) => {
            let snap = database::find(id, &p.snapshots, table)?;
            database::check_columns(id, snap, "searchColumns", columns)?;
            database::check_columns(id, snap, "projection", projection.iter().flatten())?;
        }
        _ => {}
    }
    Ok(())
}

/// A listing page: each of `rels` as preflight read it.
fn listing(
    glob: Option<String>,
    page: PageInfo,
    rels: &[String],
    read: &scan::Read,
) -> ListFilesResult {
    ListFilesResult {
        glob,
        page,
        files: rels
            .iter()
            .filter_map(|r| read.files.get(r))
            .map(|f| FileEntry {
                path: f.streamed.file.rel.clone(),
                kind: f.streamed.file.kind,
                size: f.streamed.file.size,
                sha256: f.streamed.sha256.clone(),
            })
            .collect(),
    }
}

/// Answers one preflighted request (the `index`th) from what preflight read.
fn answer(
    index: usize,
    item: &Item,
    plan: &Plan,
    p: &Prepared,
) -> Result<OperationResult, ToolError> {
    let id = item.id.as_str();
    let page = || {
        p.pages
            .get(index)
            .cloned()
            .flatten()
            .ok_or_else(|| ToolError::Run {
                kind: "io",
                message: "a search's page was not prepared".into(),
            })
    };
    Ok(match (&item.op, plan) {
        (Op::ListFiles { glob, .. }, Plan::List(info, rels)) => OperationResult::ListFiles(
            listing(glob.as_ref().map(|(g, _)| g.clone()), *info, rels, &p.read),
        ),
        (Op::FindText { case_sensitive, .. }, Plan::Files(rels)) => {
            let (page, matches) = page()?;
            OperationResult::FindText(FindTextResult {
                case_sensitive: *case_sensitive,
                checked_files: p.read.checked(rels),
                page,
                matches,
                note: source::FIND_TEXT_NOTE.into(),
            })
        }
        (Op::FindSymbol { symbol, .. }, Plan::Files(rels)) => {
            let (page, matches) = page()?;
            OperationResult::FindSymbol(FindSymbolResult {
                symbol: symbol.clone(),
                checked_files: p.read.checked(rels),
                page,
                matches,
                note: source::FIND_SYMBOL_NOTE.into(),
            })
        }
        (Op::ReadContext { start, end, .. }, Plan::Files(rels)) => {
            let rel = rels.first().ok_or_else(|| ToolError::Run {
                kind: "io",
                message: "a preflighted file is missing".into(),
            })?;
            OperationResult::ReadContext(p.read.context(id, index, rel, *start, *end)?)
        }
        (Op::Describe { table }, _) => {
            let tables = match table {
                Some(t) => vec![database::find(id, &p.snapshots, t)?.info.clone()],
                None => p.snapshots.iter().map(|s| s.info.clone()).collect(),
            };
            OperationResult::Describe(DescribeResult {
                tables,
                note: database::DESCRIBE_NOTE.into(),
            })
        }
        (
            Op::Lookup {
                table,
                filters,
                projection,
                page,
            },
            _,
        ) => {
            let snap = database::find(id, &p.snapshots, table)?;
            OperationResult::Lookup(database::lookup(
                snap,
                filters,
                projection.as_deref(),
                *page,
            ))
        }
        (
            Op::FindReferences {
                table,
                columns,
                value,
                projection,
                page,
            },
            _,
        ) => {
            let snap = database::find(id, &p.snapshots, table)?;
            OperationResult::FindReferences(database::find_references(
                snap,
                columns,
                value,
                projection.as_deref(),
                *page,
            ))
        }
        _ => {
            return Err(ToolError::Run {
                kind: "io",
                message: "a request's plan does not match its operation".into(),
            });
        }
    })
}
