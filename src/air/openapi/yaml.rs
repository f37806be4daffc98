//! YAML text → located tree, over saphyr-parser's event stream (YAML 1.2, with spans).
//!
//! The parser's markers count characters; this module turns them into byte offsets and
//! corrects the ends it reports loosely (quoted scalars in block context run on to the end
//! of the line, block scalars take the blank lines after them), so that every node's
//! `start..end` is its own text. Scalars resolve by YAML 1.2's core schema.
//!
//! An alias is a copy of the node it names, so the nodes aliases repeat are counted and
//! refused past a cap (the caller's [`Limit::YamlAliasNodes`](crate::limits::Limit)) before
//! they are copied: nested aliases in a few hundred bytes would otherwise expand
//! exponentially.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span, Tag};
use serde_json::Number;

use super::tree::{
    BuildError, Entry, Kind, MAX_DEPTH, Map, Node, Scalar, Style, Trail, push_entry,
};

/// Parses a stream holding exactly one YAML document, in which aliases repeat at most
/// `alias_cap` nodes in all.
pub(crate) fn parse(text: &str, alias_cap: u64) -> Result<Node, BuildError> {
    // The parser counts from after a byte-order mark; offsets count from the file's start.
    let base = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &text[base..];
    let mut b = Builder {
        text,
        base,
        offsets: Offsets::new(body),
        events: Parser::new_from_str(body),
        anchors: HashMap::new(),
        built: 0,
        aliased: 0,
        alias_cap,
    };
    let (ev, _) = b.next()?;
    debug_assert!(matches!(ev, Event::StreamStart));
    let (ev, span) = b.next()?;
    if matches!(ev, Event::StreamEnd) {
        return Err(BuildError::Syntax {
            offset: b.byte(span.start.index()),
            message: "the document is empty".into(),
        });
    }
    let (ev, span) = b.next()?;
    let root = b.node(ev, span, &Trail::Root, 0)?;
    let (_, _) = b.next()?; // DocumentEnd
    match b.next()? {
        (Event::StreamEnd, _) => Ok(root),
        (_, span) => Err(BuildError::Syntax {
            offset: b.byte(span.start.index()),
            message: "more than one YAML document in the stream".into(),
        }),
    }
}

/// Character index → byte offset.
struct Offsets(Option<Vec<usize>>);

impl Offsets {
    fn new(text: &str) -> Offsets {
        if text.is_ascii() {
            return Offsets(None);
        }
        let mut table: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        table.push(text.len());
        Offsets(Some(table))
    }

    fn byte(&self, char_index: usize) -> usize {
        match &self.0 {
            None => char_index,
            Some(t) => t[char_index.min(t.len() - 1)],
        }
    }
}

struct Builder<'a> {
    text: &'a str,
    /// Bytes before the parsed text (a byte-order mark).
    base: usize,
    offsets: Offsets,
    events: Parser<'a, saphyr_parser::StrInput<'a>>,
    /// Anchor id → the node and how many nodes it holds.
    anchors: HashMap<usize, (Node, u64)>,
    /// Nodes built so far, alias copies included.
    built: u64,
    /// Nodes alias copies have added.
    aliased: u64,
    alias_cap: u64,
}

impl<'a> Builder<'a> {
    fn byte(&self, char_index: usize) -> usize {
        (self.base + self.offsets.byte(char_index)).min(self.text.len())
    }

    fn next(&mut self) -> Result<(Event<'a>, Span), BuildError> {
        match self.events.next() {
            Some(Ok(ev)) => Ok(ev),
            Some(Err(e)) => Err(self.scan_error(&e)),
            None => Err(BuildError::Syntax {
                offset: self.text.len(),
                message: "unexpected end of the YAML stream".into(),
            }),
        }
    }

    fn scan_error(&self, e: &ScanError) -> BuildError {
        BuildError::Syntax {
            offset: self.byte(e.marker().index()),
            message: e.info().to_string(),
        }
    }

    fn node(
        &mut self,
        ev: Event<'a>,
        span: Span,
        at: &Trail<'_>,
        depth: usize,
    ) -> Result<Node, BuildError> {
        if depth > MAX_DEPTH {
            return Err(BuildError::Invalid {
                pointer: at.pointer(),
                message: "nesting is too deep".into(),
            });
        }
        let start = self.byte(span.start.index());
        let built_before = self.built;
        let (node, anchor) = match ev {
            Event::Scalar(value, style, anchor, tag) => {
                (self.scalar(value, style, tag.as_deref(), span), anchor)
            }
            Event::SequenceStart(anchor, _) => {
                let flow = self.text[start..].starts_with('[');
                let mut items = Vec::new();
                let end = loop {
                    let (ev, span) = self.next()?;
                    if matches!(ev, Event::SequenceEnd) {
                        break self.byte(span.end.index());
                    }
                    let item_at = Trail::Index(at, items.len());
                    items.push(self.node(ev, span, &item_at, depth + 1)?);
                };
                let end = if flow {
                    end
                } else {
                    items.last().map_or(start, |n: &Node| n.end)
                };
                let node = Node {
                    start,
                    end,
                    kind: Kind::Seq { items, flow },
                    alias: false,
                };
                (node, anchor)
            }
            Event::MappingStart(anchor, _) => (self.mapping(start, at, depth)?, anchor),
            Event::Alias(id) => {
                let (node, size) = self.anchors.get(&id).ok_or(BuildError::Syntax {
                    offset: start,
                    message: "alias to an unknown anchor".into(),
                })?;
                self.aliased = self.aliased.saturating_add(*size);
                if self.aliased > self.alias_cap {
                    let over = crate::limits::Limit::YamlAliasNodes.exceeded(self.alias_cap, None);
                    return Err(BuildError::Invalid {
                        pointer: at.pointer(),
                        message: format!("what the YAML aliases repeat {over}"),
                    });
                }
                let node = node.clone().into_alias();
                self.built = self.built.saturating_add(*size);
                return Ok(node);
            }
            _ => {
                return Err(BuildError::Syntax {
                    offset: start,
                    message: "unexpected YAML event".into(),
                });
            }
        };
        self.built += 1;
        if anchor > 0 {
            let size = self.built - built_before;
            self.anchors.insert(anchor, (node.clone(), size));
        }
        Ok(node)
    }

    fn mapping(&mut self, start: usize, at: &Trail<'_>, depth: usize) -> Result<Node, BuildError> {
        let flow = self.text[start..].starts_with('{');
        let mut entries = Vec::new();
        let mut seen = HashSet::new();
        let end = loop {
            let (ev, span) = self.next()?;
            if matches!(ev, Event::MappingEnd) {
                break self.byte(span.end.index());
            }
            let key_start = self.byte(span.start.index());
            let key_node = self.node(ev, span, at, depth + 1)?;
            let key = match &key_node.kind {
                Kind::Scalar { value, .. } => match value {
                    Scalar::Str(s) => s.clone(),
                    Scalar::Number(n) => n.to_string(),
                    Scalar::Bool(b) => b.to_string(),
                    Scalar::Null => String::new(),
                },
                _ => {
                    return Err(BuildError::Invalid {
                        pointer: at.pointer(),
                        message: "a mapping key must be a scalar".into(),
                    });
                }
            };
            let value_at = Trail::Key(at, &key);
            let (ev, span) = self.next()?;
            let mut value = self.node(ev, span, &value_at, depth + 1)?;
            if !flow {
                self.fix_value_start(key_node.end, &mut value);
            }
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
        };
        let end = if flow {
            end
        } else {
            entries.last().map_or(start, |e: &Entry| e.value.end)
        };
        Ok(Node {
            start,
            end,
            kind: Kind::Map(Map::new(entries, flow)),
            alias: false,
        })
    }

    /// A block scalar starts at its `|`/`>` on the key's line (the parser reports its first
    /// content line); an empty value sits right after the `:`.
    fn fix_value_start(&self, key_end: usize, value: &mut Node) {
        let Kind::Scalar { style, value: v } = &value.kind else {
            return;
        };
        let bytes = self.text.as_bytes();
        let mut i = key_end;
        while let Some(b' ' | b'\t') = bytes.get(i) {
            i += 1;
        }
        if bytes.get(i) != Some(&b':') {
            return;
        }
        i += 1;
        let colon_end = i;
        while let Some(b' ' | b'\t') = bytes.get(i) {
            i += 1;
        }
        match style {
            Style::Literal | Style::Folded if matches!(bytes.get(i), Some(b'|' | b'>')) => {
                value.start = i;
            }
            Style::Plain if *v == Scalar::Null && value.start == value.end => {
                value.start = colon_end;
                value.end = colon_end;
            }
            _ => {}
        }
    }

    fn scalar(
        &self,
        value: Cow<'a, str>,
        style: ScalarStyle,
        tag: Option<&Tag>,
        span: Span,
    ) -> Node {
        let start = self.byte(span.start.index());
        let reported_end = self.byte(span.end.index());
        let (style, end) = match style {
            ScalarStyle::Plain => (Style::Plain, reported_end),
            ScalarStyle::SingleQuoted => (
                Style::SingleQuoted,
                quoted_end(self.text, start, b'\'').unwrap_or(reported_end),
            ),
            ScalarStyle::DoubleQuoted => (
                Style::DoubleQuoted,
                quoted_end(self.text, start, b'"').unwrap_or(reported_end),
            ),
            ScalarStyle::Literal => (Style::Literal, trim_end(self.text, start, reported_end)),
            ScalarStyle::Folded => (Style::Folded, trim_end(self.text, start, reported_end)),
        };
        let is_str_tag = tag.is_some_and(|t| t.handle == "tag:yaml.org,2002:" && t.suffix == "str");
        let value = if style == Style::Plain && !is_str_tag {
            resolve_plain(&value)
        } else {
            Scalar::Str(value.into_owned())
        };
        Node {
            start,
            end,
            kind: Kind::Scalar { value, style },
            alias: false,
        }
    }
}

/// One past the closing quote of the quoted scalar whose opening quote is at or after
/// `start` (after an anchor or tag).
fn quoted_end(text: &str, start: usize, quote: u8) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = start + bytes[start..].iter().position(|&b| b == quote)? + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// `end` moved back over trailing whitespace, never before `start`.
fn trim_end(text: &str, start: usize, end: usize) -> usize {
    let trimmed = text[start..end].trim_end();
    start + trimmed.len()
}

/// YAML 1.2 core schema resolution of a plain scalar.
pub(crate) fn resolve_plain(s: &str) -> Scalar {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Scalar::Null,
        "true" | "True" | "TRUE" => return Scalar::Bool(true),
        "false" | "False" | "FALSE" => return Scalar::Bool(false),
        _ => {}
    }
    let unsigned = s.strip_prefix(['-', '+']).unwrap_or(s);
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(i) = s.parse::<i64>() {
            return Scalar::Number(i.into());
        }
        if let Ok(u) = s.parse::<u64>() {
            return Scalar::Number(u.into());
        }
    }
    if let Some(hex) = s.strip_prefix("0x")
        && let Ok(u) = u64::from_str_radix(hex, 16)
    {
        return Scalar::Number(u.into());
    }
    if let Some(oct) = s.strip_prefix("0o")
        && let Ok(u) = u64::from_str_radix(oct, 8)
    {
        return Scalar::Number(u.into());
    }
    if is_core_float(s)
        && let Some(n) = s.parse::<f64>().ok().and_then(Number::from_f64)
    {
        return Scalar::Number(n);
    }
    Scalar::Str(s.to_string())
}

/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
fn is_core_float(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => digits(frac),
        Some((int, frac)) => digits(int) && (frac.is_empty() || digits(frac)),
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    mantissa_ok && exponent_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# c\na: 1\nb:\n  c: \"x y\"   # trailing\n  d: |\n    l1\n    l2\n\n  e: plain é\nf: {x: 'it''s', y: [1, 2]}\ng:\nh: &anc {k: v}\ni: *anc\n";

    #[test]
    fn nodes_know_their_own_text() {
        let root = parse(TEXT, u64::MAX).unwrap();
        let text_of = |n: &Node| &TEXT[n.start..n.end];
        let b = root.get("b").unwrap();
        assert_eq!(text_of(b.get("c").unwrap()), "\"x y\"");
        assert_eq!(text_of(b.get("d").unwrap()), "|\n    l1\n    l2");
        assert_eq!(b.get("d").unwrap().as_str(), Some("l1\nl2\n"));
        assert_eq!(text_of(b.get("e").unwrap()), "plain é");
        let f = root.get("f").unwrap();
        assert_eq!(text_of(f), "{x: 'it''s', y: [1, 2]}");
        assert_eq!(text_of(f.get("x").unwrap()), "'it''s'");
        assert!(root.get("g").unwrap().is_null());
        assert!(root.get("i").unwrap().alias);
        assert_eq!(
            root.get("i").unwrap().to_value(),
            serde_json::json!({"k": "v"})
        );
    }

    #[test]
    fn plain_scalars_resolve_by_the_core_schema() {
        let root = parse(
            "a: 1\nb: 2.5\nc: yes\nd: true\ne: '1'\nf: 0x1F\ng: 1e3\nh: 2.0.1\n",
            u64::MAX,
        )
        .unwrap();
        let v = root.to_value();
        assert_eq!(v["a"], 1);
        assert_eq!(v["b"], 2.5);
        assert_eq!(v["c"], "yes");
        assert_eq!(v["d"], true);
        assert_eq!(v["e"], "1");
        assert_eq!(v["f"], 31);
        assert_eq!(v["g"], 1000.0);
        assert_eq!(v["h"], "2.0.1");
    }

    #[test]
    fn duplicate_keys_and_streams_are_refused() {
        assert!(matches!(
            parse("a:\n  b: 1\n  b: 2\n", u64::MAX),
            Err(BuildError::Invalid { pointer, .. }) if pointer == "/a/b"
        ));
        assert!(matches!(
            parse("a: 1\n---\nb: 2\n", u64::MAX),
            Err(BuildError::Syntax { .. })
        ));
        assert!(matches!(
            parse("a: [1\n", u64::MAX),
            Err(BuildError::Syntax { .. })
        ));
    }

    /// Nested aliases, each repeating the one before nine times (the "billion laughs").
    fn laughs(levels: usize) -> String {
        let mut text = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n".to_string();
        for i in 1..=levels {
            let refs = vec![format!("*a{}", i - 1); 9].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        text
    }

    #[test]
    fn an_alias_bomb_is_refused_at_the_cap_before_it_is_copied() {
        // Two levels repeat 9 * 10 + 9 * 91 = 909 nodes (`a1` is its 90 and itself).
        assert!(parse(&laughs(2), 909).is_ok());
        let Err(BuildError::Invalid { pointer, message }) = parse(&laughs(2), 908) else {
            panic!("an alias expansion over the cap was accepted");
        };
        assert_eq!(pointer, "/a2/8");
        assert!(
            message.contains("YAML_ALIAS_NODES cap of 908 nodes"),
            "{message}"
        );
        // Thirty levels would be 9^31 nodes: refused long before.
        assert!(matches!(
            parse(&laughs(30), 1_000),
            Err(BuildError::Invalid { .. })
        ));
    }
}
