//! The built-in skill registry, parsed once from the embedded `builtin.json`.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::kinds::TargetKind;
use super::policy::{EvidenceKind, SkillPolicy};

/// A path-glob → evidence kind rule. First match wins; no match means inadmissible.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Scope {
    pub glob: String,
    pub kind: EvidenceKind,
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
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&SkillContract> {
        self.skills.iter().find(|s| s.name == name)
    }

    #[must_use]
    pub fn names(&self) -> Vec<&str> {
        self.skills.iter().map(|s| s.name.as_str()).collect()
    }

    /// The skill that writes `attribute` on targets of `kind` (used by
    /// `unproven_inferred_value`).
    #[must_use]
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
///
/// # Panics
///
/// When the embedded `builtin.json` does not parse as a registry: a build defect that the
/// unit tests catch before release.
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
    use crate::skill::ValueConstraint;

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
            skill.policy.check_attestation(&skill.name).unwrap();
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

    /// The check refuses what a broken skill file would hold, naming the defect.
    #[test]
    fn attestation_defects_are_refused_by_name() {
        use crate::skill::{Attestation, AttestationDefect};
        let reg = Registry::parse(include_str!("builtin.json")).unwrap();
        let unit = &reg.get("annotate-unit").unwrap().policy;
        let predicate = unit.outputs[0].predicate.clone();

        let mut none = unit.clone();
        none.attestation.remove(&predicate);
        assert!(matches!(
            none.check_attestation("annotate-unit"),
            Err(AttestationDefect::NoRules { predicate: p, .. }) if p == predicate
        ));

        let mut stray = unit.clone();
        let rules = stray.attestation[&predicate].clone();
        stray.attestation.insert("not.an.output".into(), rules);
        assert!(matches!(
            stray.check_attestation("annotate-unit"),
            Err(AttestationDefect::NotAnOutput { .. })
        ));

        let mut unvalued = unit.clone();
        let Some(Attestation::Patterns { rules }) = unvalued.attestation.get_mut(&predicate) else {
            panic!("annotate-unit attests by patterns");
        };
        rules[0].values.clear();
        assert!(matches!(
            unvalued.check_attestation("annotate-unit"),
            Err(AttestationDefect::NoValue { .. })
        ));

        let describe = &reg.get("describe-field").unwrap().policy;
        let mut share = describe.clone();
        let p = describe.outputs[0].predicate.clone();
        share.attestation.insert(
            p,
            Attestation::ContentWords {
                share: 0.0,
                ignore: vec![],
            },
        );
        assert!(matches!(
            share.check_attestation("describe-field"),
            Err(AttestationDefect::Share { .. })
        ));
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
                values: vocab::UNITS.iter().map(ToString::to_string).collect()
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
                values: vocab::SENSITIVITY.iter().map(ToString::to_string).collect()
            }
        );
    }

    use super::super::vocab;
}
