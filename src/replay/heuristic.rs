//! `--policy heuristic`: a deterministic investigation played through the client's tools.
//!
//! From the case brief in the prompt it searches the repository for the target's name
//! (`grep`), reads the best hits (`Read`), infers a value with [`super::rules`], and calls
//! the rails through `Bash` — add-evidence, add-claim, freeze-research — then writes
//! output/proposal.json (`Write`), validates and finalizes. When nothing supports a value,
//! or a rail refuses, it finalizes with an honest decline instead.
//!
//! Invariant: stateless. Every request replays the plan from the start against the tool
//! results already in the conversation (the i-th action of the plan is the i-th tool call),
//! so the next turn is a pure function of the request and a retried request gets the same
//! turn.

use serde_json::{Value, json};

use super::api::{Block, Conversation, ToolCall, ToolResult, Turn};
use super::brief::Brief;
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
}

struct Action {
    name: &'static str,
    input: Value,
}

fn bash(command: String, description: &str) -> Action {
    Action {
        name: "Bash",
        input: json!({"command": command, "description": description}),
    }
}

impl Plan<'_> {
    fn step(&mut self, say: &str, actions: Vec<Action>) -> Result<Vec<ToolResult>, Turn> {
        let n = actions.len();
        if self.next + n > self.calls.len() {
            let mut blocks = vec![Block::Text(say.to_string())];
            blocks.extend(actions.into_iter().map(|a| Block::ToolUse {
                name: a.name.to_string(),
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

/// Quotes `s` for a POSIX shell.
pub fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("Exit code"))
        .unwrap_or("no output");
    line.chars().take(300).collect()
}

/// A grep hit: repository-relative path and 1-based line.
#[derive(Debug, Clone, PartialEq)]
struct Hit {
    path: String,
    line: u32,
}

fn parse_grep(text: &str, repo: &str) -> Vec<Hit> {
    let prefix = format!("{}/", repo.trim_end_matches('/'));
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(&prefix)?;
            let (path, rest) = rest.split_once(':')?;
            let (line, _) = rest.split_once(':')?;
            Some(Hit {
                path: path.to_string(),
                line: line.parse().ok()?,
            })
        })
        .collect()
}

/// A region to read: path, first and last line, strength, hit count.
#[derive(Debug, Clone, PartialEq)]
struct Window {
    path: String,
    start: u32,
    end: u32,
    strength: f64,
    prose: bool,
    hits: usize,
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

/// Numbered lines from a `Read` result (`N\ttext` or `N→text`) or `grep -n` output
/// (`N:text`), restricted to `window`. Trailing blank lines are dropped: Claude Code's
/// `Read` shows a phantom empty line after a file's final newline, and citing it would be
/// refused as past the end of the file.
fn numbered_lines(text: &str, window: &Window) -> Vec<(u32, String)> {
    let mut lines: Vec<(u32, String)> = text
        .lines()
        .filter_map(|l| {
            let t = l.trim_start();
            let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let n: u32 = t[..digits].parse().ok()?;
            let rest = &t[digits..];
            let rest = rest
                .strip_prefix('\t')
                .or_else(|| rest.strip_prefix('→'))
                .or_else(|| rest.strip_prefix(':'))?;
            (window.start..=window.end)
                .contains(&n)
                .then(|| (n, rest.to_string()))
        })
        .collect();
    while lines.last().is_some_and(|(_, t)| t.trim().is_empty()) {
        lines.pop();
    }
    lines
}

fn read_action(brief: &Brief, conv: &Conversation, w: &Window) -> Action {
    let file = format!("{}/{}", brief.repository.trim_end_matches('/'), w.path);
    if conv.offers("Read") {
        Action {
            name: "Read",
            input: json!({"file_path": file, "offset": w.start, "limit": w.end - w.start + 1}),
        }
    } else {
        bash(
            format!("grep -n '' {}", sh_quote(&file)),
            "Read the file with line numbers",
        )
    }
}

fn rail(args: &str) -> String {
    format!("anvil-bench case {args}")
}

/// Finalizes with a decline and ends the conversation.
fn decline(plan: &mut Plan, status: &str, reason: &str) -> Result<Turn, Turn> {
    let command = rail(&format!(
        "finalize . --status {status} --reason {}",
        sh_quote(reason)
    ));
    let r = plan.one(
        &format!("Declining: {reason}"),
        bash(command, "Finalize the case as declined"),
    )?;
    Ok(Turn::text(if r.is_error {
        format!(
            "I could not record the outcome ({}). My conclusion: {status} — {reason}",
            first_line(&r.text)
        )
    } else {
        format!("Finalized as {}: {reason}", first_line(&r.text))
    }))
}

fn investigate(brief: &Brief, plan: &mut Plan) -> Result<Turn, Turn> {
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
        let patterns: String = needles
            .iter()
            .map(|n| format!(" -e {}", sh_quote(n)))
            .collect();
        let command = format!(
            "grep -rnIF --exclude-dir=.git -m 50{patterns} {}",
            sh_quote(&brief.repository)
        );
        let r = plan.one(
            &format!("Searching the repository for {}.", needles.join(" / ")),
            bash(command, "Search the repository for the target's name"),
        )?;
        let hits = parse_grep(&r.text, &brief.repository);
        if !hits.is_empty() {
            found = Some((needles.clone(), hits));
            break;
        }
    }
    let Some((needles, hits)) = found else {
        return decline(
            plan,
            "insufficient_evidence",
            &format!("no file in the repository mentions `{name}`"),
        );
    };
    let windows = windows(brief, &hits);
    if windows.is_empty() {
        return decline(
            plan,
            "insufficient_evidence",
            &format!("every mention of `{name}` lies outside the inspect scopes"),
        );
    }

    // Read the best hits.
    let reads = windows
        .iter()
        .map(|w| read_action(brief, plan.conv, w))
        .collect();
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
            lines: numbered_lines(&r.text, w),
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
    for s in &support {
        let command = rail(&format!(
            "add-evidence . --path {} --start-line {} --end-line {}",
            sh_quote(&s.path),
            s.start,
            s.end
        ));
        let r = plan.one(
            &format!("Citing {} lines {}-{}.", s.path, s.start, s.end),
            bash(command, "Record a source region as evidence"),
        )?;
        match id_in(&r, "ev-") {
            Some(id) => artifacts.push(id),
            None => {
                return decline(
                    plan,
                    "insufficient_evidence",
                    &format!("add-evidence failed: {}", first_line(&r.text)),
                );
            }
        }
    }

    // The claim, then freeze.
    let artifact_args: String = artifacts
        .iter()
        .map(|a| format!(" --artifact {a}"))
        .collect();
    let command = rail(&format!(
        "add-claim . --predicate {} --value {}{artifact_args} --confidence 0.8",
        sh_quote(&brief.predicate),
        sh_quote(&value.to_string())
    ));
    let r = plan.one(
        &format!("Claiming {} = {value}.", brief.predicate),
        bash(command, "Record the claim"),
    )?;
    let Some(claim) = id_in(&r, "cl-") else {
        return decline(
            plan,
            "insufficient_evidence",
            &format!("add-claim failed: {}", first_line(&r.text)),
        );
    };
    let r = plan.one(
        "Freezing the research.",
        bash(rail("freeze-research ."), "Freeze evidence and claims"),
    )?;
    if r.is_error || r.text.contains(&format!("rejected {claim}")) {
        return decline(
            plan,
            "insufficient_evidence",
            &format!("stage 1 did not accept the claim: {}", first_line(&r.text)),
        );
    }

    // The proposal.
    let proposal = proposal(brief, &value, &claim, &rationale);
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(&proposal).unwrap_or_default()
    );
    let write = match (plan.conv.offers("Write"), working_directory(plan.conv)) {
        (true, Some(cwd)) => Some(Action {
            name: "Write",
            input: json!({"file_path": format!("{cwd}/output/proposal.json"), "content": text}),
        }),
        (true, None) => {
            // The client did not say where it runs: ask the shell once, then write.
            let r = plan.one(
                "Finding the run directory.",
                bash("pwd".into(), "Print the working directory"),
            )?;
            let cwd = r.text.trim().to_string();
            (!r.is_error && cwd.starts_with('/')).then(|| Action {
                name: "Write",
                input: json!({"file_path": format!("{cwd}/output/proposal.json"), "content": text}),
            })
        }
        (false, _) => None,
    };
    let write = write.unwrap_or_else(|| {
        bash(
            format!("cat > output/proposal.json <<'ANVIL_EOF'\n{text}ANVIL_EOF"),
            "Write the proposal",
        )
    });
    let r = plan.one("Writing output/proposal.json.", write)?;
    if r.is_error {
        return decline(
            plan,
            "insufficient_evidence",
            &format!("could not write the proposal: {}", first_line(&r.text)),
        );
    }

    let r = plan.one(
        "Validating the proposal.",
        bash(rail("validate ."), "Validate the proposal"),
    )?;
    if r.is_error {
        return decline(
            plan,
            "insufficient_evidence",
            &format!("validation rejected the proposal: {}", first_line(&r.text)),
        );
    }
    let r = plan.one("Finalizing.", bash(rail("finalize ."), "Finalize the case"))?;
    Ok(Turn::text(if r.is_error {
        format!(
            "Finalize refused: {}. The proposal stays unfinalized.",
            first_line(&r.text)
        )
    } else {
        format!(
            "Finalized: {} — {} = {value}. {rationale}",
            first_line(&r.text),
            brief.field
        )
    }))
}

/// The first token starting with `prefix` in a successful result.
fn id_in(r: &ToolResult, prefix: &str) -> Option<String> {
    if r.is_error {
        return None;
    }
    r.text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .find(|t| t.starts_with(prefix) && t.len() > prefix.len())
        .map(str::to_string)
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
    fn quoting_survives_the_shell() {
        assert_eq!(sh_quote("src/a.py"), "src/a.py");
        assert_eq!(sh_quote("\"s\""), "'\"s\"'");
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
        assert_eq!(sh_quote(""), "''");
    }

    #[test]
    fn grep_output_becomes_repository_relative_hits() {
        let out = "/r/src/a.py:12:    x = capture_timeout\n/r/docs/b.md:3:a:b\nBinary file /r/x matches\n";
        assert_eq!(
            parse_grep(out, "/r"),
            [
                Hit {
                    path: "src/a.py".into(),
                    line: 12
                },
                Hit {
                    path: "docs/b.md".into(),
                    line: 3
                }
            ]
        );
    }

    #[test]
    fn read_output_in_either_format_is_numbered() {
        let w = Window {
            path: "a".into(),
            start: 2,
            end: 3,
            strength: 0.9,
            prose: false,
            hits: 1,
        };
        assert_eq!(
            numbered_lines("     2\tx\n3→y\n4\tz", &w),
            [(2, "x".to_string()), (3, "y".to_string())]
        );
        assert_eq!(numbered_lines("2:x:y", &w), [(2, "x:y".to_string())]);
        // Regression: Claude Code's Read shows an empty line after the final newline; it
        // must not widen a citation past the end of the file.
        assert_eq!(numbered_lines("2\tx\n3\t", &w), [(2, "x".to_string())]);
    }

    #[test]
    fn ids_are_found_only_in_successful_results() {
        let ok = ToolResult {
            text: "ev-0e4b7912\n".into(),
            is_error: false,
        };
        assert_eq!(id_in(&ok, "ev-").as_deref(), Some("ev-0e4b7912"));
        let err = ToolResult {
            text: "Exit code 1\nerror: ev-1 refused".into(),
            is_error: true,
        };
        assert_eq!(id_in(&err, "ev-"), None);
    }

    #[test]
    fn without_a_brief_it_says_so_and_stops() {
        let turn = answer(&Conversation {
            texts: vec!["say hi".into()],
            ..Conversation::default()
        });
        assert!(!turn.has_tool_use());
    }
}
