//! Dense DFAs the build script made for the embedded skill registry's expressions (the
//! default scopes' globs, the rule patterns narrowed), read in place from the binary.
//!
//! Each table is a blob of serialised DFAs, each at a multiple of 8 bytes, and an index of
//! `(expression, offset, length)` sorted by expression. A DFA is checked as it is read
//! (`DFA::from_bytes`): one this build cannot read is simply not there, and its expression
//! is compiled at run time as any other.

use regex_automata::dfa::dense;

/// Bytes aligned as the DFAs read in place need.
#[repr(C, align(8))]
struct Aligned<B: ?Sized> {
    bytes: B,
}

pub(crate) struct Table {
    blob: &'static Aligned<[u8]>,
    index: &'static [(&'static str, usize, usize)],
}

impl Table {
    /// The DFA of `expression`, when the build made one.
    pub(crate) fn get(&self, expression: &str) -> Option<dense::DFA<&'static [u32]>> {
        let i = self
            .index
            .binary_search_by(|(e, _, _)| (*e).cmp(expression))
            .ok()?;
        let (_, start, len) = self.index[i];
        let bytes = self.blob.bytes.get(start..start.checked_add(len)?)?;
        dense::DFA::from_bytes(bytes).ok().map(|(dfa, _)| dfa)
    }
}

/// A DFA of `pattern` whose searches fail on byte `quit` (the build configures no such
/// byte), for tests of what answers when a search fails.
#[cfg(test)]
pub(crate) fn quitting_dfa(
    quit: u8,
    start: regex_automata::dfa::StartKind,
    pattern: &str,
) -> dense::DFA<&'static [u32]> {
    let built = dense::Builder::new()
        .configure(dense::Config::new().quit(quit, true).start_kind(start))
        .build(pattern)
        .unwrap();
    Box::leak(Box::new(built)).as_ref()
}

mod index {
    include!(concat!(env!("OUT_DIR"), "/dfa_index.rs"));
}

/// The default scopes' globs, each the regex `globset` makes of it, anchored.
pub(crate) static GLOBS: Table = Table {
    blob: &Aligned {
        bytes: *include_bytes!(concat!(env!("OUT_DIR"), "/glob_dfas.bin")),
    },
    index: index::GLOBS,
};

/// The rule patterns (`{q}` as the engine's mask), narrowed, unanchored.
pub(crate) static RULES: Table = Table {
    blob: &Aligned {
        bytes: *include_bytes!(concat!(env!("OUT_DIR"), "/rule_dfas.bin")),
    },
    index: index::RULES,
};
