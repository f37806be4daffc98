//! How the DFAs of [`super::dfa_table`] are built: the build script compiles this file
//! (`#[path]`) to make the tables, and tests rebuild DFAs with it to hold the tables to it.
//! It names nothing of the crate, so it compiles in both places alike.

use regex_automata::dfa::{StartKind, dense};
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;
use regex_syntax::hir::Hir;

/// The most a DFA may take, in its determinisation and as built; an expression whose DFA
/// would be bigger keeps its run-time engines (one of the embedded rule patterns, a run of
/// bounded repetitions under `(?i)`, does).
pub const SIZE_LIMIT: usize = 1 << 20;

/// The meta regex's default NFA size limit, which an expression's run-time engines have.
pub const NFA_SIZE_LIMIT: usize = 10 << 20;

/// The syntax `globset` compiles a glob's regex with (bytes, `.` matching a newline).
#[must_use]
pub fn glob_syntax() -> syntax::Config {
    syntax::Config::new().utf8(false).dot_matches_new_line(true)
}

/// The DFA of `glob` as `evidence::glob` matches it: the regex `globset` makes of it, `*`
/// not crossing `/`, with `globset`'s syntax, anchored. `None` when the glob does not
/// compile or its DFA would exceed [`SIZE_LIMIT`].
#[must_use]
pub fn glob(glob: &str) -> Option<dense::DFA<Vec<u32>>> {
    let parsed = globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .ok()?;
    dense::Builder::new()
        .syntax(glob_syntax())
        .configure(config(StartKind::Anchored))
        .build(parsed.regex())
        .ok()
}

/// The DFA of `hir` (a rule pattern narrowed to the attestation alphabet) for unanchored
/// searches; `None` when its DFA would exceed [`SIZE_LIMIT`].
#[must_use]
pub fn unanchored(hir: &Hir) -> Option<dense::DFA<Vec<u32>>> {
    let nfa = thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .nfa_size_limit(Some(NFA_SIZE_LIMIT))
                .which_captures(thompson::WhichCaptures::None),
        )
        .build_from_hir(hir)
        .ok()?;
    dense::Builder::new()
        .configure(config(StartKind::Unanchored))
        .build_from_nfa(&nfa)
        .ok()
}

fn config(start: StartKind) -> dense::Config {
    dense::Config::new()
        .start_kind(start)
        .minimize(true)
        .dfa_size_limit(Some(SIZE_LIMIT))
        .determinize_size_limit(Some(SIZE_LIMIT))
}
