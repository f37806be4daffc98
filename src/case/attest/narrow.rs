//! A regular expression read over a small alphabet, for the lines written in it.
//!
//! Attestation's expressions are Unicode ones: `\w`, `\W`, `\d` and `\s` name classes of
//! hundreds of ranges, and compiling one spent most of its time encoding those ranges as
//! UTF-8 automata — about a quarter of every attesting CLI rail. Most lines a rail reads are
//! ASCII, plus the `⟦…⟧` that mark a call's named arguments and a few typographic marks
//! ([`EXTRA`]). Over that alphabet the expression with every class intersected with it and
//! every Unicode word boundary made an ASCII one behaves exactly alike — same matches, same
//! spans, same groups, since the two differ in nothing but what their classes and
//! boundaries answer on characters outside the alphabet — and compiles several times faster:
//!
//! * a class matches the same characters of the alphabet, since they are the ones kept;
//! * case-insensitive letters are classes of their case variants (the translator folds
//!   them), so the same holds for them;
//! * a word boundary looks at whether the characters beside it are word characters, and
//!   on the alphabet that is the same question in ASCII and in Unicode: its ASCII letters,
//!   digits and `_` are word characters in both, and its other characters in neither;
//! * literals are unchanged.
//!
//! An expression with a negated Unicode word boundary (`\B`) is not narrowed: between the
//! bytes of a multi-byte character its ASCII counterpart holds where the Unicode one is
//! never asked. A line with any character outside the alphabet is matched by the
//! expression as written.

use regex_syntax::hir::Repetition;
use regex_syntax::hir::{Capture, Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Look};

/// The characters a narrowed pattern is exact on: ASCII, the brackets of call annotations
/// and typographic punctuation. None of the non-ASCII ones is a word character, a space or
/// the case variant of another character (a unit test holds all three).
pub(super) const EXTRA: [char; 9] = ['⟦', '⟧', '‘', '’', '“', '”', '–', '—', '…'];

/// Whether `text` is written in the alphabet the narrowed patterns are exact on.
pub(super) fn in_alphabet(text: &str) -> bool {
    text.is_ascii() || text.chars().all(|c| c.is_ascii() || EXTRA.contains(&c))
}

fn alphabet() -> ClassUnicode {
    let mut class = ClassUnicode::new([ClassUnicodeRange::new('\0', '\x7f')]);
    for c in EXTRA {
        class.push(ClassUnicodeRange::new(c, c));
    }
    class
}

/// `src` narrowed to the alphabet; `None` when it does not parse or cannot be narrowed.
pub(super) fn narrowed(src: &str) -> Option<Hir> {
    let hir = regex_automata::util::syntax::parse(src).ok()?;
    narrow(&hir, &alphabet())
}

/// `hir` with each class intersected with `alphabet` and each Unicode word boundary made
/// the ASCII one; `None` when it holds a negated Unicode word boundary.
fn narrow(hir: &Hir, alphabet: &ClassUnicode) -> Option<Hir> {
    let all =
        |subs: &[Hir]| -> Option<Vec<Hir>> { subs.iter().map(|h| narrow(h, alphabet)).collect() };
    Some(match hir.kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(l) => Hir::literal(l.0.clone()),
        HirKind::Class(Class::Unicode(c)) => {
            let mut kept = c.clone();
            kept.intersect(alphabet);
            Hir::class(Class::Unicode(kept))
        }
        HirKind::Class(Class::Bytes(b)) => Hir::class(Class::Bytes(b.clone())),
        HirKind::Look(look) => Hir::look(match look {
            Look::WordUnicode => Look::WordAscii,
            Look::WordStartUnicode => Look::WordStartAscii,
            Look::WordEndUnicode => Look::WordEndAscii,
            Look::WordStartHalfUnicode => Look::WordStartHalfAscii,
            Look::WordEndHalfUnicode => Look::WordEndHalfAscii,
            Look::WordUnicodeNegate => return None,
            other => *other,
        }),
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            min: r.min,
            max: r.max,
            greedy: r.greedy,
            sub: Box::new(narrow(&r.sub, alphabet)?),
        }),
        HirKind::Capture(c) => Hir::capture(Capture {
            index: c.index,
            name: c.name.clone(),
            sub: Box::new(narrow(&c.sub, alphabet)?),
        }),
        HirKind::Concat(subs) => Hir::concat(all(subs)?),
        HirKind::Alternation(subs) => Hir::alternation(all(subs)?),
    })
}

#[cfg(test)]
mod tests {
    use super::super::narrowed_pike_vm as pike_vm;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_extra_characters_are_no_word_characters_spaces_or_case_variants() {
        for c in EXTRA {
            assert!(!c.is_ascii(), "{c:?}");
            assert!(
                !regex_syntax::is_word_character(c),
                "{c:?} is a word character"
            );
            assert!(!c.is_whitespace(), "{c:?} is a space");
            let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
            class.case_fold_simple();
            assert_eq!(
                class.ranges(),
                [ClassUnicodeRange::new(c, c)],
                "{c:?} has case"
            );
        }
    }

    #[test]
    fn a_negated_unicode_word_boundary_is_not_narrowed() {
        assert!(pike_vm(r"a\Bb").is_none());
        assert!(pike_vm(r"(?-u:\B)x").is_some());
        assert!(pike_vm(r"(").is_none());
    }

    #[test]
    fn the_alphabet_is_ascii_and_the_extra_characters() {
        assert!(in_alphabet("retry_after(x)  ⟦call(a=b)⟧ — “quoted” …"));
        assert!(!in_alphabet("café"));
        assert!(!in_alphabet("a\u{a0}b"), "a no-break space is a space");
        assert!(!in_alphabet("µs"));
    }

    /// Patterns that use every construct narrowing touches.
    const PATTERNS: &[&str] = &[
        r"(?i)\bretr(y|ies)\b",
        r"\w_ms\b|[a-z0-9]Ms\b",
        r"^\W*(case\s+)?[\w.]*qqq[\w.]*\W*$",
        r"(?i)\bs\b|\bk\w*",
        r"\b\d+\s?s\b",
        r"qqq[)\]]{0,2}\s*/\s*1_?000(\.0)?\b",
        r"[^.;|]{2,}\bnot\b",
        r"\b{start}ab|cd\b{end}|\b{start-half}x|y\b{end-half}",
        r"(?i)ſ|K|\x{212A}",
        r"(?m)^a$|(?s).⟧|“\w+”",
        r"(?-u:\b)ab(?-u:\B)",
        r"µs\b|\bμs|–\s*1",
    ];

    fn text() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "a", "b", "s", "S", "k", "K", "x", "y", "cd", "ab", "qqq", "retry", "RETRIES", "_ms",
            "9Ms", "case", "not", "12", " ", "\t", ".", ";", "|", ")", "]", "/", "1000", ".0", "⟦",
            "⟧", "“", "”", "–", "—", "…", "‘", "’", "\n", "é", "ſ", "\u{212A}", "µs", "μs",
            "\u{a0}", "_",
        ]);
        prop::collection::vec(pieces, 0..12).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// On every line in the alphabet the narrowed pattern matches exactly when the
        /// pattern as written does (and lines outside it are never given to it).
        #[test]
        fn a_narrowed_pattern_matches_a_line_in_the_alphabet_as_the_pattern_does(
            k in 0..PATTERNS.len(),
            line in text(),
        ) {
            let src = PATTERNS[k];
            let written = regex::Regex::new(src).unwrap();
            let narrowed = pike_vm(src).unwrap();
            if in_alphabet(&line) {
                prop_assert_eq!(narrowed.is_match(&line), written.is_match(&line), "{} on {:?}", src, line);
            }
        }
    }

    /// The same over every pattern of the embedded registry, on lines made of its own
    /// words.
    #[test]
    fn every_embedded_rule_pattern_narrows_exactly_on_lines_of_its_words() {
        let patterns = super::super::prefilter::tests::builtin_patterns();
        assert!(patterns.len() > 50, "{} patterns", patterns.len());
        for src in &patterns {
            let written = regex::Regex::new(src).unwrap();
            let narrowed = pike_vm(src).unwrap_or_else(|| panic!("{src} not narrowed"));
            super::super::prefilter::tests::on_lines_of_its_words(src, |line| {
                prop_assert!(in_alphabet(line) || !line.is_ascii());
                if in_alphabet(line) {
                    prop_assert_eq!(
                        narrowed.is_match(line),
                        written.is_match(line),
                        "{} on {:?}",
                        src,
                        line
                    );
                }
                Ok(())
            });
        }
    }
}
