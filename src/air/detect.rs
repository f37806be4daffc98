//! Deterministic deficiency detection: the refinement plan.
//!
//! Invariant: the same AIR always yields the same plan, in document order. Nothing here
//! reads a repository or guesses; a deficiency is a property of the AIR alone.

use serde::Serialize;

use super::model::{Air, ErrorDef, Field, Operation};
use super::target::TargetKey;
use crate::skill::{DeficiencyCode, Severity, registry};

/// One detected deficiency. (Serialized for `detect --json` and the reports; never read
/// back, so its skill can be the built-in registry's own name rather than a copy.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deficiency {
    pub target: TargetKey,
    pub code: DeficiencyCode,
    pub skill: &'static str,
    pub severity: Severity,
    /// For `unproven_inferred_value`: the attribute a heuristic set.
    pub attribute: Option<String>,
    /// What [`Deficiency::detail`] needs beyond the target, code and attribute.
    about: About,
}

/// The part of a deficiency's explanation its target, code and attribute do not hold. The
/// sentence is written only when it is shown: a large AIR's plan has ~130k deficiencies,
/// and a message built for each was a third of its allocations.
#[derive(Debug, Clone, PartialEq, Eq)]
enum About {
    /// Everything the sentence needs is in the target, code or attribute.
    Target,
    /// The operation's method and path, as `GET /things`.
    Route(String),
    /// The description that only restates the name.
    Description(String),
    /// The HTTP status of an error.
    Status(u16),
}

impl Deficiency {
    /// Why the target is deficient, in one sentence.
    #[must_use]
    pub fn detail(&self) -> String {
        let name = match &self.target {
            TargetKey::Field { name, .. } => name.as_str(),
            TargetKey::Error { code, .. } => code.as_str(),
            TargetKey::Operation { op } => op.as_str(),
            TargetKey::Capability { id } => id.as_str(),
        };
        let extra = match &self.about {
            About::Route(text) | About::Description(text) => text.as_str(),
            About::Status(_) | About::Target => "",
        };
        match self.code {
            DeficiencyCode::MissingOperationDescription => format!("{extra} has no description"),
            DeficiencyCode::MissingFieldDescription => format!("field `{name}` has no description"),
            DeficiencyCode::TautologicalDescription => {
                format!("description \"{extra}\" only restates the name")
            }
            DeficiencyCode::UnitAmbiguousField => format!("`{name}` is a quantity without a unit"),
            DeficiencyCode::UnclassifiedSensitiveField => {
                format!("`{name}` looks personal or secret and has no sensitivity class")
            }
            DeficiencyCode::ErrorRetryabilityUnclear => {
                let status = match self.about {
                    About::Status(status) => status,
                    _ => 0,
                };
                format!("whether `{name}` (HTTP {status}) may be retried is not stated")
            }
            DeficiencyCode::UnprovenInferredValue => format!(
                "{} was set by a heuristic and is unproven",
                self.attribute.as_deref().unwrap_or_default()
            ),
        }
    }
}

impl Serialize for Deficiency {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Shown<'a> {
            target: &'a TargetKey,
            code: DeficiencyCode,
            skill: &'a str,
            severity: Severity,
            #[serde(skip_serializing_if = "Option::is_none")]
            attribute: Option<&'a str>,
            detail: String,
        }
        Shown {
            target: &self.target,
            code: self.code,
            skill: self.skill,
            severity: self.severity,
            attribute: self.attribute.as_deref(),
            detail: self.detail(),
        }
        .serialize(serializer)
    }
}

/// Name fragments that make a numeric field a quantity whose unit matters.
const QUANTITY_WORDS: &[&str] = &[
    "timeout",
    "ttl",
    "delay",
    "interval",
    "duration",
    "size",
    "limit",
    "amount",
    "price",
    "cost",
    "fee",
    "balance",
    "total",
    "length",
    "distance",
    "weight",
    "age",
    "expiry",
    "expires",
    "retention",
    "period",
    "bytes",
    "rate",
    "percent",
    "quota",
    "capacity",
    "latency",
    "elapsed",
    "wait",
    "backoff",
    "window",
    "lifetime",
    "deadline",
    "budget",
    "threshold",
    "max",
    "min",
    "height",
    "width",
];

/// Name fragments that suggest personal, secret or financial data.
const SENSITIVE_WORDS: &[&str] = &[
    "email",
    "phone",
    "ssn",
    "address",
    "token",
    "password",
    "passwd",
    "secret",
    "dob",
    "birth",
    "birthday",
    "iban",
    "bic",
    "card",
    "cvv",
    "cvc",
    "pan",
    "passport",
    "salary",
    "tax",
    "credential",
    "credentials",
    "apikey",
    "pin",
    "otp",
    "ip",
    "firstname",
    "lastname",
    "surname",
    "fullname",
    "account",
    "routing",
    "license",
    "nationality",
    "gender",
];

/// Words that carry no content when judging whether a description restates a name.
const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "of",
    "for",
    "to",
    "in",
    "on",
    "is",
    "are",
    "be",
    "this",
    "that",
    "it",
    "its",
    "field",
    "value",
    "parameter",
    "param",
    "property",
    "attribute",
    "and",
    "or",
    "as",
    "by",
    "with",
    "given",
    "specified",
    "object",
    "request",
    "response",
];

/// An identifier's lowercase words, run together in one buffer that is reused from one name
/// to the next: splitting a name allocates nothing once the buffers have grown.
#[derive(Debug, Default)]
struct Words {
    /// The words, lowercased, with nothing between them.
    text: String,
    /// Where each word ends in `text`.
    ends: Vec<usize>,
}

impl Words {
    /// Splits `name` (snake, kebab, dotted, camel) into its words, replacing the last name.
    fn split(&mut self, name: &str) -> &Words {
        self.text.clear();
        self.ends.clear();
        let mut start = 0;
        let mut prev_lower = false;
        for c in name.chars() {
            if !c.is_alphanumeric() {
                self.end_word(&mut start);
                prev_lower = false;
                continue;
            }
            if c.is_uppercase() && prev_lower {
                self.end_word(&mut start);
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            self.text.extend(c.to_lowercase());
        }
        self.end_word(&mut start);
        self
    }

    /// Ends the word begun at `start`, if it has a letter.
    fn end_word(&mut self, start: &mut usize) {
        if self.text.len() > *start {
            self.ends.push(self.text.len());
            *start = self.text.len();
        }
    }

    fn iter(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(s, &e)| &self.text[s..e])
    }

    /// Whether one of the words, or all of them run together, is in `list`.
    fn any_in(&self, list: &[&str]) -> bool {
        self.iter().any(|w| list.contains(&w))
            || (self.ends.len() > 1 && list.contains(&self.text.as_str()))
    }
}

/// Splits an identifier (snake, kebab, dotted, camel) into lowercase words.
#[must_use]
pub fn name_words(name: &str) -> Vec<String> {
    Words::default()
        .split(name)
        .iter()
        .map(str::to_string)
        .collect()
}

fn stem(word: &str) -> &str {
    if word.len() >= 3 && word.ends_with('s') && !word.ends_with("ss") {
        &word[..word.len() - 1]
    } else {
        word
    }
}

/// True when every content word of `description` already appears in `name` or `ty`.
#[must_use]
pub fn is_tautological(description: &str, name: &str, ty: &str) -> bool {
    let mut scratch = Scratch::default();
    scratch.name.split(name);
    scratch.restates(description, ty)
}

/// The buffers one field's checks split its name, type and description into.
#[derive(Debug, Default)]
struct Scratch {
    name: Words,
    ty: Words,
    description: Words,
}

impl Scratch {
    /// [`is_tautological`] for the name already split into `self.name`.
    fn restates(&mut self, description: &str, ty: &str) -> bool {
        self.ty.split(ty);
        self.description.split(description);
        let known = |w: &str| {
            let w = stem(w);
            self.name.iter().chain(self.ty.iter()).any(|k| stem(k) == w)
        };
        let mut content = self
            .description
            .iter()
            .filter(|w| !STOPWORDS.contains(w))
            .peekable();
        content.peek().is_some() && content.all(known)
    }
}

fn is_blank(text: Option<&str>) -> bool {
    text.is_none_or(|t| t.trim().is_empty())
}

/// The deterministic refinement plan for `air`.
#[must_use]
pub fn detect(air: &Air) -> Vec<Deficiency> {
    // About one deficiency per target in a description that needs work: sized once
    // rather than regrown (and copied) a dozen times over a large AIR.
    let targets: usize = air
        .operations
        .iter()
        .map(|op| 1 + op.fields.len() + op.errors.len())
        .sum();
    let mut plan = Plan {
        out: Vec::with_capacity(targets),
        found: Vec::new(),
    };
    let mut scratch = Scratch::default();
    for op in &air.operations {
        detect_operation(op, &mut plan);
        for field in &op.fields {
            detect_field(op, field, &mut scratch, &mut plan);
        }
        for error in &op.errors {
            detect_error(op, error, &mut plan);
        }
    }
    plan.out
}

/// The plan so far, and what was found on the target being checked before its key is
/// built: a target with nothing to refine costs no key, and the last deficiency on a target
/// takes the key itself rather than a copy. (A 5,000-operation AIR has ~100k targets; the
/// allocations were most of `detect`'s time.)
struct Plan<'a> {
    out: Vec<Deficiency>,
    found: Vec<(DeficiencyCode, Option<&'a str>, About)>,
}

impl<'a> Plan<'a> {
    fn found(&mut self, code: DeficiencyCode, attribute: Option<&'a str>, about: About) {
        self.found.push((code, attribute, about));
    }

    /// Plans what was found on `target` (built only now, and only if something was).
    fn target(&mut self, target: impl FnOnce() -> TargetKey) {
        if self.found.is_empty() {
            return;
        }
        let target = target();
        let kind = target.kind();
        let mut target = Some(target);
        let last = self.found.len() - 1;
        for (i, (code, attribute, about)) in self.found.drain(..).enumerate() {
            let skill = match (code, attribute) {
                (DeficiencyCode::UnprovenInferredValue, Some(attr)) => {
                    registry().writer_of(kind, attr)
                }
                _ => registry()
                    .skills
                    .iter()
                    .find(|s| s.target_kind == kind && s.policy.triggers.contains(&code)),
            };
            // Every code the detector emits has a skill in the built-in registry (unit-tested);
            // a code without one is not a refinable deficiency and is not planned.
            let Some(skill) = skill else { continue };
            let key = if i == last {
                target.take()
            } else {
                target.clone()
            };
            let Some(target) = key else { continue };
            self.out.push(Deficiency {
                target,
                code,
                skill: &skill.name,
                severity: code.severity(),
                attribute: attribute.map(str::to_string),
                about,
            });
        }
    }
}

fn detect_operation<'a>(op: &'a Operation, plan: &mut Plan<'a>) {
    if is_blank(op.description.as_deref()) {
        plan.found(
            DeficiencyCode::MissingOperationDescription,
            None,
            About::Route(format!("{} {}", op.method, op.path)),
        );
    }
    inferred(&op.inferred, plan);
    plan.target(|| TargetKey::Operation {
        op: op.id.as_str().into(),
    });
}

fn inferred<'a>(attributes: &'a [String], plan: &mut Plan<'a>) {
    for attr in attributes {
        plan.found(
            DeficiencyCode::UnprovenInferredValue,
            Some(attr),
            About::Target,
        );
    }
}

fn detect_field<'a>(op: &Operation, field: &'a Field, scratch: &mut Scratch, plan: &mut Plan<'a>) {
    // Split once: three checks below read the name's words.
    scratch.name.split(&field.name);
    match &field.description {
        d if is_blank(d.as_deref()) => {
            plan.found(DeficiencyCode::MissingFieldDescription, None, About::Target)
        }
        Some(d) if scratch.restates(d, &field.ty) => plan.found(
            DeficiencyCode::TautologicalDescription,
            None,
            About::Description(d.clone()),
        ),
        _ => {}
    }
    let numeric = matches!(field.ty.as_str(), "integer" | "number");
    if numeric && field.unit.is_none() && scratch.name.any_in(QUANTITY_WORDS) {
        plan.found(DeficiencyCode::UnitAmbiguousField, None, About::Target);
    }
    if field.sensitivity.is_none() && scratch.name.any_in(SENSITIVE_WORDS) {
        plan.found(
            DeficiencyCode::UnclassifiedSensitiveField,
            None,
            About::Target,
        );
    }
    inferred(&field.inferred, plan);
    plan.target(|| TargetKey::Field {
        op: op.id.as_str().into(),
        location: field.location,
        name: field.name.as_str().into(),
    });
}

fn detect_error<'a>(op: &Operation, error: &'a ErrorDef, plan: &mut Plan<'a>) {
    if error.retryable.is_none() {
        plan.found(
            DeficiencyCode::ErrorRetryabilityUnclear,
            None,
            About::Status(error.status),
        );
    }
    inferred(&error.inferred, plan);
    plan.target(|| TargetKey::Error {
        op: op.id.as_str().into(),
        code: error.code.as_str().into(),
    });
}

/// Deficiencies on one target that a given skill triggers on.
#[must_use]
pub fn deficiencies_for<'a>(
    plan: &'a [Deficiency],
    skill: &str,
    target: &TargetKey,
) -> Vec<&'a Deficiency> {
    plan.iter()
        .filter(|d| d.skill == skill && &d.target == target)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_every_naming_style() {
        assert_eq!(name_words("captureTimeoutMs"), ["capture", "timeout", "ms"]);
        assert_eq!(name_words("address.city_name"), ["address", "city", "name"]);
        assert_eq!(name_words("HTTPStatus2xx"), ["httpstatus2xx"]);
        assert_eq!(name_words("retry2Count"), ["retry2", "count"]);
        assert_eq!(name_words("__a--b__"), ["a", "b"]);
        assert_eq!(name_words("ÉtéCount"), ["été", "count"]);
        assert!(name_words("").is_empty() && name_words("._-").is_empty());
    }

    #[test]
    fn a_name_matches_a_word_list_by_a_word_or_by_all_its_words_run_together() {
        let mut w = Words::default();
        assert!(w.split("captureTimeoutMs").any_in(&["timeout"]));
        assert!(w.split("first_name").any_in(&["firstname"]));
        assert!(!w.split("firstname_x").any_in(&["first"]));
        // One word alone is not "all of them run together" with another spelling.
        assert!(!w.split("Pin").any_in(&["pinx"]));
        // The buffer holds only the last name.
        w.split("a_long_name");
        assert!(!w.split("ip").any_in(&["long"]));
        assert!(w.split("ip").any_in(&["ip"]));
    }

    #[test]
    fn tautology_detects_restated_names_only() {
        assert!(is_tautological("The user id.", "user_id", "string"));
        assert!(is_tautological("User IDs", "user_id", "string"));
        assert!(!is_tautological(
            "Opaque id of the account owner.",
            "user_id",
            "string"
        ));
        assert!(!is_tautological("", "user_id", "string"));
    }

    /// Every code's sentence, word for word (written when shown, from what the plan kept),
    /// and the JSON a plan is shown as: `detail` present, `attribute` only when set.
    #[test]
    fn each_deficiency_explains_itself_in_its_own_words() {
        let air = Air::from_value(
            serde_json::json!({"airVersion": 1, "service": {"id": "s", "version": "1"},
                "operations": [{"id": "list_things", "method": "GET", "path": "/things",
                    "fields": [
                        {"location": "input.query", "name": "note", "type": "string"},
                        {"location": "input.query", "name": "user_id", "type": "string",
                         "description": "The user id."},
                        {"location": "input.query", "name": "wait_time", "type": "integer",
                         "description": "How long to wait."},
                        {"location": "output.body", "name": "email", "type": "string",
                         "description": "Where receipts go.", "unit": null,
                         "inferred": ["description"]}],
                    "errors": [{"code": "BUSY", "status": 503}]}]}),
            "air.json",
        )
        .unwrap();
        let shown: Vec<(String, String, String)> = detect(&air)
            .iter()
            .map(|d| (d.target.to_string(), d.code.to_string(), d.detail()))
            .collect();
        let want = [
            (
                "op.list_things",
                "missing_operation_description",
                "GET /things has no description",
            ),
            (
                "op.list_things.input.query.note",
                "missing_field_description",
                "field `note` has no description",
            ),
            (
                "op.list_things.input.query.user_id",
                "tautological_description",
                "description \"The user id.\" only restates the name",
            ),
            (
                "op.list_things.input.query.wait_time",
                "unit_ambiguous_field",
                "`wait_time` is a quantity without a unit",
            ),
            (
                "op.list_things.output.body.email",
                "unclassified_sensitive_field",
                "`email` looks personal or secret and has no sensitivity class",
            ),
            (
                "op.list_things.output.body.email",
                "unproven_inferred_value",
                "description was set by a heuristic and is unproven",
            ),
            (
                "op.list_things.error.BUSY",
                "error_retryability_unclear",
                "whether `BUSY` (HTTP 503) may be retried is not stated",
            ),
        ];
        let want: Vec<(String, String, String)> = want
            .iter()
            .map(|(t, c, d)| ((*t).to_string(), (*c).to_string(), (*d).to_string()))
            .collect();
        assert_eq!(shown, want);

        let plan = detect(&air);
        let json = serde_json::to_value(&plan).unwrap();
        assert_eq!(json[0]["detail"], "GET /things has no description");
        assert_eq!(json[0]["target"], "op.list_things");
        assert!(json[0].get("attribute").is_none(), "{}", json[0]);
        assert_eq!(json[5]["attribute"], "description");
        assert_eq!(json[5]["skill"], plan[5].skill);
        let keys: Vec<&str> = json[5]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            ["target", "code", "skill", "severity", "attribute", "detail"]
        );
    }

    #[test]
    fn every_code_has_a_skill() {
        for code in DeficiencyCode::ALL {
            assert!(
                registry()
                    .skills
                    .iter()
                    .any(|s| s.policy.triggers.contains(&code)),
                "{code} has no skill"
            );
        }
    }
}
