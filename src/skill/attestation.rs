//! Attestation rules (R-GATE-1): contract data that says what text in an excerpt states a
//! value of an output predicate. The engine's matcher lives in `case::attest`; this module
//! only holds the data. [`SkillPolicy::check_attestation`](super::SkillPolicy) checks it
//! against the policy it belongs to: every rule compiles, and every value a rule states is
//! admitted by the field's value constraint, so a rule can never attest a value the skill
//! could not write.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Stands for the quantity in a rule's pattern: the target's name in any spelling, or a
/// name or literal it flows into or out of within the excerpt.
pub const QUANTITY: &str = "{q}";

/// How an excerpt states a value of one output predicate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Attestation {
    /// Each rule is a regular expression matched on the lines of an excerpt that concern
    /// the target; a match states the rule's values.
    Patterns { rules: Vec<AttestRule> },
    /// Free text: at least `share` of the text's content words (words not in `ignore`,
    /// not the target's own name or type) must appear in the cited lines.
    ContentWords { share: f64, ignore: Vec<String> },
}

/// One pattern rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AttestRule {
    /// Stable name, quoted in close.json when the rule matches.
    pub id: String,
    /// The values a match states (more than one when the idiom is ambiguous: such a line
    /// attests each of them and contradicts none of them).
    pub values: Vec<Value>,
    /// Matched on the line, with the target's spellings and aliases replaced by the
    /// quantity placeholder (`{q}` in the pattern).
    pub pattern: String,
    /// The rule does not fire on a line that also matches this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unless: Option<String>,
    /// The rule fires only when one of the line's enclosing lines (a code block header, a
    /// markdown heading) matches this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// ... and none of them matches this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unless_context: Option<String>,
}

impl AttestRule {
    /// The patterns of this rule, `{q}` replaced by `placeholder`.
    #[must_use]
    pub fn sources(&self, placeholder: &str) -> [Option<String>; 4] {
        let fill = |p: &Option<String>| p.as_ref().map(|s| s.replace(QUANTITY, placeholder));
        [
            Some(self.pattern.replace(QUANTITY, placeholder)),
            fill(&self.unless),
            fill(&self.context),
            fill(&self.unless_context),
        ]
    }
}
