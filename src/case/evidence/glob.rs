//! One path against a scope's glob, for the rails that classify a single path.
//!
//! A `GlobSet` compiles its globs into one regex set and searches it with a lazy DFA: the
//! right shape for a walk over thousands of paths ([`super::Classifier`]), and half a
//! millisecond of building in a CLI rail that classifies one. Here each glob is the regular
//! expression `globset` itself translates it to (`Glob::regex`), with `globset`'s syntax:
//!
//! * a default scope's glob (the embedded registry's) was compiled by the build script into
//!   a dense DFA, read here in place from the binary: nothing is built at run time;
//! * any other glob is compiled with `globset`'s limits and searched by the engines that
//!   need no building beyond the NFA (the bounded backtracker, the Pike VM; a glob's regex
//!   is anchored, and the one-pass DFA it would also get costs more to build than one
//!   path's search saves).
//!
//! Either way the same matches as the `GlobSet`, as tests hold over generated paths.

use std::sync::Arc;

use globset::GlobBuilder;
use regex_automata::dfa::{Automaton, dense};
use regex_automata::{Anchored, Input, meta};

/// Whether `path` (repository-relative, `/`-separated) matches `glob`, `*` not crossing
/// `/`; a glob that does not compile matches nothing.
pub(super) fn matches(glob: &str, path: &str) -> bool {
    compiled(glob).is_some_and(|m| m.is_match(path.as_bytes()))
}

/// One glob, compiled.
enum Matcher {
    /// Built at build time (a default scope's glob), with the glob.
    Embedded(Box<dense::DFA<&'static [u32]>>, String),
    Regex(meta::Regex),
}

impl Matcher {
    fn is_match(&self, path: &[u8]) -> bool {
        match self {
            // The regex is anchored at both ends: any match is the whole path. A DFA
            // search fails only by quitting on a byte or by a limit, and neither is
            // configured; were one to, the glob's regex answers.
            Matcher::Embedded(dfa, glob) => dfa
                .try_search_fwd(&Input::new(path).anchored(Anchored::Yes))
                .map(|m| m.is_some())
                .unwrap_or_else(|_| regex(glob).is_some_and(|re| re.is_match(path))),
            Matcher::Regex(re) => re.is_match(path),
        }
    }
}

/// `glob` compiled once per process.
fn compiled(glob: &str) -> Option<Arc<Matcher>> {
    static GLOBS: crate::memo::Memo<String, Option<Arc<Matcher>>> = crate::memo::Memo::new(4096);
    GLOBS.get_or(glob.to_string(), || {
        if let Some(dfa) = crate::case::dfa_table::GLOBS.get(glob) {
            return Some(Arc::new(Matcher::Embedded(Box::new(dfa), glob.to_string())));
        }
        regex(glob).map(|re| Arc::new(Matcher::Regex(re)))
    })
}

/// The regex `globset` makes of `glob`, compiled with `globset`'s own syntax and limits.
fn regex(glob: &str) -> Option<meta::Regex> {
    let glob = GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .ok()?;
    let config = meta::Config::new()
        .utf8_empty(false)
        .nfa_size_limit(Some(crate::case::dfa_build::NFA_SIZE_LIMIT))
        .which_captures(regex_automata::nfa::thompson::WhichCaptures::None)
        .onepass(false)
        .hybrid(false)
        .dfa(false)
        .auto_prefilter(false);
    meta::Builder::new()
        .syntax(crate::case::dfa_build::glob_syntax())
        .configure(config)
        .build(glob.regex())
        .ok()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::Classifier;
    use crate::skill::{EvidenceKind, Scope};

    /// The embedded registry's default scopes and globs with every construct `globset`
    /// has: classes, negated classes, alternations, `?`, `**` in each position, escapes.
    fn scopes() -> Vec<Scope> {
        let mut scopes = crate::skill::registry().default_scopes.clone();
        for glob in [
            "src/*.rs",
            "a/**",
            "**/b",
            "x/**/y/*.t?t",
            "[!a-c]*/[xy].md",
            "**/{lib,bin}/**/*.{rs,go}",
            "\\*lit",
            "*",
            "[",
        ] {
            scopes.push(Scope {
                glob: glob.to_string(),
                kind: EvidenceKind::Doc,
            });
        }
        scopes
    }

    fn path() -> impl Strategy<Value = String> {
        let segment = prop::sample::select(vec![
            "src",
            "a",
            "b",
            "x",
            "y",
            "lib",
            "bin",
            "test",
            "tests",
            "docs",
            "schema",
            "d.rs",
            "e.go",
            "f.md",
            "g.txt",
            "test_h.py",
            "i_test.go",
            "j.spec.ts",
            "k.schema.json",
            "openapi.yaml",
            "l.proto",
            "*lit",
            "README",
            ".hidden",
            "m.t1t",
            "é.rs",
            "sp ace",
            "new\nline.md",
        ]);
        prop::collection::vec(segment, 1..5).prop_map(|v| v.join("/"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// The first scope whose glob matches is the one the `GlobSet` names.
        #[test]
        fn one_path_is_classified_as_the_glob_set_classifies_it(path in path()) {
            let scopes = scopes();
            let ours = scopes.iter().find(|s| super::matches(&s.glob, &path)).map(|s| s.kind);
            prop_assert_eq!(ours, Classifier::new(&scopes).by_glob_set(&path), "{}", path);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Each glob, the default scopes' read from the build script's DFAs and the rest
        /// compiled here, matches what a `GlobSet` of that glob alone matches.
        #[test]
        fn each_glob_matches_as_a_glob_set_of_it_alone(path in path()) {
            for scope in scopes() {
                let Ok(glob) = globset::GlobBuilder::new(&scope.glob)
                    .literal_separator(true)
                    .build()
                else {
                    prop_assert!(!super::matches(&scope.glob, &path));
                    continue;
                };
                let set = globset::GlobSet::new([glob]).unwrap();
                prop_assert_eq!(
                    super::matches(&scope.glob, &path),
                    set.is_match(&path),
                    "{} against {}", scope.glob, path
                );
            }
        }
    }

    /// Every default scope's glob is read from the build script's DFAs, none compiled in
    /// the process; a glob of no default scope is not in the table.
    #[test]
    fn every_default_scope_glob_has_its_dfa_from_the_build() {
        let defaults = &crate::skill::registry().default_scopes;
        assert!(!defaults.is_empty());
        for scope in defaults {
            let table = crate::case::dfa_table::GLOBS.get(&scope.glob);
            assert!(table.is_some(), "{} has no DFA from the build", scope.glob);
            // The one the builder makes now, byte for byte.
            let rebuilt = crate::case::dfa_build::glob(&scope.glob).unwrap();
            assert_eq!(
                table.map(|dfa| dfa.to_bytes_little_endian()),
                Some(rebuilt.to_bytes_little_endian()),
                "{}",
                scope.glob
            );
            assert!(matches!(
                super::compiled(&scope.glob).as_deref(),
                Some(super::Matcher::Embedded(..))
            ));
        }
        assert!(crate::case::dfa_table::GLOBS.get("src/*.rs").is_none());
        assert!(matches!(
            super::compiled("src/*.rs").as_deref(),
            Some(super::Matcher::Regex(_))
        ));
    }

    /// A classifier answers glob by glob, then by its set, and both alike.
    #[test]
    fn a_classifier_past_its_light_paths_answers_by_its_glob_set_alike() {
        let scopes = scopes();
        let classifier = Classifier::new(&scopes);
        let paths = [
            "src/a.rs",
            "docs/x.md",
            "a/b/test_c.py",
            "README",
            "x/q/y/z.tst",
        ];
        let first: Vec<_> = paths.iter().map(|p| classifier.classify(p)).collect();
        assert!(
            classifier.state.compiled.get().is_none(),
            "built before its light paths ran out"
        );
        for round in 0..super::super::LIGHT_PATHS {
            let k = round % paths.len();
            assert_eq!(classifier.classify(paths[k]), first[k], "{}", paths[k]);
        }
        assert!(classifier.state.compiled.get().is_some(), "never built");
        let later: Vec<_> = paths.iter().map(|p| classifier.classify(p)).collect();
        assert_eq!(first, later);
        assert_eq!(first[0], Some(EvidenceKind::Implementation));
    }

    /// A scope list whose globs are too big together for one set is matched glob by glob.
    #[test]
    fn a_list_without_its_glob_set_classifies_glob_by_glob() {
        let scopes = scopes();
        let classifier = Classifier::new(&scopes);
        let _ = classifier
            .state
            .compiled
            .set(std::sync::Arc::new(super::super::Compiled {
                set: None,
                kinds: vec![],
            }));
        for path in ["src/a.rs", "docs/x.md", "a/b/test_c.py", "README"] {
            let by_glob = scopes
                .iter()
                .find(|s| super::matches(&s.glob, path))
                .map(|s| s.kind);
            assert_eq!(classifier.classify(path), by_glob, "{path}");
        }
        assert_eq!(
            classifier.classify("src/a.rs"),
            Some(EvidenceKind::Implementation)
        );
    }

    /// A DFA search that fails (one that quits on a byte; the build configures none) is
    /// answered by the glob's regex, never taken for "no match".
    #[test]
    fn a_failed_dfa_search_is_answered_by_the_globs_regex() {
        let dfa = crate::case::dfa_table::quitting_dfa(
            b'/',
            regex_automata::dfa::StartKind::Anchored,
            r"(?-u)^[a-z]*$",
        );
        let matcher = super::Matcher::Embedded(Box::new(dfa), "**/*.rs".into());
        assert!(
            matcher.is_match(b"src/a.rs"),
            "the failed search was not retried"
        );
        assert!(
            !matcher.is_match(b"a.rs"),
            "a search that ran is the answer"
        );
    }

    #[test]
    fn a_glob_that_does_not_compile_matches_nothing() {
        assert!(!super::matches("[", "["));
        assert!(super::matches("*.rs", "a.rs"));
        assert!(
            !super::matches("*.rs", "src/a.rs"),
            "`*` does not cross `/`"
        );
    }
}
