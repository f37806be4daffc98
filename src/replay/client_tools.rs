//! The client's tools the heuristic investigation plays through: the client's shell — Claude
//! Code's `Bash` (with `Read`/`Write` where offered) or Codex's `exec_command` — running
//! grep and `anvil-bench case …`, or the `anvil` MCP server's tools (`mcp__anvil__*`, see
//! [`super::mcp_tools`]) when the request offers them, with the shell, where there is one,
//! writing output/proposal.json.
//!
//! Each move is a pair: the action that asks for it, and the reading of its result. The
//! plan (`crate::investigator::plan`, through [`super::heuristic`]) never looks at a tool's
//! name or output format itself.
//!
//! Invariant: the choice of tools is a pure function of the request's tool list, so every request of a
//! conversation replays the plan through the same tools.

use serde_json::{Value, json};

use super::conversation::{Conversation, ToolResult};
use super::mcp_tools;
use super::moves::{Action, first_line, id_in};
use crate::driver::mcp_wiring::tool as rail;
use crate::investigator::brief::Brief;
use crate::investigator::plan::{Found, Frozen, Hit, Window};

/// The client's shell tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    /// Claude Code's `Bash` (`command`, `description`).
    Bash,
    /// Codex's `exec_command` (`cmd`), run without a login shell so the PATH the agent was
    /// given (with `anvil-bench` first) holds.
    ExecCommand,
}

impl Shell {
    fn of(conv: &Conversation) -> Option<Shell> {
        if conv.offers("Bash") {
            Some(Shell::Bash)
        } else if conv.offers("exec_command") {
            Some(Shell::ExecCommand)
        } else {
            None
        }
    }

    /// Runs `command` (`description` says why, where the tool takes one).
    #[must_use]
    pub fn run(self, command: String, description: &str) -> Action {
        match self {
            Shell::Bash => Action {
                name: "Bash".into(),
                input: json!({"command": command, "description": description}),
            },
            Shell::ExecCommand => Action {
                name: "exec_command".into(),
                input: json!({"cmd": command, "login": false, "yield_time_ms": 30000}),
            },
        }
    }

    /// Writes `text` to output/proposal.json of the working directory.
    fn write_proposal(self, text: &str) -> Action {
        self.run(
            format!("cat > output/proposal.json <<'ANVIL_EOF'\n{text}ANVIL_EOF"),
            "Write the proposal",
        )
    }
}

/// How the rails and the repository are reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientTools {
    /// Shell commands; `read` says whether the client's `Read` tool is offered.
    Bash { shell: Shell, read: bool },
    /// The `anvil` MCP server's tools, and the shell when there is one.
    Mcp { shell: Option<Shell> },
}

impl ClientTools {
    /// MCP when the request offers every `mcp__anvil__*` tool the plan uses, else the
    /// shell; `None` when it offers neither.
    #[must_use]
    pub fn of(conv: &Conversation) -> Option<ClientTools> {
        let shell = Shell::of(conv);
        if mcp_tools::tools_used().iter().all(|t| conv.offers(t)) {
            return Some(ClientTools::Mcp { shell });
        }
        shell.map(|shell| ClientTools::Bash {
            shell,
            read: conv.offers("Read"),
        })
    }

    /// One search for any of `needles`.
    #[must_use]
    pub fn search(self, brief: &Brief, needles: &[String]) -> Vec<Action> {
        match self {
            ClientTools::Bash { shell, .. } => {
                let patterns: String = needles
                    .iter()
                    .map(|n| format!(" -e {}", sh_quote(n)))
                    .collect();
                let command = format!(
                    "grep -rnIF --exclude-dir=.git -m 50{patterns} {}",
                    sh_quote(&brief.repository)
                );
                vec![shell.run(command, "Search the repository for the target's name")]
            }
            ClientTools::Mcp { .. } => needles.iter().map(|n| mcp_tools::find_text(n)).collect(),
        }
    }

    #[must_use]
    pub fn found(self, brief: &Brief, results: &[ToolResult]) -> Found {
        match self {
            ClientTools::Bash { .. } => Found {
                hits: results
                    .iter()
                    .flat_map(|r| parse_grep(&r.text, &brief.repository))
                    .collect(),
                ..Found::default()
            },
            ClientTools::Mcp { .. } => mcp_tools::found(results),
        }
    }

    /// Reads `w` (a window of a repository-relative path).
    #[must_use]
    pub fn read(self, brief: &Brief, w: &Window) -> Action {
        let file = format!("{}/{}", brief.repository.trim_end_matches('/'), w.path);
        match self {
            ClientTools::Bash { read: true, .. } => Action {
                name: "Read".into(),
                input: json!({"file_path": file, "offset": w.start, "limit": w.end - w.start + 1}),
            },
            // Claude Code allows `grep` alone; Codex's shell takes the window only.
            ClientTools::Bash {
                shell: Shell::Bash, ..
            } => Shell::Bash.run(
                format!("grep -n '' {}", sh_quote(&file)),
                "Read the file with line numbers",
            ),
            ClientTools::Bash { shell, .. } => shell.run(
                format!(
                    "grep -n '' {} | sed -n '{},{}p'",
                    sh_quote(&file),
                    w.start,
                    w.end
                ),
                "Read the window with line numbers",
            ),
            ClientTools::Mcp { .. } => mcp_tools::read_context(w),
        }
    }

    /// The numbered lines of `w` in a read's result.
    #[must_use]
    pub fn lines(self, r: &ToolResult, w: &Window) -> Vec<(u32, String)> {
        match self {
            ClientTools::Bash { .. } => numbered_lines(&r.text, w),
            ClientTools::Mcp { .. } => mcp_tools::context_lines(r, w),
        }
    }

    /// Cites lines `start..=end` of `path`; `n` numbers the citation within the run.
    #[must_use]
    pub fn add_evidence(self, path: &str, start: u32, end: u32, n: usize) -> Action {
        match self {
            ClientTools::Bash { shell, .. } => shell.run(
                rail(&format!(
                    "add-evidence . --path {} --start-line {start} --end-line {end}",
                    sh_quote(path)
                )),
                "Record a source region as evidence",
            ),
            ClientTools::Mcp { .. } => mcp_tools::add_evidence(path, start, end, n),
        }
    }

    /// Claims `value`; `n` numbers the claim within the run.
    #[must_use]
    pub fn add_claim(
        self,
        predicate: &str,
        value: &Value,
        artifacts: &[String],
        n: usize,
    ) -> Action {
        match self {
            ClientTools::Bash { shell, .. } => {
                let artifact_args: String = artifacts
                    .iter()
                    .map(|a| format!(" --artifact {a}"))
                    .collect();
                shell.run(
                    rail(&format!(
                        "add-claim . --predicate {} --value {}{artifact_args} --confidence 0.8",
                        sh_quote(predicate),
                        sh_quote(&value.to_string())
                    )),
                    "Record the claim",
                )
            }
            ClientTools::Mcp { .. } => mcp_tools::add_claim(predicate, value, artifacts, n),
        }
    }

    /// The id (`ev-…`, `cl-…`) a successful rail call created.
    #[must_use]
    pub fn id(self, r: &ToolResult, prefix: &str) -> Option<String> {
        match self {
            ClientTools::Bash { .. } => id_in(r, prefix),
            ClientTools::Mcp { .. } => mcp_tools::id(r, prefix),
        }
    }

    #[must_use]
    pub fn freeze(self) -> Action {
        match self {
            ClientTools::Bash { shell, .. } => {
                shell.run(rail("freeze-research ."), "Freeze evidence and claims")
            }
            ClientTools::Mcp { .. } => mcp_tools::rail_call(rail::FREEZE_RESEARCH, json!({})),
        }
    }

    /// What stage 1 recorded, or why freezing failed.
    ///
    /// # Errors
    ///
    /// The rail's refusal, in one line.
    pub fn frozen(self, r: &ToolResult) -> Result<Frozen, String> {
        match self {
            ClientTools::Bash { .. } if r.is_error => Err(first_line(&r.text)),
            ClientTools::Bash { .. } => Ok(frozen_text(&r.text)),
            ClientTools::Mcp { .. } => mcp_tools::frozen(r),
        }
    }

    /// Asks where the run is, when the client's environment block does not say.
    #[must_use]
    pub fn locate(self) -> Action {
        match self {
            ClientTools::Bash { shell, .. } => {
                shell.run("pwd".into(), "Print the working directory")
            }
            ClientTools::Mcp { .. } => mcp_tools::rail_call(rail::SHOW, json!({})),
        }
    }

    /// The run directory a [`ClientTools::locate`] result names.
    #[must_use]
    pub fn located(self, r: &ToolResult) -> Option<String> {
        let dir = match self {
            ClientTools::Bash { .. } => r.text.trim().to_string(),
            ClientTools::Mcp { .. } => mcp_tools::json_of(r)?.get("run")?.as_str()?.to_string(),
        };
        (!r.is_error && dir.starts_with('/')).then_some(dir)
    }

    /// Writes output/proposal.json without a `Write` tool: through the shell, if any.
    #[must_use]
    pub fn write_without_write_tool(self, text: &str) -> Option<Action> {
        match self {
            ClientTools::Bash { shell, .. } | ClientTools::Mcp { shell: Some(shell) } => {
                Some(shell.write_proposal(text))
            }
            ClientTools::Mcp { shell: None } => None,
        }
    }

    #[must_use]
    pub fn validate(self) -> Action {
        match self {
            ClientTools::Bash { shell, .. } => {
                shell.run(rail("validate ."), "Validate the proposal")
            }
            ClientTools::Mcp { .. } => mcp_tools::rail_call(rail::VALIDATE, json!({})),
        }
    }

    /// `Err(why)` unless the validation passed.
    ///
    /// # Errors
    ///
    /// The failed checks or the rail's refusal, in one line.
    pub fn validated(self, r: &ToolResult) -> Result<(), String> {
        match self {
            ClientTools::Bash { .. } if r.is_error => Err(first_line(&r.text)),
            ClientTools::Bash { .. } => Ok(()),
            ClientTools::Mcp { .. } => mcp_tools::validated(r),
        }
    }

    /// Finalizes: as validated, or declined with `(status, reason)`.
    #[must_use]
    pub fn finalize(self, decline: Option<(&str, &str)>) -> Action {
        match (self, decline) {
            (ClientTools::Bash { shell, .. }, None) => {
                shell.run(rail("finalize ."), "Finalize the case")
            }
            (ClientTools::Bash { shell, .. }, Some((status, reason))) => shell.run(
                rail(&format!(
                    "finalize . --status {status} --reason {}",
                    sh_quote(reason)
                )),
                "Finalize the case as declined",
            ),
            (ClientTools::Mcp { .. }, None) => mcp_tools::rail_call(rail::FINALIZE, json!({})),
            (ClientTools::Mcp { .. }, Some((status, reason))) => {
                mcp_tools::rail_call(rail::FINALIZE, json!({"status": status, "reason": reason}))
            }
        }
    }

    /// Whether one of the plan's own calls (a search, a read, a rail) failed: an error, or —
    /// through MCP, whose refusals Codex does not flag — a result that is not the server's
    /// JSON.
    #[must_use]
    pub fn failed(self, r: &ToolResult) -> bool {
        match self {
            ClientTools::Bash { .. } => r.is_error,
            ClientTools::Mcp { .. } => mcp_tools::json_of(r).is_none(),
        }
    }

    /// A one-line account of a result: the outcome a finalize recorded, or why a call
    /// failed.
    #[must_use]
    pub fn summary(self, r: &ToolResult) -> String {
        match self {
            ClientTools::Bash { .. } => first_line(&r.text),
            ClientTools::Mcp { .. } => mcp_tools::summary(r),
        }
    }
}

fn rail(args: &str) -> String {
    format!("anvil-bench case {args}")
}

/// Quotes `s` for a POSIX shell.
#[must_use]
pub fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `case freeze-research`'s text: a `research frozen: … N conflict(s)` line, and one
/// `rejected <id>: <reasons>` line per rejected claim.
fn frozen_text(text: &str) -> Frozen {
    let mut frozen = Frozen::default();
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("research frozen:") {
            frozen.conflicts = rest
                .split(',')
                .find_map(|part| part.trim().strip_suffix(" conflict(s)")?.parse().ok())
                .unwrap_or(0);
        } else if let Some((id, why)) = line
            .strip_prefix("rejected ")
            .and_then(|rest| rest.split_once(": "))
        {
            frozen.rejected.push((id.to_string(), why.to_string()));
        }
    }
    frozen
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
            kind: "implementation".into(),
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
    fn the_freeze_text_says_what_stage_1_recorded() {
        let text = "research frozen: 1 claim(s) accepted, 1 rejected, 1 conflict(s)\n  rejected cl-2: too weak; no\n  field.unit = \"s\" (strength 0.9, verified 0.9)";
        assert_eq!(
            frozen_text(text),
            Frozen {
                rejected: vec![("cl-2".into(), "too weak; no".into())],
                conflicts: 1
            }
        );
        assert_eq!(
            frozen_text("research frozen: 1 claim(s) accepted, 0 rejected, 0 conflict(s)"),
            Frozen::default()
        );
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

    /// Regression: Codex sends an MCP refusal (here of a `supported` finalize) as a plain
    /// result, and the plan went on as if the case were finalized instead of declining.
    #[test]
    fn an_unflagged_mcp_refusal_is_a_failure() {
        let tools = ClientTools::Mcp { shell: None };
        let refusal = ToolResult {
            text: "unproven_support: finalize refused: support strength 0.6 < 0.8".into(),
            is_error: false,
        };
        assert!(tools.failed(&refusal));
        let done = ToolResult {
            text: "{\n  \"status\": \"supported\"\n}".into(),
            is_error: false,
        };
        assert!(!tools.failed(&done));
        let bash = ClientTools::Bash {
            shell: Shell::ExecCommand,
            read: false,
        };
        assert!(!bash.failed(&refusal), "a shell's exit code decides");
    }

    #[test]
    fn the_tools_follow_what_the_request_offers() {
        let offer = |tools: &[&str]| Conversation {
            tools: tools.iter().map(std::string::ToString::to_string).collect(),
            ..Conversation::default()
        };
        let bash = |read| {
            Some(ClientTools::Bash {
                shell: Shell::Bash,
                read,
            })
        };
        assert_eq!(
            ClientTools::of(&offer(&["Bash", "Read", "Write"])),
            bash(true)
        );
        assert_eq!(ClientTools::of(&offer(&["Bash"])), bash(false));
        let used = mcp_tools::tools_used();
        let mut mcp: Vec<&str> = used.iter().map(String::as_str).collect();
        mcp.push("Write");
        assert_eq!(
            ClientTools::of(&offer(&mcp)),
            Some(ClientTools::Mcp { shell: None })
        );
        // A partial MCP offer is not enough to run the case through it.
        assert_eq!(
            ClientTools::of(&offer(&["Bash", "mcp__anvil__add_claim"])),
            bash(false)
        );
        // Codex: its shell, alone or beside the MCP tools (which then write through it).
        assert_eq!(
            ClientTools::of(&offer(&["exec_command", "write_stdin"])),
            Some(ClientTools::Bash {
                shell: Shell::ExecCommand,
                read: false
            })
        );
        mcp.push("exec_command");
        assert_eq!(
            ClientTools::of(&offer(&mcp)),
            Some(ClientTools::Mcp {
                shell: Some(Shell::ExecCommand)
            })
        );
        // Nothing to play through: no tools.
        assert_eq!(
            ClientTools::of(&offer(&["functions__exec", "view_image"])),
            None
        );
    }
}
