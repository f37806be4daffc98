//! The investigation's moves made in process ([`Direct`]): searches and reads through the
//! tool router (journaled like an agent's `case query`), evidence, claims, freeze,
//! validate and finalize through the rails, and output/proposal.json written into the run
//! as a hand-writing agent writes it.
//!
//! A whole-repository search the router refuses for its selection (too many files, a
//! binary or oversized file in scope) is retried over the listed files in chunks the
//! limits allow, halving a refused chunk until the file that cannot be searched is left
//! out on its own.
//!
//! Invariant: no privileged path — every move goes through the public router and rails an
//! agent's tools reach, and each tool request or rail call counts as one action.

use std::convert::Infallible;

use serde_json::{Value, json};

use super::Conclusion;
use super::brief::Brief;
use super::plan::{Found, Frozen, Hands, Hit, Lines, Move, Outcome, Window};
use crate::case::evidence::EvidenceRequest;
use crate::case::finalize::Status;
use crate::case::research::{ClaimInput, ClaimStatus};
use crate::case::validate::Verdict;
use crate::case::{CaseError, RunHandle};
use crate::tools::{
    FindTextResult, OperationResult, REQUEST_FORMAT, REQUEST_FORMAT_VERSION, ResultDoc, ToolError,
    ToolLimits,
};

/// At most this many matches per search.
const MATCHES: usize = 50;

/// Router refusals about what a whole-repository search selects, which a narrower
/// selection avoids.
const SELECTION_REFUSALS: &[&str] = &[
    "too_many_files",
    "selection_too_large",
    "file_too_large",
    "binary_file",
    "not_utf8",
    "result_too_large",
];

/// An in-process investigator's hands on one run.
pub(crate) struct Direct {
    pub(crate) run: RunHandle,
    limits: ToolLimits,
    /// Tool requests and rail calls made so far.
    pub(crate) actions: u32,
    /// The last rail refusal, kept for when nothing could be finalized.
    last_refusal: Option<CaseError>,
}

impl Direct {
    pub(crate) fn new(run: &RunHandle) -> Direct {
        Direct {
            run: run.clone(),
            limits: crate::tools::case_limits(run),
            actions: 0,
            last_refusal: None,
        }
    }

    /// One rail call; a refusal becomes its message (and is kept).
    pub(crate) fn rail<T>(
        &mut self,
        call: impl FnOnce(&RunHandle) -> Result<T, CaseError>,
    ) -> Result<T, String> {
        self.actions += 1;
        call(&self.run).map_err(|e| {
            let why = e.to_string();
            self.last_refusal = Some(e);
            why
        })
    }

    /// The conclusion of a finished plan: `Err` when nothing could be finalized.
    pub(crate) fn conclude(mut self, outcome: Outcome) -> Result<Conclusion, CaseError> {
        match outcome.status {
            Some(status) => Ok(Conclusion {
                status,
                reason: outcome.reason,
                actions: self.actions,
            }),
            None => Err(self.last_refusal.take().unwrap_or(CaseError::Rail {
                rail: "finalize",
                kind: "not_finalized",
                reason: outcome.message,
            })),
        }
    }

    /// Finalizes with a named status, or `Err` when that is refused.
    pub(crate) fn decline(mut self, status: Status, reason: &str) -> Result<Conclusion, CaseError> {
        let Ok(recorded) = self.finalize(Some((status, reason)));
        let outcome = Outcome {
            status: recorded.is_ok().then_some(status),
            reason: Some(reason.to_string()),
            message: recorded.unwrap_or_else(|why| why),
        };
        self.conclude(outcome)
    }

    fn query(&mut self, requests: Vec<Value>) -> Result<ResultDoc, ToolError> {
        self.actions += u32::try_from(requests.len()).unwrap_or(u32::MAX);
        let doc = json!({
            "format": REQUEST_FORMAT, "formatVersion": REQUEST_FORMAT_VERSION,
            "runId": self.run.doc().identity.run_id.to_string(), "requests": requests,
        });
        crate::tools::query_journaled(&self.run, &doc)
    }

    /// One search per needle, in `paths` (or everywhere in scope).
    fn find_text(
        &mut self,
        needles: &[String],
        paths: Option<&[String]>,
    ) -> Result<Vec<FindTextResult>, ToolError> {
        let limit = MATCHES.min(self.limits.matches_per_query);
        let requests = needles
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let mut args = json!({"text": n, "caseSensitive": true, "offset": 0, "limit": limit});
                if let Some(paths) = paths {
                    args["paths"] = json!(paths);
                }
                json!({"requestId": format!("find-{}", i + 1), "operation": "source.find_text", "arguments": args})
            })
            .collect();
        let doc = self.query(requests)?;
        Ok(doc
            .results
            .into_iter()
            .filter_map(|r| match r.result {
                OperationResult::FindText(f) => Some(f),
                _ => None,
            })
            .collect())
    }

    /// Every file in scope, page by page.
    fn list_files(&mut self) -> Result<Vec<String>, ToolError> {
        let limit = self
            .limits
            .matches_per_query
            .min(self.limits.selected_files)
            .max(1);
        let (mut files, mut offset) = (Vec::new(), 0);
        loop {
            let doc = self.query(vec![
                json!({"requestId": "list", "operation": "source.list_files",
                "arguments": {"offset": offset, "limit": limit}}),
            ])?;
            let Some(OperationResult::ListFiles(page)) =
                doc.results.into_iter().next().map(|r| r.result)
            else {
                return Ok(files);
            };
            files.extend(page.files.into_iter().map(|f| f.path));
            match page.page.next_offset {
                Some(next) if page.page.truncated => offset = next,
                _ => return Ok(files),
            }
        }
    }

    /// The search over the listed files, in chunks the limits allow.
    fn find_text_in_chunks(
        &mut self,
        needles: &[String],
    ) -> Result<Vec<FindTextResult>, ToolError> {
        let files = self.list_files()?;
        let size = self.limits.selected_files.max(1);
        let mut pending: Vec<Vec<String>> =
            files.chunks(size).rev().map(<[String]>::to_vec).collect();
        let mut out = Vec::new();
        while let Some(chunk) = pending.pop() {
            match self.find_text(needles, Some(&chunk)) {
                Ok(results) => out.extend(results),
                Err(e) if SELECTION_REFUSALS.contains(&e.kind()) => {
                    if chunk.len() > 1 {
                        let (a, b) = chunk.split_at(chunk.len() / 2);
                        pending.push(b.to_vec());
                        pending.push(a.to_vec());
                    }
                    // A single file the tools cannot search is left out.
                }
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

fn refusal(e: &ToolError) -> String {
    format!("{}: {e}", e.kind())
}

impl Hands for Direct {
    type Stop = Infallible;

    fn search(&mut self, _brief: &Brief, needles: &[String]) -> Result<Found, Infallible> {
        let results = match self.find_text(needles, None) {
            Err(e) if SELECTION_REFUSALS.contains(&e.kind()) => self.find_text_in_chunks(needles),
            other => other,
        };
        let mut found = Found::default();
        match results {
            Ok(results) => {
                for r in results {
                    found.hits.extend(r.matches.iter().map(|m| Hit {
                        path: m.path.clone(),
                        line: u32::try_from(m.line).unwrap_or(u32::MAX),
                    }));
                    found.lengths.extend(
                        r.checked_files
                            .iter()
                            .map(|f| (f.path.clone(), u32::try_from(f.lines).unwrap_or(u32::MAX))),
                    );
                }
            }
            Err(e) => found.failed = Some(refusal(&e)),
        }
        found
            .hits
            .sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
        found.hits.dedup();
        found.lengths.sort();
        found.lengths.dedup();
        Ok(found)
    }

    fn read(
        &mut self,
        _brief: &Brief,
        windows: &[Window],
    ) -> Result<Vec<Option<Lines>>, Infallible> {
        let longest = self.limits.context_lines.max(1);
        let mut out = Vec::with_capacity(windows.len());
        for w in windows {
            let end = w.end.min(w.start.saturating_add(longest - 1));
            let request = json!({"requestId": "read", "operation": "source.read_context",
                "arguments": {"path": w.path, "startLine": w.start, "endLine": end}});
            let lines = match self
                .query(vec![request])
                .map(|d| d.results.into_iter().next())
            {
                Ok(Some(r)) => match r.result {
                    OperationResult::ReadContext(r) => {
                        let mut lines: Lines = r
                            .lines
                            .into_iter()
                            .map(|l| (u32::try_from(l.line).unwrap_or(u32::MAX), l.text))
                            .collect();
                        // Like every adapter: a region ends at its last non-blank line.
                        while lines.last().is_some_and(|(_, t)| t.trim().is_empty()) {
                            lines.pop();
                        }
                        Some(lines)
                    }
                    _ => None,
                },
                _ => None,
            };
            out.push(lines);
        }
        Ok(out)
    }

    fn add_evidence(
        &mut self,
        path: &str,
        start: u32,
        end: u32,
        _n: usize,
    ) -> Move<String, Infallible> {
        let req = EvidenceRequest {
            path: path.into(),
            start_line: Some(start),
            end_line: Some(end),
        };
        Ok(self.rail(|run| run.add_evidence(&req, None).map(|a| a.id)))
    }

    fn add_claim(
        &mut self,
        predicate: &str,
        value: &Value,
        artifacts: &[String],
        _n: usize,
    ) -> Move<String, Infallible> {
        let input = ClaimInput {
            predicate: predicate.into(),
            value: value.clone(),
            artifact_ids: artifacts.to_vec(),
            confidence: 0.8,
        };
        Ok(self.rail(|run| run.add_claim(input, None).map(|c| c.id)))
    }

    fn freeze(&mut self) -> Move<Frozen, Infallible> {
        Ok(self
            .rail(|run| run.freeze_research(None))
            .map(|record| Frozen {
                rejected: record
                    .claims
                    .iter()
                    .filter(|c| c.status == ClaimStatus::Rejected)
                    .map(|c| (c.id.clone(), c.reasons.join("; ")))
                    .collect(),
                conflicts: record.conflicts.len(),
            }))
    }

    fn write_proposal(&mut self, text: &str) -> Move<(), Infallible> {
        self.actions += 1;
        let path = self.run.output("proposal.json");
        Ok(crate::fsio::write_atomic(&path, text.as_bytes())
            .map_err(|e| format!("cannot write `{}`: {e}", path.display())))
    }

    fn validate(&mut self) -> Move<(), Infallible> {
        Ok(self
            .rail(|run| run.validate(None, false))
            .and_then(|record| match record.verdict {
                Verdict::Pass => Ok(()),
                Verdict::Fail => {
                    let failed: Vec<String> = record
                        .checks
                        .iter()
                        .filter(|c| !c.passed)
                        .map(|c| format!("{}: {}", c.id, c.detail))
                        .collect();
                    Err(format!("verdict fail: {}", failed.join("; ")))
                }
            }))
    }

    fn finalize(&mut self, named: Option<(Status, &str)>) -> Move<String, Infallible> {
        let (status, reason) = named.unzip();
        Ok(self
            .rail(|run| run.finalize(status, reason, None))
            .map(|result| result.status.to_string()))
    }
}
