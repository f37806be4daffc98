//! Computes, once at build time, what the engine would otherwise work out in every process
//! from the embedded skill registry:
//!
//! * the attestation prefilter's literal sets of each rule pattern
//!   (`src/case/attest/prefilter/needs.rs`, the same code the engine runs);
//! * a dense DFA for each default scope's glob (`src/case/evidence/glob.rs`), built from
//!   the regex `globset` translates the glob to, with the syntax `globset` compiles it with;
//! * a dense DFA for each rule pattern narrowed to the attestation alphabet
//!   (`src/case/attest/narrow.rs`).
//!
//! Both DFAs are built by `src/case/dfa_build.rs`, which tests use too.
//!
//! The tables are keyed by the exact pattern or glob text, so one this script reads
//! differently from the engine is simply not found there and is compiled at run time; tests
//! hold both tables to the engine's own answers.

use std::fmt::Write as _;
use std::path::PathBuf;

#[allow(dead_code)]
#[path = "src/case/attest/prefilter/needs.rs"]
mod needs;

#[allow(dead_code)]
#[path = "src/case/attest/narrow.rs"]
mod narrow;

#[path = "src/case/dfa_build.rs"]
mod dfa_build;

/// The placeholder the registry writes for a quantity, and what the engine compiles it as
/// (`skill::attestation::QUANTITY`, `case::attest::spelling::MASK`).
const QUANTITY: &str = "{q}";
const MASK: &str = "qqq";

const REGISTRY: &str = "src/skill/builtin.json";

fn main() {
    println!("cargo::rerun-if-changed={REGISTRY}");
    for shared in [
        "src/case/attest/prefilter/needs.rs",
        "src/case/attest/narrow.rs",
        "src/case/dfa_build.rs",
    ] {
        println!("cargo::rerun-if-changed={shared}");
    }
    let text = std::fs::read_to_string(REGISTRY)
        .unwrap_or_else(|e| panic!("{REGISTRY}: cannot be read: {e}"));
    // An unreadable registry is the engine's to report (it refuses to start); here it only
    // leaves the table empty.
    let registry: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let mut patterns: Vec<String> = rule_patterns(&registry)
        .map(|p| p.replace(QUANTITY, MASK))
        .collect();
    patterns.sort();
    patterns.dedup();

    let mut out = String::from("pub(super) static NEEDS: &[(&str, &[&[&[u8]]])] = &[\n");
    for pattern in &patterns {
        // A pattern that does not parse stays out: the engine parses it, fails, and treats
        // it as a candidate everywhere, as it would have anyway.
        let Ok(hir) = regex_syntax::parse(pattern) else {
            continue;
        };
        let sets: Vec<String> = needs::needed(&hir)
            .iter()
            .map(|set| {
                let strings: Vec<String> = set.iter().map(|s| format!("&{s:?}")).collect();
                format!("&[{}]", strings.join(", "))
            })
            .collect();
        writeln!(out, "    ({pattern:?}, &[{}]),", sets.join(", ")).expect("a String");
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("prefilter_needs.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
    dfa_tables(&registry);
}

/// The bytes of one serialised DFA start at a multiple of this in its table's blob (the
/// engine reads them in place, as `u32`s): `src/case/dfa_table.rs`.
const DFA_ALIGN: usize = 8;

/// The DFA tables of `src/case/dfa_table.rs`: `glob_dfas.bin` (each default scope glob's
/// DFA), `rule_dfas.bin` (each rule pattern's, narrowed) and `dfa_index.rs`, naming each
/// expression's bytes in its blob.
fn dfa_tables(registry: &serde_json::Value) {
    use regex_automata::dfa::dense;
    let globs = array(registry.get("defaultScopes"))
        .filter_map(|scope| scope.get("glob")?.as_str())
        .map(str::to_string)
        .collect();
    let rules = all_rule_sources(registry)
        .map(|p| p.replace(QUANTITY, MASK))
        .collect();
    let mut index = String::new();
    type Build<'a> = &'a dyn Fn(&str) -> Option<dense::DFA<Vec<u32>>>;
    let tables: [(&str, &str, Vec<String>, Build); 2] = [
        ("GLOBS", "glob_dfas.bin", globs, &dfa_build::glob),
        ("RULES", "rule_dfas.bin", rules, &|p| {
            dfa_build::unanchored(&narrow::narrowed(p)?)
        }),
    ];
    for (name, file, expressions, build) in tables {
        let mut expressions: Vec<String> = expressions;
        expressions.sort();
        expressions.dedup();
        let mut blob: Vec<u8> = Vec::new();
        writeln!(
            index,
            "pub(super) static {name}: &[(&str, usize, usize)] = &["
        )
        .expect("a String");
        for expression in &expressions {
            let Some(dfa) = build(expression) else {
                continue;
            };
            let (bytes, pad) = dfa.to_bytes_little_endian();
            blob.resize(blob.len().next_multiple_of(DFA_ALIGN), 0);
            writeln!(
                index,
                "    ({expression:?}, {}, {}),",
                blob.len(),
                bytes.len() - pad
            )
            .expect("a String");
            blob.extend_from_slice(&bytes[pad..]);
        }
        index.push_str("];\n");
        write_out(file, &blob);
    }
    write_out("dfa_index.rs", index.as_bytes());
}

fn write_out(name: &str, bytes: &[u8]) {
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join(name);
    std::fs::write(&dest, bytes).unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
}

/// Every expression of every rule: its pattern, `unless`, `context` and `unlessContext`.
fn all_rule_sources(registry: &serde_json::Value) -> impl Iterator<Item = &str> {
    rules(registry).flat_map(|rule| {
        ["pattern", "unless", "context", "unlessContext"]
            .into_iter()
            .filter_map(|field| rule.get(field)?.as_str())
    })
}

fn rules(registry: &serde_json::Value) -> impl Iterator<Item = &serde_json::Value> {
    array(registry.get("skills"))
        .filter_map(|skill| skill.pointer("/policy/attestation")?.as_object())
        .flat_map(|by_predicate| by_predicate.values())
        .flat_map(|attestation| array(attestation.get("rules")))
}

/// `skills[].policy.attestation.<predicate>.rules[].pattern`, wherever all of that is there.
fn rule_patterns(registry: &serde_json::Value) -> impl Iterator<Item = &str> {
    rules(registry).filter_map(|rule| rule.get("pattern")?.as_str())
}

fn array(v: Option<&serde_json::Value>) -> impl Iterator<Item = &serde_json::Value> {
    v.and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
}
