//! The drill-down of one trial: the label beside the proposal, the cited evidence with its
//! lines, the claims with their stage-1 verdicts, the close tier and its reasons, and the
//! agent's transcript — read from the case run the battery kept under `runs/`.
//!
//! Invariant: the trial record is always shown; what the kept run adds is read with the
//! engine's own document types, bounded in size, and a run that is missing or unreadable
//! is said plainly rather than skipped. Only `runs/<one name>` beside results.json is ever
//! read, whatever a record's `run` says.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::model;
use crate::battery::corpus::{EvidenceRegion, Expect, ValueRule};
use crate::battery::results::{Phases, RUNS_DIR, TrialRecord};
use crate::battery::stats;
use crate::case::claim::RawClaim;
use crate::case::evidence::{EvidenceArtifact, Verification};
use crate::case::finalize::ResultDoc;
use crate::case::lifecycle::Lifecycle;
use crate::case::proposal::RawProposal;
use crate::case::research::{ClaimStatus, ResearchRecord};
use crate::driver::transcript::Event;
use crate::process::ExecutionRecord;
use crate::reconcile::CloseDoc;

/// Lines of one evidence excerpt shown.
const EXCERPT_LINES: usize = 40;
/// Transcript events, output lines and journal entries shown.
const EVENTS_MAX: usize = 200;
/// Characters of one transcript body shown.
const BODY_CHARS: usize = 1500;

#[derive(Debug, Clone, Serialize)]
pub struct Pair {
    pub key: String,
    pub value: String,
}

/// What the label expects.
#[derive(Debug, Clone, Serialize)]
pub struct LabelView {
    pub status: String,
    pub values: Vec<Pair>,
    pub evidence: Vec<String>,
    /// The record carried the label's values (records written before it did only have
    /// the status).
    pub full: bool,
}

/// What the case proposed.
#[derive(Debug, Clone, Serialize)]
pub struct ProposalView {
    pub status: String,
    pub patch: Vec<Pair>,
    pub rationale: Option<String>,
    pub confidence: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Line {
    pub no: u32,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArtifactView {
    pub id: String,
    pub location: String,
    pub kind: String,
    pub verification: String,
    /// Overlaps a region the label lists.
    pub labelled: bool,
    pub lines: Vec<Line>,
    pub more_lines: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClaimView {
    pub id: String,
    pub predicate: String,
    pub value: String,
    pub artifacts: Vec<String>,
    /// `accepted`, `rejected`, or `not judged` (stage 1 never ran on it).
    pub verdict: String,
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CloseView {
    pub tier: String,
    pub reasons: Vec<String>,
    pub escalate: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EventView {
    /// `said`, `called`, `got`, `error`, `stdout`, `stderr`.
    pub kind: &'static str,
    pub title: String,
    pub body: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct JournalView {
    pub fence: u64,
    pub rail: String,
    pub outcome: String,
    pub detail: String,
}

/// What the kept run adds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunView {
    pub kept: bool,
    /// `runs/<stem>`, as the record names it.
    pub path: Option<String>,
    /// Why there is nothing more to show, when there is not.
    pub missing: Option<String>,
    /// Files of the run that could not be read, with why.
    pub unreadable: Vec<String>,
    pub evidence: Vec<ArtifactView>,
    pub claims: Vec<ClaimView>,
    pub conflicts: Vec<String>,
    pub close: Option<CloseView>,
    pub transcript: Vec<EventView>,
    pub journal: Vec<JournalView>,
    /// Transcript events or journal entries left out past [`EVENTS_MAX`].
    pub omitted: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Drill {
    pub anchor: String,
    pub id: String,
    pub scenario: String,
    pub class: String,
    pub arm: String,
    pub repeat: u32,
    pub outcome: &'static str,
    pub passed: bool,
    pub label: LabelView,
    pub proposal: ProposalView,
    pub facts: Vec<Pair>,
    pub reason: Option<String>,
    pub contamination: Vec<String>,
    pub infra: Option<String>,
    pub run: RunView,
}

/// Shortens `s` to `max` characters, saying so.
#[must_use]
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}… ({} more characters)", &s[..i], s[i..].chars().count()),
        None => s.to_string(),
    }
}

fn compact(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn yes(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

fn region(r: &EvidenceRegion) -> String {
    format!("{} L{}–{}", r.path, r.lines[0], r.lines[1])
}

fn label_view(t: &TrialRecord) -> (LabelView, Vec<EvidenceRegion>) {
    let expect: Option<Expect> = t
        .expected
        .clone()
        .and_then(|v| crate::json_path::deserialize(v).ok());
    let Some(e) = expect else {
        let view = LabelView {
            status: t.expected_status.clone().unwrap_or_else(|| "—".into()),
            values: vec![],
            evidence: vec![],
            full: false,
        };
        return (view, vec![]);
    };
    let values = e
        .values
        .iter()
        .map(|(field, v)| Pair {
            key: field.clone(),
            value: match v.rule() {
                Ok(ValueRule::Equals(x)) => format!("= {}", compact(x)),
                Ok(ValueRule::Mentions { must, must_not }) => {
                    let mut parts: Vec<String> = must
                        .iter()
                        .map(|any| format!("mentions {}", any.join(" or ")))
                        .collect();
                    if !must_not.is_empty() {
                        parts.push(format!("never {}", must_not.join(", ")));
                    }
                    parts.join("; ")
                }
                Err(why) => format!("(label {why})"),
            },
        })
        .collect();
    let view = LabelView {
        status: e.status.to_string(),
        values,
        evidence: e.evidence.iter().map(region).collect(),
        full: true,
    };
    (view, e.evidence)
}

/// `runs/<name>` beside results.json, or why the record's `run` is not one.
fn run_dir(results_dir: &Path, run: &str) -> Result<PathBuf, String> {
    let rel = Path::new(run);
    let parts: Vec<Component> = rel.components().collect();
    match parts.as_slice() {
        [Component::Normal(first), Component::Normal(_)] if *first == RUNS_DIR => {
            for dir in [results_dir.join(RUNS_DIR), results_dir.join(rel)] {
                if is_symlink(&dir) {
                    return Err(format!(
                        "`{}` is a symlink: a kept run is read only from beside results.json, never through a link",
                        dir.display()
                    ));
                }
            }
            Ok(results_dir.join(rel))
        }
        _ => Err(format!(
            "the record names the run `{run}`, which is not `{RUNS_DIR}/<name>`: not read"
        )),
    }
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Reads a run document with its own strict type; `Ok(None)` when it does not exist. A
/// symlink on the way (`output/` as a link; the file itself is opened without following
/// one) is refused, never followed.
fn read<T: DeserializeOwned>(dir: &Path, rel: &str) -> Result<Option<T>, String> {
    let path = dir.join(rel);
    let mut on_the_way = dir.to_path_buf();
    for part in Path::new(rel).components() {
        on_the_way.push(part);
        if is_symlink(&on_the_way) {
            return Err(format!("`{rel}` goes through a symlink: not followed"));
        }
    }
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    let bytes = crate::limits::read_capped(&path, crate::limits::Limit::DocBytes)
        .map_err(|e| format!("`{rel}` {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("`{rel}` is not UTF-8"))?;
    crate::json_path::from_str(&text)
        .map(Some)
        .map_err(|e| format!("`{rel}` at `{}`: {}", e.path, e.message))
}

fn overlaps(a: &EvidenceArtifact, regions: &[EvidenceRegion]) -> bool {
    let (Some(path), Some(s), Some(e)) = (&a.path, a.start_line, a.end_line) else {
        return false;
    };
    regions
        .iter()
        .any(|r| &r.path == path && s <= r.lines[1] && r.lines[0] <= e)
}

fn artifact_view(a: &EvidenceArtifact, regions: &[EvidenceRegion]) -> ArtifactView {
    let location = match (&a.path, a.start_line, a.end_line) {
        (Some(p), Some(s), Some(e)) => format!("{p} L{s}–{e}"),
        (Some(p), _, _) => p.clone(),
        _ => a.uri.clone(),
    };
    let first = a.start_line.unwrap_or(1);
    let all: Vec<&str> = a.excerpt.lines().collect();
    let lines = all
        .iter()
        .take(EXCERPT_LINES)
        .enumerate()
        .map(|(i, text)| Line {
            no: first + i as u32,
            text: clip(text, 400),
        })
        .collect();
    ArtifactView {
        id: a.id.clone(),
        location,
        kind: serde_json::to_value(a.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        verification: match &a.verification {
            Verification::Verified { .. } => "verified".into(),
            Verification::Unverified { reason } => format!("unverified: {reason}"),
        },
        labelled: overlaps(a, regions),
        lines,
        more_lines: all.len().saturating_sub(EXCERPT_LINES),
    }
}

/// A claim with its stage-1 verdict; the artifacts it cites named by where they are.
fn claim_view(
    c: &RawClaim,
    verdicts: &[crate::case::research::ClaimVerdict],
    locations: &BTreeMap<&str, &str>,
) -> ClaimView {
    let verdict = verdicts.iter().find(|v| v.id == c.id);
    ClaimView {
        id: c.id.clone(),
        predicate: c.predicate.clone(),
        value: compact(&c.value),
        artifacts: c
            .artifact_ids
            .iter()
            .map(|id| {
                locations
                    .get(id.as_str())
                    .map_or(id.clone(), std::string::ToString::to_string)
            })
            .collect(),
        verdict: match verdict.map(|v| v.status) {
            Some(ClaimStatus::Accepted) => "accepted".into(),
            Some(ClaimStatus::Rejected) => "rejected".into(),
            None => "not judged".into(),
        },
        reasons: verdict.map(|v| v.reasons.clone()).unwrap_or_default(),
    }
}

/// The subset of `execution.json` a drill-down shows. (The engine writes that document
/// with a type that is not read back anywhere else, so this view names only its fields
/// used here; each of them is the engine's own type.)
#[derive(serde::Deserialize)]
struct ExecutionView {
    transcript: Vec<Event>,
    record: ExecutionRecord,
}

fn event_view(e: &Event) -> EventView {
    match e {
        Event::Text { text } => EventView {
            kind: "said",
            title: "said".into(),
            body: clip(text, BODY_CHARS),
        },
        Event::ToolCall { name, input, .. } => EventView {
            kind: "called",
            title: name.clone(),
            body: clip(&input.to_string(), BODY_CHARS),
        },
        Event::ToolResult {
            is_error, content, ..
        } => EventView {
            kind: if *is_error { "error" } else { "got" },
            title: if *is_error { "error" } else { "result" }.into(),
            body: clip(content, BODY_CHARS),
        },
    }
}

/// A run document read as JSON, then as its own type (an error names the field).
fn typed<T: DeserializeOwned>(v: Option<Value>, rel: &str, out: &mut Vec<String>) -> Option<T> {
    v.and_then(|v| match crate::json_path::deserialize(v) {
        Ok(d) => Some(d),
        Err(e) => {
            out.push(format!("`{rel}` at `{}`: {}", e.path, e.message));
            None
        }
    })
}

fn fill_run(view: &mut RunView, dir: &Path, regions: &[EvidenceRegion]) {
    let mut unreadable = Vec::new();
    let mut get = |rel: &str| -> Option<Value> {
        read::<Value>(dir, rel).unwrap_or_else(|e| {
            unreadable.push(e);
            None
        })
    };
    let result_v = get(crate::case::store::RESULT_JSON);
    let lifecycle_v = get("lifecycle.json");
    let close_v = get("close.json");
    let exec_v = get(crate::driver::investigate::EXECUTION_JSON);
    let result: Option<ResultDoc> = typed(result_v, "output/result.json", &mut unreadable);
    let lifecycle: Option<Lifecycle> = typed(lifecycle_v, "lifecycle.json", &mut unreadable);
    let close: Option<CloseDoc> = typed(close_v, "close.json", &mut unreadable);
    let exec: Option<ExecutionView> = typed(exec_v, "execution.json", &mut unreadable);

    fill_research(view, result.as_ref(), lifecycle.as_ref(), regions);
    if let Some(c) = close {
        view.close = Some(CloseView {
            tier: c
                .tier
                .map_or("none (nothing to apply)".into(), |t| t.as_str().to_string()),
            reasons: c.reasons,
            escalate: c.escalate,
        });
    }
    let omitted =
        exec.map_or(0, |x| fill_transcript(view, &x)) + fill_journal(view, dir, &mut unreadable);
    view.omitted = omitted;
    view.unreadable = unreadable;
}

/// The evidence, claims (with stage 1's verdicts) and conflicts a run's result records.
fn fill_research(
    view: &mut RunView,
    result: Option<&ResultDoc>,
    lifecycle: Option<&Lifecycle>,
    regions: &[EvidenceRegion],
) {
    // Stage 1's verdicts live in lifecycle.json; result.json repeats them at finalize.
    let research: Option<ResearchRecord> = lifecycle
        .and_then(|l| l.records.get("research").cloned())
        .and_then(|v| crate::json_path::deserialize(v).ok());
    if let Some(r) = result {
        let verdicts = research
            .as_ref()
            .map_or(r.claim_verdicts.as_slice(), |x| x.claims.as_slice());
        view.evidence = r
            .artifacts
            .iter()
            .map(|a| artifact_view(a, regions))
            .collect();
        let locations: BTreeMap<&str, &str> = view
            .evidence
            .iter()
            .map(|a| (a.id.as_str(), a.location.as_str()))
            .collect();
        let claims = r
            .claims
            .iter()
            .map(|c| claim_view(c, verdicts, &locations))
            .collect();
        view.claims = claims;
        view.conflicts = r
            .conflicts
            .iter()
            .map(|c| {
                let values: Vec<String> = c.values.iter().map(|v| compact(&v.value)).collect();
                format!("{}: {}", c.predicate, values.join(" vs "))
            })
            .collect();
    }
}

/// The agent's transcript, at most [`EVENTS_MAX`] events; returns how many were left out.
fn fill_transcript(view: &mut RunView, x: &ExecutionView) -> usize {
    let mut events: Vec<EventView> = x.transcript.iter().map(event_view).collect();
    if events.is_empty() {
        // An agent whose output format is not known: its own lines are the transcript.
        events = x
            .record
            .lines
            .iter()
            .map(|l| {
                let kind = match l.stream {
                    crate::process::Stream::Stdout => "stdout",
                    crate::process::Stream::Stderr => "stderr",
                };
                EventView {
                    kind,
                    title: kind.into(),
                    body: clip(&l.text, BODY_CHARS),
                }
            })
            .collect();
    }
    let omitted = events.len().saturating_sub(EVENTS_MAX);
    events.truncate(EVENTS_MAX);
    view.transcript = events;
    omitted
}

/// The journal's rail calls, at most [`EVENTS_MAX`]; returns how many were left out.
fn fill_journal(view: &mut RunView, dir: &Path, unreadable: &mut Vec<String>) -> usize {
    match crate::case::rail::read_journal(dir) {
        Ok(entries) => {
            let omitted = entries.len().saturating_sub(EVENTS_MAX);
            view.journal = entries
                .iter()
                .take(EVENTS_MAX)
                .map(|j| JournalView {
                    fence: j.fence,
                    rail: j.rail.clone(),
                    outcome: serde_json::to_value(j.outcome)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    detail: match (&j.error, &j.result) {
                        (Some(e), _) => clip(&format!("{}: {}", e.kind, e.message), 400),
                        (None, Some(r)) => clip(&r.to_string(), 240),
                        (None, None) => String::new(),
                    },
                })
                .collect();
            omitted
        }
        Err(e) => {
            unreadable.push(format!("`journal.jsonl`: {e}"));
            0
        }
    }
}

fn proposal_view(t: &TrialRecord, dir: Option<&Path>) -> ProposalView {
    let raw: Option<RawProposal> = dir
        .and_then(|d| read(d, crate::case::store::PROPOSAL_JSON).ok())
        .flatten();
    ProposalView {
        status: t.status.clone().unwrap_or_else(|| "no result".into()),
        patch: t
            .patch
            .iter()
            .flatten()
            .map(|(k, v)| Pair {
                key: k.clone(),
                value: compact(v),
            })
            .collect(),
        rationale: raw.as_ref().map(|p| clip(&p.rationale, BODY_CHARS)),
        confidence: raw.as_ref().map(|p| format!("{:.2}", p.confidence)),
    }
}

fn facts(t: &TrialRecord) -> Vec<Pair> {
    let pair = |k: &str, v: String| Pair {
        key: k.into(),
        value: v,
    };
    let mut facts = vec![
        pair("status correct", yes(t.status_correct)),
        pair("values correct", yes(t.values_correct)),
        pair("grounded", yes(t.grounded)),
        pair("evidence recall", model::pct(t.evidence_recall)),
        pair(
            "claims (not accepted)",
            format!("{} ({})", t.claims, t.unsupported_claims),
        ),
        pair("harmful", yes(t.harmful)),
        pair("harmful at auto", yes(t.harmful_at_auto)),
        pair("close tier", t.tier.clone().unwrap_or_else(|| "—".into())),
        pair(
            "tokens in / out",
            format!("{} / {}", t.tokens_in, t.tokens_out),
        ),
        pair("cost", model::usd(t.cost_usd)),
        pair("turns", t.turns.to_string()),
        pair("wall", format!("{} ms", t.wall_ms)),
    ];
    // Records written before phases were kept have none: no row rather than a blank one.
    if let Some(p) = &t.phases {
        facts.push(pair("wall by phase", by_phase(p)));
    }
    facts.push(pair("attempts", t.attempts.to_string()));
    facts
}

/// `p` in milliseconds, phase by phase in the order the trial ran them.
fn by_phase(p: &Phases) -> String {
    let ms = |us: u64| format!("{:.1}", stats::from_u64(us) / 1000.0);
    let agent = p
        .agent_process_us
        .map(|us| format!(" (agent process {})", ms(us)))
        .unwrap_or_default();
    format!(
        "prepare {} · open {} · investigate {}{agent} · end {} · scan {} · score {} · keep {} ms",
        ms(p.prepare_us),
        ms(p.open_us),
        ms(p.investigate_us),
        ms(p.end_us),
        ms(p.scan_us),
        ms(p.score_us),
        ms(p.keep_us),
    )
}

/// The drill-down of `t`, reading its kept run under `results_dir` when there is one.
#[must_use]
pub fn build(t: &TrialRecord, results_dir: &Path) -> Drill {
    let (label, regions) = label_view(t);
    let mut run = RunView {
        path: t.run.clone(),
        ..RunView::default()
    };
    let mut dir = None;
    match &t.run {
        None => {
            run.missing = Some("no case run was recorded for this trial".into());
        }
        Some(rel) => match run_dir(results_dir, rel) {
            Err(why) => run.missing = Some(why),
            Ok(d) if !d.is_dir() => {
                run.missing = Some(format!(
                    "the case run was not kept (`{rel}` is not beside results.json): showing what results.json holds"
                ));
            }
            Ok(d) => {
                run.kept = true;
                fill_run(&mut run, &d, &regions);
                dir = Some(d);
            }
        },
    }
    Drill {
        anchor: model::anchor(&t.id),
        id: t.id.clone(),
        scenario: t.scenario.clone(),
        class: t.class.clone(),
        arm: t.arm.to_string(),
        repeat: t.repeat,
        outcome: model::outcome(t),
        passed: model::passed(t),
        label,
        proposal: proposal_view(t, dir.as_deref()),
        facts: facts(t),
        reason: t.reason.clone(),
        contamination: t.contamination.clone(),
        infra: t
            .infra
            .as_ref()
            .map(|i| format!("{} (after {} attempts)", i.error, i.attempts)),
        run,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(phases: Option<Value>) -> TrialRecord {
        let mut v = serde_json::json!({
            "format": "anvil-battery-trial", "formatVersion": 1, "id": "a/b::command#0",
            "scenario": "a/b", "class": "a", "skill": "annotate-unit", "arm": "command",
            "repeat": 0, "status": null, "expectedStatus": null, "tier": null, "patch": null,
            "reason": null, "statusCorrect": false, "valuesCorrect": false, "correct": false,
            "grounded": false, "evidenceRecall": null, "claims": 0, "unsupportedClaims": 0,
            "harmful": false, "harmfulAtAuto": false, "contaminated": false,
            "contamination": [], "reachedLabels": null, "infra": null, "attempts": 1,
            "tokensIn": 0, "tokensOut": 0, "costUsd": 0.0, "turns": 0, "wallMs": 2252,
            "startDigest": "sha256:0", "run": null
        });
        if let Some(p) = phases {
            v["phases"] = p;
        }
        serde_json::from_value(v).unwrap()
    }

    /// A kept run, or a directory in it, replaced by a link to elsewhere is never read
    /// through the link: the drill-down says so instead of rendering what lies outside the
    /// results directory.
    #[test]
    fn a_kept_run_is_never_read_through_a_symlink() {
        let results = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(elsewhere.path().join("output")).unwrap();
        for rel in [
            "journal.jsonl",
            "output/evidence.json",
            "output/claims.json",
        ] {
            std::fs::write(elsewhere.path().join(rel), "OUTSIDE").unwrap();
        }
        let runs = results.path().join(RUNS_DIR);
        std::fs::create_dir_all(&runs).unwrap();
        let mut t = record(None);
        t.run = Some(format!("{RUNS_DIR}/linked"));
        std::os::unix::fs::symlink(elsewhere.path(), runs.join("linked")).unwrap();
        let d = build(&t, results.path());
        assert!(!d.run.kept, "a linked run was read: {:?}", d.run.unreadable);
        assert!(
            d.run
                .missing
                .as_deref()
                .is_some_and(|m| m.contains("symlink")),
            "{:?}",
            d.run.missing
        );
        // A kept run whose output/ is a link.
        let kept = runs.join("kept");
        std::fs::create_dir_all(&kept).unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("output"), kept.join("output")).unwrap();
        t.run = Some(format!("{RUNS_DIR}/kept"));
        let d = build(&t, results.path());
        assert!(
            d.run
                .unreadable
                .iter()
                .any(|u| u.contains("output/") && u.contains("symlink")),
            "{:?}",
            d.run.unreadable
        );
        assert!(
            d.run.unreadable.iter().all(|u| !u.contains("OUTSIDE")),
            "{:?}",
            d.run.unreadable
        );
    }

    #[test]
    fn a_trial_shows_its_wall_time_by_phase_when_its_record_has_them() {
        let t = record(Some(serde_json::json!({
            "prepareUs": 3032, "openUs": 3092, "investigateUs": 2_240_100,
            "agentProcessUs": 2_230_000, "endUs": 4048, "scanUs": 945, "scoreUs": 131,
            "keepUs": 62
        })));
        let row = facts(&t)
            .into_iter()
            .find(|p| p.key == "wall by phase")
            .expect("no phase row");
        assert_eq!(
            row.value,
            "prepare 3.0 · open 3.1 · investigate 2240.1 (agent process 2230.0) · end 4.0 · \
             scan 0.9 · score 0.1 · keep 0.1 ms"
        );
        assert!(
            facts(&record(None))
                .iter()
                .all(|p| p.key != "wall by phase"),
            "a record without phases shows a phase row"
        );
    }
}
