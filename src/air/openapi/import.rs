//! The document walk: version, service, paths and operations (ids, descriptions, request
//! bodies), tags into capabilities, into an AIR with a site for every element. Parameters
//! and responses are read in their own modules, as more methods of the same walk.
//!
//! Invariant: the same document always imports to the same AIR, in document order; ids are
//! derived from the document alone (never from what else it holds), so an operation keeps
//! its target keys when others are added.

use std::collections::{BTreeMap, HashMap};

use super::document::Document;
use super::error::OpenApiError;
use super::ext::{self, Attr};
use super::pointer::{self, show};
use super::refs::{self, Layer};
use super::schema::{Budget, Flattener, View};
use super::tree::Node;
use super::{Imported, Note, Site, Version};
use crate::air::{Air, AirSource, Capability, Field, Location, Operation, Service};
use crate::limits::Limit;

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Imports `doc` into AIR.
pub(crate) fn import(doc: &Document) -> Result<Imported, OpenApiError> {
    let cap = Limit::ImportNodes.value().map_err(|e| OpenApiError::Read {
        file: doc.file.clone(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
    })?;
    let mut walk = Walk {
        doc,
        version: version(doc)?,
        notes: Vec::new(),
        sites: BTreeMap::new(),
        raw_ids: HashMap::new(),
        ids: HashMap::new(),
        tags: Vec::new(),
        budget: Budget::new(cap),
    };
    let service = walk.service()?;
    let mut operations = Vec::new();
    if let Some(paths) = doc.root.get("paths") {
        let paths = walk.map(paths, "/paths")?;
        for entry in &paths.entries {
            if entry.key.starts_with("x-") {
                continue;
            }
            let at = pointer::push("/paths", &entry.key);
            walk.path_item(&entry.key, &entry.value, &at, &mut operations)?;
        }
    }
    if doc.root.get("webhooks").is_some() {
        walk.notes.push(Note {
            pointer: "/webhooks".into(),
            message: "webhooks are not imported: a client does not call them".into(),
        });
    }
    let capabilities = walk.capabilities()?;
    let air = Air {
        air_version: crate::air::AIR_VERSION,
        service,
        operations,
        capabilities,
        provenance: Vec::new(),
        source: Some(AirSource {
            format: match walk.version {
                Version::Swagger2 => "swagger".into(),
                _ => "openapi".into(),
            },
            version: version_text(doc),
            sha256: crate::canon::bytes_hash(doc.text.as_bytes()),
        }),
    };
    air.validate(&doc.file).map_err(|e| OpenApiError::Invalid {
        file: doc.file.clone(),
        pointer: String::new(),
        message: format!("the imported AIR is not valid: {e}"),
    })?;
    Ok(Imported {
        air,
        notes: walk.notes,
        sites: walk.sites,
        version: walk.version,
    })
}

fn version_text(doc: &Document) -> String {
    ["openapi", "swagger"]
        .iter()
        .find_map(|k| doc.root.get(k).and_then(Node::scalar_text))
        .unwrap_or_default()
}

fn version(doc: &Document) -> Result<Version, OpenApiError> {
    let invalid = |pointer: &str, message: String| OpenApiError::Invalid {
        file: doc.file.clone(),
        pointer: pointer.to_string(),
        message,
    };
    if doc.root.map().is_none() {
        return Err(invalid(
            "",
            format!(
                "an OpenAPI description is an object, found {}",
                doc.root.kind_name()
            ),
        ));
    }
    let supported = "anvil-bench imports OpenAPI 3.0, 3.1 and Swagger 2.0";
    if let Some(v) = doc.root.get("openapi") {
        let text = v.scalar_text().unwrap_or_default();
        return match text.get(..4) {
            Some("3.0.") => Ok(Version::OpenApi30),
            Some("3.1.") => Ok(Version::OpenApi31),
            _ => Err(invalid(
                "/openapi",
                format!("unsupported OpenAPI version `{text}`: {supported}"),
            )),
        };
    }
    if let Some(v) = doc.root.get("swagger") {
        let text = v.scalar_text().unwrap_or_default();
        return if text == "2.0" {
            Ok(Version::Swagger2)
        } else {
            Err(invalid(
                "/swagger",
                format!("unsupported Swagger version `{text}`: {supported}"),
            ))
        };
    }
    Err(invalid(
        "",
        format!(
            "neither `openapi` nor `swagger` is present: not an OpenAPI description ({supported})"
        ),
    ))
}

/// An operation id: characters outside `[A-Za-z0-9_-]` become `_`.
fn fold_id(raw: &str) -> String {
    let id: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if id.is_empty() { "_".into() } else { id }
}

/// The id of an operation without an operationId: `get_pets_petId` for `GET /pets/{petId}`.
fn synthesized_id(method: &str, path: &str) -> String {
    let mut slug = String::new();
    for c in path.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('_') {
            slug.push('_');
        }
    }
    let slug = slug.trim_matches('_');
    if slug.is_empty() {
        method.to_string()
    } else {
        format!("{method}_{slug}")
    }
}

/// A lowercase slug of a title, for the service id.
fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-');
    if out.is_empty() {
        "api".into()
    } else {
        out.into()
    }
}

pub(super) struct Walk<'d> {
    pub(super) doc: &'d Document,
    pub(super) version: Version,
    pub(super) notes: Vec<Note>,
    pub(super) sites: BTreeMap<String, Site>,
    /// operationId as written → its pointer.
    raw_ids: HashMap<String, String>,
    /// AIR operation id → the pointer it came from.
    ids: HashMap<String, String>,
    /// (tag, pointer of its first use, operation ids), in first-use order.
    tags: Vec<(String, String, Vec<String>)>,
    /// What the schemas of all operations may still expand to.
    pub(super) budget: Budget,
}

impl<'d> Walk<'d> {
    pub(super) fn invalid(&self, pointer: &str, message: String) -> OpenApiError {
        OpenApiError::Invalid {
            file: self.doc.file.clone(),
            pointer: pointer.to_string(),
            message,
        }
    }

    pub(super) fn map(
        &self,
        node: &'d Node,
        at: &str,
    ) -> Result<&'d super::tree::Map, OpenApiError> {
        node.map().ok_or_else(|| {
            self.invalid(
                at,
                format!("expected an object, found {}", node.kind_name()),
            )
        })
    }

    pub(super) fn string(&self, node: &'d Node, at: &str) -> Result<&'d str, OpenApiError> {
        node.as_str().ok_or_else(|| {
            self.invalid(at, format!("expected a string, found {}", node.kind_name()))
        })
    }

    fn service(&self) -> Result<Service, OpenApiError> {
        let info = self
            .doc
            .root
            .get("info")
            .ok_or_else(|| self.invalid("/info", "the `info` object is missing".into()))?;
        self.map(info, "/info")?;
        let title = info
            .get("title")
            .ok_or_else(|| self.invalid("/info/title", "the API title is missing".into()))?;
        let title = self.string(title, "/info/title")?;
        let version = info
            .get("version")
            .and_then(Node::scalar_text)
            .ok_or_else(|| self.invalid("/info/version", "the API version is missing".into()))?;
        Ok(Service {
            id: slug(title),
            version,
        })
    }

    fn path_item(
        &mut self,
        path: &str,
        item: &'d Node,
        at: &str,
        out: &mut Vec<Operation>,
    ) -> Result<(), OpenApiError> {
        if !path.starts_with('/') {
            return Err(self.invalid(at, format!("path `{path}` does not start with `/`")));
        }
        let layers = refs::chain(self.doc, item, at)?;
        let resolved = layers.last().map_or(item, |l| l.node);
        let resolved_at = layers.last().map_or(at, |l| l.pointer.as_str()).to_string();
        let map = self.map(resolved, &resolved_at)?;
        let shared =
            refs::find(&layers, "parameters").map(|(n, p)| (n, pointer::push(p, "parameters")));
        for entry in &map.entries {
            if !METHODS.contains(&entry.key.as_str()) {
                continue;
            }
            let op_at = pointer::push(&resolved_at, &entry.key);
            let op = self.operation(path, &entry.key, &entry.value, &op_at, shared.clone())?;
            out.push(op);
        }
        Ok(())
    }

    fn operation(
        &mut self,
        path: &str,
        method: &str,
        node: &'d Node,
        at: &str,
        shared: Option<(&'d Node, String)>,
    ) -> Result<Operation, OpenApiError> {
        self.map(node, at)?;
        let id = self.operation_id(path, method, node, at)?;
        let mut sources = BTreeMap::new();
        let description = match node.get("description") {
            Some(d) => ext::read(&self.doc.file, Attr::Description, d, at)?
                .and_then(|v| v.as_str().map(str::to_string)),
            None => None,
        };
        if description.is_some() {
            sources.insert(Attr::Description, at.to_string());
        }
        self.sites.insert(
            format!("op.{id}"),
            Site {
                use_site: at.to_string(),
                sources,
            },
        );
        if let Some(tags) = node.get("tags") {
            self.collect_tags(&id, tags, &pointer::push(at, "tags"))?;
        }
        let mut fields = Vec::new();
        self.parameters(node, at, shared, &mut fields)?;
        self.request_body(node, at, &mut fields)?;
        let errors = self.responses(&id, node, at, &mut fields)?;
        self.check_unique_fields(&fields)?;
        let mut kept = Vec::with_capacity(fields.len());
        for (field, site) in fields {
            self.sites
                .insert(format!("op.{id}.{}.{}", field.location, field.name), site);
            kept.push(field);
        }
        Ok(Operation {
            id,
            method: method.to_ascii_uppercase(),
            path: path.to_string(),
            description,
            fields: kept,
            errors,
            inferred: Vec::new(),
            pointer: Some(at.to_string()),
        })
    }

    /// The AIR id of the operation at `at`: its `operationId` folded, or one made from its
    /// method and path; refuses an `operationId` written twice or an id another operation
    /// already has.
    fn operation_id(
        &mut self,
        path: &str,
        method: &str,
        node: &'d Node,
        at: &str,
    ) -> Result<String, OpenApiError> {
        let id = match node.get("operationId") {
            Some(raw) => {
                let raw_at = pointer::push(at, "operationId");
                let raw = self.string(raw, &raw_at)?;
                if let Some(first) = self.raw_ids.insert(raw.to_string(), raw_at.clone()) {
                    return Err(self.invalid(
                        &raw_at,
                        format!("duplicate operationId `{raw}` (also at `{}`)", show(&first)),
                    ));
                }
                fold_id(raw)
            }
            None => synthesized_id(method, path),
        };
        if let Some(first) = self.ids.insert(id.clone(), at.to_string()) {
            return Err(self.invalid(
                at,
                format!(
                    "operation id `{id}` is also the id of the operation at `{}`; give one of them a distinct operationId",
                    show(&first)
                ),
            ));
        }
        Ok(id)
    }

    /// Adds the input body fields of the operation `node`'s `requestBody`, if it has one
    /// with a schema.
    fn request_body(
        &mut self,
        node: &'d Node,
        at: &str,
        fields: &mut Vec<(Field, Site)>,
    ) -> Result<(), OpenApiError> {
        if let Some(body) = node.get("requestBody") {
            let body_at = pointer::push(at, "requestBody");
            let layers = refs::chain(self.doc, body, &body_at)?;
            let required =
                refs::find(&layers, "required").and_then(|(n, _)| n.as_bool()) == Some(true);
            if let Some(schema) = self.media_schema(&layers)? {
                let view = View::build(self.doc, schema.0, &schema.1, &mut Vec::new())?;
                let mut f = Flattener::new(
                    self.doc,
                    Location::InputBody,
                    fields,
                    &mut self.notes,
                    &mut self.budget,
                );
                f.descend(&view, "", required)?;
            }
        }
        Ok(())
    }

    /// Refuses the first field of an operation defined twice in one location.
    fn check_unique_fields(&self, fields: &[(Field, Site)]) -> Result<(), OpenApiError> {
        let mut seen: HashMap<(Location, &str), usize> = HashMap::with_capacity(fields.len());
        for (i, (field, site)) in fields.iter().enumerate() {
            if let Some(&first) = seen.get(&(field.location, field.name.as_str())) {
                return Err(self.invalid(
                    &site.use_site,
                    format!(
                        "field `{}` in {} is defined twice (also at `{}`)",
                        field.name,
                        field.location,
                        show(&fields[first].1.use_site)
                    ),
                ));
            }
            seen.insert((field.location, field.name.as_str()), i);
        }
        Ok(())
    }

    /// The schema of a body: 2.0's `schema`, or 3.x's `content` (JSON first).
    pub(super) fn media_schema(
        &self,
        layers: &[Layer<'d>],
    ) -> Result<Option<(&'d Node, String)>, OpenApiError> {
        if self.version == Version::Swagger2 {
            return Ok(refs::find(layers, "schema").map(|(n, at)| (n, pointer::push(at, "schema"))));
        }
        let Some((content, at)) = refs::find(layers, "content") else {
            return Ok(None);
        };
        let at = pointer::push(at, "content");
        let map = self.map(content, &at)?;
        let chosen = map
            .entries
            .iter()
            .find(|e| e.key == "application/json")
            .or_else(|| {
                map.entries
                    .iter()
                    .find(|e| e.key.ends_with("+json") || e.key.contains("json"))
            })
            .or_else(|| map.entries.first());
        Ok(chosen.and_then(|e| {
            let media_at = pointer::push(&at, &e.key);
            e.value
                .get("schema")
                .map(|s| (s, pointer::push(&media_at, "schema")))
        }))
    }

    fn collect_tags(&mut self, op: &str, tags: &'d Node, at: &str) -> Result<(), OpenApiError> {
        let items = tags.seq().ok_or_else(|| {
            self.invalid(at, format!("expected an array, found {}", tags.kind_name()))
        })?;
        for (i, tag) in items.iter().enumerate() {
            let tag_at = pointer::push_index(at, i);
            let name = self.string(tag, &tag_at)?;
            match self.tags.iter_mut().find(|t| t.0 == name) {
                Some(t) => t.2.push(op.to_string()),
                None => self
                    .tags
                    .push((name.to_string(), tag_at, vec![op.to_string()])),
            }
        }
        Ok(())
    }

    /// Tags become capabilities: the declared ones first (with their descriptions), then
    /// the ones only used.
    fn capabilities(&mut self) -> Result<Vec<Capability>, OpenApiError> {
        let mut caps: Vec<Capability> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        if let Some(declared) = self.doc.root.get("tags") {
            let items = declared.seq().ok_or_else(|| {
                self.invalid(
                    "/tags",
                    format!("expected an array, found {}", declared.kind_name()),
                )
            })?;
            for (i, tag) in items.iter().enumerate() {
                let at = pointer::push_index("/tags", i);
                let Some(name) = tag.get("name").and_then(Node::as_str) else {
                    return Err(self.invalid(&at, "a tag needs a `name`".into()));
                };
                let description = tag
                    .get("description")
                    .and_then(Node::as_str)
                    .map(str::to_string);
                let ops = self
                    .tags
                    .iter()
                    .find(|t| t.0 == name)
                    .map(|t| t.2.clone())
                    .unwrap_or_default();
                names.push(name.to_string());
                add_capability(&mut caps, name, description, at, ops);
            }
        }
        for (name, at, ops) in std::mem::take(&mut self.tags) {
            if !names.contains(&name) {
                add_capability(&mut caps, &name, None, at, ops);
            }
        }
        Ok(caps)
    }
}

/// Adds a capability for tag `name`, its id made unique with a `-2`, `-3`… suffix.
fn add_capability(
    caps: &mut Vec<Capability>,
    name: &str,
    description: Option<String>,
    at: String,
    operation_ids: Vec<String>,
) {
    let base = fold_id(name);
    let mut id = base.clone();
    let mut n = 2;
    while caps.iter().any(|c| c.id == id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    caps.push(Capability {
        id,
        description,
        operation_ids,
        pointer: Some(at),
    });
}
