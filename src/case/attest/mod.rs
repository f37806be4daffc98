//! Attestation (R-GATE-1, R-GATE-2): whether the lines a claim cites state its value, and
//! whether any two frozen excerpts state different values, by the skill's attestation rules.
//!
//! Invariant: the engine never decides the truth here. Attestation is a necessary condition
//! for `auto`, computed as a pure function of the case (its contract's rules and the target's
//! name) and the frozen evidence; every verdict names the rule and the line that decided it,
//! or says that none did.

mod calls;
mod line_regex;
mod lines;
mod narrow;
mod prefilter;
mod spelling;
mod words;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use regex::Regex;
use regex_automata::Input;
use regex_automata::dfa::{Automaton, dense};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::claim::RawClaim;
use super::doc::CaseDoc;
use super::evidence::{EvidenceArtifact, EvidenceDoc};
use crate::memo::Memo;
use crate::skill::{Attestation, EvidenceKind, Verification};
use lines::{Line, MASK, Spelling};
use prefilter::Prefilter;

/// The rule id recorded for a description's content words.
pub const CONTENT_WORDS: &str = "content_words";

/// One line that states a value (or, for a description, carries some of its words).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AttestedLine {
    pub artifact_id: String,
    /// `repo:<path>#L<n>`, or the external uri and the line within the excerpt.
    pub at: String,
    pub line: u32,
    /// What the line counts as: the artifact's kind, or `comment` for a comment line that
    /// does not document code naming the target.
    pub kind: EvidenceKind,
    pub rule: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub words: Vec<String>,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttestStatus {
    Attested,
    Unattested,
}

/// Whether the cited lines state a value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaimAttestation {
    pub status: AttestStatus,
    /// Noisy-or over distinct sources of the strongest attesting line of each.
    pub strength: f64,
    /// The same over verified artifacts only.
    pub verified_strength: f64,
    pub lines: Vec<AttestedLine>,
    /// Which rule matched which line, or why none did.
    pub note: String,
}

impl ClaimAttestation {
    #[must_use]
    pub fn attested(&self) -> bool {
        self.status == AttestStatus::Attested
    }
}

/// Verified lines that state values no one value satisfies (R-GATE-2), recorded whether or
/// not the agent claimed them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AttestedConflict {
    pub predicate: String,
    /// The values the disagreeing lines state.
    pub values: Vec<Value>,
    /// Every verified line stating a value for the predicate.
    pub lines: Vec<AttestedLine>,
    /// Values accepted claims assert on the predicate.
    pub claimed: Vec<Value>,
    pub note: String,
}

struct CompiledRule {
    id: String,
    values: Vec<Value>,
    pattern: Pattern,
    unless: Option<Pattern>,
    context: Option<Pattern>,
    unless_context: Option<Pattern>,
}

/// A rule's pattern, compiled the first time a line needs it: a CLI rail reads a few dozen
/// lines, which most of a contract's patterns can never match (see [`prefilter`]). A line
/// in the [`narrow`] alphabet (most are) is matched, for a pattern of the embedded registry,
/// by the DFA the build script made of the pattern narrowed (see `dfa_build`), which builds
/// nothing at run time. Otherwise its first lines are matched by the Pike VM alone, which
/// builds in about half the time and runs slower, and a line in the alphabet by the Pike
/// VM of the pattern narrowed to it, which builds several times faster again; a pattern
/// that keeps being asked gets the full regex. All answer every line alike: they are
/// engines of one regular expression under the same syntax and limits, or of one exact on
/// the line's alphabet.
struct Pattern {
    src: String,
    /// The build script's DFA of the pattern narrowed (see `dfa_build`), for a pattern of
    /// the embedded registry whose DFA fits the size limit.
    embedded: OnceLock<Option<Box<dense::DFA<&'static [u32]>>>>,
    light: OnceLock<Option<regex_automata::meta::Regex>>,
    narrow: OnceLock<Option<regex_automata::meta::Regex>>,
    asked: AtomicUsize,
    regex: OnceLock<Arc<Regex>>,
}

/// How many lines a pattern, or a [`line_regex::LineRegex`], is matched on by the engines
/// that build fast before the full regex, lazy DFA included, is built.
const LIGHT_LINES: usize = 256;

impl Pattern {
    fn new(src: String) -> Pattern {
        Pattern {
            src,
            embedded: OnceLock::new(),
            light: OnceLock::new(),
            narrow: OnceLock::new(),
            asked: AtomicUsize::new(0),
            regex: OnceLock::new(),
        }
    }

    fn is_match(&self, text: &str) -> bool {
        // A DFA search fails only by quitting on a byte or by a limit, and neither is
        // configured; were one to, the engines below answer.
        if narrow::in_alphabet(text)
            && let Some(dfa) = self
                .embedded
                .get_or_init(|| crate::case::dfa_table::RULES.get(&self.src).map(Box::new))
            && let Ok(found) = dfa.try_search_fwd(&Input::new(text).earliest(true))
        {
            return found.is_some();
        }
        if self.regex.get().is_none() && self.asked.fetch_add(1, Ordering::Relaxed) < LIGHT_LINES {
            // The narrowed pattern only where it is exact, and only when the pattern as
            // written is known to compile: one that does not matches nothing, and one too
            // big for the size limits as written may fit them narrowed. Every pattern of
            // the embedded registry compiles; another one is compiled as written first.
            if narrow::in_alphabet(text)
                && let Some(narrowed) = self.narrow.get_or_init(|| {
                    let compiles = prefilter::is_embedded(&self.src)
                        || self.light.get_or_init(|| pike_vm(&self.src)).is_some();
                    compiles.then(|| narrowed_pike_vm(&self.src)).flatten()
                })
            {
                return narrowed.is_match(text);
            }
            if let Some(light) = self.light.get_or_init(|| pike_vm(&self.src)) {
                return light.is_match(text);
            }
        }
        self.regex
            .get_or_init(|| compiled(&self.src))
            .is_match(text)
    }
}

/// `src` as the Pike VM alone (no captures, no DFA), `None` when it does not compile (then
/// the full regex's own failure decides: it matches nothing).
fn pike_vm(src: &str) -> Option<regex_automata::meta::Regex> {
    regex_automata::meta::Builder::new()
        .configure(pike_vm_config())
        .build(src)
        .ok()
}

/// `src` narrowed to the [`narrow`] alphabet and compiled as a Pike VM that answers
/// whether a line matches; `None` when `src` does not parse or cannot be narrowed.
fn narrowed_pike_vm(src: &str) -> Option<regex_automata::meta::Regex> {
    build_narrowed(src, pike_vm_config())
}

/// `src` narrowed to the [`narrow`] alphabet and compiled with `config`; `None` when `src`
/// does not parse or cannot be narrowed.
fn build_narrowed(
    src: &str,
    config: regex_automata::meta::Config,
) -> Option<regex_automata::meta::Regex> {
    regex_automata::meta::Builder::new()
        .configure(config)
        .build_from_hir(&narrow::narrowed(src)?)
        .ok()
}

/// The Pike VM alone, without the literal prefilter a meta regex extracts and builds for
/// long haystacks: a rail matches each pattern on a few lines the [`prefilter`] has
/// already let through, and under `(?i)` the extraction cost more than the VM.
fn pike_vm_config() -> regex_automata::meta::Config {
    regex_automata::meta::Config::new()
        .which_captures(regex_automata::nfa::thompson::WhichCaptures::None)
        .onepass(false)
        .backtrack(false)
        .hybrid(false)
        .dfa(false)
        .auto_prefilter(false)
}

/// A predicate's pattern rules, with the sha256 of the rules as data. Which rules fire on a
/// line is a pure function of the rules, the masked line and its masked context lines, so it
/// is remembered per process under exactly those: re-derivation attests the same lines at
/// every rail, and `attest` and `conflicts` read the same excerpts.
struct Rules {
    digest: [u8; 32],
    list: Vec<CompiledRule>,
    /// Which rules' patterns a line could match at all.
    filter: Prefilter,
}

/// What decides which rules fire on a line: the rules by their sha256, the line and its
/// context lines compared whole.
#[derive(PartialEq, Eq, Hash)]
struct LineKey {
    rules: [u8; 32],
    masked: String,
    context: Vec<String>,
}

impl Rules {
    /// `rules` read, once per process for each list of rules; each pattern is compiled when
    /// a line first needs it.
    fn compile(rules: &[crate::skill::AttestRule]) -> Arc<Rules> {
        use sha2::{Digest, Sha256};
        static COMPILED: Memo<[u8; 32], Arc<Rules>> = Memo::new(4096);
        // The rules as data, with the placeholder they are compiled with: equal digests,
        // equal rules.
        let data = serde_json::to_vec(&(MASK, rules)).expect("rules are plain data");
        let digest: [u8; 32] = Sha256::digest(&data).into();
        COMPILED.get_or(digest, || {
            let list = rules
                .iter()
                .map(|r| {
                    let [p, u, c, uc] = r.sources(MASK);
                    CompiledRule {
                        id: r.id.clone(),
                        values: r.values.clone(),
                        pattern: Pattern::new(p.expect("a rule has a pattern")),
                        unless: u.map(Pattern::new),
                        context: c.map(Pattern::new),
                        unless_context: uc.map(Pattern::new),
                    }
                })
                .collect::<Vec<_>>();
            let filter = Prefilter::new(list.iter().map(|r| r.pattern.src.as_str()));
            Arc::new(Rules {
                digest,
                list,
                filter,
            })
        })
    }

    /// The rules that fire on line `i` of `read`.
    fn firing<'r>(&'r self, read: &[Line], i: usize) -> Vec<&'r CompiledRule> {
        static FIRING: Memo<LineKey, Vec<usize>> = Memo::new(1 << 16);
        let key = LineKey {
            rules: self.digest,
            masked: read[i].masked.clone(),
            context: read[i]
                .context
                .iter()
                .map(|&j| read[j].masked.clone())
                .collect(),
        };
        let indices = FIRING.get_or(key, || {
            let may = self.filter.candidates(&read[i].masked);
            (0..self.list.len())
                .filter(|&k| may[k] && fires(&self.list[k], read, i))
                .collect()
        });
        indices.iter().map(|&k| &self.list[k]).collect()
    }
}

enum Compiled {
    Patterns(Arc<Rules>),
    Words { share: f64, ignore: Vec<String> },
}

/// The skill's attestation rules compiled for one case's target.
pub struct Attester {
    spelling: Spelling,
    name: String,
    /// Words a description must go beyond: the target's name and type (or route).
    known: Vec<String>,
    rules: BTreeMap<String, Compiled>,
    verification: BTreeMap<String, Verification>,
}

/// `src` compiled, or a pattern that matches nothing when it does not compile (the registry
/// checks every pattern parses).
fn compiled(src: &str) -> Arc<Regex> {
    cached(src).unwrap_or_else(|| Arc::new(Regex::new("$^").expect("empty regex")))
}

/// `src` compiled once per process and shared, `None` when it does not compile:
/// re-derivation builds an attester several times per rail, and a battery builds one per
/// trial. Shared, not cloned: a cloned `Regex` starts with an empty match cache and
/// rebuilds its lazy DFA on every search, which was most of a case's attestation time.
pub(super) fn cached(src: &str) -> Option<Arc<Regex>> {
    static REGEXES: Memo<String, Option<Arc<Regex>>> = Memo::new(100_000);
    REGEXES.get_or(src.to_string(), || Regex::new(src).ok().map(Arc::new))
}

/// `src` compiled for line searches once per process and shared, `None` when it does not
/// compile. `compiles` says the caller knows it does: then it is built narrowed, and as
/// written only when a line outside the narrowed alphabet needs it.
fn cached_line(src: &str, compiles: bool) -> Option<Arc<line_regex::LineRegex>> {
    static REGEXES: Memo<(String, bool), Option<Arc<line_regex::LineRegex>>> = Memo::new(100_000);
    REGEXES.get_or((src.to_string(), compiles), || {
        if compiles {
            Some(Arc::new(line_regex::LineRegex::fixed(src)))
        } else {
            line_regex::LineRegex::new(src).ok().map(Arc::new)
        }
    })
}

impl Attester {
    #[must_use]
    pub fn new(case: &CaseDoc) -> Attester {
        let t = &case.target;
        let route = t
            .operation
            .as_ref()
            .filter(|_| t.field.is_none() && t.error.is_none())
            .map(|op| op.path.as_str());
        let mut known = crate::air::name_words(t.name());
        match (&t.field, &t.operation) {
            (Some(f), _) => known.extend(crate::air::name_words(&f.ty)),
            (None, Some(op)) if t.error.is_none() => known.extend(crate::air::name_words(
                &format!("{} {}", op.method, op.path),
            )),
            _ => {}
        }
        Attester::with(t.name(), route, known, &case.policy.contract)
    }

    /// The rules of `contract` for a target called `name` (with `route` for an operation);
    /// `known` are the words a description must go beyond.
    fn with(
        name: &str,
        route: Option<&str>,
        known: Vec<String>,
        contract: &crate::skill::SkillPolicy,
    ) -> Attester {
        let rules = contract
            .attestation
            .iter()
            .map(|(predicate, att)| {
                let compiled = match att {
                    Attestation::Patterns { rules } => Compiled::Patterns(Rules::compile(rules)),
                    Attestation::ContentWords { share, ignore } => Compiled::Words {
                        share: *share,
                        ignore: ignore.clone(),
                    },
                };
                (predicate.clone(), compiled)
            })
            .collect();
        let verification = contract
            .outputs
            .iter()
            .map(|o| (o.predicate.clone(), contract.verification_for(&o.field)))
            .collect();
        Attester {
            spelling: Spelling::new(name, route),
            name: name.to_string(),
            known,
            rules,
            verification,
        }
    }

    /// The strength a predicate's gate compares: verified-only when its field needs it.
    #[must_use]
    pub fn gate_strength(&self, predicate: &str, a: &ClaimAttestation) -> f64 {
        match self.verification.get(predicate) {
            Some(Verification::Verified) => a.verified_strength,
            _ => a.strength,
        }
    }

    /// Whether the artifacts the `claims` cite state `value` for `predicate`. `None` when the
    /// predicate has no rules (a supporting predicate).
    #[must_use]
    pub fn attest(
        &self,
        predicate: &str,
        value: &Value,
        claims: &[&RawClaim],
        evidence: &EvidenceDoc,
    ) -> Option<ClaimAttestation> {
        let ids: BTreeSet<&String> = claims.iter().flat_map(|c| c.artifact_ids.iter()).collect();
        let cited: Vec<&EvidenceArtifact> =
            ids.into_iter().filter_map(|i| evidence.get(i)).collect();
        match self.rules.get(predicate)? {
            Compiled::Patterns(rules) => Some(self.patterns(rules, value, &cited)),
            Compiled::Words { share, ignore } => Some(self.words(*share, ignore, value, &cited)),
        }
    }

    fn patterns(
        &self,
        rules: &Rules,
        value: &Value,
        cited: &[&EvidenceArtifact],
    ) -> ClaimAttestation {
        let mut lines = Vec::new();
        let mut others: BTreeSet<String> = BTreeSet::new();
        let mut concerning = 0usize;
        let mut seen = BTreeSet::new();
        for a in cited {
            for (line, matched) in scan(a, &self.spelling, rules) {
                if !seen.insert((place(a), line.number)) {
                    continue;
                }
                concerning += 1;
                for rule in matched {
                    if rule.values.contains(value) {
                        lines.push(attested_line(a, &line, Some(rule)));
                    } else {
                        others.extend(rule.values.iter().map(std::string::ToString::to_string));
                    }
                }
            }
        }
        let (strength, verified_strength) = strengths(&lines, cited, 1.0);
        let note = if !lines.is_empty() {
            let distinct: BTreeSet<&str> = lines.iter().map(|l| l.at.as_str()).collect();
            let first: Vec<String> = lines.iter().take(3).map(describe).collect();
            format!(
                "{} cited line(s) state {value} ({} rule match(es)): {}{}",
                distinct.len(),
                lines.len(),
                first.join("; "),
                if lines.len() > 3 { "; …" } else { "" }
            )
        } else if concerning == 0 {
            format!(
                "no cited line concerns `{}` (names it, or a name or literal it flows into)",
                self.name
            )
        } else if others.is_empty() {
            format!(
                "no attestation rule matched any of the {concerning} cited line(s) concerning `{}`",
                self.name
            )
        } else {
            format!(
                "no rule for {value} matched the {concerning} cited line(s) concerning `{}`; they state {}",
                self.name,
                others.into_iter().collect::<Vec<_>>().join(", ")
            )
        };
        ClaimAttestation {
            status: if lines.is_empty() {
                AttestStatus::Unattested
            } else {
                AttestStatus::Attested
            },
            strength,
            verified_strength,
            lines,
            note,
        }
    }

    /// Every cited line that carries one of the `content` words, with the words it carries,
    /// in the order of `cited` and then of the lines.
    fn lines_carrying<'e>(
        &self,
        cited: &[&'e EvidenceArtifact],
        content: &[String],
    ) -> Vec<(&'e EvidenceArtifact, AttestedLine)> {
        let mut carrying: Vec<(&EvidenceArtifact, AttestedLine)> = Vec::new();
        for a in cited {
            for line in lines::read(a, &self.spelling) {
                let here = words::line_words(line.text);
                let found: Vec<String> = content
                    .iter()
                    .filter(|w| here.iter().any(|h| words::same(w, h)))
                    .cloned()
                    .collect();
                if !found.is_empty() {
                    let mut l = attested_line(a, &line, None);
                    l.words = found;
                    carrying.push((a, l));
                }
            }
        }
        carrying
    }

    fn words(
        &self,
        share: f64,
        ignore: &[String],
        value: &Value,
        cited: &[&EvidenceArtifact],
    ) -> ClaimAttestation {
        let text = value.as_str().unwrap_or_default();
        let content = words::content_words(text, ignore, &self.known);
        let carrying = self.lines_carrying(cited, &content);
        let needed = (share * content.len() as f64).ceil().max(1.0) as usize;
        // The strongest tier of lines that alone carries the share: words found only in
        // comments count at comment strength.
        let mut tiers: Vec<f64> = carrying.iter().map(|(_, l)| l.kind.strength()).collect();
        tiers.sort_by(|a, b| b.total_cmp(a));
        tiers.dedup();
        let found_at = |t: f64| -> BTreeSet<&String> {
            carrying
                .iter()
                .filter(|(_, l)| l.kind.strength() >= t)
                .flat_map(|(_, l)| l.words.iter())
                .collect()
        };
        let tier = tiers
            .iter()
            .copied()
            .find(|t| !content.is_empty() && found_at(*t).len() >= needed);
        let all_found: BTreeSet<String> = found_at(0.0).into_iter().cloned().collect();
        let missing: Vec<&String> = content.iter().filter(|w| !all_found.contains(*w)).collect();
        let Some(t) = tier else {
            let note = if content.is_empty() {
                "the description has no content words beyond the target's name and type".into()
            } else {
                format!(
                    "{} of {} content words appear in the cited lines; {needed} needed (share {share}); missing: {}",
                    all_found.len(),
                    content.len(),
                    join(&missing)
                )
            };
            return ClaimAttestation {
                status: AttestStatus::Unattested,
                strength: 0.0,
                verified_strength: 0.0,
                lines: carrying.into_iter().map(|(_, l)| l).collect(),
                note,
            };
        };
        let lines: Vec<AttestedLine> = carrying
            .into_iter()
            .filter(|(_, l)| l.kind.strength() >= t)
            .map(|(_, l)| l)
            .collect();
        // The share is met only once lines of strength `t` count: no line counts above it.
        let (strength, verified_strength) = strengths(&lines, cited, t);
        let found = all_found.len();
        ClaimAttestation {
            status: AttestStatus::Attested,
            strength,
            verified_strength,
            note: format!(
                "{found} of {} content words appear in the cited lines (share {share} needs {needed}); strongest lines carrying them count as {}{}",
                content.len(),
                lines
                    .iter()
                    .map(|l| l.kind)
                    .max_by(|a, b| a.strength().total_cmp(&b.strength()))
                    .map_or("none", crate::skill::EvidenceKind::as_str),
                if missing.is_empty() {
                    String::new()
                } else {
                    format!("; missing: {}", join(&missing))
                }
            ),
            lines,
        }
    }

    /// R-GATE-2: every line of every verified artifact that states a value, per output
    /// predicate with pattern rules; a predicate whose lines include two that share no
    /// value is a conflict. `claimed` gives the accepted claims' values per predicate.
    #[must_use]
    pub fn conflicts(
        &self,
        evidence: &EvidenceDoc,
        claimed: &BTreeMap<String, Vec<Value>>,
    ) -> Vec<AttestedConflict> {
        let mut out = Vec::new();
        for (predicate, compiled) in &self.rules {
            let Compiled::Patterns(rules) = compiled else {
                continue;
            };
            // Each stating line, and (in `ids`) its set of values as an index into `sets`, the
            // distinct sets in the order first stated: a repository scan can hold a million
            // stating lines but few distinct sets, and the pair search runs over the sets.
            let mut stated: Vec<(&EvidenceArtifact, Line<'_>, Vec<&CompiledRule>)> = Vec::new();
            let mut ids: Vec<usize> = Vec::new();
            let mut sets: Vec<(BTreeSet<String>, usize)> = Vec::new();
            let mut set_ids: BTreeMap<BTreeSet<String>, usize> = BTreeMap::new();
            let mut seen = BTreeSet::new();
            for a in evidence.artifacts.iter().filter(|a| a.is_verified()) {
                for (line, matched) in scan(a, &self.spelling, rules) {
                    if matched.is_empty() || !seen.insert((place(a), line.number)) {
                        continue;
                    }
                    let set: BTreeSet<String> = matched
                        .iter()
                        .flat_map(|r| r.values.iter().map(std::string::ToString::to_string))
                        .collect();
                    let id = *set_ids.entry(set).or_insert_with_key(|set| {
                        sets.push((set.clone(), stated.len()));
                        sets.len() - 1
                    });
                    ids.push(id);
                    stated.push((a, line, matched));
                }
            }
            let Some((i, j)) = first_disjoint_pair(&ids, &sets) else {
                continue;
            };
            let stated: Vec<Vec<AttestedLine>> = stated
                .iter()
                .map(|(a, line, matched)| {
                    matched
                        .iter()
                        .map(|r| attested_line(a, line, Some(r)))
                        .collect()
                })
                .collect();
            let (la, lb) = (&stated[i], &stated[j]);
            let mut values: Vec<Value> = Vec::new();
            for l in stated.iter().flatten() {
                for v in &l.values {
                    if !values.contains(v) {
                        values.push(v.clone());
                    }
                }
            }
            let note = format!(
                "{} states {}, but {} states {}",
                describe(&la[0]),
                list(la.iter().flat_map(|l| l.values.iter())),
                describe(&lb[0]),
                list(lb.iter().flat_map(|l| l.values.iter()))
            );
            out.push(AttestedConflict {
                predicate: predicate.clone(),
                values,
                lines: stated.into_iter().flatten().collect(),
                claimed: claimed.get(predicate).cloned().unwrap_or_default(),
                note,
            });
        }
        out
    }
}

/// The first line with a later line that shares no value with it, and the first such later
/// line: lines given as indices into `sets`, the distinct sets of values each with the
/// first line stating it, in that order. A disjoint pair of sets, the earlier first stated
/// at line `f`, makes line `f` such a line; so the first is where the earliest set with a
/// disjoint partner was first stated, and the search runs over the distinct sets (few,
/// from the skill's rules) rather than over every pair of lines (a million, in a
/// repository scan).
fn first_disjoint_pair(
    lines: &[usize],
    sets: &[(BTreeSet<String>, usize)],
) -> Option<(usize, usize)> {
    // A set is checked against itself too: the empty set shares no value even with itself
    // (and when it is stated only once, no later line is found for it, so none is for any).
    let i = (0..sets.len()).find_map(|x| {
        sets[x..]
            .iter()
            .any(|(other, _)| sets[x].0.is_disjoint(other))
            .then_some(sets[x].1)
    })?;
    let before = &sets[lines[i]].0;
    let j = (i + 1..lines.len()).find(|&j| sets[lines[j]].0.is_disjoint(before))?;
    Some((i, j))
}

/// The lines of `a` that concern the target, each with the rules that match it.
fn scan<'a, 'r>(
    a: &'a EvidenceArtifact,
    spelling: &Spelling,
    rules: &'r Rules,
) -> Vec<(Line<'a>, Vec<&'r CompiledRule>)> {
    let read = lines::read(a, spelling);
    let matched: Vec<Vec<&CompiledRule>> = (0..read.len())
        .map(|i| {
            if read[i].in_scope {
                rules.firing(&read, i)
            } else {
                vec![]
            }
        })
        .collect();
    read.into_iter()
        .zip(matched)
        .filter(|(l, _)| l.in_scope)
        .collect()
}

fn fires(rule: &CompiledRule, read: &[Line], i: usize) -> bool {
    let text = &read[i].masked;
    if !rule.pattern.is_match(text) || rule.unless.as_ref().is_some_and(|u| u.is_match(text)) {
        return false;
    }
    let ctx = || read[i].context.iter().map(|&j| read[j].masked.as_str());
    if let Some(c) = &rule.context
        && !ctx().any(|t| c.is_match(t))
    {
        return false;
    }
    !rule
        .unless_context
        .as_ref()
        .is_some_and(|u| ctx().any(|t| u.is_match(t)))
}

/// Where an artifact's lines live: its file, or its uri.
fn place(a: &EvidenceArtifact) -> String {
    a.path.clone().unwrap_or_else(|| a.uri.clone())
}

fn attested_line(a: &EvidenceArtifact, line: &Line, rule: Option<&CompiledRule>) -> AttestedLine {
    let mut text: String = line.text.trim().chars().take(200).collect();
    if line.text.trim().chars().count() > 200 {
        text.push('…');
    }
    AttestedLine {
        artifact_id: a.id.clone(),
        at: match &a.path {
            Some(p) => format!("repo:{p}#L{}", line.number),
            None => format!("{}#L{}", a.uri, line.number),
        },
        line: line.number,
        kind: line.kind,
        rule: rule.map_or(CONTENT_WORDS.into(), |r| r.id.clone()),
        values: rule.map(|r| r.values.clone()).unwrap_or_default(),
        words: vec![],
        text,
    }
}

/// Noisy-or over distinct sources (files, or external uris) of the strongest line of each,
/// no line counting above `cap`; all lines, then verified artifacts' lines only.
fn strengths(lines: &[AttestedLine], cited: &[&EvidenceArtifact], cap: f64) -> (f64, f64) {
    let noisy_or = |verified_only: bool| {
        let mut per: BTreeMap<String, f64> = BTreeMap::new();
        for l in lines {
            let Some(a) = cited.iter().find(|a| a.id == l.artifact_id) else {
                continue;
            };
            if verified_only && !a.is_verified() {
                continue;
            }
            let e = per.entry(place(a)).or_insert(0.0);
            *e = e.max(l.kind.strength().min(cap));
        }
        let miss: f64 = per.values().map(|s| 1.0 - s).product();
        ((1.0 - miss) * 1e9).round() / 1e9
    };
    (noisy_or(false), noisy_or(true))
}

fn describe(l: &AttestedLine) -> String {
    format!("{} ({}, {})", l.at, l.rule, l.kind)
}

fn list<'a>(values: impl Iterator<Item = &'a Value>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for v in values {
        let s = v.to_string();
        if !seen.contains(&s) {
            seen.push(s);
        }
    }
    seen.join(" or ")
}

fn join(words: &[&String]) -> String {
    words
        .iter()
        .map(|w| w.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
