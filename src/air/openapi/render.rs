//! Writing values as YAML or JSON text for the splices export makes: scalars in the style
//! the replaced one had where the new value allows it, keys and provenance records as a
//! person would write them.
//!
//! Invariant: every rendering reads back as exactly the value rendered (export re-parses
//! its output to prove it); when a style cannot carry a value, a more explicit one is used.

use std::fmt::Write as _;

use serde_json::Value;

use super::tree::{Scalar, Style};
use super::yaml::resolve_plain;

/// Where a YAML value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Context {
    /// A block mapping whose keys sit at this column.
    Block { key_column: usize },
    /// Inside `{…}` or `[…]`.
    Flow,
}

/// JSON text of a value.
pub(crate) fn json(value: &Value) -> String {
    // A serde_json Value always serialises.
    serde_json::to_string(value).unwrap_or_default()
}

/// True when `s` can be written as a plain YAML scalar and read back as the same string by
/// YAML 1.2 and 1.1 readers alike.
pub(crate) fn plain_safe(s: &str, flow: bool) -> bool {
    const INDICATORS: &[char] = &[
        '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@',
        '`', ' ',
    ];
    const YAML11_WORDS: &[&str] = &["yes", "no", "on", "off", "y", "n"];
    !s.is_empty()
        && s.trim() == s
        && !s.chars().any(char::is_control)
        && !s.starts_with(INDICATORS)
        && !s.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '+')
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.ends_with(':')
        && (!flow || !s.contains([',', '[', ']', '{', '}']))
        && matches!(resolve_plain(s), Scalar::Str(_))
        && !YAML11_WORDS.contains(&s.to_ascii_lowercase().as_str())
}

/// A double-quoted YAML scalar (valid JSON string syntax too, for printable text).
pub(crate) fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control()
                || c == '\u{feff}'
                || c == '\u{85}'
                || c == '\u{2028}'
                || c == '\u{2029}' =>
            {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn single_quoted(s: &str) -> Option<String> {
    if s.contains(['\n', '\r']) || s.chars().any(char::is_control) {
        return None;
    }
    Some(format!("'{}'", s.replace('\'', "''")))
}

/// A literal block scalar (`|`, `|-`) whose content lines are indented by `indent`, or
/// `None` when the value needs an explicit indentation indicator or keeps trailing lines.
fn literal(s: &str, indent: usize, nl: &str) -> Option<String> {
    let (body, chomp) = match s.strip_suffix('\n') {
        Some(body) if !body.ends_with('\n') => (body, "|"),
        Some(_) => return None,
        None => (s, "|-"),
    };
    if body.is_empty()
        || s.contains('\r')
        || body
            .lines()
            .any(|l| l.starts_with([' ', '\t']) || (!l.is_empty() && l.trim().is_empty()))
        || body
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return None;
    }
    let pad = " ".repeat(indent);
    let mut out = String::from(chomp);
    for line in body.split('\n') {
        out.push_str(nl);
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
    }
    Some(out)
}

/// A YAML scalar for a string that replaces one written in `style`.
pub(crate) fn yaml_string(
    s: &str,
    style: Style,
    context: Context,
    block_indent: Option<usize>,
    nl: &str,
) -> String {
    let Context::Block { key_column } = context else {
        return if plain_safe(s, true) {
            s.to_string()
        } else {
            double_quoted(s)
        };
    };
    let indent = block_indent.unwrap_or(key_column + 2);
    let multi_line = s.contains('\n');
    let literal_or_quoted = || literal(s, indent, nl).unwrap_or_else(|| double_quoted(s));
    match style {
        Style::Literal | Style::Folded => literal_or_quoted(),
        Style::SingleQuoted if !multi_line => single_quoted(s).unwrap_or_else(|| double_quoted(s)),
        Style::Plain | Style::SingleQuoted | Style::Json if !multi_line && plain_safe(s, false) => {
            s.to_string()
        }
        _ if multi_line => literal_or_quoted(),
        _ => double_quoted(s),
    }
}

/// A YAML scalar or flow collection for a new value at `context`.
pub(crate) fn yaml_value(value: &Value, context: Context, nl: &str) -> String {
    match value {
        Value::String(s) => yaml_string(s, Style::Plain, context, None, nl),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|v| yaml_value(v, Context::Flow, nl))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!(
                    "{}: {}",
                    yaml_string(k, Style::Plain, Context::Flow, None, nl),
                    yaml_value(v, Context::Flow, nl)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::air::openapi::document::Document;

    fn reads_back(text: &str) -> Value {
        Document::parse(text.to_string(), "t.yaml")
            .unwrap()
            .root
            .to_value()
    }

    #[test]
    fn every_rendering_reads_back_as_its_value() {
        let values = [
            "plain words",
            "ms",
            "yes",
            "123",
            "2026-01-01",
            "null",
            "a: b",
            "ends with colon:",
            "#hash",
            "- dash",
            "it's \"quoted\"",
            "tab\there",
            "two\nlines",
            "two\nlines\n",
            "  leading space\nline",
            "trailing\n\n",
            "unicode é ✓",
            "{braces}, [brackets]",
        ];
        for s in values {
            for style in [
                Style::Plain,
                Style::SingleQuoted,
                Style::DoubleQuoted,
                Style::Literal,
            ] {
                let rendered = yaml_string(s, style, Context::Block { key_column: 2 }, None, "\n");
                let doc = format!("a:\n  k: {rendered}\n  z: 1\n");
                assert_eq!(
                    reads_back(&doc)["a"]["k"],
                    Value::from(s),
                    "{style:?} {doc}"
                );
            }
            let rendered = yaml_value(&Value::from(s), Context::Flow, "\n");
            let doc = format!("a: {{k: {rendered}, z: 1}}\n");
            assert_eq!(reads_back(&doc)["a"]["k"], Value::from(s), "{doc}");
        }
    }

    #[test]
    fn styles_are_kept_when_the_value_allows() {
        let block = Context::Block { key_column: 0 };
        assert_eq!(
            yaml_string("new words", Style::Plain, block, None, "\n"),
            "new words"
        );
        assert_eq!(
            yaml_string("new", Style::SingleQuoted, block, None, "\n"),
            "'new'"
        );
        assert_eq!(
            yaml_string("new", Style::DoubleQuoted, block, None, "\n"),
            "\"new\""
        );
        assert_eq!(
            yaml_string("a\nb", Style::Literal, block, Some(4), "\n"),
            "|-\n    a\n    b"
        );
    }
}
