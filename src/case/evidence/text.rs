//! Line indexing and comment classification for evidence excerpts: [`LineIndex`] maps
//! 1-based line ranges to exact byte slices (line endings kept), and [`is_comment_only`]
//! decides whether an excerpt of an implementation file is only comments, so that it is
//! recorded as `comment` evidence.

use super::EvidenceError;

/// Byte offsets of the lines of a text. A line ends after `\n` (so `\r\n` stays part of
/// the line); a final line without a newline still counts.
pub(super) struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

/// The number of lines of `text` as [`LineIndex`] counts them, without indexing them:
/// one vectorised count of its newlines (a whole-file excerpt needs only this).
pub(super) fn line_count(text: &str) -> usize {
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// [`line_count`], saturating (files are capped far below `u32::MAX` lines).
pub(super) fn line_count_u32(text: &str) -> u32 {
    u32::try_from(line_count(text)).unwrap_or(u32::MAX)
}

impl<'a> LineIndex<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        let mut starts = Vec::new();
        if !text.is_empty() {
            starts.push(0);
        }
        // memchr's vectorised search: a 16 MiB excerpt is indexed in about a millisecond,
        // where a byte-at-a-time loop took twenty.
        starts.extend(
            memchr::memchr_iter(b'\n', text.as_bytes())
                .map(|i| i + 1)
                .filter(|&next| next < text.len()),
        );
        LineIndex { text, starts }
    }

    pub(super) fn count(&self) -> usize {
        self.starts.len()
    }

    /// The line count, saturating (files are capped far below `u32::MAX` lines).
    pub(super) fn count_u32(&self) -> u32 {
        u32::try_from(self.count()).unwrap_or(u32::MAX)
    }

    pub(super) fn check_range(&self, rel: &str, start: u32, end: u32) -> Result<(), EvidenceError> {
        let count = self.count();
        let lines = if count == 1 { "line" } else { "lines" };
        let reason = if start == 0 {
            Some(format!(
                "lines are numbered from 1 (`{rel}` has {count} {lines})"
            ))
        } else if start > end {
            Some(format!(
                "startLine is after endLine (`{rel}` has {count} {lines})"
            ))
        } else if end > self.count_u32() {
            Some(format!(
                "endLine {end} is past the end of the file (`{rel}` has {count} {lines})"
            ))
        } else {
            None
        };
        match reason {
            Some(reason) => Err(EvidenceError::InvalidRange {
                path: rel.into(),
                range: format!("L{start}-L{end}"),
                reason,
            }),
            None => Ok(()),
        }
    }

    /// Lines `start..=end` (1-based, already checked) with their line endings.
    pub(super) fn excerpt(&self, start: u32, end: u32) -> &'a str {
        let from = self.starts[(start - 1) as usize];
        let to = self
            .starts
            .get(end as usize)
            .copied()
            .unwrap_or(self.text.len());
        &self.text[from..to]
    }
}

/// True when the excerpt has at least one non-blank line and every non-blank line is a
/// comment line: it starts (after whitespace) with `//`, `#`, `/*`, `*`, `*/` or `--`, or
/// lies inside a `/* … */` block the excerpt opens. Preprocessor directives (`#include`,
/// `#define`, `#if`, …), shebangs (`#!`) and attributes (`#[`) are code, as are `*ptr`
/// and `--i`.
#[must_use]
pub fn is_comment_only(excerpt: &str) -> bool {
    let mut in_block = false;
    let mut any = false;
    for line in excerpt.lines() {
        let mut t = line.trim();
        if in_block {
            if let Some(i) = t.find("*/") {
                in_block = false;
                t = t[i + 2..].trim();
            } else {
                // Inside the block: `any` is already set by the line that opened it.
                continue;
            }
        }
        if t.is_empty() {
            continue;
        }
        any = true;
        if !comment_line(t, &mut in_block) {
            return false;
        }
    }
    any
}

/// Whether a trimmed, non-empty line is comment only; sets `in_block` when it opens a
/// `/*` block that it does not close.
fn comment_line(t: &str, in_block: &mut bool) -> bool {
    if let Some(rest) = t.strip_prefix("/*") {
        return if let Some(i) = rest.find("*/") {
            rest_is_comment(&rest[i + 2..], in_block)
        } else {
            *in_block = true;
            true
        };
    }
    if t.starts_with("//") {
        return true;
    }
    if let Some(rest) = t.strip_prefix("*/") {
        return rest_is_comment(rest, in_block);
    }
    if let Some(rest) = t.strip_prefix('*') {
        // `* text` (a block comment's continuation), not `*ptr = 0;`.
        return rest.is_empty() || rest.starts_with(char::is_whitespace) || rest.starts_with("*/");
    }
    if let Some(rest) = t.strip_prefix("--") {
        // `-- text` (SQL, Lua, Haskell), not `--i;`.
        return rest.is_empty()
            || rest.starts_with(char::is_whitespace)
            || rest.starts_with('-')
            || rest.starts_with('[');
    }
    if let Some(rest) = t.strip_prefix('#') {
        return !is_hash_code(rest);
    }
    false
}

fn rest_is_comment(rest: &str, in_block: &mut bool) -> bool {
    let rest = rest.trim();
    rest.is_empty() || comment_line(rest, in_block)
}

/// `#` lines that are code: attributes, shebangs and preprocessor directives.
fn is_hash_code(after_hash: &str) -> bool {
    const DIRECTIVES: [&str; 14] = [
        "include", "define", "undef", "if", "ifdef", "ifndef", "elif", "else", "endif", "pragma",
        "import", "error", "warning", "line",
    ];
    if after_hash.starts_with('[') || after_hash.starts_with('!') {
        return true;
    }
    let word: &str = after_hash
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .next()
        .unwrap_or("");
    DIRECTIVES.contains(&word)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{LineIndex, line_count};

    proptest! {
        /// The index's lines are exactly `split_inclusive('\n')`'s: each ends after its
        /// newline, a final line without one still counts, and the whole range is the text.
        #[test]
        fn lines_are_the_texts_newline_terminated_pieces(text in "[a\n\r\u{e9}]{0,40}") {
            let lines = LineIndex::new(&text);
            let pieces: Vec<&str> = text.split_inclusive('\n').collect();
            prop_assert_eq!(lines.count(), pieces.len());
            prop_assert_eq!(line_count(&text), pieces.len());
            for (i, piece) in pieces.iter().enumerate() {
                let n = u32::try_from(i + 1).unwrap();
                prop_assert_eq!(lines.excerpt(n, n), *piece);
            }
            if !text.is_empty() {
                prop_assert_eq!(lines.excerpt(1, lines.count_u32()), text.as_str());
            }
        }
    }
}
