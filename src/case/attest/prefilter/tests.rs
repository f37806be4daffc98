//! The filter must never rule out a line a pattern matches; it should rule out most others.

use proptest::prelude::*;
use regex::Regex;

use super::Prefilter;
use crate::skill::{Attestation, registry};

/// Every pattern of the built-in contracts, with the placeholder they are compiled with.
pub(in crate::case::attest) fn builtin_patterns() -> Vec<String> {
    let mut all = vec![];
    for skill in &registry().skills {
        for att in skill.policy.attestation.values() {
            if let Attestation::Patterns { rules } = att {
                for rule in rules {
                    all.extend(rule.sources(super::super::MASK).into_iter().flatten());
                }
            }
        }
    }
    all
}

/// Runs `check` on generated lines made of `src`'s own words and the characters around
/// them in code and prose (so that many match; some carry a character outside the narrowed
/// alphabet), with a runner of its own: a runner counts its cases across runs, so one
/// shared between expressions would check only the first.
pub(in crate::case::attest) fn on_lines_of_its_words(
    src: &str,
    check: impl Fn(&str) -> Result<(), proptest::test_runner::TestCaseError>,
) {
    let words: Vec<String> = src
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .chain(
            [
                "qqq", " ", "  ", "_", ".", ":", "=", "(", ")", "*", "1000", "⟦", "⟧", "—", "é",
            ]
            .map(String::from),
        )
        .collect();
    let strategy =
        prop::collection::vec(prop::sample::select(words), 1..8).prop_map(|v| v.concat());
    proptest::test_runner::TestRunner::deterministic()
        .run(&strategy, |line| check(&line))
        .unwrap();
}

/// Pieces lines are made of: words the patterns spell, in any case, and the characters
/// around them in code and prose, ASCII or not.
fn piece() -> impl Strategy<Value = String> {
    let words: Vec<String> = builtin_patterns()
        .iter()
        .flat_map(|p| {
            p.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .filter(|w| w.len() > 1)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    prop_oneof![
        4 => proptest::sample::select(words),
        2 => proptest::sample::select(vec![
            " ", "  ", "_", ".", "(", ")", "()", "=", ":", "*", "/", "%", "-", ",", "[", "]",
            "0", "1", "5", "60", "1000", "1024", "qqq", "s", "ms", "B", "\t",
        ]).prop_map(str::to_owned),
        1 => proptest::sample::select(vec!["ſ", "K", "µ", "μ", "é", "–", "\u{a0}"])
            .prop_map(str::to_owned),
        1 => "[ -~]{1,3}",
    ]
}

pub(in crate::case::attest) fn line() -> impl Strategy<Value = String> {
    (proptest::collection::vec(piece(), 1..8), any::<u8>()).prop_map(|(pieces, case)| {
        let joined = pieces.concat();
        match case % 3 {
            0 => joined,
            1 => joined.to_uppercase(),
            _ => joined
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    if i % 2 == 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect(),
        }
    })
}

/// A small regular expression over an alphabet with case, word characters, digits and
/// space, using the constructs rules use.
pub(in crate::case::attest) fn regex_source() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        proptest::sample::select(vec![
            "a", "b", "ab", "ba", "A", "s", "k", "1", " ", "_", r"\.", "[ab]", "[aA]", "[a-c]",
            "[sS]", "[AB]", "[A-C]", "[sµ]", "É", "[^a]", r"\w", r"\d", r"\s", r"\W", ".", r"\b",
            "^", "$", "ſ", "µ",
        ])
        .prop_map(str::to_owned),
    ];
    atom.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 2..4).prop_map(|v| v.concat()),
            proptest::collection::vec(inner.clone(), 2..4)
                .prop_map(|v| format!("(?:{})", v.join("|"))),
            (
                inner.clone(),
                proptest::sample::select(vec!["?", "*", "+", "{2}", "{0,2}", "{1,3}", "{2,}"])
            )
                .prop_map(|(r, q)| format!("(?:{r}){q}")),
            inner.clone().prop_map(|r| format!("(?i:{r})")),
            inner.prop_map(|r| format!("({r})")),
        ]
    })
}

/// [`regex_source`] under no flag, `(?i)` or `(?-u)`: some of them do not compile.
pub(in crate::case::attest) fn flagged_regex_source() -> impl Strategy<Value = String> {
    (
        proptest::sample::select(vec!["", "(?i)", "(?-u)"]),
        regex_source(),
    )
        .prop_map(|(flags, src)| format!("{flags}{src}"))
}

/// Lines over the generated expressions' alphabet, with the characters beyond ASCII that
/// case folding and classes make interesting.
pub(in crate::case::attest) const HAYSTACK: &str = "[aAbBsSkK1 _.ſKµÉé]{0,12}";

/// The built-in patterns, compiled, and their filter: built once for all cases.
static BUILTIN: std::sync::LazyLock<(Vec<String>, Vec<Regex>, Prefilter)> =
    std::sync::LazyLock::new(|| {
        let patterns = builtin_patterns();
        let compiled = patterns.iter().map(|p| Regex::new(p).unwrap()).collect();
        let filter = Prefilter::new(patterns.iter().map(String::as_str));
        (patterns, compiled, filter)
    });

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Soundness over the built-in rules: a pattern that matches a line is a candidate on it.
    #[test]
    fn a_builtin_pattern_that_matches_a_line_is_a_candidate_on_it(lines in proptest::collection::vec(line(), 1..16)) {
        let (patterns, compiled, filter) = &*BUILTIN;
        for l in &lines {
            let may = filter.candidates(l);
            for (k, re) in compiled.iter().enumerate() {
                prop_assert!(!re.is_match(l) || may[k], "`{}` matches {l:?} but was ruled out", patterns[k]);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// Soundness over any pattern a skill file could hold, not only the built-in ones.
    #[test]
    fn any_pattern_that_matches_a_line_is_a_candidate_on_it(
        src in flagged_regex_source(),
        lines in proptest::collection::vec(HAYSTACK, 1..24),
    ) {
        let Ok(re) = Regex::new(&src) else { return Ok(()) };
        let filter = Prefilter::new([src.as_str()]);
        for l in &lines {
            prop_assert!(!re.is_match(l) || filter.candidates(l)[0], "`{src}` matches {l:?} but was ruled out");
        }
    }
}

#[test]
fn lines_without_a_patterns_literals_rule_it_out() {
    let filter = Prefilter::new([
        r"(?i)\bseconds?\b|\bsecs?\b",
        r"\w_ms\b|[a-z0-9]Ms\b",
        r"qqq[)\]]{0,2}\s*\*\s*60\b",
        r"\d+",
        "(",
    ]);
    for (line, may) in [
        ("let x = 1;", [false, false, false, true, true]),
        ("TIMEOUT_SECS = 30", [true, false, false, true, true]),
        ("timeoutMs * 60", [false, true, false, true, true]),
        ("qqq * 60", [false, false, true, true, true]),
        // Every part of a sequence is needed, not only its most selective one.
        ("qqq = 60", [false, false, false, true, true]),
        ("if qqq is None", [false, false, false, true, true]),
        // `(?i)s` also matches `ſ`, and a line may hold any character.
        ("30 ſecs ⟦µ⟧", [true, false, false, true, true]),
    ] {
        assert_eq!(filter.candidates(line), may, "{line}");
    }
    // A branch of an alternation is ruled out by any of the sets it needs.
    let filter = Prefilter::new([r"\.take\(|\[\s*:\s*qqq"]);
    assert_eq!(filter.candidates("if qqq is None"), [false]);
    assert_eq!(filter.candidates("rows[: qqq]"), [true]);
    assert_eq!(filter.candidates("rows.take(3)"), [true]);
}

#[test]
fn most_builtin_patterns_are_ruled_out_on_an_ordinary_line() {
    let (patterns, _, filter) = &*BUILTIN;
    let may = filter.candidates("    return self._client.post(url, json=payload)");
    let kept = may.iter().filter(|&&m| m).count();
    assert!(
        kept * 5 < patterns.len(),
        "{kept} of {} patterns kept",
        patterns.len()
    );
}

/// The lines the property above draws do match the patterns (a third of them at least), so
/// its check is not vacuous.
#[test]
fn the_drawn_lines_match_most_builtin_patterns() {
    use proptest::strategy::ValueTree;
    let (patterns, compiled, filter) = &*BUILTIN;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut matched = vec![false; patterns.len()];
    for _ in 0..1024 {
        let l = line().new_tree(&mut runner).unwrap().current();
        let may = filter.candidates(&l);
        for (k, re) in compiled.iter().enumerate() {
            if re.is_match(&l) {
                assert!(may[k], "`{}` matches {l:?} but was ruled out", patterns[k]);
                matched[k] = true;
            }
        }
    }
    let n = matched.iter().filter(|&&m| m).count();
    assert!(
        n * 3 > patterns.len(),
        "only {n} of {} patterns matched a line",
        patterns.len()
    );
}

/// The rule patterns of the embedded registry (the ones a filter is built over), with the
/// placeholder they are compiled with.
fn builtin_rule_patterns() -> Vec<String> {
    let mut all = vec![];
    for skill in &registry().skills {
        for att in skill.policy.attestation.values() {
            if let Attestation::Patterns { rules } = att {
                for rule in rules {
                    let [pattern, ..] = rule.sources(super::super::MASK);
                    all.extend(pattern);
                }
            }
        }
    }
    all
}

/// The build script's table holds every rule pattern of the embedded registry, each with
/// the literal sets parsing it here gives: the table only saves the parse.
#[test]
fn the_build_table_is_the_parse_of_every_builtin_rule_pattern() {
    let table = super::table::NEEDS;
    assert!(
        table.windows(2).all(|w| w[0].0 < w[1].0),
        "the table must be sorted without repeats: it is binary-searched"
    );
    let patterns = builtin_rule_patterns();
    assert!(patterns.len() >= 90, "{} rule patterns", patterns.len());
    for p in &patterns {
        let entry = table.binary_search_by(|(k, _)| (*k).cmp(p.as_str()));
        assert!(entry.is_ok(), "the build table lacks {p}");
        let parsed = super::needs::needed(&regex_syntax::parse(p).unwrap());
        assert_eq!(super::needs_of(p), parsed, "{p}");
    }
}

/// A pattern the table does not hold is parsed when the filter is built.
#[test]
fn a_pattern_outside_the_table_is_parsed() {
    let p = r"\bfortnight\b";
    assert!(
        super::table::NEEDS.iter().all(|(k, _)| *k != p),
        "pick a pattern the registry does not use"
    );
    assert_eq!(super::needs_of(p), vec![vec![b"fortnight".to_vec()]]);
    let filter = Prefilter::new([p]);
    assert_eq!(filter.candidates("two FORTNIGHTS"), vec![true]);
    assert_eq!(filter.candidates("two weeks"), vec![false]);
}
