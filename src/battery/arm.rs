//! The arms of a battery: who investigates each trial.
//!
//! Invariant: an arm's name is its identity in results.json, trial ids and `--resume`;
//! [`Arm::parse`] and [`Arm::as_str`] are inverse, and only the deterministic arms are
//! held to agree with themselves across repeats (R-BAT-10).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Who investigates a trial.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Arm {
    /// Deterministic, no repository access: only what the AIR alone supports.
    Baseline,
    /// The non-LLM investigator over the tool router, in-process.
    Heuristic,
    /// The positive control: proposes exactly the label through the rails.
    Oracle,
    /// The negative control, first variant: tries every way to the labels it can reach.
    CheaterReach,
    /// The negative control, second variant: writes a canary handed to it on purpose.
    CheaterHanded,
    /// The over-claiming adversary: cites any region naming the target, claims a wrong
    /// value (it is told the right one so it can avoid it). Measures the engine's gate.
    Overclaim,
    /// A scripted investigator (`--script FILE`) through the scripted driver.
    Scripted,
    /// The real Claude Code CLI.
    ClaudeCode,
    /// The real Codex CLI.
    Codex,
    /// Any command (`--command PROG ARGS...`).
    Command,
}

impl Arm {
    pub const ALL: [Arm; 10] = [
        Arm::Baseline,
        Arm::Heuristic,
        Arm::Oracle,
        Arm::CheaterReach,
        Arm::CheaterHanded,
        Arm::Overclaim,
        Arm::Scripted,
        Arm::ClaudeCode,
        Arm::Codex,
        Arm::Command,
    ];

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Arm::Baseline => "baseline",
            Arm::Heuristic => "heuristic",
            Arm::Oracle => "oracle",
            Arm::CheaterReach => "cheater-reach",
            Arm::CheaterHanded => "cheater-handed",
            Arm::Overclaim => "overclaim",
            Arm::Scripted => "scripted",
            Arm::ClaudeCode => "claude-code",
            Arm::Codex => "codex",
            Arm::Command => "command",
        }
    }

    #[must_use]
    pub fn parse(s: &str) -> Option<Arm> {
        Arm::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// Same inputs, same outcome: a repeat that disagrees is a defect (R-BAT-10).
    #[must_use]
    pub fn deterministic(self) -> bool {
        matches!(
            self,
            Arm::Baseline | Arm::Heuristic | Arm::Oracle | Arm::CheaterHanded | Arm::Overclaim
        )
    }

    /// The controls run beside the arms and are judged, not scored for contribution.
    #[must_use]
    pub fn is_control(self) -> bool {
        matches!(self, Arm::Oracle | Arm::CheaterReach | Arm::CheaterHanded)
    }

    /// An arm that spends a model's tokens (its trials may fail for infrastructure reasons
    /// and cost money).
    #[must_use]
    pub fn uses_model(self) -> bool {
        matches!(self, Arm::ClaudeCode | Arm::Codex)
    }

    /// An arm whose agent is a program the battery does not own (a model CLI or any
    /// command): what it writes, and how much, is beyond the engine's reach.
    #[must_use]
    pub fn external(self) -> bool {
        matches!(self, Arm::ClaudeCode | Arm::Codex | Arm::Command)
    }

    /// An arm that runs a separate agent process.
    #[must_use]
    pub fn spawns(self) -> bool {
        matches!(
            self,
            Arm::CheaterReach | Arm::CheaterHanded | Arm::ClaudeCode | Arm::Codex | Arm::Command
        )
    }
}

impl fmt::Display for Arm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The investigators `--investigator` accepts (the arm measured against the baseline).
pub const INVESTIGATORS: [Arm; 7] = [
    Arm::Heuristic,
    Arm::Oracle,
    Arm::Overclaim,
    Arm::Scripted,
    Arm::ClaudeCode,
    Arm::Codex,
    Arm::Command,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for arm in Arm::ALL {
            assert_eq!(Arm::parse(arm.as_str()), Some(arm));
            assert_eq!(
                serde_json::to_value(arm).unwrap(),
                serde_json::json!(arm.as_str())
            );
        }
        assert_eq!(Arm::parse("nope"), None);
    }
}
