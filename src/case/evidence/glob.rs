//! One path against a scope's glob, for the rails that classify a single path.
//!
//! A `GlobSet` compiles its globs into one regex set and searches it with a lazy DFA: the
//! right shape for a walk over thousands of paths ([`super::Classifier`]), and half a
//! millisecond of building in a CLI rail that classifies one. Here each glob is the regular
//! expression `globset` itself translates it to (`Glob::regex`), compiled with the syntax
//! and limits `globset` uses, and searched by the engines that need no building beyond the
//! NFA (the bounded backtracker, the Pike VM; a glob's regex is anchored, and the one-pass
//! DFA it would also get costs more to build than one path's search saves) — the same matches, as a test holds against
//! the `GlobSet` over generated paths.

use std::sync::Arc;

use globset::GlobBuilder;
use regex_automata::meta;

/// Whether `path` (repository-relative, `/`-separated) matches `glob`, `*` not crossing
/// `/`; a glob that does not compile matches nothing.
pub(super) fn matches(glob: &str, path: &str) -> bool {
    compiled(glob).is_some_and(|re| re.is_match(path.as_bytes()))
}

/// `glob` compiled once per process.
fn compiled(glob: &str) -> Option<Arc<meta::Regex>> {
    static GLOBS: crate::memo::Memo<String, Option<Arc<meta::Regex>>> =
        crate::memo::Memo::new(4096);
    GLOBS.get_or(glob.to_string(), || {
        let glob = GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .ok()?;
        // `globset`'s own syntax and limits for one glob's regex.
        let syntax = regex_automata::util::syntax::Config::new()
            .utf8(false)
            .dot_matches_new_line(true);
        let config = meta::Config::new()
            .utf8_empty(false)
            .nfa_size_limit(Some(10 * (1 << 20)))
            .which_captures(regex_automata::nfa::thompson::WhichCaptures::None)
            .onepass(false)
            .hybrid(false)
            .dfa(false)
            .auto_prefilter(false);
        meta::Builder::new()
            .syntax(syntax)
            .configure(config)
            .build(glob.regex())
            .ok()
            .map(Arc::new)
    })
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
