//! Which of a list of regular expressions could match a text, decided without compiling
//! them.
//!
//! Compiling a contract's ~90 attestation patterns cost every CLI rail that attests about
//! 40 ms, though on any one case most of them never match a line. Here each expression is
//! read once (parsed, not compiled) for sets of literals such that every match contains one
//! literal of each set; a text missing a set cannot match, so the expression need not be
//! compiled for it. The filter only ever rules an expression out, never in: what matches
//! stays exactly what the compiled expressions say.
//!
//! Literals and lines are compared with ASCII case folded (`to_ascii_lowercase` on both),
//! which keeps literals few under `(?i)`; a class's other members, such as the `ſ` that
//! `(?i)s` also matches, are literals of their own.
//!
//! Parsing the ~100 patterns of the embedded registry was a fifth of every attesting CLI
//! rail; the build script computes their literal sets once ([`needs`] is shared with it),
//! and a pattern not in that table (a registry loaded from a file) is parsed here.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use needs::{Set, needed};

mod needs;

/// The literal sets of every pattern of the embedded registry, as the build script
/// computed them with [`needs::needed`]: `(pattern, sets)`, sorted by pattern.
mod table {
    include!(concat!(env!("OUT_DIR"), "/prefilter_needs.rs"));
}

pub(super) struct Prefilter {
    /// Every distinct literal of every pattern, ASCII-lowercased.
    finder: Option<AhoCorasick>,
    /// For literal `k`, the patterns and the clause of each it satisfies.
    owners: Vec<Vec<(usize, usize)>>,
    /// How many clauses each pattern has; none means a candidate on every line.
    clauses: Vec<usize>,
}

impl Prefilter {
    /// The filter for `patterns`; one that does not parse is a candidate on every line.
    #[must_use]
    pub(super) fn new<'p>(patterns: impl IntoIterator<Item = &'p str>) -> Prefilter {
        let mut ids: std::collections::HashMap<Vec<u8>, usize> = Default::default();
        let (mut literals, mut owners, mut clauses) = (vec![], vec![], vec![]);
        for (k, src) in patterns.into_iter().enumerate() {
            let needs = needs_of(src);
            clauses.push(needs.len());
            for (c, set) in needs.into_iter().enumerate() {
                for literal in set {
                    let id = *ids.entry(literal).or_insert_with_key(|l| {
                        literals.push(l.clone());
                        owners.push(vec![]);
                        literals.len() - 1
                    });
                    owners[id].push((k, c));
                }
            }
        }
        // A contiguous automaton: cheaper to build than a DFA, and a rail searches a few
        // dozen lines. A failed build (it cannot fail for these sizes) would only make every
        // pattern a candidate.
        let finder = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .build(&literals)
            .ok();
        if finder.is_none() {
            clauses.iter_mut().for_each(|c| *c = 0);
        }
        Prefilter {
            finder,
            owners,
            clauses,
        }
    }

    /// For each pattern, whether it may match `line`: `false` only where it cannot.
    #[must_use]
    pub(super) fn candidates(&self, line: &str) -> Vec<bool> {
        let mut met: Vec<u64> = vec![0; self.clauses.len()];
        if let Some(finder) = &self.finder {
            let lower = line.to_ascii_lowercase();
            for m in finder.find_overlapping_iter(lower.as_bytes()) {
                for &(k, c) in &self.owners[m.pattern().as_usize()] {
                    met[k] |= 1 << c;
                }
            }
        }
        met.iter()
            .zip(&self.clauses)
            .map(|(m, &n)| m.count_ones() as usize == n)
            .collect()
    }
}

/// Whether `src` is a pattern of the embedded registry, every one of which compiles (a
/// registry test holds it).
pub(super) fn is_embedded(src: &str) -> bool {
    table::NEEDS
        .binary_search_by(|(p, _)| (*p).cmp(src))
        .is_ok()
}

/// What every match of `src` needs: from the build-time table when the pattern is there,
/// else parsed now. A pattern that does not parse needs nothing (a candidate everywhere).
fn needs_of(src: &str) -> Vec<Set> {
    match table::NEEDS.binary_search_by(|(p, _)| (*p).cmp(src)) {
        Ok(i) => table::NEEDS[i]
            .1
            .iter()
            .map(|set| set.iter().map(|s| s.to_vec()).collect())
            .collect(),
        Err(_) => regex_syntax::parse(src)
            .map(|h| needed(&h))
            .unwrap_or_default(),
    }
}

#[cfg(test)]
pub(super) mod tests;
