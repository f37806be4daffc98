//! Responses: success bodies into output fields (the first success response, then what
//! later ones add), 4xx/5xx and `4XX`/`5XX` into errors with their description and
//! `x-anvil-retryable`; `default`, 1xx and 3xx are noted, not guessed at.
//!
//! Invariant: an error's code is its response key, so its target key is stable.

use std::collections::BTreeMap;

use super::error::OpenApiError;
use super::ext::{self, Attr};
use super::import::Walk;
use super::pointer;
use super::refs::{self, Layer};
use super::schema::{Flattener, View};
use super::tree::Node;
use super::{Note, Site};
use crate::air::{ErrorDef, Field, Location};

impl<'d> Walk<'d> {
    pub(super) fn responses(
        &mut self,
        id: &str,
        op: &'d Node,
        at: &str,
        fields: &mut Vec<(Field, Site)>,
    ) -> Result<Vec<ErrorDef>, OpenApiError> {
        let mut errors = Vec::new();
        let Some(responses) = op.get("responses") else {
            return Ok(errors);
        };
        let responses_at = pointer::push(at, "responses");
        let map = self.map(responses, &responses_at)?;
        let mut first_success = true;
        for entry in &map.entries {
            let key = entry.key.as_str();
            if key.starts_with("x-") {
                continue;
            }
            let resp_at = pointer::push(&responses_at, key);
            let Some(status) = status_of(key) else {
                if key == "default" {
                    self.notes.push(Note {
                        pointer: resp_at,
                        message: "a `default` response is not imported as an error: it has no status code".into(),
                    });
                    continue;
                }
                return Err(self.invalid(&resp_at, format!("`{key}` is not an HTTP status code")));
            };
            let layers = refs::chain(self.doc, &entry.value, &resp_at)?;
            if (200..300).contains(&status) {
                let Some((schema, schema_at)) = self.media_schema(&layers)? else {
                    continue;
                };
                self.success_body(schema, &schema_at, first_success, fields)?;
                first_success = false;
            } else if status >= 400 {
                errors.push(self.error_response(id, key, status, &layers, resp_at)?);
            } else {
                self.notes.push(Note {
                    pointer: resp_at,
                    message: "a 1xx or 3xx response is neither a result nor an error: not imported"
                        .into(),
                });
            }
        }
        Ok(errors)
    }

    /// Adds the output body fields of a success response's `schema`: all of them for the
    /// first success response, only those not yet known for a later one.
    fn success_body(
        &mut self,
        schema: &'d Node,
        schema_at: &str,
        first_success: bool,
        fields: &mut Vec<(Field, Site)>,
    ) -> Result<(), OpenApiError> {
        let view = View::build(self.doc, schema, schema_at, &mut Vec::new())?;
        let mut body = Vec::new();
        let mut f = Flattener::new(
            self.doc,
            Location::OutputBody,
            &mut body,
            &mut self.notes,
            &mut self.budget,
        );
        f.descend(&view, "", true)?;
        for (field, site) in body {
            // A later success response adds only what the first did not have.
            let known = fields
                .iter()
                .any(|(f, _)| f.location == Location::OutputBody && f.name == field.name);
            if first_success || !known {
                fields.push((field, site));
            }
        }
        Ok(())
    }

    /// The error a 4xx/5xx response `key` of the operation `id` stands for, with its
    /// description and `x-anvil-retryable`; records its site.
    fn error_response(
        &mut self,
        id: &str,
        key: &str,
        status: u16,
        layers: &[Layer<'d>],
        resp_at: String,
    ) -> Result<ErrorDef, OpenApiError> {
        let message = match refs::find(layers, "description") {
            Some((d, p)) => ext::read(&self.doc.file, Attr::Description, d, p)?
                .and_then(|v| v.as_str().map(str::to_string)),
            None => None,
        };
        let mut sources = BTreeMap::new();
        let retryable = match refs::find(layers, ext::RETRYABLE) {
            Some((n, p)) => {
                let v = ext::read(&self.doc.file, Attr::Retryable, n, p)?;
                if v.is_some() {
                    sources.insert(Attr::Retryable, p.to_string());
                }
                v.and_then(|v| v.as_bool())
            }
            None => None,
        };
        let code = key.to_ascii_uppercase();
        self.sites.insert(
            format!("op.{id}.error.{code}"),
            Site {
                use_site: resp_at.clone(),
                sources,
            },
        );
        Ok(ErrorDef {
            code,
            status,
            message,
            retryable,
            inferred: Vec::new(),
            pointer: Some(resp_at),
        })
    }
}

/// The status a response key stands for: `404` → 404, `4XX` → 400; `None` for others.
fn status_of(key: &str) -> Option<u16> {
    let bytes = key.as_bytes();
    if bytes.len() != 3 || !(b'1'..=b'5').contains(&bytes[0]) {
        return None;
    }
    if key[1..].eq_ignore_ascii_case("xx") {
        return Some(u16::from(bytes[0] - b'0') * 100);
    }
    key.parse().ok()
}
