//! The DFA of a rule pattern narrowed to the [`narrow`](super::narrow) alphabet, which
//! answers whether a line in that alphabet matches: the build script serialises one for each
//! pattern of the embedded registry (the binary reads it in place), and tests rebuild them
//! to hold the table to this function.

use regex_automata::dfa::{StartKind, dense};
use regex_automata::nfa::thompson;

/// The most a pattern's DFA may take, in its determinisation and as built; a pattern
/// whose DFA would be bigger keeps its run-time engines (one of the embedded patterns, a
/// run of bounded repetitions under `(?i)`, does).
pub const SIZE_LIMIT: usize = 1 << 20;

/// The meta regex's default NFA size limit, which the run-time engines of a pattern have.
const NFA_SIZE_LIMIT: usize = 10 << 20;

/// `src` narrowed and determinised for unanchored searches; `None` when it does not parse,
/// cannot be narrowed or its DFA would exceed [`SIZE_LIMIT`].
pub fn build(src: &str) -> Option<dense::DFA<Vec<u32>>> {
    let hir = super::narrow::narrowed(src)?;
    let nfa = thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .nfa_size_limit(Some(NFA_SIZE_LIMIT))
                .which_captures(thompson::WhichCaptures::None),
        )
        .build_from_hir(&hir)
        .ok()?;
    dense::Builder::new()
        .configure(
            dense::Config::new()
                .start_kind(StartKind::Unanchored)
                .minimize(true)
                .dfa_size_limit(Some(SIZE_LIMIT))
                .determinize_size_limit(Some(SIZE_LIMIT)),
        )
        .build_from_nfa(&nfa)
        .ok()
}
