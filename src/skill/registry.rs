//! The built-in skill registry, parsed once from the embedded `builtin.json`.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::attestation::Attestation;
use crate::air::{DeficiencyCode, TargetKind};

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
    pub fn assignable_by_scope(self) -> bool {
        !matches!(self, EvidenceKind::Comment | EvidenceKind::External)
    }

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

/// A path-glob → evidence kind rule. First match wins; no match means inadmissible.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Scope {
    pub glob: String,
    pub kind: EvidenceKind,
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
    pub fn holds(&self, set: &serde_json::Map<String, Value>) -> bool {
        match self {
            Condition::Always => true,
            Condition::Never => false,
            Condition::ValueEquals { field, equals } => set.get(field) == Some(equals),
        }
    }

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
    pub fn admits(&self, value: &Value) -> bool {
        match (self, value) {
            (ValueConstraint::Text, Value::String(s)) => !s.trim().is_empty(),
            (ValueConstraint::Boolean, Value::Bool(_)) => true,
            (ValueConstraint::Vocabulary { values }, Value::String(s)) => values.contains(s),
            _ => false,
        }
    }

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
    pub fn writable_fields(&self) -> Vec<&str> {
        self.outputs.iter().map(|o| o.field.as_str()).collect()
    }

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
    pub fn field_for_predicate(&self, predicate: &str) -> Option<&str> {
        self.outputs
            .iter()
            .find(|o| o.predicate == predicate)
            .map(|o| o.field.as_str())
    }

    pub fn predicate_for_field(&self, field: &str) -> Option<&str> {
        self.outputs
            .iter()
            .find(|o| o.field == field)
            .map(|o| o.predicate.as_str())
    }

    /// The bar for one field: its override, else the skill minimum.
    pub fn verification_for(&self, field: &str) -> Verification {
        self.field_verification
            .get(field)
            .copied()
            .unwrap_or(self.minimum_verification)
    }
}

/// A versioned skill contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SkillContract {
    pub name: String,
    pub version: u32,
    pub target_kind: TargetKind,
    pub question: String,
    pub retrieval_hints: Vec<String>,
    pub policy: SkillPolicy,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RegistryDoc {
    format: String,
    format_version: u32,
    default_scopes: Vec<Scope>,
    skills: Vec<SkillContract>,
}

/// The set of known skills and the default inspect scopes.
#[derive(Debug, Clone)]
pub struct Registry {
    pub skills: Vec<SkillContract>,
    pub default_scopes: Vec<Scope>,
}

impl Registry {
    pub fn get(&self, name: &str) -> Option<&SkillContract> {
        self.skills.iter().find(|s| s.name == name)
    }

    pub fn names(&self) -> Vec<&str> {
        self.skills.iter().map(|s| s.name.as_str()).collect()
    }

    /// The skill that writes `attribute` on targets of `kind` (used by
    /// `unproven_inferred_value`).
    pub fn writer_of(&self, kind: TargetKind, attribute: &str) -> Option<&SkillContract> {
        self.skills
            .iter()
            .find(|s| s.target_kind == kind && s.policy.writable_fields().contains(&attribute))
    }

    /// Parses a registry document strictly: no repeated key, errors named by path.
    #[cfg(test)]
    fn parse(text: &str) -> Result<Registry, String> {
        Registry::from_doc(crate::json_path::from_str(text).map_err(|e| e.to_string())?)
    }

    /// Parses the embedded document with the plain reader (a third of the strict reader's
    /// cost on every CLI call); the unit tests hold it to the strict parse.
    fn parse_embedded(text: &str) -> Result<Registry, String> {
        Registry::from_doc(serde_json::from_str(text).map_err(|e| e.to_string())?)
    }

    fn from_doc(doc: RegistryDoc) -> Result<Registry, String> {
        if doc.format != "anvil-skills" || doc.format_version != 1 {
            return Err(format!(
                "unsupported skill registry {} v{}",
                doc.format, doc.format_version
            ));
        }
        for skill in &doc.skills {
            for out in &skill.policy.outputs {
                if !skill.policy.value_constraints.contains_key(&out.field) {
                    return Err(format!(
                        "skill {} has no value constraint for writable field {}",
                        skill.name, out.field
                    ));
                }
            }
        }
        Ok(Registry {
            skills: doc.skills,
            default_scopes: doc.default_scopes,
        })
    }
}

/// The built-in registry. The embedded document is checked by a unit test, so failing to
/// parse it here is a build defect, not bad input.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        Registry::parse_embedded(include_str!("builtin.json"))
            .unwrap_or_else(|e| panic!("embedded skill registry is invalid: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attestation rules of the embedded registry are checked here, not at every load:
    /// checking ~100 patterns was two thirds of a CLI rail's instructions.
    /// The plain reader used at run time reads the embedded registry exactly as the strict
    /// one does (which also refuses a repeated key).
    #[test]
    fn the_embedded_registry_reads_the_same_strictly() {
        let text = include_str!("builtin.json");
        let strict = Registry::parse(text).unwrap();
        let plain = Registry::parse_embedded(text).unwrap();
        assert_eq!(format!("{strict:?}"), format!("{plain:?}"));
    }

    #[test]
    fn the_embedded_attestation_rules_are_sound() {
        let reg = Registry::parse(include_str!("builtin.json")).unwrap();
        for skill in &reg.skills {
            crate::skill::attestation::check(&skill.name, &skill.policy).unwrap();
            for rules in skill.policy.attestation.values() {
                if let crate::skill::Attestation::Patterns { rules } = rules {
                    for rule in rules {
                        for src in rule.sources("qqq").into_iter().flatten() {
                            regex::Regex::new(&src).unwrap();
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_embedded_registry_parses_with_five_skills() {
        let reg = Registry::parse(include_str!("builtin.json")).unwrap();
        assert_eq!(
            reg.names(),
            [
                "describe-field",
                "describe-operation",
                "enrich-error",
                "annotate-unit",
                "classify-sensitivity"
            ]
        );
    }

    #[test]
    fn vocabularies_in_contracts_match_the_engine_vocabularies() {
        let reg = registry();
        let unit = &reg.get("annotate-unit").unwrap().policy.value_constraints["unit"];
        assert_eq!(
            unit,
            &ValueConstraint::Vocabulary {
                values: vocab::UNITS.iter().map(|s| s.to_string()).collect()
            }
        );
        let sens = &reg
            .get("classify-sensitivity")
            .unwrap()
            .policy
            .value_constraints["sensitivity"];
        assert_eq!(
            sens,
            &ValueConstraint::Vocabulary {
                values: vocab::SENSITIVITY.iter().map(|s| s.to_string()).collect()
            }
        );
    }

    use super::super::vocab;
}
