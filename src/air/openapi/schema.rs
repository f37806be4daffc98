//! Schemas flattened into AIR fields: nested objects become dotted names, array items
//! `name[]`, the alternatives of a `oneOf`/`anyOf` `name.oneOf[i]`; `allOf` members merge
//! into one object; `anyOf`/`oneOf` with `null` as the only other choice is the schema made
//! nullable.
//!
//! Invariant: every field's value comes from a node of the document, and the field records
//! where: its use site (the pointer refinements are written at) and, per attribute, the
//! layer that stated it. A schema that contains itself is expanded once and noted; the
//! whole import expands at most [`Limit::ImportNodes`] schema nodes (a `$ref` costs again at
//! every use), so components that each point at the next several times cannot multiply
//! into an exponential number of fields.

use std::collections::BTreeMap;

use serde_json::Value;

use super::document::Document;
use super::error::OpenApiError;
use super::ext::{self, Attr};
use super::pointer;
use super::refs::{self, Layer};
use super::tree::Node;
use super::{Note, Site};
use crate::air::{Composition, Field, Location};
use crate::limits::Limit;

/// Nesting past which fields are not expanded (and a note says so).
const MAX_NESTING: usize = 24;

/// A schema seen through its `$ref` chain, with its `allOf` members resolved.
pub(crate) struct View<'d> {
    pub layers: Vec<Layer<'d>>,
    members: Vec<View<'d>>,
    /// `oneOf`/`anyOf` alternatives (node and pointer), unless the schema is only nullable.
    alternatives: Option<(Composition, Vec<(&'d Node, String)>)>,
    nullable: bool,
}

impl<'d> View<'d> {
    /// Resolves `node` at `at`. `guard` holds the schemas being resolved, so an `allOf`
    /// that contains itself is refused instead of looping.
    pub(crate) fn build(
        doc: &'d Document,
        node: &'d Node,
        at: &str,
        guard: &mut Vec<*const Node>,
    ) -> Result<View<'d>, OpenApiError> {
        let layers = refs::chain(doc, node, at)?;
        let last = layers.last().unwrap_or(&layers[0]);
        let target: *const Node = last.node;
        if guard.contains(&target) {
            return Err(OpenApiError::Invalid {
                file: doc.file.clone(),
                pointer: at.to_string(),
                message: format!(
                    "schema `{}` contains itself through allOf/anyOf/oneOf",
                    pointer::show(&last.pointer)
                ),
            });
        }
        guard.push(target);
        let result = View::build_inner(doc, layers, guard);
        guard.pop();
        result
    }

    fn build_inner(
        doc: &'d Document,
        layers: Vec<Layer<'d>>,
        guard: &mut Vec<*const Node>,
    ) -> Result<View<'d>, OpenApiError> {
        let mut members = Vec::new();
        if let Some((all_of, at)) = refs::find(&layers, "allOf") {
            let at = pointer::push(at, "allOf");
            for (i, member) in seq(doc, all_of, &at)?.iter().enumerate() {
                members.push(View::build(
                    doc,
                    member,
                    &pointer::push_index(&at, i),
                    guard,
                )?);
            }
        }
        let mut view = View {
            layers,
            members,
            alternatives: None,
            nullable: false,
        };
        for (keyword, composition) in [("oneOf", Composition::OneOf), ("anyOf", Composition::AnyOf)]
        {
            let Some((alts, at)) = refs::find(&view.layers, keyword) else {
                continue;
            };
            let at = pointer::push(at, keyword);
            let mut rest = Vec::new();
            for (i, alt) in seq(doc, alts, &at)?.iter().enumerate() {
                let alt_at = pointer::push_index(&at, i);
                let alt_layers = refs::chain(doc, alt, &alt_at)?;
                let only_null = refs::find(&alt_layers, "type")
                    .is_some_and(|(t, _)| t.as_str() == Some("null"));
                if only_null {
                    view.nullable = true;
                } else {
                    rest.push((alt, alt_at));
                }
            }
            if rest.len() == 1 && view.nullable && view.own_properties().is_none() {
                // `anyOf: [X, {type: 'null'}]` is X, nullable.
                let (alt, alt_at) = rest.remove(0);
                let inner = View::build(doc, alt, &alt_at, guard)?;
                view.layers.extend(inner.layers);
                view.members.extend(inner.members);
                view.alternatives = inner.alternatives;
                view.nullable |= inner.nullable;
            } else if !rest.is_empty() {
                view.alternatives = Some((composition, rest));
            }
            break;
        }
        Ok(view)
    }

    /// The first value of `key`: the schema's own layers, then its `allOf` members.
    pub(crate) fn find(&self, key: &str) -> Option<(&'d Node, &str)> {
        if let Some(found) = refs::find(&self.layers, key) {
            return Some(found);
        }
        self.members.iter().find_map(|m| m.find(key))
    }

    /// True when the schema or an `allOf` member declares properties.
    fn has_properties(&self) -> bool {
        self.own_properties()
            .and_then(|(p, _)| p.map())
            .is_some_and(|m| !m.entries.is_empty())
            || self.members.iter().any(View::has_properties)
    }

    fn own_properties(&self) -> Option<(&'d Node, &str)> {
        refs::find(&self.layers, "properties")
    }

    /// Properties in document order, own first, then each `allOf` member's; the first
    /// occurrence of a name wins.
    pub(crate) fn properties(&self) -> Vec<(&'d str, &'d Node, String)> {
        let mut out: Vec<(&'d str, &'d Node, String)> = Vec::new();
        if let Some((props, at)) = self.own_properties()
            && let Some(map) = props.map()
        {
            let at = pointer::push(at, "properties");
            for e in &map.entries {
                out.push((e.key.as_str(), &e.value, pointer::push(&at, &e.key)));
            }
        }
        for m in &self.members {
            for p in m.properties() {
                if !out.iter().any(|o| o.0 == p.0) {
                    out.push(p);
                }
            }
        }
        out
    }

    pub(crate) fn requires(&self, name: &str) -> bool {
        let own = refs::find(&self.layers, "required")
            .and_then(|(r, _)| r.seq())
            .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)));
        own || self.members.iter().any(|m| m.requires(name))
    }

    fn flag(&self, key: &str) -> bool {
        self.find(key).and_then(|(n, _)| n.as_bool()) == Some(true)
    }

    /// The stated types (`type: x` or 3.1's `type: [x, "null"]`).
    fn types(&self) -> Vec<String> {
        match self.find("type") {
            Some((t, _)) => match t.seq() {
                Some(items) => items
                    .iter()
                    .filter_map(|n| n.as_str().map(str::to_string))
                    .collect(),
                None => t.as_str().map(str::to_string).into_iter().collect(),
            },
            None => Vec::new(),
        }
    }

    fn items(&self) -> Option<(&'d Node, String)> {
        self.find("items")
            .map(|(n, at)| (n, pointer::push(at, "items")))
    }
}

fn seq<'d>(doc: &Document, node: &'d Node, at: &str) -> Result<&'d [Node], OpenApiError> {
    node.seq().ok_or_else(|| OpenApiError::Invalid {
        file: doc.file.clone(),
        pointer: at.to_string(),
        message: format!("expected an array, found {}", node.kind_name()),
    })
}

/// A field name segment: characters a field name cannot hold become `_`.
pub(crate) fn fold_name(name: &str) -> String {
    let folded: String = name
        .chars()
        .map(|c| {
            if c.is_whitespace() || c.is_control() || c == '.' {
                '_'
            } else {
                c
            }
        })
        .collect();
    if folded.is_empty() {
        "_".into()
    } else {
        folded
    }
}

fn join(name: &str, segment: &str) -> String {
    if name.is_empty() {
        segment.to_string()
    } else {
        format!("{name}.{segment}")
    }
}

/// The schema nodes an import may still expand: each field and each schema descended into
/// costs one.
pub(crate) struct Budget {
    left: u64,
    cap: u64,
}

impl Budget {
    pub(crate) fn new(cap: u64) -> Budget {
        Budget { left: cap, cap }
    }

    /// Spends one node at `at`, or refuses the document there once the cap is spent.
    fn spend(&mut self, doc: &Document, at: &str) -> Result<(), OpenApiError> {
        if self.left == 0 {
            let over = Limit::ImportNodes.exceeded(self.cap, None);
            return Err(OpenApiError::Invalid {
                file: doc.file.clone(),
                pointer: at.to_string(),
                message: format!("what the schemas expand to, each `$ref` at every use, {over}"),
            });
        }
        self.left -= 1;
        Ok(())
    }
}

/// Collects the fields of one location of one operation.
pub(crate) struct Flattener<'d, 'o> {
    pub doc: &'d Document,
    pub location: Location,
    pub fields: &'o mut Vec<(Field, Site)>,
    pub notes: &'o mut Vec<Note>,
    budget: &'o mut Budget,
    /// Schemas on the current descent, by identity (recursion stops at a repeat).
    path: Vec<*const Node>,
}

impl<'d, 'o> Flattener<'d, 'o> {
    pub(crate) fn new(
        doc: &'d Document,
        location: Location,
        fields: &'o mut Vec<(Field, Site)>,
        notes: &'o mut Vec<Note>,
        budget: &'o mut Budget,
    ) -> Self {
        Flattener {
            doc,
            location,
            fields,
            notes,
            budget,
            path: Vec::new(),
        }
    }

    fn view(&self, node: &'d Node, at: &str) -> Result<View<'d>, OpenApiError> {
        View::build(self.doc, node, at, &mut Vec::new())
    }

    /// The fields below `view` (named under `name`; `""` for a whole body).
    pub(crate) fn descend(
        &mut self,
        view: &View<'d>,
        name: &str,
        required: bool,
    ) -> Result<(), OpenApiError> {
        let last = view.layers.last().unwrap_or(&view.layers[0]);
        let target: *const Node = last.node;
        if self.path.contains(&target) || self.path.len() >= MAX_NESTING {
            let why = if self.path.contains(&target) {
                "the schema contains itself"
            } else {
                "nesting is too deep"
            };
            self.notes.push(Note {
                pointer: last.pointer.clone(),
                message: format!("fields below `{name}` not expanded: {why}"),
            });
            return Ok(());
        }
        self.budget.spend(self.doc, &last.pointer)?;
        self.path.push(target);
        let result = self.descend_inner(view, name, required);
        self.path.pop();
        result
    }

    fn descend_inner(
        &mut self,
        view: &View<'d>,
        name: &str,
        required: bool,
    ) -> Result<(), OpenApiError> {
        for (prop, node, at) in view.properties() {
            let pview = self.view(node, &at)?;
            let skip = match self.location {
                Location::OutputBody => pview.flag("writeOnly"),
                _ => pview.flag("readOnly"),
            };
            if skip {
                continue;
            }
            let fname = join(name, &fold_name(prop));
            let req = required && view.requires(prop);
            self.field(&pview, &[], &fname, req)?;
            self.descend(&pview, &fname, req)?;
        }
        if let Some((composition, alts)) = &view.alternatives {
            for (i, (alt, at)) in alts.iter().enumerate() {
                let aview = self.view(alt, at)?;
                let segment = format!("{}[{i}]", composition.as_str());
                self.descend(&aview, &join(name, &segment), false)?;
            }
        }
        if let Some((items, at)) = view.items() {
            let iview = self.view(items, &at)?;
            self.descend(&iview, &format!("{name}[]"), required)?;
        }
        Ok(())
    }

    /// One field from `view`; `first` are layers searched before the schema for the
    /// refinable attributes (a parameter object before its schema). The use site is the
    /// first of `first`, else the schema's own node.
    pub(crate) fn field(
        &mut self,
        view: &View<'d>,
        first: &[Layer<'d>],
        name: &str,
        required: bool,
    ) -> Result<(), OpenApiError> {
        let use_site = first.first().unwrap_or(&view.layers[0]);
        self.budget.spend(self.doc, &use_site.pointer)?;
        let mut types = view.types();
        let mut nullable = view.nullable || view.flag("nullable");
        if types.iter().any(|t| t == "null") {
            nullable = true;
            types.retain(|t| t != "null");
        }
        let items = match view.items() {
            Some((n, at)) => Some(self.view(n, &at)?),
            None => None,
        };
        let ty = if !types.is_empty() {
            types.join("|")
        } else if view.has_properties() {
            "object".into()
        } else if items.is_some() {
            "array".into()
        } else {
            "any".into()
        };
        let detail = if ty == "array" { items.as_ref() } else { None }.unwrap_or(view);
        let format = detail
            .find("format")
            .and_then(|(n, _)| n.as_str().map(str::to_string));
        let enum_values = match detail.find("enum") {
            Some((n, _)) => n.seq().map(|s| s.iter().map(Node::to_value).collect()),
            None => detail.find("const").map(|(n, _)| vec![n.to_value()]),
        };
        let mut sources = BTreeMap::new();
        let mut values: BTreeMap<Attr, Value> = BTreeMap::new();
        for attr in [Attr::Description, Attr::Unit, Attr::Sensitivity] {
            let found = refs::find(first, attr.key()).or_else(|| view.find(attr.key()));
            if let Some((node, at)) = found
                && let Some(v) = ext::read(&self.doc.file, attr, node, at)?
            {
                values.insert(attr, v);
                sources.insert(attr, at.to_string());
            }
        }
        let text = |a: Attr| values.get(&a).and_then(Value::as_str).map(str::to_string);
        let field = Field {
            location: self.location,
            name: name.to_string(),
            ty,
            required,
            description: text(Attr::Description),
            unit: text(Attr::Unit),
            sensitivity: text(Attr::Sensitivity),
            inferred: Vec::new(),
            format,
            enum_values,
            nullable,
            composition: view.alternatives.as_ref().map(|(c, _)| *c),
            pointer: Some(use_site.pointer.clone()),
        };
        let site = Site {
            use_site: use_site.pointer.clone(),
            sources,
        };
        self.fields.push((field, site));
        Ok(())
    }
}
