//! The eval delta: what a patch does to the AIR's deficiencies.
//!
//! Invariant: measured by the same deterministic detector that opened the case, on the
//! AIR before and after the patch, in memory; nothing is written.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::air::{Air, DeficiencyCode, TargetKey, detect};

/// The eval family a deficiency code belongs to.
#[must_use]
pub fn family(code: DeficiencyCode) -> &'static str {
    match code {
        DeficiencyCode::MissingFieldDescription
        | DeficiencyCode::TautologicalDescription
        | DeficiencyCode::MissingOperationDescription => "description",
        DeficiencyCode::ErrorRetryabilityUnclear => "retryability",
        DeficiencyCode::UnitAmbiguousField => "unit",
        DeficiencyCode::UnclassifiedSensitiveField => "sensitivity",
        DeficiencyCode::UnprovenInferredValue => "provenance",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FamilyScore {
    pub before: usize,
    pub after: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvalDelta {
    /// The case's deficiency on its target is gone after the patch.
    pub target_closed: bool,
    /// Deficiencies present after the patch that were not present before.
    pub new_deficiencies: Vec<String>,
    /// Deficiency count per eval family, before and after.
    pub families: BTreeMap<String, FamilyScore>,
}

impl EvalDelta {
    #[must_use]
    pub fn acceptable(&self) -> bool {
        self.target_closed && self.new_deficiencies.is_empty()
    }
}

/// Sets `set` on the target of `air` and clears the `inferred` marks for `proven`
/// attributes (and for every attribute written).
///
/// # Errors
///
/// A message when `target` (its operation, field or error) is not in `air`, a key of `set`
/// is not writable on that kind of target, or a value has the wrong type for its attribute.
pub fn apply_patch(
    air: &mut Air,
    target: &TargetKey,
    set: &Map<String, Value>,
    proven: &[String],
) -> Result<(), String> {
    let touched: BTreeSet<&str> = set
        .keys()
        .map(String::as_str)
        .chain(proven.iter().map(String::as_str))
        .collect();
    let clear = |inferred: &mut Vec<String>| inferred.retain(|a| !touched.contains(a.as_str()));
    let text = |v: &Value| {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{v} is not text"))
    };
    match target {
        TargetKey::Operation { op } => {
            let o = air
                .operations
                .iter_mut()
                .find(|o| o.id == op)
                .ok_or("operation not in AIR")?;
            for (k, v) in set {
                match k.as_str() {
                    "description" => o.description = Some(text(v)?),
                    other => return Err(format!("`{other}` is not writable on an operation")),
                }
            }
            clear(&mut o.inferred);
        }
        TargetKey::Field { op, location, name } => {
            let o = air
                .operations
                .iter_mut()
                .find(|o| o.id == op)
                .ok_or("operation not in AIR")?;
            let f = o
                .fields
                .iter_mut()
                .find(|f| f.location == *location && f.name == name)
                .ok_or("field not in AIR")?;
            for (k, v) in set {
                match k.as_str() {
                    "description" => f.description = Some(text(v)?),
                    "unit" => f.unit = Some(text(v)?),
                    "sensitivity" => f.sensitivity = Some(text(v)?),
                    other => return Err(format!("`{other}` is not writable on a field")),
                }
            }
            clear(&mut f.inferred);
        }
        TargetKey::Error { op, code } => {
            let o = air
                .operations
                .iter_mut()
                .find(|o| o.id == op)
                .ok_or("operation not in AIR")?;
            let e = o
                .errors
                .iter_mut()
                .find(|e| e.code == code)
                .ok_or("error not in AIR")?;
            for (k, v) in set {
                match k.as_str() {
                    "retryable" => {
                        e.retryable =
                            Some(v.as_bool().ok_or_else(|| format!("{v} is not a boolean"))?);
                    }
                    other => return Err(format!("`{other}` is not writable on an error")),
                }
            }
            clear(&mut e.inferred);
        }
        TargetKey::Capability { .. } => return Err("capabilities are not writable".into()),
    }
    Ok(())
}

fn keys(air: &Air) -> BTreeSet<(String, DeficiencyCode, Option<String>)> {
    detect(air)
        .into_iter()
        .map(|d| (d.target.to_string(), d.code, d.attribute))
        .collect()
}

/// Measures `patched` against `before` for the case's `(target, code)`.
#[must_use]
pub fn measure(before: &Air, patched: &Air, target: &TargetKey, code: DeficiencyCode) -> EvalDelta {
    let b = keys(before);
    let a = keys(patched);
    let target = target.to_string();
    let mut families: BTreeMap<String, FamilyScore> = BTreeMap::new();
    for (set, is_before) in [(&b, true), (&a, false)] {
        for (_, code, _) in set {
            let e = families
                .entry(family(*code).to_string())
                .or_insert(FamilyScore {
                    before: 0,
                    after: 0,
                });
            if is_before {
                e.before += 1;
            } else {
                e.after += 1;
            }
        }
    }
    EvalDelta {
        target_closed: !a.iter().any(|(t, c, _)| t == &target && *c == code),
        new_deficiencies: a
            .difference(&b)
            .map(|(t, c, attr)| match attr {
                Some(attr) => format!("{t}: {c} ({attr})"),
                None => format!("{t}: {c}"),
            })
            .collect(),
        families,
    }
}
