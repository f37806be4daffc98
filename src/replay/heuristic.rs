//! `--policy heuristic`: the investigation of [`crate::investigator::plan`] played through
//! the client's tools.
//!
//! From the case brief in the prompt it makes each move of the plan as tool calls: it
//! plays whichever tools the request offers (see [`super::client_tools`]) — the `anvil` MCP
//! server's tools (`mcp__anvil__*`) when they are there, else grep and `anvil-bench case …`
//! through the shell (Claude Code's `Bash`, Codex's `exec_command`) — and writes
//! output/proposal.json with `Write`, or through the shell where there is no `Write`.
//!
//! Invariant: stateless. Every request replays the plan from the start against the tool
//! results already in the conversation (the i-th action of the plan is the i-th tool call),
//! so the next turn is a pure function of the request and a retried request gets the same
//! turn.

use serde_json::{Value, json};

use super::client_tools::ClientTools;
use super::conversation::{Block, Conversation, ToolCall, ToolResult, Turn};
use super::moves::Action;
use crate::case::finalize::Status;
use crate::investigator::brief::Brief;
use crate::investigator::plan::{self, Found, Frozen, Hands, Lines, Move, Window};

/// The next turn of the heuristic investigation for `conv`.
#[must_use]
pub fn answer(conv: &Conversation) -> Turn {
    let Some(tools) = ClientTools::of(conv) else {
        return Turn::text(
            "The replay model plays a shell (Bash or exec_command) or the anvil MCP tools, and this request offers none of them. (Codex offers only its code-mode `exec` tool to the models it knows: run it with a model outside its catalogue, such as `-m replay`.)",
        );
    };
    let Some(brief) = conv.texts.iter().find_map(|t| Brief::parse(t)) else {
        return Turn::text(
            "I found no anvil-bench case brief (CASE.md) in the prompt, so there is nothing to investigate.",
        );
    };
    let mut replay = Replay {
        calls: &conv.tool_calls,
        next: 0,
        conv,
        tools,
    };
    match plan::investigate(&brief, &mut replay) {
        Ok(outcome) => Turn::text(outcome.message),
        Err(turn) => turn,
    }
}

/// A cursor over the conversation's tool calls. `step` either returns the results of the
/// actions already taken, or `Err(turn)`: the turn that takes them now.
struct Replay<'a> {
    calls: &'a [ToolCall],
    next: usize,
    conv: &'a Conversation,
    tools: ClientTools,
}

impl Replay<'_> {
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

impl Hands for Replay<'_> {
    type Stop = Turn;

    fn search(&mut self, brief: &Brief, needles: &[String]) -> Result<Found, Turn> {
        let say = format!("Searching the repository for {}.", needles.join(" / "));
        let results = self.step(&say, self.tools.search(brief, needles))?;
        Ok(self.tools.found(brief, &results))
    }

    fn read(&mut self, brief: &Brief, windows: &[Window]) -> Result<Vec<Option<Lines>>, Turn> {
        let tools = self.tools;
        let reads = windows.iter().map(|w| tools.read(brief, w)).collect();
        let say = format!("Reading the {} best regions.", windows.len());
        let texts = self.step(&say, reads)?;
        Ok(windows
            .iter()
            .zip(&texts)
            .map(|(w, r)| (!tools.failed(r)).then(|| tools.lines(r, w)))
            .collect())
    }

    fn add_evidence(&mut self, path: &str, start: u32, end: u32, n: usize) -> Move<String, Turn> {
        let say = format!("Citing {path} lines {start}-{end}.");
        let r = self.one(&say, self.tools.add_evidence(path, start, end, n))?;
        Ok(self
            .tools
            .id(&r, "ev-")
            .ok_or_else(|| self.tools.summary(&r)))
    }

    fn add_claim(
        &mut self,
        predicate: &str,
        value: &Value,
        artifacts: &[String],
        n: usize,
    ) -> Move<String, Turn> {
        let say = format!("Claiming {predicate} = {value}.");
        let r = self.one(&say, self.tools.add_claim(predicate, value, artifacts, n))?;
        Ok(self
            .tools
            .id(&r, "cl-")
            .ok_or_else(|| self.tools.summary(&r)))
    }

    fn freeze(&mut self) -> Move<Frozen, Turn> {
        let r = self.one("Freezing the research.", self.tools.freeze())?;
        Ok(self.tools.frozen(&r))
    }

    fn write_proposal(&mut self, text: &str) -> Move<(), Turn> {
        let tools = self.tools;
        let write_to = |cwd: String| Action {
            name: "Write".into(),
            input: json!({"file_path": format!("{cwd}/output/proposal.json"), "content": text}),
        };
        let write = match (self.conv.offers("Write"), working_directory(self.conv)) {
            (true, Some(cwd)) => Some(write_to(cwd)),
            (true, None) => {
                // The client did not say where it runs: ask once, then write.
                let r = self.one("Finding the run directory.", tools.locate())?;
                tools.located(&r).map(write_to)
            }
            (false, _) => None,
        };
        let Some(write) = write.or_else(|| tools.write_without_write_tool(text)) else {
            return Ok(Err(
                "no tool here can write output/proposal.json in the run directory".into(),
            ));
        };
        let r = self.one("Writing output/proposal.json.", write)?;
        Ok(if r.is_error {
            Err(tools.summary(&r))
        } else {
            Ok(())
        })
    }

    fn validate(&mut self) -> Move<(), Turn> {
        let r = self.one("Validating the proposal.", self.tools.validate())?;
        Ok(self.tools.validated(&r))
    }

    fn finalize(&mut self, named: Option<(Status, &str)>) -> Move<String, Turn> {
        let say = match named {
            None => "Finalizing.".to_string(),
            Some((Status::Supported, reason)) => format!("Finalizing as supported: {reason}"),
            Some((_, reason)) => format!("Declining: {reason}"),
        };
        let action = self.tools.finalize(named.map(|(s, r)| (s.as_str(), r)));
        let r = self.one(&say, action)?;
        Ok(if self.tools.failed(&r) {
            Err(self.tools.summary(&r))
        } else {
            Ok(self.tools.summary(&r))
        })
    }
}

/// Where the client runs, as its environment block says.
fn working_directory(conv: &Conversation) -> Option<String> {
    conv.texts.iter().find_map(|t| {
        let rest = &t[t.find("Primary working directory:")? + "Primary working directory:".len()..];
        let dir = rest.split_whitespace().next()?;
        dir.starts_with('/').then(|| dir.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_tool_to_play_it_says_so_and_stops() {
        let turn = answer(&Conversation {
            texts: vec!["# Case `x`".into()],
            tools: vec!["functions__exec".into()],
            ..Conversation::default()
        });
        let Block::Text(text) = &turn.blocks[0] else {
            panic!("{turn:?}")
        };
        assert!(text.contains("offers none of them"), "{text}");
    }

    #[test]
    fn without_a_brief_it_says_so_and_stops() {
        let turn = answer(&Conversation {
            texts: vec!["say hi".into()],
            tools: vec!["Bash".into()],
            ..Conversation::default()
        });
        assert!(!turn.has_tool_use());
    }
}
