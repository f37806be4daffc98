//! `case.json`: the one canonical, authored input of a run.
//!
//! Invariant: written once at open, never rewritten. Views (CASE.md, the proposal schema)
//! are functions of this document alone.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::key::{CaseKey, RunId};
use crate::air::{Air, DeficiencyCode, ErrorDef, Field, TargetKey, TargetKind};
use crate::skill::{EvidenceKind, Scope, SkillContract, SkillPolicy};

pub const CASE_FORMAT: &str = "anvil-case";
pub const CASE_FORMAT_VERSION: u32 = 1;

/// The canonical case document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CaseDoc {
    pub format: String,
    pub format_version: u32,
    pub identity: Identity,
    pub task: Task,
    pub target: TargetSnapshot,
    pub workspace: Workspace,
    pub skill: SkillRef,
    pub policy: CasePolicy,
    pub procedure: Procedure,
    pub context: Context,
    pub expected_output: ExpectedOutput,
    pub inputs: Inputs,
    /// The JSON table snapshots the database tools may read, with the sha256 each had at
    /// open; a snapshot whose bytes changed since is refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub database_snapshots: Vec<DeclaredSnapshot>,
    /// Overrides of the investigation tools' limits for this case (name → value).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_limits: BTreeMap<String, u64>,
}

/// What world the run was opened against (seed §3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Identity {
    pub run_id: RunId,
    pub case_key: CaseKey,
    pub air_hash: String,
    /// The sha256 of the AIR file's bytes as open read them: a rail that finds the same
    /// bytes knows the AIR hash without parsing them again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub air_bytes_hash: Option<String>,
    pub source_revision: String,
    /// For a repository without a commit: the digest of `source.json`, the manifest of
    /// what it held at open, which evidence must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_digest: Option<String>,
    pub skill: String,
    pub skill_version: u32,
    pub policy_hash: String,
    pub executor: String,
    pub created_at: String,
    /// The run this one replaces (`--replace`); that run is kept untouched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<RunId>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Task {
    pub question: String,
    pub skill: String,
    pub deficiency: DeficiencyCode,
    pub deficiency_detail: String,
    pub phases: Vec<String>,
    pub outputs: Vec<String>,
}

/// The target coordinate and the AIR facts needed to investigate it, frozen at open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TargetSnapshot {
    pub key: TargetKey,
    pub kind: TargetKind,
    pub service: String,
    pub operation: Option<OperationFacts>,
    pub field: Option<Field>,
    pub error: Option<ErrorDef>,
    /// Current value of each writable attribute (null when absent).
    pub current: BTreeMap<String, Value>,
    /// Attributes whose current value a heuristic set.
    pub inferred: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OperationFacts {
    pub id: String,
    pub method: String,
    pub path: String,
    pub description: Option<String>,
    pub field_names: Vec<String>,
    pub error_codes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Workspace {
    pub scratch: String,
    pub output: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SkillRef {
    pub name: String,
    pub version: u32,
}

/// The evidence and boundary policy in force for this run. Its canonical hash is the
/// run's `policyHash`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CasePolicy {
    pub contract: SkillPolicy,
    pub inspect_scopes: Vec<Scope>,
    pub evidence_strength: BTreeMap<EvidenceKind, f64>,
    pub prohibitions: Vec<String>,
}

impl CasePolicy {
    /// The policy for `skill` with `scopes`; a pure function, so `case verify` can
    /// recompute it and compare hashes.
    #[must_use]
    pub fn build(skill: &SkillContract, scopes: Vec<Scope>) -> CasePolicy {
        let p = &skill.policy;
        let writable = p.writable_fields().join(", ");
        let prohibitions = vec![
            format!("write any AIR attribute other than: {writable}"),
            "change structural keys (type, required, name, location, enum) of any target".into(),
            "act on any target other than this case's target".into(),
            "cite a source outside the inspect scopes, or assert an excerpt yourself".into(),
            format!(
                "use a claim predicate outside: {}",
                p.all_predicates().join(", ")
            ),
            "modify the repository, or write anywhere but workspace/ and output/".into(),
            "edit a file after its stage is frozen".into(),
            "propose a value no accepted claim asserts".into(),
        ];
        CasePolicy {
            contract: p.clone(),
            inspect_scopes: scopes,
            evidence_strength: p
                .admissible_kinds
                .iter()
                .map(|k| (*k, k.strength()))
                .collect(),
            prohibitions,
        }
    }

    #[must_use]
    pub fn hash(&self) -> String {
        crate::canon::canonical_hash(self)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Procedure {
    pub phases: Vec<Phase>,
    pub retrieval_hints: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Phase {
    pub name: String,
    pub goal: String,
    pub produces: Vec<String>,
}

/// What AIR already holds around the target: a starting point, not a licence to skip work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Context {
    pub current_values: BTreeMap<String, Value>,
    pub inferred: Vec<String>,
    pub search_terms: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExpectedOutput {
    pub proposal_schema: String,
    pub proposal_format: String,
    pub proposal_format_version: u32,
    pub files: Vec<String>,
}

/// One database snapshot a case declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DeclaredSnapshot {
    /// Repository-relative, inside an inspect scope.
    pub path: String,
    pub sha256: String,
}

/// Where the inputs live (absolute paths), so rails and `case verify` can re-read them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Inputs {
    pub air: String,
    pub repository: String,
}

impl TargetSnapshot {
    /// Freezes what the AIR says about `key` for `skill`. `None` when the key is absent.
    #[must_use]
    pub fn capture(air: &Air, key: &TargetKey, skill: &SkillContract) -> Option<TargetSnapshot> {
        let op = key.operation().and_then(|id| air.operation(id));
        let operation = op.map(|o| OperationFacts {
            id: o.id.clone(),
            method: o.method.clone(),
            path: o.path.clone(),
            description: o.description.clone(),
            field_names: o
                .fields
                .iter()
                .map(|f| format!("{}.{}", f.location, f.name))
                .collect(),
            error_codes: o.errors.iter().map(|e| e.code.clone()).collect(),
        });
        let (field, error, attrs, inferred): (_, _, Value, Vec<String>) = match key {
            TargetKey::Field { location, name, .. } => {
                let f = op?.field(*location, name)?.clone();
                let v = serde_json::to_value(&f).ok()?;
                let inferred = f.inferred.clone();
                (Some(f), None, v, inferred)
            }
            TargetKey::Error { code, .. } => {
                let e = op?.errors.iter().find(|e| e.code == code)?.clone();
                let v = serde_json::to_value(&e).ok()?;
                let inferred = e.inferred.clone();
                (None, Some(e), v, inferred)
            }
            TargetKey::Operation { .. } => {
                let o = op?;
                let v = serde_json::json!({"description": o.description});
                (None, None, v, o.inferred.clone())
            }
            TargetKey::Capability { id } => {
                let c = air.capabilities.iter().find(|c| c.id == id)?;
                (
                    None,
                    None,
                    serde_json::json!({"description": c.description}),
                    vec![],
                )
            }
        };
        let current = skill
            .policy
            .writable_fields()
            .into_iter()
            .map(|f| (f.to_string(), attrs.get(f).cloned().unwrap_or(Value::Null)))
            .collect();
        Some(TargetSnapshot {
            key: key.clone(),
            kind: key.kind(),
            service: air.service.id.clone(),
            operation,
            field,
            error,
            current,
            inferred,
        })
    }

    /// The target's own name: the field name, error code, operation or capability id.
    #[must_use]
    pub fn name(&self) -> &str {
        match &self.key {
            TargetKey::Field { name, .. } => name,
            TargetKey::Error { code, .. } => code,
            TargetKey::Operation { op } => op,
            TargetKey::Capability { id } => id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capability target is frozen with its own description, found by its id among the
    /// AIR's capabilities; an id the AIR lacks is no target.
    #[test]
    fn a_capability_snapshot_holds_that_capabilitys_own_description() {
        let air = Air::from_value(
            serde_json::json!({"airVersion": 1, "service": {"id": "s", "version": "1"},
                "operations": [{"id": "op", "method": "GET", "path": "/", "fields": []}],
                "capabilities": [
                    {"id": "export", "description": "Exports reports.", "operationIds": ["op"]},
                    {"id": "import", "description": "Imports ledgers.", "operationIds": ["op"]}]}),
            "air.json",
        )
        .unwrap();
        let skill = crate::skill::registry().get("describe-operation").unwrap();
        let capture = |id: &str| {
            TargetSnapshot::capture(&air, &TargetKey::Capability { id: id.into() }, skill)
        };
        for (id, text) in [
            ("export", "Exports reports."),
            ("import", "Imports ledgers."),
        ] {
            let snap = capture(id).unwrap();
            assert_eq!(snap.name(), id);
            assert_eq!(snap.current["description"], text, "{id}");
        }
        assert!(capture("audit").is_none());
    }
}
