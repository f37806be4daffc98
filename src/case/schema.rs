//! `expected-output.schema.json`: this case's only admissible proposal, as JSON Schema.
//!
//! Generated from [`RawProposal`] with schemars, then the case's constants are baked in.
//! Invariant: a document valid against it is exactly a document `parse_proposal` accepts
//! (checked in both directions by tests).

use serde_json::{Map, Value, json};

use super::claim::RawClaim;
use super::doc::CaseDoc;
use super::proposal::{CLAIM_ID_PATTERN, PROPOSAL_FORMAT, PROPOSAL_FORMAT_VERSION, RawProposal};
use crate::skill::{SkillPolicy, ValueConstraint};

/// The per-case proposal schema.
///
/// # Panics
///
/// Only if the schema schemars derives for [`RawProposal`], or a member this function
/// extends (such as its `properties`), were not a JSON object; a derived object schema
/// always is one.
#[must_use]
pub fn proposal_schema(case: &CaseDoc) -> Value {
    let mut root = schemars::schema_for!(RawProposal).to_value();
    let mut defs = root
        .as_object_mut()
        .and_then(|o| o.remove("$defs"))
        .unwrap_or_else(|| json!({}));
    let contract = &case.policy.contract;
    let target = case.target.key.to_string();

    let props = object_at(&mut root, "properties");
    props.insert("format".into(), json!({"const": PROPOSAL_FORMAT}));
    props.insert(
        "formatVersion".into(),
        json!({"const": PROPOSAL_FORMAT_VERSION}),
    );
    props.insert("skill".into(), json!({"const": case.identity.skill}));
    props.insert(
        "skillVersion".into(),
        json!({"const": case.identity.skill_version}),
    );
    props.insert("deficiency".into(), json!({"const": case.task.deficiency}));
    props.insert("target".into(), json!({"const": target}));
    props.insert(
        "confidence".into(),
        json!({"type": "number", "minimum": 0, "maximum": 1}),
    );

    // patch: the generated RawPatch definition, inlined, with the case's constants.
    let mut patch = defs
        .as_object_mut()
        .and_then(|d| d.remove("RawPatch"))
        .unwrap_or_else(|| json!({"type": "object"}));
    let writable: Vec<&str> = contract.writable_fields();
    let (set_props, grounding_props) = field_schemas(contract, &writable);
    let patch_props = object_at(&mut patch, "properties");
    patch_props.insert("target".into(), json!({"const": target}));
    patch_props.insert(
        "set".into(),
        json!({"type": "object", "properties": set_props, "required": writable,
               "additionalProperties": false}),
    );
    props.insert("patch".into(), patch);
    props.insert(
        "grounding".into(),
        json!({"type": "object", "properties": grounding_props, "required": writable,
               "additionalProperties": false}),
    );

    let claim = claim_schema(contract);
    let defs_obj = defs.as_object_mut().expect("$defs is an object");
    defs_obj.insert("claim".into(), claim);

    if let Some(o) = root.as_object_mut() {
        o.insert(
            "title".into(),
            json!(format!(
                "{PROPOSAL_FORMAT} for case {}",
                case.identity.case_key
            )),
        );
        o.insert(
            "description".into(),
            json!(format!(
                "The only admissible proposal for this case: skill {} v{}, deficiency {}, target {}. Generated from case.json; do not edit.",
                case.identity.skill, case.identity.skill_version, case.task.deficiency, target
            )),
        );
        o.insert("$defs".into(), defs);
    }
    root
}

/// Per writable field, the schema of its value in `patch.set` (from the field's value
/// constraint; `false`, admitting nothing, when it has none) and of its claim ids in
/// `grounding`, in that order.
fn field_schemas(
    contract: &SkillPolicy,
    writable: &[&str],
) -> (Map<String, Value>, Map<String, Value>) {
    let mut set_props = Map::new();
    let mut grounding_props = Map::new();
    for field in writable {
        let schema = match contract.value_constraints.get(*field) {
            Some(ValueConstraint::Text) => json!({"type": "string", "pattern": "\\S"}),
            Some(ValueConstraint::Boolean) => json!({"type": "boolean"}),
            Some(ValueConstraint::Vocabulary { values }) => {
                json!({"type": "string", "enum": values})
            }
            None => json!(false),
        };
        set_props.insert((*field).to_string(), schema);
        grounding_props.insert(
            (*field).to_string(),
            json!({"type": "array", "minItems": 1, "uniqueItems": true,
                   "items": {"type": "string", "pattern": CLAIM_ID_PATTERN}}),
        );
    }
    (set_props, grounding_props)
}

/// The claim shape, with the predicate vocabulary, for agents writing claims (the
/// schema's `$defs.claim`).
fn claim_schema(contract: &SkillPolicy) -> Value {
    let mut claim = schemars::schema_for!(RawClaim).to_value();
    if let Some(o) = claim.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
    }
    let claim_props = object_at(&mut claim, "properties");
    claim_props.insert(
        "predicate".into(),
        json!({"enum": contract.all_predicates()}),
    );
    claim_props.insert(
        "id".into(),
        json!({"type": "string", "pattern": CLAIM_ID_PATTERN}),
    );
    claim_props.insert(
        "confidence".into(),
        json!({"type": "number", "minimum": 0, "maximum": 1}),
    );
    claim
}

fn object_at<'a>(value: &'a mut Value, key: &str) -> &'a mut Map<String, Value> {
    let obj = value.as_object_mut().expect("schema is an object");
    obj.entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .expect("schema member is an object")
}
