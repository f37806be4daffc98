//! Local `$ref` resolution with cycle detection.
//!
//! A node reached through references is kept as its chain of layers, the use site first:
//! a key beside a `$ref` (a `description`, an `x-anvil-*` value) wins over the target's, as
//! OpenAPI 3.1 specifies and as most 3.0 tools behave. Every layer keeps its own pointer, so
//! a value is always traced to the node that states it.
//!
//! Invariant: resolution never follows a reference out of the document and never loops; an
//! external reference, a dangling one, a cycle and a chain of more than [`MAX_CHAIN`]
//! references are errors naming the `$ref`'s pointer.

use super::document::Document;
use super::error::OpenApiError;
use super::pointer::{self, RefError, show};
use super::tree::Node;

/// References one chain may follow. Real descriptions chain two or three; a chain is
/// walked again at every use and checked against its own layers, so a long one costs time
/// quadratic in its length, times its uses.
pub(crate) const MAX_CHAIN: usize = 64;

/// One node on a reference chain and where it lives.
#[derive(Debug, Clone)]
pub(crate) struct Layer<'d> {
    pub node: &'d Node,
    pub pointer: String,
}

/// `node` (at `at`) and the nodes its `$ref`s lead to, use site first.
pub(crate) fn chain<'d>(
    doc: &'d Document,
    node: &'d Node,
    at: &str,
) -> Result<Vec<Layer<'d>>, OpenApiError> {
    let mut layers = vec![Layer {
        node,
        pointer: at.to_string(),
    }];
    let mut current = node;
    let mut current_at = at.to_string();
    while let Some(reference) = current.get("$ref") {
        let ref_at = pointer::push(&current_at, "$ref");
        let invalid = |message: String| OpenApiError::Invalid {
            file: doc.file.clone(),
            pointer: ref_at.clone(),
            message,
        };
        let Some(text) = reference.as_str() else {
            return Err(invalid(format!(
                "`$ref` must be a string, found {}",
                reference.kind_name()
            )));
        };
        let tokens = pointer::parse_ref(text).map_err(|e| match e {
            RefError::External => invalid(format!(
                "external $ref `{text}` is not supported: bundle the description into one document first"
            )),
            RefError::Malformed(why) => invalid(format!("$ref `{text}` is malformed: {why}")),
        })?;
        let target_at = pointer::join(&tokens);
        if layers.len() > MAX_CHAIN {
            return Err(invalid(format!(
                "$ref chain from `{}` is longer than {MAX_CHAIN} references",
                show(at)
            )));
        }
        if layers.iter().any(|l| l.pointer == target_at) {
            let mut path: Vec<String> = layers.iter().skip(1).map(|l| show(&l.pointer)).collect();
            path.push(show(&target_at));
            return Err(invalid(format!(
                "$ref cycle: {} → {}",
                show(at),
                path.join(" → ")
            )));
        }
        let Some(target) = doc.root.at(&tokens) else {
            return Err(invalid(format!(
                "$ref `{text}` does not resolve: nothing at `{}`",
                show(&target_at)
            )));
        };
        layers.push(Layer {
            node: target,
            pointer: target_at.clone(),
        });
        current = target;
        current_at = target_at;
    }
    Ok(layers)
}

/// The first layer holding `key` (never `$ref` itself), with that layer's pointer.
pub(crate) fn find<'a, 'd>(layers: &'a [Layer<'d>], key: &str) -> Option<(&'d Node, &'a str)> {
    layers
        .iter()
        .find_map(|l| l.node.get(key).map(|n| (n, l.pointer.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document {
        Document::parse(text.to_string(), "t.yaml").unwrap()
    }

    #[test]
    fn siblings_win_over_the_target() {
        let d =
            doc("a:\n  $ref: '#/b'\n  description: near\nb:\n  description: far\n  type: string\n");
        let layers = chain(&d, d.root.get("a").unwrap(), "/a").unwrap();
        assert_eq!(layers.len(), 2);
        let (desc, at) = find(&layers, "description").unwrap();
        assert_eq!((desc.as_str(), at), (Some("near"), "/a"));
        let (ty, at) = find(&layers, "type").unwrap();
        assert_eq!((ty.as_str(), at), (Some("string"), "/b"));
    }

    #[test]
    fn cycles_dangling_and_external_references_name_the_ref() {
        let d = doc(
            "a: {$ref: '#/b'}\nb: {$ref: '#/a'}\nc: {$ref: '#/nope'}\ne: {$ref: 'x.yaml#/y'}\n",
        );
        for (key, pointer, words) in [
            ("a", "/b/$ref", "cycle"),
            ("c", "/c/$ref", "does not resolve"),
            ("e", "/e/$ref", "external"),
        ] {
            let err = chain(&d, d.root.get(key).unwrap(), &format!("/{key}")).unwrap_err();
            assert_eq!(err.pointer(), Some(pointer), "{err}");
            assert!(err.to_string().contains(words), "{err}");
        }
    }

    #[test]
    fn a_chain_longer_than_the_cap_is_refused_where_it_runs_over() {
        let text = |refs: usize| {
            let mut t = String::new();
            for i in 0..refs {
                t.push_str(&format!("s{i}: {{$ref: '#/s{}'}}\n", i + 1));
            }
            t.push_str(&format!("s{refs}: {{type: integer}}\n"));
            t
        };
        let d = doc(&text(MAX_CHAIN));
        let layers = chain(&d, d.root.get("s0").unwrap(), "/s0").unwrap();
        assert_eq!(layers.len(), MAX_CHAIN + 1);
        let d = doc(&text(MAX_CHAIN + 1));
        let err = chain(&d, d.root.get("s0").unwrap(), "/s0").unwrap_err();
        let at = format!("/s{MAX_CHAIN}/$ref");
        assert_eq!(err.pointer(), Some(at.as_str()), "{err}");
        assert!(
            err.to_string().contains("longer than 64 references"),
            "{err}"
        );
    }
}
