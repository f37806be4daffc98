//! Reading a case brief (CASE.md) the way an agent does: from its text alone. The replay
//! adapter finds it in the prompt; the in-process adapter reads the run's CASE.md file.
//!
//! Invariant: nothing here touches the filesystem or case.json — the investigation knows
//! only what the brief says, exactly what an agent is shown.

use globset::GlobBuilder;
use serde_json::Value;

/// What the heuristic needs from CASE.md.
#[derive(Debug, Clone, PartialEq)]
pub struct Brief {
    pub case_key: String,
    pub target: String,
    pub skill: String,
    /// Absolute path of the repository under investigation.
    pub repository: String,
    pub search_terms: Vec<String>,
    /// The deficiency code the case closes (`unit_ambiguous_field`).
    pub deficiency: String,
    /// The writable field's current value as the brief shows it (`None`: absent), and
    /// whether a heuristic set it (unproven).
    pub current: Option<Value>,
    pub current_inferred: bool,
    /// The writable field (`unit`), its predicate (`field.unit`) and allowed values (empty
    /// when the constraint is not a list).
    pub field: String,
    pub predicate: String,
    pub allowed: Vec<String>,
    /// (glob, kind) in order: the first match wins.
    pub scopes: Vec<(String, String)>,
    /// kind → strength.
    pub strengths: Vec<(String, f64)>,
    /// The proposal skeleton from "Expected output".
    pub skeleton: Option<Value>,
}

/// Text between the first pair of backticks after `prefix` in `line`.
fn ticked_after<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    let rest = &rest[rest.find('`')? + 1..];
    Some(&rest[..rest.find('`')?])
}

fn all_ticked(s: &str) -> Vec<String> {
    s.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// How the brief marks a current value a heuristic set.
const INFERRED_MARK: &str = " (set by a heuristic, unproven)";

/// A current value as the brief shows it: `(none)`, a string in quotes (shown verbatim,
/// not escaped), or JSON.
fn shown_value(shown: &str) -> Option<Value> {
    let shown = shown.trim();
    if shown == "(none)" {
        return None;
    }
    match shown.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(text) => Some(Value::String(text.to_string())),
        None => serde_json::from_str(shown).ok(),
    }
}

fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let Some(start) = text.find(heading) else {
        return "";
    };
    let body = &text[start + heading.len()..];
    match body.find("\n## ") {
        Some(end) => &body[..end],
        None => body,
    }
}

impl Brief {
    /// Parses the brief out of `text`; `None` when it is not a case brief.
    pub fn parse(text: &str) -> Option<Brief> {
        let case_key = ticked_after(text, "# Case ")?.to_string();
        let target = ticked_after(section(text, "## Target"), "")?.to_string();
        let skill = ticked_after(text, ", skill ")?;
        let skill = skill.split('@').next().unwrap_or(skill).to_string();
        let repository = ticked_after(text, "The repository under investigation is ")?.to_string();
        let search_terms = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("- Search terms:"))
            .map(all_ticked)
            .unwrap_or_default();
        let writes = section(text, "## What you may write");
        let (field, predicate, allowed) = writable(writes)?;
        let deficiency = ticked_after(text, "Deficiency: ").unwrap_or("").to_string();
        let (current, current_inferred) = current_value(text, &field);
        let evidence = section(text, "## Admissible evidence");
        let scopes = evidence
            .lines()
            .filter_map(|l| {
                let (glob, kind) = l.trim().strip_prefix("- `")?.split_once("` → ")?;
                Some((glob.to_string(), kind.trim().to_string()))
            })
            .collect();
        let strengths = strengths(evidence);
        let expected = section(text, "## Expected output");
        let skeleton = expected
            .split("```json")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .and_then(|json| serde_json::from_str(json).ok());
        Some(Brief {
            case_key,
            target,
            skill,
            repository,
            search_terms,
            deficiency,
            current,
            current_inferred,
            field,
            predicate,
            allowed,
            scopes,
            strengths,
            skeleton,
        })
    }

    /// The target's own name: the first search term, else the key's last segment.
    pub fn name(&self) -> &str {
        self.search_terms.first().map_or_else(
            || self.target.rsplit('.').next().unwrap_or(&self.target),
            String::as_str,
        )
    }

    /// The evidence kind and strength of a repository-relative path (`None`: outside every
    /// scope, so the engine would refuse it). Globs match whole paths; `*` stays within
    /// one path segment.
    #[must_use]
    pub fn classify(&self, rel_path: &str) -> Option<(&str, f64)> {
        let kind = self.scopes.iter().find_map(|(glob, kind)| {
            let m = GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
                .ok()?
                .compile_matcher();
            m.is_match(rel_path).then_some(kind.as_str())
        })?;
        let strength = self
            .strengths
            .iter()
            .find(|(k, _)| k == kind)
            .map_or(0.5, |(_, s)| *s);
        Some((kind, strength))
    }
}

/// The field the skill writes, the predicate that asserts it and its allowed values, from
/// the brief's "What you may write" section.
fn writable(writes: &str) -> Option<(String, String, Vec<String>)> {
    writes.lines().find_map(|l| {
        let l = l.trim().strip_prefix("- `")?;
        let (field, rest) = l.split_once('`')?;
        let predicate = ticked_after(rest, "(asserted by predicate ")?;
        let constraint = rest.split_once("): ").map_or("", |(_, c)| c);
        let allowed = match constraint.strip_prefix("one of ") {
            Some(list) => list.split(", ").map(|v| v.trim().to_string()).collect(),
            None if constraint.starts_with("true or false") => {
                vec!["true".into(), "false".into()]
            }
            None => vec![],
        };
        Some((field.to_string(), predicate.to_string(), allowed))
    })
}

/// The target's current value of `field` as the brief shows it, and whether it is marked
/// inferred.
fn current_value(text: &str, field: &str) -> (Option<Value>, bool) {
    section(text, "## Target")
        .lines()
        .find_map(|l| {
            let rest = l.trim().strip_prefix(&format!("- Current `{field}`: "))?;
            let (shown, inferred) = match rest.strip_suffix(INFERRED_MARK) {
                Some(shown) => (shown, true),
                None => (rest, false),
            };
            Some((shown_value(shown), inferred))
        })
        .unwrap_or((None, false))
}

/// The strength of each evidence kind, from the brief's table.
fn strengths(evidence: &str) -> Vec<(String, f64)> {
    evidence
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            match cells.as_slice() {
                [kind, strength] => Some((kind.to_string(), strength.parse().ok()?)),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A brief rendered by the engine itself, so the parser follows the real views.
    pub(crate) fn demo_brief(skill: &str, target: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        crate::demo::write_example(dir.path()).unwrap();
        let opened = crate::case::open(&crate::case::OpenRequest {
            air: dir.path().join("air.json"),
            repo: dir.path().join("repo"),
            skill: skill.into(),
            target: target.into(),
            deficiency: None,
            cases_dir: dir.path().join("cases"),
            executor: "test".into(),
            scopes: vec![],
            mode: crate::case::OpenMode::New,
            tool_limits: vec![],
            snapshots: vec![],
        })
        .unwrap();
        std::fs::read_to_string(opened.run_dir.join("CASE.md")).unwrap()
    }

    #[test]
    fn parses_what_the_engine_renders() {
        let text = demo_brief(
            "annotate-unit",
            "op.create_payment.input.body.capture_timeout",
        );
        let b = Brief::parse(&text).expect("a brief");
        assert_eq!(b.target, "op.create_payment.input.body.capture_timeout");
        assert_eq!(b.skill, "annotate-unit");
        assert!(b.repository.ends_with("/repo"), "{}", b.repository);
        assert_eq!(b.name(), "capture_timeout");
        assert_eq!(
            (b.field.as_str(), b.predicate.as_str()),
            ("unit", "field.unit")
        );
        assert!(b.allowed.contains(&"ms".to_string()) && b.allowed.contains(&"s".to_string()));
        assert_eq!(
            b.classify("tests/test_capture.py"),
            Some(("contract_test", 0.85))
        );
        assert_eq!(
            b.classify("src/payments/service.py"),
            Some(("implementation", 0.9))
        );
        assert_eq!(b.classify("docs/payments.md"), Some(("doc", 0.6)));
        assert_eq!(b.classify("Makefile"), None);
        assert_eq!(b.deficiency, "unit_ambiguous_field");
        assert_eq!((b.current, b.current_inferred), (None, false));
        let skeleton = b.skeleton.expect("skeleton");
        assert_eq!(skeleton["patch"]["target"], b.target.as_str());
    }

    #[test]
    fn parses_a_boolean_field_brief() {
        let text = demo_brief("enrich-error", "op.create_payment.error.RATE_LIMITED");
        let b = Brief::parse(&text).unwrap();
        assert_eq!(b.field, "retryable");
        assert_eq!(b.allowed, ["true", "false"]);
        assert_eq!(b.name(), "RATE_LIMITED");
    }

    #[test]
    fn current_values_are_read_as_shown() {
        assert_eq!(shown_value("(none)"), None);
        assert_eq!(shown_value("\"ms\""), Some(Value::from("ms")));
        assert_eq!(shown_value("true"), Some(Value::Bool(true)));
        assert_eq!(
            shown_value("\"say \"hi\"\""),
            Some(Value::from("say \"hi\""))
        );
    }

    #[test]
    fn other_text_is_not_a_brief() {
        assert_eq!(Brief::parse("say hi"), None);
    }
}
