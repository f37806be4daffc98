//! Refined AIR back into the original description.
//!
//! The document is imported again and compared with the refined AIR: the two must describe
//! the same operations, fields and errors (else the AIR is not this document's); every
//! refinable value that differs must be backed by a provenance record (else it was not a
//! case that changed it). Each change becomes one splice at its element's use site: an
//! existing key stated there is replaced in place, otherwise the key is added there (beside
//! a `$ref`, so a shared target is never rewritten for one use). Provenance records are
//! appended to the root `x-anvil-provenance` list, skipping those already present.
//!
//! Invariant: the output is the input text with exactly those splices, and it re-parses to
//! the input's value with exactly those changes; anything else is refused.

use std::collections::HashSet;

use serde::Serialize;
use serde_json::{Map, Value};

use super::document::Document;
use super::error::OpenApiError;
use super::ext::{self, Attr};
use super::splice::{self, Op};
use super::{Imported, import};
use crate::air::{Air, Operation};

/// What an export wrote.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Exported {
    /// The refined document's text.
    #[serde(skip)]
    pub text: String,
    pub edits: Vec<Edit>,
    /// Provenance records appended.
    pub provenance: usize,
}

/// One refined value written into the document.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Edit {
    pub target: String,
    pub attribute: String,
    /// The object written to.
    pub pointer: String,
    pub key: String,
    pub action: EditAction,
    pub value: Value,
    /// Other AIR elements that share the edited node (a property of a shared component).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also_affects: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EditAction {
    Replace,
    Insert,
}

struct Change {
    target: String,
    attr: Attr,
    value: Value,
}

/// `doc` with the refinements of `refined` applied.
///
/// # Errors
///
/// Whatever [`import`] refuses for `doc`; `OpenApiError::Mismatch` when `refined` does not
/// describe the same API (an operation, field or error missing, added, moved or with
/// another method or path), when a value differs without a provenance record setting it, or
/// when two targets sharing one node are refined to different values;
/// `OpenApiError::Unfaithful` when the edited text would differ from `doc` beyond the
/// refinements.
pub fn export(doc: &Document, refined: &Air) -> Result<Exported, OpenApiError> {
    let imported = import(doc)?;
    let mismatch = |target: &str, message: String| OpenApiError::Mismatch {
        file: doc.file.clone(),
        target: target.to_string(),
        message,
    };
    let changes = compare(&imported.air, refined, &mismatch)?;
    check_recorded(&changes, refined, &mismatch)?;
    let (edits, mut ops) = plan_edits(&imported, changes, &mismatch)?;
    let records = provenance(doc, &imported, refined, &mismatch)?;
    let appended = records.len();
    if !records.is_empty() {
        ops.push(Op::Append {
            key: ext::PROVENANCE.to_string(),
            items: records,
        });
    }
    let text = splice::apply(doc, &ops)?;
    verify(doc, &text, &ops)?;
    Ok(Exported {
        text,
        edits,
        provenance: appended,
    })
}

/// Refuses the first change no provenance record of `refined` sets: export writes only what
/// a case applied.
fn check_recorded(
    changes: &[Change],
    refined: &Air,
    mismatch: &dyn Fn(&str, String) -> OpenApiError,
) -> Result<(), OpenApiError> {
    for c in changes {
        let recorded = refined
            .provenance
            .iter()
            .any(|p| p.target == c.target && p.set.contains_key(c.attr.name()));
        if !recorded {
            return Err(mismatch(
                &c.target,
                format!(
                    "`{}` differs from the document but no provenance record sets it: export writes only what a case applied",
                    c.attr.name()
                ),
            ));
        }
    }
    Ok(())
}

/// The edits reported and the splices that make them, one per node and key: a change to a
/// node another change already set is dropped when it agrees and refused when it does not.
fn plan_edits(
    imported: &Imported,
    changes: Vec<Change>,
    mismatch: &dyn Fn(&str, String) -> OpenApiError,
) -> Result<(Vec<Edit>, Vec<Op>), OpenApiError> {
    let mut edits: Vec<Edit> = Vec::new();
    let mut ops = Vec::new();
    for c in changes {
        let site = imported
            .sites
            .get(&c.target)
            .ok_or_else(|| mismatch(&c.target, "the document has no such element".into()))?;
        let key = c.attr.key();
        if let Some(prior) = edits
            .iter()
            .find(|e| e.pointer == site.use_site && e.key == key)
        {
            if prior.value != c.value {
                return Err(mismatch(
                    &c.target,
                    format!(
                        "its `{}` and that of `{}` are one node (`{}`) refined to different values",
                        c.attr.name(),
                        prior.target,
                        super::pointer::show(&site.use_site)
                    ),
                ));
            }
            continue;
        }
        let action = if site.sources.get(&c.attr) == Some(&site.use_site) {
            EditAction::Replace
        } else {
            EditAction::Insert
        };
        ops.push(Op::Set {
            object: site.use_site.clone(),
            key: key.to_string(),
            value: c.value.clone(),
        });
        edits.push(Edit {
            also_affects: sharing(imported, &c.target, c.attr, &site.use_site),
            target: c.target,
            attribute: c.attr.name().to_string(),
            pointer: site.use_site.clone(),
            key: key.to_string(),
            action,
            value: c.value,
        });
    }
    Ok((edits, ops))
}

/// The refinable values that differ, after checking both AIRs describe the same API.
fn compare(
    doc: &Air,
    refined: &Air,
    mismatch: &dyn Fn(&str, String) -> OpenApiError,
) -> Result<Vec<Change>, OpenApiError> {
    let mut changes = Vec::new();
    for r in &refined.operations {
        if doc.operation(&r.id).is_none() {
            return Err(mismatch(
                &format!("op.{}", r.id),
                "the document has no such operation".into(),
            ));
        }
    }
    for op in &doc.operations {
        let key = format!("op.{}", op.id);
        let r = refined
            .operation(&op.id)
            .ok_or_else(|| mismatch(&key, "missing from the refined AIR".into()))?;
        if r.method != op.method || r.path != op.path {
            return Err(mismatch(
                &key,
                format!(
                    "it is {} {} in the document, {} {} in the AIR",
                    op.method, op.path, r.method, r.path
                ),
            ));
        }
        if r.pointer.is_some() && r.pointer != op.pointer {
            return Err(mismatch(
                &key,
                "the document moved it since the AIR was imported".into(),
            ));
        }
        diff(
            &mut changes,
            key.clone(),
            Attr::Description,
            text(&op.description),
            text(&r.description),
        );
        compare_fields(&key, op, r, mismatch, &mut changes)?;
        compare_errors(&key, op, r, mismatch, &mut changes)?;
    }
    Ok(changes)
}

/// The changes to the fields of the operation `key`, after checking `r` has exactly the
/// document's fields with the same types and requiredness.
fn compare_fields(
    key: &str,
    op: &Operation,
    r: &Operation,
    mismatch: &dyn Fn(&str, String) -> OpenApiError,
    changes: &mut Vec<Change>,
) -> Result<(), OpenApiError> {
    for rf in &r.fields {
        if op.field(rf.location, &rf.name).is_none() {
            return Err(mismatch(
                &format!("{key}.{}.{}", rf.location, rf.name),
                "the document has no such field".into(),
            ));
        }
    }
    for f in &op.fields {
        let fkey = format!("{key}.{}.{}", f.location, f.name);
        let rf = r
            .field(f.location, &f.name)
            .ok_or_else(|| mismatch(&fkey, "missing from the refined AIR".into()))?;
        if rf.ty != f.ty || rf.required != f.required {
            return Err(mismatch(
                &fkey,
                "its type or requiredness differs from the document".into(),
            ));
        }
        diff(
            changes,
            fkey.clone(),
            Attr::Description,
            text(&f.description),
            text(&rf.description),
        );
        diff(
            changes,
            fkey.clone(),
            Attr::Unit,
            text(&f.unit),
            text(&rf.unit),
        );
        diff(
            changes,
            fkey,
            Attr::Sensitivity,
            text(&f.sensitivity),
            text(&rf.sensitivity),
        );
    }
    Ok(())
}

/// The changes to the errors of the operation `key`, after checking `r` has as many errors
/// as the document and each of the document's with the same code and status.
fn compare_errors(
    key: &str,
    op: &Operation,
    r: &Operation,
    mismatch: &dyn Fn(&str, String) -> OpenApiError,
    changes: &mut Vec<Change>,
) -> Result<(), OpenApiError> {
    if r.errors.len() != op.errors.len() {
        return Err(mismatch(
            key,
            "its errors differ from the document's".into(),
        ));
    }
    for e in &op.errors {
        let ekey = format!("{key}.error.{}", e.code);
        let re = r
            .errors
            .iter()
            .find(|x| x.code == e.code && x.status == e.status)
            .ok_or_else(|| mismatch(&ekey, "missing from the refined AIR".into()))?;
        let flag = |b: Option<bool>| b.map_or(Value::Null, Value::Bool);
        diff(
            changes,
            ekey,
            Attr::Retryable,
            flag(e.retryable),
            flag(re.retryable),
        );
    }
    Ok(())
}

/// A text attribute as the value compared and written: `null` when absent.
fn text(s: &Option<String>) -> Value {
    s.clone().map_or(Value::Null, Value::String)
}

/// Records `after` as the change of `target`'s `attr` when it is a value that differs from
/// `before`.
fn diff(changes: &mut Vec<Change>, target: String, attr: Attr, before: Value, after: Value) {
    // A value the AIR lacks is never removed: export writes refinements only (and a
    // node shared by several elements holds the value one of them was refined to).
    if before == after || after.is_null() {
        return;
    }
    changes.push(Change {
        target,
        attr,
        value: after,
    });
}

/// Other targets whose value of `attr` the node at `object` states.
fn sharing(imported: &Imported, target: &str, attr: Attr, object: &str) -> Vec<String> {
    imported
        .sites
        .iter()
        .filter(|(t, s)| {
            t.as_str() != target
                && (s.use_site == object || s.sources.get(&attr).is_some_and(|p| p == object))
        })
        .map(|(t, _)| t.clone())
        .collect()
}

/// The provenance records to append: each of the AIR's not already in the document.
fn provenance(
    doc: &Document,
    imported: &Imported,
    refined: &Air,
    mismatch: &dyn Fn(&str, String) -> OpenApiError,
) -> Result<Vec<Value>, OpenApiError> {
    let mut present: HashSet<(String, String)> = HashSet::new();
    if let Some(items) = doc.root.get(ext::PROVENANCE).and_then(|n| n.seq()) {
        for item in items {
            let field = |k: &str| item.get(k).and_then(|n| n.as_str()).map(str::to_string);
            if let (Some(run), Some(target)) = (field("runId"), field("target")) {
                present.insert((run, target));
            }
        }
    }
    let mut records = Vec::new();
    for p in &refined.provenance {
        if !present.insert((p.run_id.clone(), p.target.clone())) {
            continue;
        }
        let site = imported.sites.get(&p.target).ok_or_else(|| {
            mismatch(
                &p.target,
                "a provenance record names an element the document does not have".into(),
            )
        })?;
        let mut record = Map::new();
        record.insert("target".into(), Value::String(p.target.clone()));
        record.insert("pointer".into(), Value::String(site.use_site.clone()));
        record.insert(
            "attributes".into(),
            Value::Array(p.set.keys().map(|k| Value::String(k.clone())).collect()),
        );
        record.insert("caseKey".into(), Value::String(p.case_key.clone()));
        record.insert("runId".into(), Value::String(p.run_id.clone()));
        record.insert("tier".into(), Value::String(p.tier.clone()));
        if let Some(by) = &p.approved_by {
            record.insert("approvedBy".into(), Value::String(by.clone()));
        }
        record.insert("appliedAt".into(), Value::String(p.applied_at.clone()));
        records.push(Value::Object(record));
    }
    Ok(records)
}

/// Re-parses `text` and checks it holds the input's value with exactly `ops` applied.
fn verify(doc: &Document, text: &str, ops: &[Op]) -> Result<(), OpenApiError> {
    let unfaithful = |pointer: String, message: String| OpenApiError::Unfaithful {
        file: doc.file.clone(),
        pointer,
        message,
    };
    let mut expected = doc.root.to_value();
    for op in ops {
        match op {
            Op::Set { object, key, value } => {
                let target = expected
                    .pointer_mut(object)
                    .and_then(Value::as_object_mut)
                    .ok_or_else(|| unfaithful(object.clone(), "no such object".into()))?;
                target.insert(key.clone(), value.clone());
            }
            Op::Append { key, items } => {
                let root = expected
                    .as_object_mut()
                    .ok_or_else(|| unfaithful(String::new(), "the root is not an object".into()))?;
                let list = root
                    .entry(key.clone())
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(list) = list {
                    list.extend(items.iter().cloned());
                }
            }
        }
    }
    let reparsed = Document::parse(text.to_string(), &doc.file).map_err(|e| {
        unfaithful(
            String::new(),
            format!("the edited text does not parse: {e}"),
        )
    })?;
    if reparsed.format != doc.format {
        return Err(unfaithful(
            String::new(),
            "the edited text changed syntax".into(),
        ));
    }
    let actual = reparsed.root.to_value();
    match first_difference(&expected, &actual, "") {
        None => Ok(()),
        Some(at) => Err(unfaithful(
            at,
            "the value there is not what the refinements make it".into(),
        )),
    }
}

fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            if x.len() != y.len() || !x.keys().eq(y.keys()) {
                return Some(at.to_string());
            }
            x.iter()
                .find_map(|(k, v)| first_difference(v, &y[k], &super::pointer::push(at, k)))
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some(at.to_string());
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (v, w))| first_difference(v, w, &super::pointer::push_index(at, i)))
        }
        _ if a == b => None,
        _ => Some(at.to_string()),
    }
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
