//! Regular expressions searched on one line at a time.
//!
//! A `regex::Regex` searches with a lazy DFA that it builds state by state as haystacks
//! need them, and extracts literals for a prefilter when it is built: both pay off over
//! long haystacks and many searches. Attestation searches lines of a few dozen characters,
//! and a CLI rail searches a few dozen of them with every expression, in a fresh process:
//! building the DFA's states was most of the time its fixed expressions took. A
//! [`LineRegex`] is the same regular expression (same syntax, same limits, same leftmost-
//! first matches and groups) searched by the engines that need no building beyond the NFA:
//! the bounded backtracker, the one-pass DFA for an anchored expression, the Pike VM. A
//! process that keeps searching (past [`LIGHT_LINES`] lines) gets the lazy DFA after all.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use regex_automata::meta;
use regex_automata::util::captures::Captures;

use super::{LIGHT_LINES, narrow};

pub(super) struct LineRegex {
    src: String,
    /// The expression [`narrow`]ed, for lines in its alphabet; `None` when not narrowed.
    narrow: Option<meta::Regex>,
    /// The expression as written: built by [`LineRegex::new`], or when a line outside the
    /// alphabet first needs it.
    full: OnceLock<meta::Regex>,
    /// How many lines it has been asked about.
    asked: AtomicUsize,
    /// The expression with every engine a `regex::Regex` has, the lazy DFA included, for a
    /// process that keeps asking (the battery, the MCP server, the library): past
    /// [`LIGHT_LINES`] lines, as a rule's pattern does, its searches are cheaper than the
    /// build was.
    hot: OnceLock<Option<meta::Regex>>,
}

impl LineRegex {
    /// `src` compiled for line searches, or the error the regex crate would give.
    pub(super) fn new(src: &str) -> Result<LineRegex, String> {
        let full = meta::Builder::new()
            .configure(config())
            .build(src)
            .map_err(|e| e.to_string())?;
        Ok(LineRegex {
            src: src.to_string(),
            narrow: None,
            full: OnceLock::from(full),
            asked: AtomicUsize::new(0),
            hot: OnceLock::new(),
        })
    }

    /// One of the engine's own expressions, which compile (each has a test that uses it):
    /// built narrowed now, and as written only if a line outside the alphabet comes.
    pub(super) fn fixed(src: &str) -> LineRegex {
        LineRegex {
            src: src.to_string(),
            narrow: super::build_narrowed(src, config()),
            full: OnceLock::new(),
            asked: AtomicUsize::new(0),
            hot: OnceLock::new(),
        }
    }

    /// The engine for `text`: the narrowed expression where it is exact.
    fn engine(&self, text: &str) -> &meta::Regex {
        if self.asked.fetch_add(1, Ordering::Relaxed) >= LIGHT_LINES
            && let Some(hot) = self.hot.get_or_init(|| meta::Regex::new(&self.src).ok())
        {
            return hot;
        }
        match &self.narrow {
            Some(narrowed) if narrow::in_alphabet(text) => narrowed,
            _ => self.full.get_or_init(|| {
                meta::Builder::new()
                    .configure(config())
                    .build(&self.src)
                    .expect("the engine's own expressions compile")
            }),
        }
    }

    /// The groups of the leftmost-first match in `text`.
    pub(super) fn captures<'t>(&self, text: &'t str) -> Option<Groups<'t>> {
        let re = self.engine(text);
        let mut caps = re.create_captures();
        re.captures(text, &mut caps);
        caps.is_match().then_some(Groups { text, caps })
    }

    /// The groups of each successive non-overlapping match in `text`.
    pub(super) fn captures_iter<'r, 't>(
        &'r self,
        text: &'t str,
    ) -> impl Iterator<Item = Groups<'t>> + use<'r, 't> {
        self.engine(text)
            .captures_iter(text)
            .map(move |caps| Groups { text, caps })
    }

    /// The byte span of each successive non-overlapping match in `text`.
    pub(super) fn find_iter<'r, 't>(
        &'r self,
        text: &'t str,
    ) -> impl Iterator<Item = (usize, usize)> + use<'r, 't> {
        self.engine(text)
            .find_iter(text)
            .map(|m| (m.start(), m.end()))
    }
}

#[cfg(test)]
impl LineRegex {
    pub(super) fn source(&self) -> &str {
        &self.src
    }

    /// Whether the expression compiles as written, which [`LineRegex::fixed`] assumes.
    pub(super) fn compiles_as_written(&self) -> bool {
        meta::Builder::new()
            .configure(config())
            .build(&self.src)
            .is_ok()
    }
}

/// No lazy or full DFA and no literal prefilter: what remains searches a line without
/// building anything per search.
fn config() -> meta::Config {
    meta::Config::new()
        .hybrid(false)
        .dfa(false)
        .auto_prefilter(false)
}

/// The groups of one match.
pub(super) struct Groups<'t> {
    text: &'t str,
    caps: Captures,
}

impl<'t> Groups<'t> {
    /// The text of the group called `name`, when it took part in the match.
    pub(super) fn name(&self, name: &str) -> Option<&'t str> {
        self.caps
            .get_group_by_name(name)
            .map(|span| &self.text[span.range()])
    }

    /// The byte offset where the whole match ends.
    pub(super) fn end(&self) -> usize {
        self.caps.get_match().map_or(0, |m| m.end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Expressions with what these engines could get wrong if they were not the same
    /// regular expression: optional and lazy groups, anchors, Unicode classes, `(?i)`.
    const PATTERNS: &[&str] = &[
        r"(?P<kw>\b(?:fn|def)\s+(?:\([^)]*\)\s*)?|\bnew\s*)?(?P<name>[A-Za-z_]\w*)\s*(?:<[^()]*>)?\s*\((?P<params>[^()]*)\)",
        r"(?P<callee>[A-Za-z_][\w.]*)\s*\(",
        r"^(?P<lhs>[^=!<>+\-*/%&|^~?]*?)\s*:?=(?P<rhs>[^=>].*)$",
        r#"qqq\b["'`]?\s*[:=]\s*(?P<n>\d[\d_]*(?:\.\d+)?)\b"#,
        r"(?i)time[_\-\s]?out",
        r"/a/[^/\s`'\x22)]+/b",
        r"x*",
    ];

    fn text() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "fn", "def", "new", " ", "  ", "(", ")", "<T>", "a", "B", "_x", "é", "1", "2_0", ".5",
            "qqq", "=", ":", ":=", "==", "=>", ",", "\"", "'", "time", "OUT", "-", "_", "/a/",
            "/b", "id", "\u{212A}", "ſ", "⟦", "\t", ".", "*", "?",
        ]);
        prop::collection::vec(pieces, 0..14).prop_map(|v| v.concat())
    }

    fn groups(caps: &regex::Captures<'_>, re: &regex::Regex) -> Vec<Option<String>> {
        re.capture_names()
            .map(|n| n.and_then(|n| caps.name(n)).map(|m| m.as_str().to_string()))
            .collect()
    }

    fn line_groups(g: &Groups<'_>, re: &regex::Regex) -> Vec<Option<String>> {
        re.capture_names()
            .map(|n| n.and_then(|n| g.name(n)).map(str::to_string))
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// Every match, its span and its named groups are the regex crate's.
        /// Built as written or narrowed (on lines in and out of its alphabet).
        #[test]
        fn a_line_regex_finds_what_the_regex_crate_finds(k in 0..PATTERNS.len(), line in text()) {
            let src = PATTERNS[k];
            let re = regex::Regex::new(src).unwrap();
            for light in [LineRegex::new(src).unwrap(), LineRegex::fixed(src)] {
            let spans: Vec<(usize, usize)> = re.find_iter(&line).map(|m| (m.start(), m.end())).collect();
            prop_assert_eq!(light.find_iter(&line).collect::<Vec<_>>(), spans);
            let all: Vec<_> = re.captures_iter(&line).map(|c| (c.get(0).unwrap().end(), groups(&c, &re))).collect();
            let ours: Vec<_> = light.captures_iter(&line).map(|g| (g.end(), line_groups(&g, &re))).collect();
            prop_assert_eq!(ours, all);
            let first = re.captures(&line).map(|c| groups(&c, &re));
            prop_assert_eq!(light.captures(&line).map(|g| line_groups(&g, &re)), first);
            }
        }
    }

    /// Past its first lines a line regex searches with its lazy DFA, and answers alike.
    #[test]
    fn a_line_regex_asked_often_builds_its_lazy_dfa_and_keeps_its_answers() {
        let src = PATTERNS[0];
        let re = regex::Regex::new(src).unwrap();
        let light = LineRegex::fixed(src);
        let lines = ["fn f(a, b)", "def é(x)", "New(a int) {", "none", "x = y(z)"];
        for round in 0..=LIGHT_LINES + lines.len() {
            let line = lines[round % lines.len()];
            let ours = light.captures(line).map(|g| line_groups(&g, &re));
            assert_eq!(
                ours,
                re.captures(line).map(|c| groups(&c, &re)),
                "{line:?} at {round}"
            );
        }
        assert!(light.hot.get().is_some_and(Option::is_some));
    }

    #[test]
    fn a_pattern_that_does_not_compile_is_an_error() {
        assert!(LineRegex::new("(").is_err());
        assert!(
            LineRegex::new(r"\w{1000}{1000}").is_err(),
            "over the size limit"
        );
    }
}
