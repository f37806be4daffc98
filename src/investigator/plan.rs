//! The heuristic investigation, written once over a small set of moves ([`Hands`]): search
//! the repository for the target's name, read the best regions, infer a value with
//! [`super::rules`], cite and claim it, freeze, and conclude —
//!
//! * `proposal_generated`: write output/proposal.json, validate, finalize;
//! * `supported`: the case asks to prove an inferred current value and the sources state
//!   exactly that value (no proposal);
//! * `conflicted`: the sources disagree — each side is cited and claimed, so stage 1 records
//!   the conflict (if it does not, the plan declines `insufficient_evidence` instead);
//! * or an honest decline, with the reason, whenever nothing supports a value or a rail
//!   refuses.
//!
//! Two adapters make the moves: `super::direct` calls the tool router and the rails in
//! process; `crate::replay::heuristic` asks a real client to make each move as a tool call
//! and stops the plan ([`Hands::Stop`]) at the first move whose result is not yet in the
//! conversation.
//!
//! Invariant: the plan is a pure function of the brief and the results of its moves — it
//! never sees how a move is made — so the replay adapter can replay it from the start on
//! every request, and both adapters conclude the same from the same move results.

use serde_json::{Value, json};

use super::brief::Brief;
use super::rules::{self, Field, Finding, Region, Verdict};
use crate::air::DeficiencyCode;
use crate::case::finalize::Status;

/// At most this many searches before giving up.
pub const MAX_SEARCHES: usize = 3;
/// At most this many regions read: room for every evidence kind that mentions the target
/// (implementation, tests, schema, docs) to be read once, and for more of the strongest.
pub const MAX_READS: usize = 6;
/// Lines of context read around a cluster of hits, and the longest region read.
pub const CONTEXT: u32 = 3;
pub const MAX_REGION: u32 = 40;

/// A search hit: repository-relative path and 1-based line.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub path: String,
    pub line: u32,
}

/// A region to read: path, first and last line, evidence kind and strength, hit count.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub kind: String,
    pub strength: f64,
    pub prose: bool,
    pub hits: usize,
}

/// What a search found: hits in path and line order, and the length in lines of every
/// file the search checked (where the tool says).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    pub hits: Vec<Hit>,
    pub lengths: Vec<(String, u32)>,
    /// Every search call failed: why (the first failure).
    pub failed: Option<String>,
}

/// What stage 1 recorded at freeze-research.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frozen {
    /// Rejected claims: (id, why).
    pub rejected: Vec<(String, String)>,
    /// How many conflicts were recorded.
    pub conflicts: usize,
}

impl Frozen {
    #[must_use]
    pub fn rejection(&self, claim: &str) -> Option<&str> {
        self.rejected
            .iter()
            .find(|(id, _)| id == claim)
            .map(|(_, why)| why.as_str())
    }
}

/// Numbered lines of a region read (1-based).
pub type Lines = Vec<(u32, String)>;

/// A move's result: `Err(stop)` when the adapter cannot go on now (the replay asks the
/// client to make the move), else the move's outcome — `Err(why)` when it was refused.
pub type Move<T, S> = Result<Result<T, String>, S>;

/// The moves of the investigation. `n` numbers repeated moves of one kind (1-based) so an
/// adapter can key each one apart.
pub trait Hands {
    type Stop;
    /// One search for any of `needles`.
    ///
    /// # Errors
    ///
    /// `Err(stop)` when the adapter cannot make the move now.
    fn search(&mut self, brief: &Brief, needles: &[String]) -> Result<Found, Self::Stop>;
    /// The numbered lines of each window, `None` where a read failed.
    ///
    /// # Errors
    ///
    /// `Err(stop)` when the adapter cannot make the move now.
    fn read(&mut self, brief: &Brief, windows: &[Window])
    -> Result<Vec<Option<Lines>>, Self::Stop>;
    /// Cites lines `start..=end` of `path`: the artifact id.
    ///
    /// # Errors
    ///
    /// `Err(stop)` when the adapter cannot make the move now; `Ok(Err(why))` when the rail
    /// refused it.
    fn add_evidence(
        &mut self,
        path: &str,
        start: u32,
        end: u32,
        n: usize,
    ) -> Move<String, Self::Stop>;
    /// The claim id.
    ///
    /// # Errors
    ///
    /// `Err(stop)` when the adapter cannot make the move now; `Ok(Err(why))` when the rail
    /// refused it.
    fn add_claim(
        &mut self,
        predicate: &str,
        value: &Value,
        artifacts: &[String],
        n: usize,
    ) -> Move<String, Self::Stop>;
    /// Freezes the research: what stage 1 recorded.
    ///
    /// # Errors
    ///
    /// `Err(stop)` when the adapter cannot make the move now; `Ok(Err(why))` when the rail
    /// refused it.
    fn freeze(&mut self) -> Move<Frozen, Self::Stop>;
    /// Writes `text` as output/proposal.json.
    ///
    /// # Errors
    ///
    /// `Err(stop)` when the adapter cannot make the move now; `Ok(Err(why))` when the file
    /// could not be written.
    fn write_proposal(&mut self, text: &str) -> Move<(), Self::Stop>;
    /// `Err(why)` unless the verdict is pass.
    ///
    /// # Errors
    ///
    /// `Err(stop)` when the adapter cannot make the move now; `Ok(Err(why))` when
    /// validation failed or was refused.
    fn validate(&mut self) -> Move<(), Self::Stop>;
    /// Finalizes as validated (`None`) or with a named status and reason: one line about
    /// what was recorded.
    ///
    /// # Errors
    ///
    /// `Err(stop)` when the adapter cannot make the move now; `Ok(Err(why))` when the rail
    /// refused it.
    fn finalize(&mut self, named: Option<(Status, &str)>) -> Move<String, Self::Stop>;
}

/// How the investigation ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The status finalize recorded; `None` when even the decline was refused.
    pub status: Option<Status>,
    /// Why, for every status but `proposal_generated`.
    pub reason: Option<String>,
    /// The closing words, as an agent would say them.
    pub message: String,
}

/// Groups hits into windows (hits at most 2·CONTEXT apart share one), admissible paths
/// only, ranked strongest kind and most hits first.
#[must_use]
pub fn windows(brief: &Brief, hits: &[Hit]) -> Vec<Window> {
    let mut out: Vec<Window> = Vec::new();
    for hit in hits {
        let Some((kind, strength)) = brief.classify(&hit.path) else {
            continue;
        };
        let start = hit.line.saturating_sub(CONTEXT).max(1);
        match out.last_mut() {
            Some(w)
                if w.path == hit.path
                    && start <= w.end + CONTEXT
                    && hit.line + CONTEXT - w.start < MAX_REGION =>
            {
                w.end = hit.line + CONTEXT;
                w.hits += 1;
            }
            _ => out.push(Window {
                path: hit.path.clone(),
                start,
                end: hit.line + CONTEXT,
                kind: kind.to_string(),
                strength,
                prose: kind == "doc",
                hits: 1,
            }),
        }
    }
    out.sort_by(|a, b| {
        b.strength
            .total_cmp(&a.strength)
            .then(b.hits.cmp(&a.hits))
            .then(a.path.cmp(&b.path))
            .then(a.start.cmp(&b.start))
    });
    out
}

/// The windows to read, at most [`MAX_READS`], in rank order: the best window of each
/// evidence kind first — so documentation is read even where code mentions the target
/// too, and prose gets its vote — then the rest by rank.
#[must_use]
pub fn select(ranked: Vec<Window>) -> Vec<Window> {
    let mut take = vec![false; ranked.len()];
    let mut kinds: Vec<&str> = Vec::new();
    for (i, w) in ranked.iter().enumerate() {
        if kinds.len() < MAX_READS && !kinds.contains(&w.kind.as_str()) {
            kinds.push(&w.kind);
            take[i] = true;
        }
    }
    let mut chosen = kinds.len();
    for t in &mut take {
        if chosen < MAX_READS && !*t {
            *t = true;
            chosen += 1;
        }
    }
    ranked
        .into_iter()
        .zip(take)
        .filter_map(|(w, t)| t.then_some(w))
        .collect()
}

/// Runs the investigation described by `brief` through `hands`.
///
/// # Errors
///
/// The adapter's stop, passed on as soon as a move returns it.
pub fn investigate<H: Hands>(brief: &Brief, hands: &mut H) -> Result<Outcome, H::Stop> {
    let insufficient = Status::InsufficientEvidence;
    let Some(field) = Field::parse(&brief.field) else {
        let reason = format!("no rule infers `{}`", brief.field);
        return finish(hands, insufficient, &reason);
    };

    // Search: the target's name and its twin spelling, then the more specific search terms.
    let name = brief.name().to_string();
    let mut searches: Vec<Vec<String>> = vec![rules::name_variants(&name)];
    for term in &brief.search_terms {
        let specific = term.chars().any(|c| !c.is_alphanumeric());
        if specific && !searches.iter().any(|s| s.contains(term)) {
            searches.push(vec![term.clone()]);
        }
    }
    let mut found = None;
    for needles in searches.iter().take(MAX_SEARCHES) {
        let f = hands.search(brief, needles)?;
        if let Some(why) = f.failed {
            let reason = format!("the repository search failed: {why}");
            return finish(hands, insufficient, &reason);
        }
        if !f.hits.is_empty() {
            found = Some((needles.clone(), f));
            break;
        }
    }
    let Some((needles, found)) = found else {
        let reason = format!("no file in the repository mentions `{name}`");
        return finish(hands, insufficient, &reason);
    };
    let mut windows = select(windows(brief, &found.hits));
    if windows.is_empty() {
        let reason = format!("every mention of `{name}` lies outside the inspect scopes");
        return finish(hands, insufficient, &reason);
    }
    // A read past a file's end is refused where the search said how long the file is.
    for w in &mut windows {
        if let Some((_, n)) = found.lengths.iter().find(|(p, _)| *p == w.path) {
            w.end = w.end.min(*n).max(w.start);
        }
    }

    let texts = hands.read(brief, &windows)?;
    let regions: Vec<Region> = windows
        .iter()
        .zip(texts)
        .filter_map(|(w, lines)| {
            Some(Region {
                path: w.path.clone(),
                strength: w.strength,
                prose: w.prose,
                lines: lines?,
            })
        })
        .collect();
    match rules::infer(field, &needles, &brief.allowed, &regions) {
        Verdict::Found(finding) => conclude(brief, hands, &finding),
        Verdict::Conflict(sides) => conflict(brief, hands, &sides),
        Verdict::Nothing => {
            let reason = format!("no line near `{name}` states its {}", brief.field);
            finish(hands, insufficient, &reason)
        }
    }
}

/// Finalizes with `status` (never `proposal_generated`). A refused `supported` or
/// `conflicted` falls back to an `insufficient_evidence` that says why.
pub(crate) fn finish<H: Hands>(
    hands: &mut H,
    status: Status,
    reason: &str,
) -> Result<Outcome, H::Stop> {
    match hands.finalize(Some((status, reason)))? {
        Ok(summary) => Ok(Outcome {
            status: Some(status),
            reason: Some(reason.to_string()),
            message: format!("Finalized as {summary}: {reason}"),
        }),
        Err(why) if status != Status::InsufficientEvidence => {
            let fallback = format!("could not finalize {status} ({why}); {reason}");
            finish(hands, Status::InsufficientEvidence, &fallback)
        }
        Err(why) => Ok(Outcome {
            status: None,
            reason: Some(reason.to_string()),
            message: format!(
                "I could not record the outcome ({why}). My conclusion: {status} — {reason}"
            ),
        }),
    }
}

/// Cites every region supporting `finding`; `ev` numbers citations across the run.
fn cite<H: Hands>(hands: &mut H, finding: &Finding, ev: &mut usize) -> Move<Vec<String>, H::Stop> {
    let mut artifacts = Vec::new();
    for s in &finding.support {
        *ev += 1;
        match hands.add_evidence(&s.path, s.start, s.end, *ev)? {
            Ok(id) => artifacts.push(id),
            Err(why) => return Ok(Err(why)),
        }
    }
    Ok(Ok(artifacts))
}

/// One value found: claim it, then prove the current value or propose.
fn conclude<H: Hands>(brief: &Brief, hands: &mut H, f: &Finding) -> Result<Outcome, H::Stop> {
    let insufficient = Status::InsufficientEvidence;
    let artifacts = match cite(hands, f, &mut 0)? {
        Ok(a) => a,
        Err(why) => return finish(hands, insufficient, &format!("add-evidence failed: {why}")),
    };
    let claim = match hands.add_claim(&brief.predicate, &f.value, &artifacts, 1)? {
        Ok(id) => id,
        Err(why) => return finish(hands, insufficient, &format!("add-claim failed: {why}")),
    };
    let frozen = match hands.freeze()? {
        Ok(frozen) => frozen,
        Err(why) => {
            let reason = format!("stage 1 did not accept the claim: {why}");
            return finish(hands, insufficient, &reason);
        }
    };
    if let Some(why) = frozen.rejection(&claim) {
        let reason = format!("stage 1 did not accept the claim: rejected {claim}: {why}");
        return finish(hands, insufficient, &reason);
    }
    if frozen.conflicts > 0 {
        let reason = format!(
            "stage 1 recorded a conflict on `{}` beside the claimed {}",
            brief.predicate, f.value
        );
        return finish(hands, Status::Conflicted, &reason);
    }
    if proves_current(brief, &f.value) {
        let reason = format!(
            "the sources state the current {} {} exactly. {}",
            brief.field, f.value, f.rationale
        );
        return finish(hands, Status::Supported, &reason);
    }

    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(&proposal(brief, &f.value, &claim, &f.rationale))
            .unwrap_or_default()
    );
    if let Err(why) = hands.write_proposal(&text)? {
        let reason = format!("could not write the proposal: {why}");
        return finish(hands, insufficient, &reason);
    }
    if let Err(why) = hands.validate()? {
        let reason = format!("validation rejected the proposal: {why}");
        return finish(hands, insufficient, &reason);
    }
    match hands.finalize(None)? {
        Ok(summary) => Ok(Outcome {
            status: Some(Status::ProposalGenerated),
            reason: None,
            message: format!(
                "Finalized: {summary} — {} = {}. {}",
                brief.field, f.value, f.rationale
            ),
        }),
        Err(why) => finish(
            hands,
            insufficient,
            &format!("finalize refused the proposal: {why}"),
        ),
    }
}

/// The sources disagree: cite and claim each side so stage 1 records the conflict, then
/// finalize `conflicted` — or decline when stage 1 does not record it.
fn conflict<H: Hands>(brief: &Brief, hands: &mut H, sides: &[Finding]) -> Result<Outcome, H::Stop> {
    let insufficient = Status::InsufficientEvidence;
    let values: Vec<String> = sides.iter().map(|s| s.value.to_string()).collect();
    let both = values.join(" and ");
    let (mut ev, mut claims) = (0, Vec::new());
    for (i, side) in sides.iter().enumerate() {
        let artifacts = match cite(hands, side, &mut ev)? {
            Ok(a) => a,
            Err(why) => {
                let reason =
                    format!("the sources support both {both}, but add-evidence failed: {why}");
                return finish(hands, insufficient, &reason);
            }
        };
        match hands.add_claim(&brief.predicate, &side.value, &artifacts, i + 1)? {
            Ok(id) => claims.push(id),
            Err(why) => {
                let reason =
                    format!("the sources support both {both}, but add-claim failed: {why}");
                return finish(hands, insufficient, &reason);
            }
        }
    }
    let frozen = match hands.freeze()? {
        Ok(frozen) => frozen,
        Err(why) => {
            let reason =
                format!("the sources support both {both}, but freeze-research failed: {why}");
            return finish(hands, insufficient, &reason);
        }
    };
    if frozen.conflicts == 0 {
        let rejected: Vec<String> = claims
            .iter()
            .filter_map(|c| frozen.rejection(c).map(|why| format!("{c}: {why}")))
            .collect();
        let reason = format!(
            "the sources support both {both}, but stage 1 recorded no conflict ({})",
            if rejected.is_empty() {
                "no claim was rejected".to_string()
            } else {
                format!("rejected {}", rejected.join("; "))
            }
        );
        return finish(hands, insufficient, &reason);
    }
    let said: Vec<&str> = sides.iter().map(|s| s.rationale.as_str()).collect();
    let reason = format!("the sources support both {both}: {}", said.join(" "));
    finish(hands, Status::Conflicted, &reason)
}

/// Whether `value` proves the target's current value: the case exists to prove a value a
/// heuristic set, and the sources state exactly it.
fn proves_current(brief: &Brief, value: &Value) -> bool {
    brief.deficiency == DeficiencyCode::UnprovenInferredValue.as_str()
        && brief.current.as_ref() == Some(value)
}

/// The brief's skeleton with the value, grounding and rationale filled in.
#[must_use]
pub fn proposal(brief: &Brief, value: &Value, claim: &str, rationale: &str) -> Value {
    let mut p = brief.skeleton.clone().unwrap_or_else(|| {
        json!({"format": "anvil-proposal", "formatVersion": 1, "skill": brief.skill,
               "deficiency": brief.deficiency, "target": brief.target,
               "patch": {"target": brief.target, "set": {}}, "grounding": {}})
    });
    p["patch"]["set"] = json!({ brief.field.as_str(): value });
    p["grounding"] = json!({ brief.field.as_str(): [claim] });
    p["confidence"] = json!(0.8);
    p["rationale"] = json!(if rationale.is_empty() {
        "the cited claim states the value"
    } else {
        rationale
    });
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(path: &str, kind: &str, strength: f64, hits: usize) -> Window {
        Window {
            path: path.into(),
            start: 1,
            end: 7,
            kind: kind.into(),
            strength,
            prose: kind == "doc",
            hits,
        }
    }

    #[test]
    fn selection_reads_the_best_of_each_kind_before_more_of_the_strongest() {
        let mut ranked: Vec<Window> = (0..8)
            .map(|i| window(&format!("src/{i}.py"), "implementation", 0.9, 9 - i))
            .collect();
        ranked.push(window("docs/a.md", "doc", 0.6, 2));
        ranked.push(window("docs/b.md", "doc", 0.6, 1));
        let paths: Vec<String> = select(ranked).into_iter().map(|w| w.path).collect();
        assert_eq!(
            paths,
            [
                "src/0.py",
                "src/1.py",
                "src/2.py",
                "src/3.py",
                "src/4.py",
                "docs/a.md"
            ]
        );
    }

    /// Hands over a fixed file whose moves all succeed, except that stage 1 records no
    /// conflict; every finalize is logged.
    struct NoConflict {
        finalized: Vec<(Option<Status>, String)>,
    }

    const TEXT: &str = "# wait is in seconds\nsleep(wait)\n# wait is in milliseconds";

    impl Hands for NoConflict {
        type Stop = std::convert::Infallible;
        fn search(&mut self, _: &Brief, _: &[String]) -> Result<Found, Self::Stop> {
            Ok(Found {
                hits: vec![Hit {
                    path: "src/a.py".into(),
                    line: 2,
                }],
                ..Found::default()
            })
        }
        fn read(&mut self, _: &Brief, w: &[Window]) -> Result<Vec<Option<Lines>>, Self::Stop> {
            let lines = TEXT.lines().enumerate();
            let lines: Lines = lines.map(|(i, l)| (i as u32 + 1, l.into())).collect();
            Ok(vec![Some(lines); w.len()])
        }
        fn add_evidence(&mut self, _: &str, _: u32, _: u32, n: usize) -> Move<String, Self::Stop> {
            Ok(Ok(format!("ev-{n}")))
        }
        fn add_claim(
            &mut self,
            _: &str,
            _: &Value,
            _: &[String],
            n: usize,
        ) -> Move<String, Self::Stop> {
            Ok(Ok(format!("cl-{n}")))
        }
        fn freeze(&mut self) -> Move<Frozen, Self::Stop> {
            Ok(Ok(Frozen::default()))
        }
        fn write_proposal(&mut self, _: &str) -> Move<(), Self::Stop> {
            panic!("a conflict is never proposed")
        }
        fn validate(&mut self) -> Move<(), Self::Stop> {
            panic!("a conflict is never validated")
        }
        fn finalize(&mut self, named: Option<(Status, &str)>) -> Move<String, Self::Stop> {
            let (status, reason) = named.unzip();
            self.finalized.push((status, reason.unwrap_or("").into()));
            Ok(Ok(status.map(|s| s.to_string()).unwrap_or_default()))
        }
    }

    #[test]
    fn a_conflict_stage_1_does_not_record_is_declined_not_finalized_conflicted() {
        let brief = Brief {
            case_key: "k".into(),
            target: "op.o.input.body.wait".into(),
            skill: "annotate-unit".into(),
            repository: "/r".into(),
            search_terms: vec!["wait".into()],
            deficiency: "unit_ambiguous_field".into(),
            current: None,
            current_inferred: false,
            field: "unit".into(),
            predicate: "field.unit".into(),
            allowed: vec![],
            scopes: vec![("**".into(), "implementation".into())],
            strengths: vec![("implementation".into(), 0.9)],
            skeleton: None,
        };
        let mut hands = NoConflict { finalized: vec![] };
        let Ok(outcome) = investigate(&brief, &mut hands);
        assert_eq!(outcome.status, Some(Status::InsufficientEvidence));
        let (status, reason) = &hands.finalized[0];
        assert_eq!(*status, Some(Status::InsufficientEvidence));
        assert!(reason.contains("stage 1 recorded no conflict"), "{reason}");
    }
}
