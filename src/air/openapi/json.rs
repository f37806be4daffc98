//! JSON text → located tree: a small recursive-descent reader that records each node's
//! exact byte range; strings and numbers are decoded by `serde_json`, so escapes and number
//! forms mean exactly what they mean everywhere else in the project.
//!
//! Invariant: a node's `start..end` is exactly its token or bracketed text.

use std::collections::HashSet;

use serde_json::Number;

use super::tree::{
    BuildError, Entry, Kind, MAX_DEPTH, Map, Node, Scalar, Style, Trail, push_entry,
};

/// Parses one JSON document (surrounding whitespace and a byte-order mark allowed).
pub(crate) fn parse(text: &str) -> Result<Node, BuildError> {
    let mut p = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    if text.starts_with('\u{feff}') {
        p.at = 3;
    }
    let root = p.value(&Trail::Root, 0)?;
    p.skip_ws();
    if p.at < p.bytes.len() {
        return Err(p.fail("unexpected text after the document"));
    }
    Ok(root)
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn fail(&self, message: &str) -> BuildError {
        BuildError::Syntax {
            offset: self.at,
            message: message.to_string(),
        }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn value(&mut self, at: &Trail<'_>, depth: usize) -> Result<Node, BuildError> {
        if depth > MAX_DEPTH {
            return Err(self.fail("nesting is too deep"));
        }
        self.skip_ws();
        let start = self.at;
        let kind = match self.bytes.get(self.at) {
            Some(b'{') => self.object(at, depth)?,
            Some(b'[') => self.array(at, depth)?,
            Some(b'"') => Kind::Scalar {
                value: Scalar::Str(self.string()?),
                style: Style::Json,
            },
            Some(b't') => self.literal("true", Scalar::Bool(true))?,
            Some(b'f') => self.literal("false", Scalar::Bool(false))?,
            Some(b'n') => self.literal("null", Scalar::Null)?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_) => return Err(self.fail("expected a value")),
            None => return Err(self.fail("unexpected end of input")),
        };
        Ok(Node {
            start,
            end: self.at,
            kind,
            alias: false,
        })
    }

    fn literal(&mut self, word: &str, value: Scalar) -> Result<Kind, BuildError> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(Kind::Scalar {
                value,
                style: Style::Json,
            })
        } else {
            Err(self.fail("expected a value"))
        }
    }

    fn number(&mut self) -> Result<Kind, BuildError> {
        let start = self.at;
        while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = self.bytes.get(self.at) {
            self.at += 1;
        }
        let n: Number =
            serde_json::from_str(&self.text[start..self.at]).map_err(|e| BuildError::Syntax {
                offset: start,
                message: format!("bad number: {e}"),
            })?;
        Ok(Kind::Scalar {
            value: Scalar::Number(n),
            style: Style::Json,
        })
    }

    fn string(&mut self) -> Result<String, BuildError> {
        let start = self.at;
        self.at += 1;
        loop {
            match self.bytes.get(self.at) {
                Some(b'"') => break,
                Some(b'\\') => self.at += 2,
                Some(_) => self.at += 1,
                None => {
                    return Err(BuildError::Syntax {
                        offset: start,
                        message: "unterminated string".into(),
                    });
                }
            }
        }
        self.at += 1;
        serde_json::from_str(&self.text[start..self.at]).map_err(|e| BuildError::Syntax {
            offset: start,
            message: format!("bad string: {e}"),
        })
    }

    fn object(&mut self, at: &Trail<'_>, depth: usize) -> Result<Kind, BuildError> {
        self.at += 1;
        let mut entries = Vec::new();
        let mut seen = HashSet::new();
        self.skip_ws();
        if self.bytes.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Ok(Kind::Map(Map::new(entries, true)));
        }
        loop {
            self.skip_ws();
            if self.bytes.get(self.at) != Some(&b'"') {
                return Err(self.fail("expected a string key"));
            }
            let key_start = self.at;
            let key = self.string()?;
            self.skip_ws();
            if self.bytes.get(self.at) != Some(&b':') {
                return Err(self.fail("expected `:` after a key"));
            }
            self.at += 1;
            let value = self.value(&Trail::Key(at, &key), depth + 1)?;
            push_entry(
                &mut entries,
                &mut seen,
                Entry {
                    key,
                    key_start,
                    value,
                },
                at,
            )?;
            self.skip_ws();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Kind::Map(Map::new(entries, true)));
                }
                _ => return Err(self.fail("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self, at: &Trail<'_>, depth: usize) -> Result<Kind, BuildError> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
            return Ok(Kind::Seq { items, flow: true });
        }
        loop {
            items.push(self.value(&Trail::Index(at, items.len()), depth + 1)?);
            self.skip_ws();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Kind::Seq { items, flow: true });
                }
                _ => return Err(self.fail("expected `,` or `]`")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_know_their_exact_text() {
        let text = "{\"a\": \"x\\u00e9\", \"b\": [1, {\"c\": null}], \"d\": true}";
        let root = parse(text).unwrap();
        let a = root.get("a").unwrap();
        assert_eq!(&text[a.start..a.end], "\"x\\u00e9\"");
        assert_eq!(a.as_str(), Some("xé"));
        let b = root.get("b").unwrap();
        assert_eq!(&text[b.start..b.end], "[1, {\"c\": null}]");
        assert_eq!(root.to_value()["b"][1]["c"], serde_json::Value::Null);
    }

    #[test]
    fn duplicate_keys_and_bad_syntax_are_refused() {
        assert!(matches!(
            parse("{\"a\": {\"b\": 1, \"b\": 2}}"),
            Err(BuildError::Invalid { pointer, .. }) if pointer == "/a/b"
        ));
        // Past the size where keys are indexed, too.
        let keys: Vec<String> = (0..20).map(|i| format!("\"k{i}\": {i}")).collect();
        let big = format!("{{{}, \"k3\": 0}}", keys.join(", "));
        assert!(matches!(
            parse(&big),
            Err(BuildError::Invalid { pointer, .. }) if pointer == "/k3"
        ));
        assert!(matches!(parse("{\"a\": }"), Err(BuildError::Syntax { .. })));
        assert!(matches!(
            parse("{\"a\": 1} x"),
            Err(BuildError::Syntax { .. })
        ));
    }
}
