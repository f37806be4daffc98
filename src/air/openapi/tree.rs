//! The located tree: the node model both readers (`json`, `yaml`) build, in which every
//! node knows the byte range of its source text, so import can name JSON Pointers and
//! export can edit the original text in place.
//!
//! Invariant: every offset in a tree indexes into the text it was built from, on a UTF-8
//! character boundary.

use std::collections::HashMap;

use serde_json::{Map as JsonMap, Number, Value};

use super::pointer;

/// How a scalar was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
    Json,
}

/// A scalar's value, resolved as YAML 1.2's core schema (or JSON) reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar {
    Null,
    Bool(bool),
    Number(Number),
    Str(String),
}

#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// First byte of the node's text (an anchor or tag included; the `{`/`[` of a flow
    /// collection; the first key or `-` of a block one; the `|`/`>` of a block scalar).
    pub start: usize,
    /// One past the last byte of the node's text (trailing blank lines and comments of a
    /// block scalar or collection excluded).
    pub end: usize,
    pub kind: Kind,
    /// A copy made for a YAML alias: its offsets are the anchor's, so it is never edited.
    pub alias: bool,
}

#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Scalar { value: Scalar, style: Style },
    Seq { items: Vec<Node>, flow: bool },
    Map(Map),
}

#[derive(Debug, Clone)]
pub(crate) struct Map {
    pub entries: Vec<Entry>,
    pub flow: bool,
    /// Key → entry index, for the large maps (`paths`, `components/schemas`).
    index: Option<HashMap<String, usize>>,
}

#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub key: String,
    pub key_start: usize,
    pub value: Node,
}

/// Why a text could not be built into a tree.
#[derive(Debug, Clone)]
pub(crate) enum BuildError {
    Syntax { offset: usize, message: String },
    Invalid { pointer: String, message: String },
}

/// Entries past which a map gets a key index.
const INDEX_FROM: usize = 16;
/// Nesting past which a document is refused rather than recursed into.
pub(crate) const MAX_DEPTH: usize = 200;

impl Map {
    pub(crate) fn new(entries: Vec<Entry>, flow: bool) -> Map {
        let index = (entries.len() > INDEX_FROM).then(|| {
            entries
                .iter()
                .enumerate()
                .map(|(i, e)| (e.key.clone(), i))
                .collect()
        });
        Map {
            entries,
            flow,
            index,
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match &self.index {
            Some(index) => index.get(key).map(|&i| &self.entries[i].value),
            None => self.entries.iter().find(|e| e.key == key).map(|e| &e.value),
        }
    }
}

/// Where a builder is, as a chain of borrowed tokens: the pointer text is made only when an
/// error needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Trail<'a> {
    Root,
    Key(&'a Trail<'a>, &'a str),
    Index(&'a Trail<'a>, usize),
}

impl Trail<'_> {
    pub(crate) fn pointer(&self) -> String {
        match self {
            Trail::Root => String::new(),
            Trail::Key(parent, key) => pointer::push(&parent.pointer(), key),
            Trail::Index(parent, i) => pointer::push_index(&parent.pointer(), *i),
        }
    }
}

/// Pushes an entry, refusing a key the map already holds. `seen` indexes the keys once
/// the map is large; small maps are scanned.
pub(crate) fn push_entry(
    entries: &mut Vec<Entry>,
    seen: &mut std::collections::HashSet<String>,
    entry: Entry,
    at: &Trail<'_>,
) -> Result<(), BuildError> {
    let duplicate = if entries.len() < INDEX_FROM {
        entries.iter().any(|e| e.key == entry.key)
    } else {
        if seen.is_empty() {
            seen.extend(entries.iter().map(|e| e.key.clone()));
        }
        !seen.insert(entry.key.clone())
    };
    if duplicate {
        return Err(BuildError::Invalid {
            pointer: pointer::push(&at.pointer(), &entry.key),
            message: format!("duplicate key `{}`", entry.key),
        });
    }
    entries.push(entry);
    Ok(())
}

impl Node {
    pub(crate) fn map(&self) -> Option<&Map> {
        match &self.kind {
            Kind::Map(m) => Some(m),
            _ => None,
        }
    }

    pub(crate) fn seq(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Seq { items, .. } => Some(items),
            _ => None,
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.map()?.get(key)
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar {
                value: Scalar::Str(s),
                ..
            } => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_bool(&self) -> Option<bool> {
        match &self.kind {
            Kind::Scalar {
                value: Scalar::Bool(b),
                ..
            } => Some(*b),
            _ => None,
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(
            &self.kind,
            Kind::Scalar {
                value: Scalar::Null,
                ..
            }
        )
    }

    /// A scalar's text as a version string reads it (`2.0` written plain is a number).
    pub(crate) fn scalar_text(&self) -> Option<String> {
        match &self.kind {
            Kind::Scalar { value, .. } => match value {
                Scalar::Str(s) => Some(s.clone()),
                Scalar::Number(n) => Some(n.to_string()),
                Scalar::Bool(b) => Some(b.to_string()),
                Scalar::Null => None,
            },
            _ => None,
        }
    }

    /// "an object", "a string", … for messages.
    pub(crate) fn kind_name(&self) -> &'static str {
        match &self.kind {
            Kind::Map(_) => "an object",
            Kind::Seq { .. } => "an array",
            Kind::Scalar { value, .. } => match value {
                Scalar::Null => "null",
                Scalar::Bool(_) => "a boolean",
                Scalar::Number(_) => "a number",
                Scalar::Str(_) => "a string",
            },
        }
    }

    /// The node `tokens` names below this one.
    pub(crate) fn at(&self, tokens: &[String]) -> Option<&Node> {
        let mut node = self;
        for token in tokens {
            node = match &node.kind {
                Kind::Map(m) => m.get(token)?,
                Kind::Seq { items, .. } => {
                    // RFC 6901: an index is `0` or a number without a leading zero.
                    if token.len() > 1 && token.starts_with('0') {
                        return None;
                    }
                    items.get(token.parse::<usize>().ok()?)?
                }
                Kind::Scalar { .. } => return None,
            };
        }
        Some(node)
    }

    /// The node at a plain pointer (`/components/schemas/Pet`).
    pub(crate) fn at_pointer(&self, at: &str) -> Option<&Node> {
        let tokens = pointer::parse_ref(&format!("#{at}")).ok()?;
        self.at(&tokens)
    }

    /// The JSON value this node denotes.
    pub(crate) fn to_value(&self) -> Value {
        match &self.kind {
            Kind::Scalar { value, .. } => match value {
                Scalar::Null => Value::Null,
                Scalar::Bool(b) => Value::Bool(*b),
                Scalar::Number(n) => Value::Number(n.clone()),
                Scalar::Str(s) => Value::String(s.clone()),
            },
            Kind::Seq { items, .. } => Value::Array(items.iter().map(Node::to_value).collect()),
            Kind::Map(m) => Value::Object(
                m.entries
                    .iter()
                    .map(|e| (e.key.clone(), e.value.to_value()))
                    .collect::<JsonMap<_, _>>(),
            ),
        }
    }

    /// Marks this node and everything below it as an alias copy.
    pub(crate) fn into_alias(mut self) -> Node {
        self.alias = true;
        match &mut self.kind {
            Kind::Map(m) => {
                for e in &mut m.entries {
                    e.value = std::mem::replace(&mut e.value, placeholder()).into_alias();
                }
            }
            Kind::Seq { items, .. } => {
                for item in items.iter_mut() {
                    *item = std::mem::replace(item, placeholder()).into_alias();
                }
            }
            Kind::Scalar { .. } => {}
        }
        self
    }
}

fn placeholder() -> Node {
    Node {
        start: 0,
        end: 0,
        kind: Kind::Scalar {
            value: Scalar::Null,
            style: Style::Plain,
        },
        alias: false,
    }
}
