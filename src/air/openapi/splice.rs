//! Edits as splices of the original text: a value replaced where it stands, keys added after
//! an object's last entry (in its own indentation, or inside its braces), items added after
//! an array's last one. Every byte outside a splice is copied unchanged.
//!
//! Invariant: splices never overlap, and with no operations the output is the input.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::document::{Document, Format};
use super::error::OpenApiError;
use super::render::{self, Context};
use super::tree::{Kind, Node};

/// One change to the document's value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    /// Sets `key` on the object at pointer `object` (replacing or adding it).
    Set {
        object: String,
        key: String,
        value: Value,
    },
    /// Appends `items` to the root array `key` (adding the key when absent).
    Append { key: String, items: Vec<Value> },
}

struct Splice {
    start: usize,
    end: usize,
    /// Nesting of the edited object: at one position, deeper inserts go first.
    depth: usize,
    text: String,
}

/// The document text with `ops` applied.
pub(crate) fn apply(doc: &Document, ops: &[Op]) -> Result<String, OpenApiError> {
    if ops.is_empty() {
        return Ok(doc.text.clone());
    }
    let nl = if doc.text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut splices = Vec::new();
    let mut inserts: BTreeMap<String, Vec<(String, Value)>> = BTreeMap::new();
    for op in ops {
        match op {
            Op::Set { object, key, value } => {
                let node = locate(doc, object)?;
                match node.get(key) {
                    Some(existing) => {
                        splices.push(replace(doc, node, existing, value, object, key, nl)?);
                    }
                    None => inserts
                        .entry(object.clone())
                        .or_default()
                        .push((key.clone(), value.clone())),
                }
            }
            Op::Append { key, items } => match doc.root.get(key) {
                Some(seq) => splices.push(append(doc, seq, items, key, nl)?),
                None => inserts
                    .entry(String::new())
                    .or_default()
                    .push((key.clone(), Value::Array(items.clone()))),
            },
        }
    }
    for (object, entries) in inserts {
        let node = locate(doc, &object)?;
        splices.push(insert(doc, node, &entries, &object, nl)?);
    }
    splices.sort_by(|a, b| a.start.cmp(&b.start).then(b.depth.cmp(&a.depth)));
    let mut out = String::with_capacity(doc.text.len() + 256);
    let mut at = 0;
    for s in &splices {
        if s.start < at {
            return Err(unfaithful(doc, "", "two edits overlap".into()));
        }
        out.push_str(&doc.text[at..s.start]);
        out.push_str(&s.text);
        at = s.end;
    }
    out.push_str(&doc.text[at..]);
    Ok(out)
}

fn unfaithful(doc: &Document, pointer: &str, message: String) -> OpenApiError {
    OpenApiError::Unfaithful {
        file: doc.file.clone(),
        pointer: pointer.to_string(),
        message,
    }
}

fn depth(pointer: &str) -> usize {
    pointer.matches('/').count()
}

fn locate<'d>(doc: &'d Document, object: &str) -> Result<&'d Node, OpenApiError> {
    let node = doc
        .root
        .at_pointer(object)
        .ok_or_else(|| unfaithful(doc, object, "no such node".into()))?;
    if node.map().is_none() {
        return Err(unfaithful(
            doc,
            object,
            format!("expected an object, found {}", node.kind_name()),
        ));
    }
    if node.alias {
        return Err(OpenApiError::Invalid {
            file: doc.file.clone(),
            pointer: object.to_string(),
            message: "this object is a YAML alias; write the refinement at its anchor by hand"
                .into(),
        });
    }
    Ok(node)
}

/// Start of the line holding `pos`.
fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// Where a new line goes after the line holding `pos - 1` (and whether a newline must
/// come first because that line ends the file without one).
fn after_line(text: &str, pos: usize) -> (usize, bool) {
    let from = pos.saturating_sub(1).min(text.len());
    match text[from..].find('\n') {
        Some(i) => (from + i + 1, false),
        None => (text.len(), true),
    }
}

/// Column (in bytes) of `pos`; a byte-order mark takes no column.
fn column(text: &str, pos: usize) -> usize {
    match line_start(text, pos) {
        0 if text.starts_with('\u{feff}') => pos.saturating_sub(3),
        start => pos - start,
    }
}

fn leading_ws(text: &str, pos: usize) -> &str {
    let start = line_start(text, pos);
    let line = &text[start..];
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

/// One past the last byte that belongs to `node` on its last content line.
fn content_end(node: &Node, fallback: usize) -> usize {
    node.end.max(fallback)
}

fn replace(
    doc: &Document,
    parent: &Node,
    existing: &Node,
    value: &Value,
    object: &str,
    key: &str,
    nl: &str,
) -> Result<Splice, OpenApiError> {
    let at = super::pointer::push(object, key);
    let Kind::Scalar { style, .. } = &existing.kind else {
        return Err(unfaithful(
            doc,
            &at,
            format!("cannot replace {} with a value", existing.kind_name()),
        ));
    };
    let text = match (doc.format, value) {
        (Format::Json, v) => render::json(v),
        (Format::Yaml, Value::String(s)) => {
            let flow = parent.map().is_none_or(|m| m.flow);
            let context = if flow {
                Context::Flow
            } else {
                Context::Block {
                    key_column: column(&doc.text, parent.start),
                }
            };
            let block_indent = block_content_indent(&doc.text, existing);
            render::yaml_string(s, *style, context, block_indent, nl)
        }
        (Format::Yaml, v) => render::yaml_value(v, Context::Flow, nl),
    };
    let text = if existing.start == existing.end {
        format!(" {text}")
    } else {
        text
    };
    Ok(Splice {
        start: existing.start,
        end: existing.end,
        depth: depth(&at),
        text,
    })
}

/// The indentation of a block scalar's first content line.
fn block_content_indent(text: &str, node: &Node) -> Option<usize> {
    if !matches!(text.as_bytes().get(node.start), Some(b'|' | b'>')) {
        return None;
    }
    let after_header = node.start + text[node.start..].find('\n')? + 1;
    text[after_header..node.end]
        .split('\n')
        .find(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches(' ').len())
}

fn insert(
    doc: &Document,
    node: &Node,
    entries: &[(String, Value)],
    object: &str,
    nl: &str,
) -> Result<Splice, OpenApiError> {
    let Some(map) = node.map() else {
        return Err(unfaithful(doc, object, "not an object".into()));
    };
    let text = &doc.text;
    let depth = depth(object);
    let (start, out) = match (doc.format, map.flow, map.entries.last()) {
        (Format::Yaml, false, Some(last)) => {
            let key_column = column(text, map.entries[0].key_start);
            let (pos, needs_nl) = after_line(text, content_end(&last.value, last.key_start + 1));
            let mut out = if needs_nl {
                nl.to_string()
            } else {
                String::new()
            };
            for (key, value) in entries {
                out.push_str(&yaml_entry(key, value, key_column, nl));
            }
            if needs_nl {
                out.truncate(out.len() - nl.len());
            }
            (pos, out)
        }
        (Format::Yaml, _, last) => {
            let pos = node.end.saturating_sub(1);
            let body: Vec<String> = entries
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}: {}",
                        render::yaml_value(&Value::String(k.clone()), Context::Flow, nl),
                        render::yaml_value(v, Context::Flow, nl)
                    )
                })
                .collect();
            let sep = if last.is_some() { ", " } else { "" };
            (pos, format!("{sep}{}", body.join(", ")))
        }
        (Format::Json, _, Some(last)) => {
            let multi_line = text[node.start..last.key_start].contains('\n');
            let indent = leading_ws(text, last.key_start);
            let mut out = String::new();
            for (key, value) in entries {
                if multi_line {
                    out.push(',');
                    out.push_str(nl);
                    out.push_str(indent);
                } else {
                    out.push_str(", ");
                }
                out.push_str(&json_entry(key, value, indent, multi_line, nl));
            }
            (last.value.end, out)
        }
        (Format::Json, _, None) => {
            let body: Vec<String> = entries
                .iter()
                .map(|(k, v)| json_entry(k, v, "", false, nl))
                .collect();
            (node.start + 1, body.join(", "))
        }
    };
    Ok(Splice {
        start,
        end: start,
        depth,
        text: out,
    })
}

fn yaml_entry(key: &str, value: &Value, key_column: usize, nl: &str) -> String {
    let pad = " ".repeat(key_column);
    match value {
        Value::Array(items) if !items.is_empty() => {
            let mut out = format!("{pad}{key}:{nl}");
            for item in items {
                let _ = write!(
                    out,
                    "{pad}  - {}{nl}",
                    render::yaml_value(item, Context::Flow, nl)
                );
            }
            out
        }
        _ => format!(
            "{pad}{key}: {}{nl}",
            render::yaml_value(value, Context::Block { key_column }, nl)
        ),
    }
}

fn json_entry(key: &str, value: &Value, indent: &str, multi_line: bool, nl: &str) -> String {
    let key = render::json(&Value::String(key.to_string()));
    match value {
        Value::Array(items) if multi_line && !items.is_empty() => {
            let unit = if indent.is_empty() { "  " } else { indent };
            let inner = format!("{indent}{unit}");
            let rows: Vec<String> = items
                .iter()
                .map(|i| format!("{inner}{}", render::json(i)))
                .collect();
            format!("{key}: [{nl}{}{nl}{indent}]", rows.join(&format!(",{nl}")))
        }
        v => format!("{key}: {}", render::json(v)),
    }
}

fn append(
    doc: &Document,
    seq: &Node,
    items: &[Value],
    key: &str,
    nl: &str,
) -> Result<Splice, OpenApiError> {
    let at = super::pointer::push("", key);
    let Kind::Seq {
        items: existing,
        flow,
    } = &seq.kind
    else {
        return Err(OpenApiError::Invalid {
            file: doc.file.clone(),
            pointer: at,
            message: format!("expected an array, found {}", seq.kind_name()),
        });
    };
    let text = &doc.text;
    let (start, out) = match (doc.format, flow, existing.last()) {
        (Format::Yaml, false, Some(last)) => {
            let pad = " ".repeat(column(text, seq.start));
            let (pos, needs_nl) = after_line(text, content_end(last, last.start + 1));
            let mut out = if needs_nl {
                nl.to_string()
            } else {
                String::new()
            };
            for item in items {
                let _ = write!(
                    out,
                    "{pad}- {}{nl}",
                    render::yaml_value(item, Context::Flow, nl)
                );
            }
            if needs_nl {
                out.truncate(out.len() - nl.len());
            }
            (pos, out)
        }
        (Format::Yaml, _, last) => {
            let body: Vec<String> = items
                .iter()
                .map(|i| render::yaml_value(i, Context::Flow, nl))
                .collect();
            let sep = if last.is_some() { ", " } else { "" };
            (
                seq.end.saturating_sub(1),
                format!("{sep}{}", body.join(", ")),
            )
        }
        (Format::Json, _, Some(last)) => {
            let multi_line = text[seq.start..last.start].contains('\n');
            let indent = leading_ws(text, last.start);
            let mut out = String::new();
            for item in items {
                if multi_line {
                    let _ = write!(out, ",{nl}{indent}");
                } else {
                    out.push_str(", ");
                }
                out.push_str(&render::json(item));
            }
            (last.end, out)
        }
        (Format::Json, _, None) => {
            let body: Vec<String> = items.iter().map(render::json).collect();
            (seq.start + 1, body.join(", "))
        }
    };
    Ok(Splice {
        start,
        end: start,
        depth: depth(&at) + 1,
        text: out,
    })
}
