//! The detection plan grouped per operation and skill: what `detect --spec` shows a
//! maintainer. Data only; the CLI renders it.
//!
//! Invariant: operations keep the AIR's (document) order and every deficiency of the plan
//! is counted exactly once.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::air::{Air, Deficiency};

/// One operation's deficiencies, by skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationSummary {
    pub id: String,
    pub method: String,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    pub total: usize,
    pub skills: Vec<SkillCount>,
}

/// How many deficiencies one skill closes on one operation, and on what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillCount {
    pub skill: String,
    pub count: usize,
    /// The targets, relative to the operation (`input.query.limit`, `error.404`, and
    /// `operation` for the operation itself).
    pub targets: Vec<String>,
}

/// Groups `plan` (the deficiencies of `air`) per operation, skills in first-seen order.
/// Linear in the plan: it is split by operation once, and targets are deduplicated
/// through a set.
#[must_use]
pub fn summarize(air: &Air, plan: &[Deficiency]) -> Vec<OperationSummary> {
    let mut by_op: HashMap<&str, Vec<&Deficiency>> = HashMap::new();
    for d in plan {
        if let Some(op) = d.target.operation() {
            by_op.entry(op).or_default().push(d);
        }
    }
    air.operations
        .iter()
        .map(|op| {
            let prefix = format!("op.{}.", op.id);
            let mut skills: Vec<SkillCount> = Vec::new();
            let mut seen: HashSet<(&str, String)> = HashSet::new();
            let mine = by_op.get(op.id.as_str()).map_or(&[][..], Vec::as_slice);
            for d in mine {
                let key = d.target.to_string();
                let short = key
                    .strip_prefix(&prefix)
                    .map_or_else(|| "operation".to_string(), str::to_string);
                let new = seen.insert((d.skill, short.clone()));
                match skills.iter_mut().find(|s| s.skill == d.skill) {
                    Some(s) => {
                        s.count += 1;
                        if new {
                            s.targets.push(short);
                        }
                    }
                    None => skills.push(SkillCount {
                        skill: d.skill.to_string(),
                        count: 1,
                        targets: vec![short],
                    }),
                }
            }
            OperationSummary {
                id: op.id.clone(),
                method: op.method.clone(),
                path: op.path.clone(),
                pointer: op.pointer.clone(),
                total: mine.len(),
                skills,
            }
        })
        .collect()
}
