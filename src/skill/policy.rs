//! The policy part of a skill contract: the evidence it admits, the values its fields
//! accept, when it auto-approves, and how an excerpt attests each output. Its canonical
//! hash is the policy hash.
//!
//! Invariant: a policy is data; the engine reads it and never special-cases a skill.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::attestation::Attestation;
use super::kinds::DeficiencyCode;

/// Where an evidence artifact lives, decided by the engine from the inspect scope (or
/// derived: `comment`, `external`), never by the agent.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceKind {
    Implementation,
    ContractTest,
    Schema,
    Doc,
    Comment,
    External,
}

impl EvidenceKind {
    pub const ALL: [EvidenceKind; 6] = [
        EvidenceKind::Implementation,
        EvidenceKind::ContractTest,
        EvidenceKind::Schema,
        EvidenceKind::Doc,
        EvidenceKind::Comment,
        EvidenceKind::External,
    ];

    /// Strength of one artifact of this kind (DESIGN §5).
    #[must_use]
    pub fn strength(self) -> f64 {
        match self {
            EvidenceKind::Implementation => 0.9,
            EvidenceKind::ContractTest => 0.85,
            EvidenceKind::Schema => 0.8,
            EvidenceKind::Doc => 0.6,
            EvidenceKind::Comment => 0.4,
            EvidenceKind::External => 0.3,
        }
    }

    /// Kinds a path scope may assign. `comment` and `external` are derived, never scoped.
    #[must_use]
    pub fn assignable_by_scope(self) -> bool {
        !matches!(self, EvidenceKind::Comment | EvidenceKind::External)
    }

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceKind::Implementation => "implementation",
            EvidenceKind::ContractTest => "contract_test",
            EvidenceKind::Schema => "schema",
            EvidenceKind::Doc => "doc",
            EvidenceKind::Comment => "comment",
            EvidenceKind::External => "external",
        }
    }

    #[must_use]
    pub fn parse(s: &str) -> Option<EvidenceKind> {
        EvidenceKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for EvidenceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verification bar for grounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    Verified,
    AllowUnverified,
}

/// When a contract property applies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "when", rename_all = "snake_case", deny_unknown_fields)]
pub enum Condition {
    Always,
    Never,
    ValueEquals { field: String, equals: Value },
}

impl Condition {
    /// Evaluates against the patched values of a proposal.
    #[must_use]
    pub fn holds(&self, set: &serde_json::Map<String, Value>) -> bool {
        match self {
            Condition::Always => true,
            Condition::Never => false,
            Condition::ValueEquals { field, equals } => set.get(field) == Some(equals),
        }
    }

    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Condition::Always => "always".into(),
            Condition::Never => "never".into(),
            Condition::ValueEquals { field, equals } => format!("only when `{field}` is {equals}"),
        }
    }
}

/// What values a writable field accepts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ValueConstraint {
    /// Free text: non-empty, not tautological.
    Text,
    Boolean,
    Vocabulary {
        values: Vec<String>,
    },
}

impl ValueConstraint {
    /// True when `value` has the right type and is in vocabulary.
    #[must_use]
    pub fn admits(&self, value: &Value) -> bool {
        match (self, value) {
            (ValueConstraint::Text, Value::String(s)) => !s.trim().is_empty(),
            (ValueConstraint::Boolean, Value::Bool(_)) => true,
            (ValueConstraint::Vocabulary { values }, Value::String(s)) => values.contains(s),
            _ => false,
        }
    }

    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            ValueConstraint::Text => "non-empty text that says more than the name".into(),
            ValueConstraint::Boolean => "true or false".into(),
            ValueConstraint::Vocabulary { values } => format!("one of {}", values.join(", ")),
        }
    }
}

/// One output: a writable AIR attribute and the predicate that asserts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OutputSpec {
    pub field: String,
    pub predicate: String,
}

/// The policy part of a contract: everything that decides admissibility and approval.
/// Its canonical hash is the policy hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SkillPolicy {
    pub triggers: Vec<DeficiencyCode>,
    pub outputs: Vec<OutputSpec>,
    pub supporting_predicates: Vec<String>,
    pub admissible_kinds: Vec<EvidenceKind>,
    pub minimum_strength: f64,
    pub minimum_verification: Verification,
    pub field_verification: BTreeMap<String, Verification>,
    pub value_constraints: BTreeMap<String, ValueConstraint>,
    pub auto_approve: Condition,
    pub safety_sensitive: Condition,
    pub checks: Vec<String>,
    /// Per output predicate: what text in an excerpt states a value (R-GATE-1).
    pub attestation: BTreeMap<String, Attestation>,
}

impl SkillPolicy {
    #[must_use]
    pub fn writable_fields(&self) -> Vec<&str> {
        self.outputs.iter().map(|o| o.field.as_str()).collect()
    }

    #[must_use]
    pub fn output_predicates(&self) -> Vec<&str> {
        self.outputs.iter().map(|o| o.predicate.as_str()).collect()
    }

    /// Output predicates followed by supporting predicates.
    pub fn all_predicates(&self) -> Vec<&str> {
        let mut all = self.output_predicates();
        all.extend(self.supporting_predicates.iter().map(String::as_str));
        all
    }

    /// The writable field an output predicate asserts.
    #[must_use]
    pub fn field_for_predicate(&self, predicate: &str) -> Option<&str> {
        self.outputs
            .iter()
            .find(|o| o.predicate == predicate)
            .map(|o| o.field.as_str())
    }

    #[must_use]
    pub fn predicate_for_field(&self, field: &str) -> Option<&str> {
        self.outputs
            .iter()
            .find(|o| o.field == field)
            .map(|o| o.predicate.as_str())
    }

    /// The bar for one field: its override, else the skill minimum.
    #[must_use]
    pub fn verification_for(&self, field: &str) -> Verification {
        self.field_verification
            .get(field)
            .copied()
            .unwrap_or(self.minimum_verification)
    }

    /// Checks the attestation data of one skill: every output predicate has rules, every
    /// pattern compiles, every stated value is admissible, shares lie in (0, 1].
    ///
    /// # Errors
    ///
    /// The first [`AttestationDefect`] found, naming `skill` and the rule or predicate.
    pub fn check_attestation(&self, skill: &str) -> Result<(), AttestationDefect> {
        let skill = skill.to_string();
        for out in &self.outputs {
            let Some(att) = self.attestation.get(&out.predicate) else {
                return Err(AttestationDefect::NoRules {
                    skill,
                    predicate: out.predicate.clone(),
                });
            };
            let constraint = self.value_constraints.get(&out.field);
            match att {
                Attestation::Patterns { rules } => {
                    if matches!(constraint, Some(ValueConstraint::Text)) {
                        return Err(AttestationDefect::FreeTextNeedsContentWords {
                            skill,
                            predicate: out.predicate.clone(),
                        });
                    }
                    for rule in rules {
                        for src in rule.sources("qqq").into_iter().flatten() {
                            // Parsing is the check: compiling ~100 patterns at every registry
                            // load cost a CLI call 100 ms; each case compiles its own (cached).
                            if let Err(e) = regex_syntax::Parser::new().parse(&src) {
                                return Err(AttestationDefect::Pattern {
                                    skill,
                                    rule: rule.id.clone(),
                                    source: Box::new(e),
                                });
                            }
                        }
                        if rule.values.is_empty() {
                            return Err(AttestationDefect::NoValue {
                                skill,
                                rule: rule.id.clone(),
                            });
                        }
                        if let Some(v) = rule
                            .values
                            .iter()
                            .find(|v| !constraint.is_some_and(|c| c.admits(v)))
                        {
                            return Err(AttestationDefect::Inadmissible {
                                skill,
                                rule: rule.id.clone(),
                                value: v.to_string(),
                                field: out.field.clone(),
                            });
                        }
                    }
                }
                Attestation::ContentWords { share, .. } => {
                    if !(share.is_finite() && *share > 0.0 && *share <= 1.0) {
                        return Err(AttestationDefect::Share {
                            skill,
                            share: *share,
                        });
                    }
                }
            }
        }
        if let Some(predicate) = self
            .attestation
            .keys()
            .find(|p| !self.output_predicates().contains(&p.as_str()))
        {
            return Err(AttestationDefect::NotAnOutput {
                skill,
                predicate: predicate.clone(),
            });
        }
        Ok(())
    }
}

/// What is wrong with a skill's attestation data (see [`SkillPolicy::check_attestation`]).
#[derive(Debug, thiserror::Error)]
pub enum AttestationDefect {
    #[error("skill {skill} has no attestation rules for output predicate {predicate}")]
    NoRules { skill: String, predicate: String },
    #[error("skill {skill}: `{predicate}` is free text and needs content_words attestation")]
    FreeTextNeedsContentWords { skill: String, predicate: String },
    #[error("skill {skill}: rule {rule} does not compile: {source}")]
    Pattern {
        skill: String,
        rule: String,
        #[source]
        source: Box<regex_syntax::Error>,
    },
    #[error("skill {skill}: rule {rule} states no value")]
    NoValue { skill: String, rule: String },
    #[error("skill {skill}: rule {rule} states {value}, which `{field}` does not admit")]
    Inadmissible {
        skill: String,
        rule: String,
        /// The value as JSON.
        value: String,
        field: String,
    },
    #[error("skill {skill}: content-word share {share} is outside (0, 1]")]
    Share { skill: String, share: f64 },
    #[error(
        "skill {skill} has attestation rules for {predicate}, which is not an output predicate"
    )]
    NotAnOutput { skill: String, predicate: String },
}
