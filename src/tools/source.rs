//! The source operations over a file's text as it streams by: literal text search,
//! token-boundary symbol search and line context.
//!
//! Invariant: a line is numbered and counted exactly as the whole-file algorithm would
//! (requested file order, then line order, 1-based numbers): a search reads every line that
//! could match, and skips only lines that lack bytes every match needs. A long line is
//! shortened for display and marked `textTruncated`; it is never skipped.

use std::ops::Range;

use memchr::memmem::Finder;

use super::files::{TextSink, line_text, lines};
use super::result::ContextLine;

pub(crate) const FIND_TEXT_NOTE: &str = "literal (not regex) line matches in the checked files \
only; no match says nothing about files that were not checked";
pub(crate) const FIND_SYMBOL_NOTE: &str = "identifier occurrences at token boundaries: uses, \
declarations, definitions, comments and strings are not distinguished; this is not a parser";

/// A line for display: at most `max` characters, and whether it was cut.
fn display(line: &str, max: usize) -> (String, bool) {
    match line.char_indices().nth(max) {
        Some((cut, _)) => (line[..cut].to_string(), true),
        None => (line.to_string(), false),
    }
}

/// A literal text compiled once for a whole search (a SIMD substring searcher), instead
/// of a new searcher for every line.
pub(crate) struct TextNeedle {
    finder: Finder<'static>,
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
            finder: Finder::new(needle.as_bytes()).into_owned(),
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

    /// Bytes every line with an occurrence contains, when there are such bytes: a
    /// case-insensitive match may hold other bytes than the needle (`K` lowercases to `k`).
    fn required(&self) -> Option<&Finder<'static>> {
        (self.case_sensitive && !self.empty).then_some(&self.finder)
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

/// What a search counts in a line.
pub(crate) enum Matcher {
    Text(TextNeedle),
    Symbol {
        symbol: String,
        /// Finds the symbol's bytes, which every line with an occurrence contains.
        finder: Option<Finder<'static>>,
    },
}

impl Matcher {
    pub(crate) fn text(needle: &str, case_sensitive: bool) -> Matcher {
        Matcher::Text(TextNeedle::new(needle, case_sensitive))
    }

    pub(crate) fn symbol(symbol: &str) -> Matcher {
        Matcher::Symbol {
            symbol: symbol.into(),
            finder: (!symbol.is_empty()).then(|| Finder::new(symbol.as_bytes()).into_owned()),
        }
    }

    /// Occurrences in one line.
    pub(crate) fn count(&self, line: &str) -> usize {
        match self {
            Matcher::Text(needle) => needle.occurrences(line),
            Matcher::Symbol { symbol, .. } => symbol_occurrences(line, symbol),
        }
    }

    fn required(&self) -> Option<&Finder<'static>> {
        match self {
            Matcher::Text(needle) => needle.required(),
            Matcher::Symbol { finder, .. } => finder.as_ref(),
        }
    }
}

/// A line a search hit, ready to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    /// 1-based.
    pub line: u64,
    pub occurrences: u64,
    pub text: String,
    pub text_truncated: bool,
}

/// One search over one file's text: how many lines it hits, and the hits whose 0-based
/// index among them falls in `keep`, ready to show. Only those are kept, so a file with a
/// million hits costs a counter.
pub(crate) struct FileSearch<'m> {
    matcher: &'m Matcher,
    keep: Range<u64>,
    line_chars: usize,
    pub hits: u64,
    pub kept: Vec<Hit>,
}

impl<'m> FileSearch<'m> {
    pub(crate) fn new(matcher: &'m Matcher, keep: Range<u64>, line_chars: usize) -> Self {
        FileSearch {
            matcher,
            keep,
            line_chars,
            hits: 0,
            kept: Vec::new(),
        }
    }

    /// Line `n` (0-based).
    fn line(&mut self, n: u64, line: &str) {
        let k = self.matcher.count(line);
        if k == 0 {
            return;
        }
        if self.keep.contains(&self.hits) {
            let (text, text_truncated) = display(line, self.line_chars);
            self.kept.push(Hit {
                line: n + 1,
                occurrences: k as u64,
                text,
                text_truncated,
            });
        }
        self.hits += 1;
    }
}

impl TextSink for FileSearch<'_> {
    fn text(&mut self, first: u64, text: &str) {
        let Some(finder) = self.matcher.required() else {
            for (n, line) in (first..).zip(lines(text)) {
                self.line(n, line);
            }
            return;
        };
        // Only the lines holding the required bytes can match: find those bytes, then the
        // line around them, counting the newlines skipped on the way for its number while
        // a hit to keep may still come (a hit's number is shown only when it is kept).
        let bytes = text.as_bytes();
        let (mut n, mut counted, mut from) = (first, 0, 0);
        while let Some(at) = finder.find(&bytes[from..]) {
            let at = from + at;
            let start = memchr::memrchr(b'\n', &bytes[from..at]).map_or(from, |i| from + i + 1);
            let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i + 1);
            if self.hits < self.keep.end {
                n += memchr::memchr_iter(b'\n', &bytes[counted..start]).count() as u64;
                counted = start;
            }
            self.line(n, line_text(&text[start..end]));
            from = end;
        }
    }
}

/// Lines `start..=end` (1-based) of one file's text, ready to show.
pub(crate) struct FileContext {
    start: u64,
    end: u64,
    line_chars: usize,
    pub lines: Vec<ContextLine>,
}

impl FileContext {
    pub(crate) fn new(start: u32, end: u32, line_chars: usize) -> Self {
        FileContext {
            start: start.into(),
            end: end.into(),
            line_chars,
            lines: Vec::new(),
        }
    }
}

impl TextSink for FileContext {
    fn text(&mut self, first: u64, text: &str) {
        if first >= self.end {
            return;
        }
        for (n, line) in (first + 1..).zip(lines(text)) {
            if n > self.end {
                break;
            }
            if n >= self.start {
                let (text, text_truncated) = display(line, self.line_chars);
                self.lines.push(ContextLine {
                    line: n,
                    text,
                    text_truncated,
                });
            }
        }
    }
}

/// What one request makes of a file's text.
pub(crate) enum Reader<'m> {
    Search(FileSearch<'m>),
    Context(FileContext),
}

/// The readers of one file, each with the index of its request in the batch.
impl TextSink for Vec<(usize, Reader<'_>)> {
    fn text(&mut self, first: u64, text: &str) {
        for (_, reader) in self {
            match reader {
                Reader::Search(s) => s.text(first, text),
                Reader::Context(c) => c.text(first, text),
            }
        }
    }
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
