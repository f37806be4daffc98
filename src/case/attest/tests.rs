//! Unit tests of attestation over the built-in rules, one idiom at a time (the conformance
//! suite drives whole cases).

use serde_json::{Value, json};

use super::lines::Spelling;
use super::*;
use crate::case::evidence::Verification as EvVerification;
use crate::skill::registry;

pub(super) fn artifact(path: &str, start: u32, excerpt: &str) -> EvidenceArtifact {
    let kind = crate::case::evidence::classify(&registry().default_scopes, path)
        .unwrap_or(EvidenceKind::Implementation);
    let kind = if kind == EvidenceKind::Implementation
        && crate::case::evidence::is_comment_only(excerpt)
    {
        EvidenceKind::Comment
    } else {
        kind
    };
    let end = start + u32::try_from(excerpt.lines().count()).expect("a test excerpt is short") - 1;
    EvidenceArtifact {
        id: format!("ev-{path}-{start}"),
        uri: format!("repo:{path}#L{start}-L{end}"),
        kind,
        revision: Some("none".into()),
        path: Some(path.into()),
        start_line: Some(start),
        end_line: Some(end),
        source: None,
        content_hash: String::new(),
        excerpt: excerpt.into(),
        acquired_at: String::new(),
        verification: EvVerification::Verified {
            verifier: "test".into(),
        },
    }
}

fn compiled(skill: &str) -> Arc<Rules> {
    let policy = &registry().get(skill).expect("skill").policy;
    let Some(Attestation::Patterns { rules }) = policy.attestation.values().next() else {
        panic!("{skill} has no pattern rules");
    };
    Rules::compile(rules)
}

/// The values each in-scope line of the excerpt states, as `(line, [values])`.
fn stated(skill: &str, name: &str, path: &str, excerpt: &str) -> Vec<(u32, Vec<Value>)> {
    let rules = compiled(skill);
    let a = artifact(path, 1, excerpt);
    scan(&a, &Spelling::new(name, None), &rules)
        .into_iter()
        .filter(|(_, m)| !m.is_empty())
        .map(|(l, m)| {
            let mut vs: Vec<Value> = Vec::new();
            for r in m {
                for v in &r.values {
                    if !vs.contains(v) {
                        vs.push(v.clone());
                    }
                }
            }
            (l.number, vs)
        })
        .collect()
}

fn states(skill: &str, name: &str, path: &str, excerpt: &str, value: &Value) -> bool {
    stated(skill, name, path, excerpt)
        .iter()
        .any(|(_, vs)| vs.contains(value))
}

fn unit(name: &str, path: &str, ex: &str) -> Vec<Value> {
    let mut all: Vec<Value> = Vec::new();
    for (_, vs) in stated("annotate-unit", name, path, ex) {
        for v in vs {
            if !all.contains(&v) {
                all.push(v);
            }
        }
    }
    all
}

#[test]
fn python_idioms() {
    let ex = "    def window(self, idle_timeout):\n        return timedelta(milliseconds=idle_timeout)\n";
    assert_eq!(unit("idle_timeout", "a/s.py", ex), [json!("ms")]);
    // A suffix on the quantity that flows into the field.
    let ex = "        if idle_timeout is None:\n            idle_timeout = self._settings.default_idle_timeout_ms\n";
    assert_eq!(unit("idle_timeout", "a/s.py", ex), [json!("ms")]);
    // Flow through a name: `ttl` carries the field into `timedelta(seconds=…)`.
    let ex = "    ttl = clamp_ttl(token_ttl)\n    expires_at = now + dt.timedelta(seconds=ttl)\n";
    assert_eq!(unit("token_ttl", "a/t.py", ex), [json!("s")]);
}

#[test]
fn typescript_and_javascript_idioms() {
    let ex = "  const wait = body.retryDelay;\n  setTimeout(fire, wait);\n";
    assert_eq!(unit("retry_delay", "src/a.ts", ex), [json!("ms")]);
    let ex = "  const expiresAt = Date.now() + body.ttl * 1000;\n";
    assert!(unit("ttl", "src/a.ts", ex).contains(&json!("s")));
    assert!(!unit("ttl", "src/a.ts", ex).contains(&json!("ms")));
}

#[test]
fn go_idioms() {
    let ex = "\tif p.RetryDelay > 0 {\n\t\ts.RetryDelay = time.Duration(p.RetryDelay) * time.Millisecond\n\t}\n";
    assert_eq!(unit("retry_delay", "a/b.go", ex), [json!("ms")]);
    let ex = "\treturn time.Duration(req.Timeout)\n";
    assert_eq!(unit("timeout", "a/b.go", ex), [json!("ns")]);
}

#[test]
fn java_and_kotlin_idioms() {
    let ex = "        Duration ttl = Duration.ofSeconds(req.leaseDuration());\n";
    assert_eq!(unit("lease_duration", "src/L.java", ex), [json!("s")]);
    let ex = "    val wait = req.pollInterval.milliseconds\n";
    assert_eq!(unit("poll_interval", "src/P.kt", ex), [json!("ms")]);
}

#[test]
fn rust_idioms_and_sizes() {
    let ex = "        u64::from(self.attachment_size_limit) * 1024\n";
    assert_eq!(
        unit("attachment_size_limit", "src/l.rs", ex),
        [json!("KiB")]
    );
    let ex = "        u64::from(self.attachment_size_limit) * 1024 * 1024\n";
    assert_eq!(
        unit("attachment_size_limit", "src/l.rs", ex),
        [json!("MiB")]
    );
    // Assigning N × 1024 says bytes or KiB, not which.
    let ex = "            attachment_size_limit: 10 * 1024,\n";
    assert_eq!(
        unit("attachment_size_limit", "src/l.rs", ex),
        [json!("B"), json!("KiB")]
    );
}

#[test]
fn money_and_counts() {
    let ex = "export function formatMinor(amount: number, currency: string): string {\n";
    assert_eq!(unit("amount", "src/m.ts", ex), [json!("minor_unit")]);
    // A negated unit is not stated.
    let ex = "- `page_size` — number of events per page. It counts events,\n  not bytes.\n";
    assert_eq!(unit("page_size", "docs/api.md", ex), [json!("count")]);
}

#[test]
fn lines_about_other_names_state_nothing() {
    let ex = "    # How long a refresh cookie stays valid, in seconds.\n    refresh_timeout_seconds: int\n    idle_timeout_ms: int\n";
    assert_eq!(unit("idle_timeout", "a/s.py", ex), [json!("ms")]);
    // A one-word name is matched as a whole word, never inside another identifier.
    let ex = "/** Flags are kept for 30 days. */\npublic enum ReportFlag {\n";
    assert!(unit("flag", "src/R.java", ex).is_empty());
}

#[test]
fn a_markdown_table_is_read_by_column_and_row() {
    let ex = "| code | status | retry |\n|---|---|---|\n| `NOT_FOUND` | 404 | no |\n| `ALREADY_PAID` | 409 | **no, never** |\n| `VERSION_CONFLICT` | 409 | yes |\n";
    let on = |code: &str| -> Vec<Value> {
        stated("enrich-error", code, "docs/errors.md", ex)
            .into_iter()
            .flat_map(|(_, v)| v)
            .collect()
    };
    assert_eq!(on("ALREADY_PAID"), [json!(false)]);
    assert_eq!(on("VERSION_CONFLICT"), [json!(true)]);
}

#[test]
fn retry_idioms() {
    let states_retry =
        |code: &str, ex: &str, v: bool| states("enrich-error", code, "src/a.go", ex, &json!(v));
    let ex = "\t// GATEWAY_ERROR can be retried by clients.\n\treturn ErrGatewayError\n";
    assert!(states_retry("GATEWAY_ERROR", ex, true));
    assert!(!states_retry("GATEWAY_ERROR", ex, false));
    let ex = "        # A decline is final: retrying the same request is declined again.\n        raise CardDeclined(str(exc))\n";
    assert!(states(
        "enrich-error",
        "CARD_DECLINED",
        "a/s.py",
        ex,
        &json!(false)
    ));
    assert!(!states(
        "enrich-error",
        "CARD_DECLINED",
        "a/s.py",
        ex,
        &json!(true)
    ));
    // A positional flag read by the parameter name the enum's constructor declares.
    let ex = "public enum BillingError {\n    ALREADY_PAID(HttpStatus.CONFLICT, false),\n    BUSY(HttpStatus.CONFLICT, true);\n    BillingError(HttpStatus status, boolean retryable) {\n";
    assert!(states(
        "enrich-error",
        "ALREADY_PAID",
        "src/B.java",
        ex,
        &json!(false)
    ));
    assert!(!states(
        "enrich-error",
        "ALREADY_PAID",
        "src/B.java",
        ex,
        &json!(true)
    ));
}

/// A bare member of a list states what the list's context says, and only that: a list of
/// retryable codes states `true`, a list of permanent ones `false`, any other list nothing.
#[test]
fn a_listed_code_states_what_its_lists_name_says() {
    let retry = |list: &str| {
        let ex = format!("{list} = {{\n    \"RATE_LIMITED\",\n}}\n");
        [true, false]
            .into_iter()
            .filter(|v| states("enrich-error", "RATE_LIMITED", "src/e.py", &ex, &json!(v)))
            .collect::<Vec<_>>()
    };
    assert_eq!(retry("RETRYABLE_CODES"), [true]);
    assert_eq!(retry("PERMANENT_CODES"), [false]);
    assert!(retry("KNOWN_CODES").is_empty());
}

#[test]
fn sensitivity_idioms() {
    let ex = "# Body fields that identify a person, masked in logs.\nPERSONAL_FIELDS = frozenset({\n    \"customer_email\",\n})\n";
    assert!(states(
        "classify-sensitivity",
        "customer_email",
        "src/l.py",
        ex,
        &json!("pii")
    ));
    // The target's own name never states its class.
    let ex = "    token_count: number;\n";
    assert!(stated("classify-sensitivity", "token_count", "src/u.ts", ex).is_empty());
}

#[test]
fn description_content_words() {
    let policy = &registry().get("describe-field").expect("skill").policy;
    let known = vec!["status".to_string(), "string".to_string()];
    let attester = Attester::with("status", None, known, policy);
    let a = artifact(
        "docs/api.md",
        1,
        "`status` is `pending_payment` until the card is charged, then `shipped` or `cancelled`.\n",
    );
    let evidence = EvidenceDoc {
        format: crate::case::evidence::EVIDENCE_FORMAT.into(),
        format_version: crate::case::evidence::EVIDENCE_FORMAT_VERSION,
        artifacts: vec![a.clone()],
    };
    let claim = RawClaim {
        id: "cl-x".into(),
        predicate: "field.description".into(),
        value: json!("Pending payment until charged; then shipped or cancelled."),
        artifact_ids: vec![a.id.clone()],
        confidence: 1.0,
    };
    let got = attester
        .attest("field.description", &claim.value, &[&claim], &evidence)
        .expect("descriptions have rules");
    assert!(got.attested(), "{got:?}");
    let other = json!("Internal routing hint for the warehouse robots.");
    let got = attester
        .attest("field.description", &other, &[&claim], &evidence)
        .expect("descriptions have rules");
    assert!(!got.attested() && got.note.contains("missing"), "{got:?}");
    // The note names the words the cited lines lack.
    let missing = got.note.split("missing: ").nth(1).unwrap_or_default();
    for word in ["warehouse", "hint"] {
        assert!(missing.contains(word), "{word} is missing: {}", got.note);
    }
}

/// A conflict's note names each value a side states once, however many rules state it.
#[test]
fn a_conflict_note_lists_each_value_once() {
    let values = [json!(true), json!("ms"), json!(true)];
    assert_eq!(list(values.iter()), "true or \"ms\"");
    assert_eq!(list(std::iter::empty()), "");
}

/// Which rules fire on a line is remembered per process; what the memo answers is what
/// matching every rule afresh gives, line by line, under each skill's own rules.
#[test]
fn a_remembered_line_is_what_a_fresh_match_gives() {
    let excerpts = [
        (
            "annotate-unit",
            "idle_timeout",
            "a/s.py",
            "    def window(self, idle_timeout):\n        return timedelta(milliseconds=idle_timeout)\n",
        ),
        (
            "enrich-error",
            "RATE_LIMITED",
            "src/e.py",
            "RETRYABLE_CODES = {\n    \"RATE_LIMITED\",\n}\n",
        ),
        (
            "enrich-error",
            "RATE_LIMITED",
            "src/e.py",
            "PERMANENT_CODES = {\n    \"RATE_LIMITED\",\n}\n",
        ),
        // The same line under another skill's rules.
        (
            "annotate-unit",
            "RATE_LIMITED",
            "src/e.py",
            "RETRYABLE_CODES = {\n    \"RATE_LIMITED\",\n}\n",
        ),
    ];
    let mut fired_anywhere = 0;
    for (skill, name, path, ex) in excerpts {
        let rules = compiled(skill);
        let a = artifact(path, 1, ex);
        let read = lines::read(&a, &Spelling::new(name, None));
        for i in (0..read.len()).filter(|&i| read[i].in_scope) {
            let fresh: Vec<&str> = rules
                .list
                .iter()
                .filter(|r| fires(r, &read, i))
                .map(|r| r.id.as_str())
                .collect();
            for _ in 0..2 {
                let ids: Vec<&str> = rules
                    .firing(&read, i)
                    .iter()
                    .map(|r| r.id.as_str())
                    .collect();
                assert_eq!(ids, fresh, "{skill} on {:?}", read[i].masked);
            }
            fired_anywhere += fresh.len();
        }
    }
    assert!(
        fired_anywhere >= 3,
        "the excerpts state values: {fired_anywhere}"
    );
}

/// Compiled rules are shared per list of rules: the same list compiles to the same rules,
/// another list to others.
#[test]
fn each_list_of_rules_compiles_once() {
    assert!(Arc::ptr_eq(
        &compiled("annotate-unit"),
        &compiled("annotate-unit")
    ));
    let (unit, retry) = (compiled("annotate-unit"), compiled("enrich-error"));
    assert_ne!(unit.digest, retry.digest);
    assert_ne!(unit.list.len(), retry.list.len());
}

/// A quoted line keeps its first 200 characters; only a longer one is marked cut.
#[test]
fn a_quoted_line_is_cut_past_200_characters() {
    let a = artifact("src/a.py", 1, "x\n");
    let quote = |n: usize| {
        let text = format!("  {}  ", "é".repeat(n));
        let line = Line {
            number: 3,
            text: &text,
            masked: String::new(),
            in_scope: true,
            kind: crate::skill::EvidenceKind::Implementation,
            context: vec![],
        };
        attested_line(&a, &line, None).text
    };
    assert_eq!(quote(200), "é".repeat(200), "200 characters are kept whole");
    assert_eq!(quote(201), format!("{}…", "é".repeat(200)));
    assert_eq!(quote(3), "ééé");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

    /// The pair search over distinct sets finds the pair the search over every pair of
    /// lines finds: the first line with a later disjoint line, and the first such line.
    #[test]
    fn the_pair_search_over_distinct_sets_is_the_search_over_lines(
        lines in proptest::collection::vec(
            proptest::collection::btree_set("[a-c]", 0..3), 0..12)
    ) {
        let naive = lines.iter().enumerate().find_map(|(i, a)| {
            lines[i + 1..]
                .iter()
                .position(|b| a.is_disjoint(b))
                .map(|k| (i, i + 1 + k))
        });
        let mut sets: Vec<(std::collections::BTreeSet<String>, usize)> = Vec::new();
        let ids: Vec<usize> = lines
            .iter()
            .enumerate()
            .map(|(n, set)| {
                sets.iter().position(|(s, _)| s == set).unwrap_or_else(|| {
                    sets.push((set.clone(), n));
                    sets.len() - 1
                })
            })
            .collect();
        proptest::prop_assert_eq!(first_disjoint_pair(&ids, &sets), naive);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// A pattern's first lines, matched by the Pike VM alone, get the full regex's answer:
    /// for the built-in patterns and for generated ones (some of which do not compile).
    #[test]
    fn a_pattern_answers_as_its_full_regex_does(
        src in proptest::prop_oneof![
            proptest::sample::select(super::prefilter::tests::builtin_patterns()),
            super::prefilter::tests::flagged_regex_source(),
        ],
        lines in proptest::collection::vec(
            proptest::prop_oneof![super::prefilter::tests::line(), super::prefilter::tests::HAYSTACK],
            1..16,
        ),
    ) {
        let pattern = Pattern::new(src.clone());
        let full = super::compiled(&src);
        for l in &lines {
            proptest::prop_assert_eq!(pattern.is_match(l), full.is_match(l), "`{}` on {:?}", src, l);
        }
        // Built only for a pattern the Pike VM refuses (it does not compile at all).
        proptest::prop_assert_eq!(pattern.regex.get().is_some(), pike_vm(&src).is_none());
    }
}

#[test]
fn a_pattern_asked_often_builds_its_full_regex_and_keeps_its_answers() {
    let pattern = Pattern::new(r"(?i)\bseconds?\b|\b\d+\s?s\b".into());
    let lines = [
        "timeout in seconds",
        "30 s",
        "3 ſecs",
        "seconds_total",
        "Seconds",
    ];
    let expected: Vec<bool> = lines
        .iter()
        .map(|l| super::compiled(&pattern.src).is_match(l))
        .collect();
    assert_eq!(expected, [true, true, false, false, true]);
    for round in 0..=LIGHT_LINES {
        let l = round % lines.len();
        assert_eq!(
            pattern.is_match(lines[l]),
            expected[l],
            "{:?} at round {round}",
            lines[l]
        );
    }
    assert!(pattern.regex.get().is_some());
    assert!(
        lines
            .iter()
            .zip(&expected)
            .all(|(l, &e)| pattern.is_match(l) == e)
    );
}

/// Every expression of the embedded registry's rules has its DFA from the build unless
/// that DFA would exceed the size limit, and each DFA answers a line in the narrowed
/// alphabet as the expression as written does, on lines made of the expression's own
/// words (so that many match); a `Pattern` of the expression answers from it.
#[test]
fn every_embedded_rule_expression_has_its_dfa_from_the_build_answering_as_written() {
    use proptest::prelude::*;
    let mut sources = super::prefilter::tests::builtin_patterns();
    sources.sort();
    sources.dedup();
    let mut with_dfa = 0;
    for src in &sources {
        let Some(dfa) = crate::case::dfa_table::RULES.get(src) else {
            assert!(
                narrow::narrowed(src)
                    .and_then(|hir| crate::case::dfa_build::unanchored(&hir))
                    .is_none(),
                "{src}: its DFA fits the size limit, but the build has none"
            );
            continue;
        };
        with_dfa += 1;
        let written = Regex::new(src).unwrap();
        let pattern = Pattern::new(src.clone());
        // Asked only lines in the alphabet: it never builds an engine of its own.
        let in_alphabet_only = Pattern::new(src.clone());
        super::prefilter::tests::on_lines_of_its_words(src, |line| {
            if narrow::in_alphabet(line) {
                let by_dfa = dfa
                    .try_search_fwd(&Input::new(line).earliest(true))
                    .unwrap()
                    .is_some();
                prop_assert_eq!(by_dfa, written.is_match(line), "{} on {:?}", src, line);
                prop_assert_eq!(in_alphabet_only.is_match(line), by_dfa);
            }
            prop_assert_eq!(
                pattern.is_match(line),
                written.is_match(line),
                "{} on {:?}",
                src,
                line
            );
            Ok(())
        });
        assert!(
            in_alphabet_only.embedded.get().is_some_and(Option::is_some)
                && in_alphabet_only.light.get().is_none()
                && in_alphabet_only.narrow.get().is_none()
                && in_alphabet_only.regex.get().is_none(),
            "{src}: a Pattern asked lines in the alphabet built an engine of its own"
        );
    }
    // Not a count to keep: a floor under which the table plainly lost its DFAs.
    assert!(
        with_dfa * 10 >= sources.len() * 9,
        "{with_dfa} of {} expressions have a DFA",
        sources.len()
    );
}

/// A DFA search that fails (one that quits on a byte; the build configures none) is
/// answered by the pattern's run-time engines, never taken for "no match".
#[test]
fn a_failed_dfa_search_is_answered_by_the_patterns_engines() {
    let dfa = crate::case::dfa_table::quitting_dfa(
        b' ',
        regex_automata::dfa::StartKind::Unanchored,
        r"(?-u)zzz",
    );
    let pattern = Pattern::new(r"\btimeout\b".into());
    assert!(pattern.embedded.set(Some(Box::new(dfa))).is_ok());
    assert!(
        pattern.is_match("the timeout in seconds"),
        "the failed search was not retried"
    );
    assert!(
        !pattern.is_match("timeout"),
        "a search that ran is the answer"
    );
}
