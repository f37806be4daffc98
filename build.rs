//! Computes, once at build time, what the attestation prefilter would otherwise work out in
//! every process: the literal sets of each pattern of the embedded skill registry
//! (`src/case/attest/prefilter/needs.rs`, the same code the engine runs). The table is keyed
//! by the exact pattern text, so a pattern this script reads differently from the engine is
//! simply not found there and is parsed at run time; a test holds the table to the engine's
//! own patterns.

use std::fmt::Write as _;
use std::path::PathBuf;

#[allow(dead_code)]
#[path = "src/case/attest/prefilter/needs.rs"]
mod needs;

/// The placeholder the registry writes for a quantity, and what the engine compiles it as
/// (`skill::attestation::QUANTITY`, `case::attest::spelling::MASK`).
const QUANTITY: &str = "{q}";
const MASK: &str = "qqq";

const REGISTRY: &str = "src/skill/builtin.json";

fn main() {
    println!("cargo::rerun-if-changed={REGISTRY}");
    println!("cargo::rerun-if-changed=src/case/attest/prefilter/needs.rs");
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
}

/// `skills[].policy.attestation.<predicate>.rules[].pattern`, wherever all of that is there.
fn rule_patterns(registry: &serde_json::Value) -> impl Iterator<Item = &str> {
    array(registry.get("skills"))
        .filter_map(|skill| skill.pointer("/policy/attestation")?.as_object())
        .flat_map(|by_predicate| by_predicate.values())
        .flat_map(|attestation| array(attestation.get("rules")))
        .filter_map(|rule| rule.get("pattern")?.as_str())
}

fn array(v: Option<&serde_json::Value>) -> impl Iterator<Item = &serde_json::Value> {
    v.and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
}
