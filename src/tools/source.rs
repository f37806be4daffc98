//! The source operations over files already read for the batch: list, literal text search,
//! token-boundary symbol search and line context.
//!
//! Invariant: results are computed only from the bytes read once for the batch, in the
//! order given (requested file order, then line order), with 1-based line numbers and the
//! sha256 of the whole file on every match. A long line is shortened for display and
//! marked `textTruncated`; it is never skipped.

use std::collections::BTreeMap;

use super::error::ToolError;
use super::files::{Loaded, lines};
use super::limits::ToolLimits;
use super::request::Page;
use super::result::{CheckedFile, ContextLine, LineMatch, PageInfo, ReadContextResult};

pub(crate) const FIND_TEXT_NOTE: &str = "literal (not regex) line matches in the checked files \
only; no match says nothing about files that were not checked";
pub(crate) const FIND_SYMBOL_NOTE: &str = "identifier occurrences at token boundaries: uses, \
declarations, definitions, comments and strings are not distinguished; this is not a parser";

/// A line for display: at most `max` characters, and whether it was cut.
pub(crate) fn display(line: &str, max: usize) -> (String, bool) {
    match line.char_indices().nth(max) {
        Some((cut, _)) => (line[..cut].to_string(), true),
        None => (line.to_string(), false),
    }
}

/// A literal text compiled once for a whole search (a SIMD substring searcher), instead
/// of a new searcher for every line.
pub(crate) struct TextNeedle {
    finder: memchr::memmem::Finder<'static>,
    case_sensitive: bool,
    empty: bool,
}

impl TextNeedle {
    pub(crate) fn new(needle: &str, case_sensitive: bool) -> TextNeedle {
        let needle = if case_sensitive {
            needle.to_string()
        } else {
            needle.to_lowercase()
        };
        TextNeedle {
            empty: needle.is_empty(),
            finder: memchr::memmem::Finder::new(needle.as_bytes()).into_owned(),
            case_sensitive,
        }
    }

    /// Non-overlapping occurrences in `line` (as `str::matches` counts them).
    pub(crate) fn occurrences(&self, line: &str) -> usize {
        if self.empty {
            // `str::matches("")` matches at every char boundary.
            return line.chars().count() + 1;
        }
        if self.case_sensitive {
            self.finder.find_iter(line.as_bytes()).count()
        } else {
            self.finder
                .find_iter(line.to_lowercase().as_bytes())
                .count()
        }
    }
}

fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Occurrences of an identifier that neither follow nor precede an identifier character.
pub(crate) fn symbol_occurrences(line: &str, symbol: &str) -> usize {
    line.match_indices(symbol)
        .filter(|(at, _)| {
            let before = line[..*at].chars().next_back();
            let after = line[at + symbol.len()..].chars().next();
            !before.is_some_and(is_ident_char) && !after.is_some_and(is_ident_char)
        })
        .count()
}

/// Searches `files` (in order) line by line; `count` gives a line's occurrences.
pub(crate) fn search(
    request: &str,
    files: &[&Loaded],
    count: impl Fn(&str) -> usize,
    page: Page,
    limits: &ToolLimits,
) -> Result<(Vec<CheckedFile>, PageInfo, Vec<LineMatch>), ToolError> {
    let mut checked = Vec::with_capacity(files.len());
    // (file index, line number, occurrences)
    let mut hits: Vec<(usize, usize, usize)> = Vec::new();
    let mut texts = Vec::with_capacity(files.len());
    for (i, f) in files.iter().enumerate() {
        let ls = lines(f.text(request)?);
        checked.push(CheckedFile {
            path: f.rel.clone(),
            sha256: f.sha256.clone(),
            lines: ls.len() as u64,
        });
        for (n, line) in ls.iter().enumerate() {
            let k = count(line);
            if k > 0 {
                hits.push((i, n, k));
            }
        }
        texts.push(ls);
    }
    let (info, range) = PageInfo::of(hits.len(), page.offset, page.limit);
    let matches = hits[range]
        .iter()
        .map(|&(i, n, k)| {
            let (text, text_truncated) = display(texts[i][n], limits.line_chars);
            LineMatch {
                path: files[i].rel.clone(),
                sha256: files[i].sha256.clone(),
                line: n as u64 + 1,
                occurrences: k as u64,
                text,
                text_truncated,
            }
        })
        .collect();
    Ok((checked, info, matches))
}

/// Lines `start..=end` of one file, refusing a range outside it.
pub(crate) fn read_context(
    request: &str,
    file: &Loaded,
    start: u32,
    end: u32,
    limits: &ToolLimits,
) -> Result<ReadContextResult, ToolError> {
    let ls = lines(file.text(request)?);
    if end as usize > ls.len() {
        return Err(ToolError::InvalidRange {
            request: request.into(),
            path: file.rel.clone(),
            start: start.into(),
            end: end.into(),
            reason: format!("the file has {} lines", ls.len()),
        });
    }
    let lines = (start..=end)
        .map(|n| {
            let (text, text_truncated) = display(ls[n as usize - 1], limits.line_chars);
            ContextLine {
                line: n.into(),
                text,
                text_truncated,
            }
        })
        .collect();
    Ok(ReadContextResult {
        path: file.rel.clone(),
        kind: file.kind,
        sha256: file.sha256.clone(),
        start_line: start.into(),
        end_line: end.into(),
        line_count: ls.len() as u64,
        lines,
    })
}

/// The loaded files named by `rels`, in that order.
pub(crate) fn pick<'a>(loaded: &'a BTreeMap<String, Loaded>, rels: &[String]) -> Vec<&'a Loaded> {
    rels.iter().filter_map(|r| loaded.get(r)).collect()
}

#[cfg(test)]
mod needle_tests {
    use proptest::prelude::*;

    use super::TextNeedle;

    proptest! {
        /// The compiled searcher counts exactly what `str::matches` counts, in both modes.
        #[test]
        fn counts_as_str_matches(line in "[aAbB\u{e9}\u{c9} ]{0,40}", needle in "[aAbB\u{e9}\u{c9}]{0,3}") {
            prop_assert_eq!(TextNeedle::new(&needle, true).occurrences(&line), line.matches(needle.as_str()).count());
            prop_assert_eq!(
                TextNeedle::new(&needle, false).occurrences(&line),
                line.to_lowercase().matches(needle.to_lowercase().as_str()).count()
            );
        }
    }
}
