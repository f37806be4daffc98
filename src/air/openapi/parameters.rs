//! Parameters (path, query, header, cookie; Swagger 2.0's `body` and `formData`) into
//! fields. Path-level parameters apply to each operation unless it redefines the same name
//! and place.
//!
//! Invariant: a parameter's refinements are written at its own list item (its use site),
//! beside the `$ref` when it is one, so a shared parameter stays as it was.

use super::error::OpenApiError;
use super::import::Walk;
use super::pointer;
use super::refs::{self, Layer};
use super::schema::{Flattener, View, fold_name};
use super::tree::Node;
use super::{Site, Version};
use crate::air::{Field, Location};

/// A resolved parameter: its `$ref` chain (use site first), name and place.
type Param<'d> = (Vec<Layer<'d>>, String, String);

impl<'d> Walk<'d> {
    pub(super) fn parameters(
        &mut self,
        op: &'d Node,
        at: &str,
        shared: Option<(&'d Node, String)>,
        fields: &mut Vec<(Field, Site)>,
    ) -> Result<(), OpenApiError> {
        let path_level = match shared {
            Some((list, list_at)) => self.parameter_list(list, &list_at)?,
            None => Vec::new(),
        };
        let own = match op.get("parameters") {
            Some(list) => self.parameter_list(list, &pointer::push(at, "parameters"))?,
            None => Vec::new(),
        };
        // Operation-level parameters override path-level ones with the same name and place.
        let mut all: Vec<_> = path_level
            .into_iter()
            .filter(|(_, n, p)| !own.iter().any(|(_, on, op)| on == n && op == p))
            .collect();
        all.extend(own);
        for (layers, name, place) in all {
            self.parameter(&layers, &name, &place, fields)?;
        }
        Ok(())
    }

    /// Each parameter of a list, resolved, with its name and place.
    fn parameter_list(&self, list: &'d Node, at: &str) -> Result<Vec<Param<'d>>, OpenApiError> {
        let items = list.seq().ok_or_else(|| {
            self.invalid(at, format!("expected an array, found {}", list.kind_name()))
        })?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let item_at = pointer::push_index(at, i);
            let layers = refs::chain(self.doc, item, &item_at)?;
            let text = |key: &str| -> Result<String, OpenApiError> {
                let (node, layer) = refs::find(&layers, key)
                    .ok_or_else(|| self.invalid(&item_at, format!("a parameter needs `{key}`")))?;
                Ok(self.string(node, &pointer::push(layer, key))?.to_string())
            };
            let name = text("name")?;
            let place = text("in")?;
            out.push((layers, name, place));
        }
        Ok(out)
    }

    fn parameter(
        &mut self,
        layers: &[Layer<'d>],
        name: &str,
        place: &str,
        fields: &mut Vec<(Field, Site)>,
    ) -> Result<(), OpenApiError> {
        let in_at = pointer::push(
            &refs::find(layers, "in").map_or(String::new(), |(_, p)| p.to_string()),
            "in",
        );
        let swagger = self.version == Version::Swagger2;
        let location = match place {
            "path" => Location::InputPath,
            "query" => Location::InputQuery,
            "header" => Location::InputHeader,
            "cookie" if !swagger => Location::InputCookie,
            "body" | "formData" if swagger => Location::InputBody,
            other => {
                return Err(self.invalid(
                    &in_at,
                    format!("`{other}` is not a parameter location here"),
                ));
            }
        };
        let required = place == "path"
            || refs::find(layers, "required").and_then(|(n, _)| n.as_bool()) == Some(true);
        let use_site = &layers[0];
        if swagger && place == "body" {
            // Swagger 2.0's body parameter is the request body: its schema's fields.
            let Some((schema, at)) = refs::find(layers, "schema") else {
                return Err(self.invalid(
                    &use_site.pointer,
                    "a body parameter needs a `schema`".into(),
                ));
            };
            let at = pointer::push(at, "schema");
            let view = View::build(self.doc, schema, &at, &mut Vec::new())?;
            let mut f = Flattener::new(
                self.doc,
                Location::InputBody,
                fields,
                &mut self.notes,
                &mut self.budget,
            );
            return f.descend(&view, "", required);
        }
        // A 2.0 parameter is its own schema (`type`, `format`, `items`, `enum`); a 3.x one
        // has `schema` or `content`.
        let view = if swagger {
            View::build(self.doc, use_site.node, &use_site.pointer, &mut Vec::new())?
        } else if let Some((schema, at)) = refs::find(layers, "schema") {
            View::build(
                self.doc,
                schema,
                &pointer::push(at, "schema"),
                &mut Vec::new(),
            )?
        } else if let Some(schema) = self.media_schema(layers)? {
            View::build(self.doc, schema.0, &schema.1, &mut Vec::new())?
        } else {
            View::build(self.doc, use_site.node, &use_site.pointer, &mut Vec::new())?
        };
        let name = fold_name(name);
        let mut f = Flattener::new(
            self.doc,
            location,
            fields,
            &mut self.notes,
            &mut self.budget,
        );
        f.field(&view, layers, &name, required)?;
        f.descend(&view, &name, required)
    }
}
