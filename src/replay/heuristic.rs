//! `--policy heuristic`: a deterministic investigation played through the client's tools.
//!
//! From the case brief in the prompt it searches the repository for the target's name,
//! reads the best hits, infers a value with [`super::rules`], and calls the rails —
//! add-evidence, add-claim, freeze-research — then writes output/proposal.json (`Write`),
//! validates and finalizes. When nothing supports a value, or a rail refuses, it finalizes
//! with an honest decline instead. It plays whichever tools the request offers (see
//! [`super::kit`]): the `anvil` MCP server's tools (`mcp__anvil__*`) when they are there,
//! else grep and `anvil-bench case …` through `Bash`.
//!
//! Invariant: stateless. Every request replays the plan from the start against the tool
//! results already in the conversation (the i-th action of the plan is the i-th tool call),
//! so the next turn is a pure function of the request and a retried request gets the same
//! turn.

use serde_json::{Value, json};

use super::api::{Block, Conversation, ToolCall, ToolResult, Turn};
use super::brief::Brief;
use super::kit::Kit;
use super::rules::{self, Field, Region, Verdict};

/// At most this many searches before giving up.
const MAX_SEARCHES: usize = 3;
/// At most this many regions read.
const MAX_READS: usize = 3;
/// Lines of context read around a cluster of hits, and the longest region read.
const CONTEXT: u32 = 3;
const MAX_REGION: u32 = 40;

/// The next turn of the heuristic investigation for `conv`.
pub fn answer(conv: &Conversation) -> Turn {
    let Some(brief) = conv.texts.iter().find_map(|t| Brief::parse(t)) else {
        return Turn::text(
            "I found no anvil-bench case brief (CASE.md) in the prompt, so there is nothing to investigate.",
        );
    };
    let mut plan = Plan {
        calls: &conv.tool_calls,
        next: 0,
        conv,
        kit: Kit::of(conv),
    };
    match investigate(&brief, &mut plan) {
        Ok(turn) | Err(turn) => turn,
    }
}

/// A cursor over the conversation's tool calls. `step` either returns the results of the
/// actions already taken, or `Err(turn)`: the turn that takes them now.
struct Plan<'a> {
    calls: &'a [ToolCall],
    next: usize,
    conv: &'a Conversation,
    kit: Kit,
}

/// One tool call the plan asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub name: String,
    pub input: Value,
}

impl Plan<'_> {
    fn step(&mut self, say: &str, actions: Vec<Action>) -> Result<Vec<ToolResult>, Turn> {
        let n = actions.len();
        if self.next + n > self.calls.len() {
            let mut blocks = vec![Block::Text(say.to_string())];
            blocks.extend(actions.into_iter().map(|a| Block::ToolUse {
                name: a.name,
                input: a.input,
            }));
            return Err(Turn { blocks });
        }
        let results = self.calls[self.next..self.next + n]
            .iter()
            .map(|c| {
                c.result.clone().unwrap_or(ToolResult {
                    text: "(no result)".into(),
                    is_error: true,
                })
            })
            .collect();
        self.next += n;
        Ok(results)
    }

    fn one(&mut self, say: &str, action: Action) -> Result<ToolResult, Turn> {
        Ok(self.step(say, vec![action])?.remove(0))
    }
}

/// A search hit: repository-relative path and 1-based line.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub path: String,
    pub line: u32,
}

/// A region to read: path, first and last line, strength, hit count.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub strength: f64,
    pub prose: bool,
    pub hits: usize,
}

/// Groups hits into windows (hits at most 2·CONTEXT apart share one), admissible paths
/// only, strongest kind and most hits first.
fn windows(brief: &Brief, hits: &[Hit]) -> Vec<Window> {
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
    out.truncate(MAX_READS);
    out
}

/// Finalizes with a decline and ends the conversation.
fn decline(plan: &mut Plan, status: &str, reason: &str) -> Result<Turn, Turn> {
    let kit = plan.kit;
    let r = plan.one(
        &format!("Declining: {reason}"),
        kit.finalize(Some((status, reason))),
    )?;
    Ok(Turn::text(if r.is_error {
        format!(
            "I could not record the outcome ({}). My conclusion: {status} — {reason}",
            kit.summary(&r)
        )
    } else {
        format!("Finalized as {}: {reason}", kit.summary(&r))
    }))
}

fn investigate(brief: &Brief, plan: &mut Plan) -> Result<Turn, Turn> {
    let kit = plan.kit;
    let Some(field) = Field::parse(&brief.field) else {
        return decline(
            plan,
            "insufficient_evidence",
            &format!("no rule infers `{}`", brief.field),
        );
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
        let results = plan.step(
            &format!("Searching the repository for {}.", needles.join(" / ")),
            kit.search(brief, needles),
        )?;
        let f = kit.found(brief, &results);
        if let Some(why) = f.failed {
            return decline(
                plan,
                "insufficient_evidence",
                &format!("the repository search failed: {why}"),
            );
        }
        if !f.hits.is_empty() {
            found = Some((needles.clone(), f));
            break;
        }
    }
    let Some((needles, found)) = found else {
        return decline(
            plan,
            "insufficient_evidence",
            &format!("no file in the repository mentions `{name}`"),
        );
    };
    let mut windows = windows(brief, &found.hits);
    if windows.is_empty() {
        return decline(
            plan,
            "insufficient_evidence",
            &format!("every mention of `{name}` lies outside the inspect scopes"),
        );
    }
    // A read past a file's end is refused where the search said how long the file is.
    for w in &mut windows {
        if let Some((_, n)) = found.lengths.iter().find(|(p, _)| *p == w.path) {
            w.end = w.end.min(*n).max(w.start);
        }
    }

    // Read the best hits.
    let reads = windows.iter().map(|w| kit.read(brief, w)).collect();
    let texts = plan.step(
        &format!("Reading the {} best regions.", windows.len()),
        reads,
    )?;
    let regions: Vec<Region> = windows
        .iter()
        .zip(&texts)
        .filter(|(_, r)| !r.is_error)
        .map(|(w, r)| Region {
            path: w.path.clone(),
            strength: w.strength,
            prose: w.prose,
            lines: kit.lines(r, w),
        })
        .collect();
    let (value, support, rationale) = match rules::infer(field, &needles, &brief.allowed, &regions)
    {
        Verdict::Found {
            value,
            support,
            rationale,
        } => (value, support, rationale),
        Verdict::Conflict { values } => {
            let list: Vec<String> = values.iter().map(Value::to_string).collect();
            return decline(
                plan,
                "conflicted",
                &format!("the sources support both {}", list.join(" and ")),
            );
        }
        Verdict::Nothing => {
            return decline(
                plan,
                "insufficient_evidence",
                &format!("no line near `{name}` states its {}", brief.field),
            );
        }
    };

    // Evidence, one rail call per region.
    let mut artifacts = Vec::new();
    for (i, s) in support.iter().enumerate() {
        let r = plan.one(
            &format!("Citing {} lines {}-{}.", s.path, s.start, s.end),
            kit.add_evidence(&s.path, s.start, s.end, i + 1),
        )?;
        match kit.id(&r, "ev-") {
            Some(id) => artifacts.push(id),
            None => {
                return decline(
                    plan,
                    "insufficient_evidence",
                    &format!("add-evidence failed: {}", kit.summary(&r)),
                );
            }
        }
    }

    // The claim, then freeze.
    let r = plan.one(
        &format!("Claiming {} = {value}.", brief.predicate),
        kit.add_claim(&brief.predicate, &value, &artifacts),
    )?;
    let Some(claim) = kit.id(&r, "cl-") else {
        return decline(
            plan,
            "insufficient_evidence",
            &format!("add-claim failed: {}", kit.summary(&r)),
        );
    };
    let r = plan.one("Freezing the research.", kit.freeze())?;
    if let Err(why) = kit.accepted(&r, &claim) {
        return decline(
            plan,
            "insufficient_evidence",
            &format!("stage 1 did not accept the claim: {why}"),
        );
    }

    // The proposal.
    let proposal = proposal(brief, &value, &claim, &rationale);
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(&proposal).unwrap_or_default()
    );
    let write_to = |cwd: String| Action {
        name: "Write".into(),
        input: json!({"file_path": format!("{cwd}/output/proposal.json"), "content": text}),
    };
    let write = match (plan.conv.offers("Write"), working_directory(plan.conv)) {
        (true, Some(cwd)) => Some(write_to(cwd)),
        (true, None) => {
            // The client did not say where it runs: ask once, then write.
            let r = plan.one("Finding the run directory.", kit.locate())?;
            kit.located(&r).map(write_to)
        }
        (false, _) => None,
    };
    let Some(write) = write.or_else(|| kit.write_without_write_tool(&text)) else {
        return decline(
            plan,
            "insufficient_evidence",
            "no tool here can write output/proposal.json in the run directory",
        );
    };
    let r = plan.one("Writing output/proposal.json.", write)?;
    if r.is_error {
        return decline(
            plan,
            "insufficient_evidence",
            &format!("could not write the proposal: {}", kit.summary(&r)),
        );
    }

    let r = plan.one("Validating the proposal.", kit.validate())?;
    if let Err(why) = kit.validated(&r) {
        return decline(
            plan,
            "insufficient_evidence",
            &format!("validation rejected the proposal: {why}"),
        );
    }
    let r = plan.one("Finalizing.", kit.finalize(None))?;
    Ok(Turn::text(if r.is_error {
        format!(
            "Finalize refused: {}. The proposal stays unfinalized.",
            kit.summary(&r)
        )
    } else {
        format!(
            "Finalized: {} — {} = {value}. {rationale}",
            kit.summary(&r),
            brief.field
        )
    }))
}

/// Where the client runs, as its environment block says.
fn working_directory(conv: &Conversation) -> Option<String> {
    conv.texts.iter().find_map(|t| {
        let rest = &t[t.find("Primary working directory:")? + "Primary working directory:".len()..];
        let dir = rest.split_whitespace().next()?;
        dir.starts_with('/').then(|| dir.to_string())
    })
}

/// The brief's skeleton with the value, grounding and rationale filled in.
fn proposal(brief: &Brief, value: &Value, claim: &str, rationale: &str) -> Value {
    let mut p = brief.skeleton.clone().unwrap_or_else(|| {
        json!({"format": "anvil-proposal", "formatVersion": 1, "skill": brief.skill,
               "target": brief.target, "patch": {"target": brief.target, "set": {}}, "grounding": {}})
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

    #[test]
    fn without_a_brief_it_says_so_and_stops() {
        let turn = answer(&Conversation {
            texts: vec!["say hi".into()],
            ..Conversation::default()
        });
        assert!(!turn.has_tool_use());
    }
}
