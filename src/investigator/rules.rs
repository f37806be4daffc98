//! Deterministic inference rules: from numbered source lines near a target's name to a
//! value for one writable field (`unit`, `retryable`, `sensitivity`, `description`).
//!
//! Each rule reads one line at a time; a line votes with a weight that falls with its
//! distance from the nearest line naming the target (3 on it, 2 next to it, 1 two lines
//! away) times the strength of the region's evidence kind. The name itself is blanked out
//! before matching, so `customer_email` is not evidence that a field holds an email.
//!
//! When two values are both well supported and neither clearly outweighs the other, the
//! verdict is a conflict that carries each value with the regions supporting it, so an
//! investigator can cite both sides and let the engine record the disagreement.
//!
//! Invariant: pure functions of their inputs — no I/O, no randomness — so every adapter
//! of the investigation (in-process, replay) reaches the same verdict on the same text.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Value, json};

/// The writable fields the rules know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Unit,
    Retryable,
    Sensitivity,
    Description,
}

impl Field {
    #[must_use]
    pub fn parse(field: &str) -> Option<Field> {
        Some(match field {
            "unit" => Field::Unit,
            "retryable" => Field::Retryable,
            "sensitivity" => Field::Sensitivity,
            "description" => Field::Description,
            _ => return None,
        })
    }
}

/// A region of one file that was read: 1-based numbered lines.
#[derive(Debug, Clone)]
pub struct Region {
    pub path: String,
    /// The strength of the region's evidence kind (0..1).
    pub strength: f64,
    /// Whether the file is prose (documentation) rather than code.
    pub prose: bool,
    pub lines: Vec<(u32, String)>,
}

/// Where a value is supported: a line range of one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Support {
    pub path: String,
    pub start: u32,
    pub end: u32,
}

/// One value the regions support, where, and the line that says it best.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub value: Value,
    /// Strongest first; at most [`MAX_SUPPORT`] regions, distinct files first.
    pub support: Vec<Support>,
    pub rationale: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Found(Finding),
    /// Two values are both supported and neither clearly wins: the two heaviest, heaviest
    /// first, each with its own support.
    Conflict(Vec<Finding>),
    Nothing,
}

/// At most this many regions support one value.
pub const MAX_SUPPORT: usize = 2;

/// A second value whose weight times this exceeds the top value's weight is a conflict.
const CLEAR_WIN: f64 = 1.5;

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("rule patterns are valid")
}

/// (pattern, unit), most specific first.
static UNIT_RULES: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (r"nanosecond|_ns\b|\bns\b", "ns"),
        (r"microsecond|_us\b|\bµs\b", "us"),
        (r"millisecond|millis\b|_ms\b|\bms\b|[*/]\s*1_?000\b", "ms"),
        (
            r"timedelta\(\s*seconds|seconds\s*=|\bseconds?\b|_seconds?\b|_secs?\b|\bsecs?\b",
            "s",
        ),
        (
            r"timedelta\(\s*minutes|minutes\s*=|\bminutes?\b|_mins?\b",
            "min",
        ),
        (r"timedelta\(\s*hours|hours\s*=|\bhours?\b", "h"),
        (r"timedelta\(\s*days|days\s*=|\bdays?\b", "d"),
        (r"\bmib\b|mebibyte|1024\s*\*\s*1024", "MiB"),
        (r"\bgib\b|gibibyte", "GiB"),
        (r"\bkib\b|kibibyte|[*/]\s*1024\b", "KiB"),
        (r"\bkb\b|kilobyte", "kB"),
        (r"\bmb\b|megabyte", "MB"),
        (r"\bgb\b|gigabyte", "GB"),
        (r"\bbytes?\b|_bytes\b", "B"),
        (r"\bcents?\b|minor units?|minor_unit", "minor_unit"),
        (r"basis points?|\bbps\b", "basis_point"),
        (r"\bpercent|percentage", "percent"),
    ]
    .into_iter()
    .map(|(p, unit)| (re(p), unit))
    .collect()
});

static NOT_RETRYABLE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bfinal\b|permanent|not retry|never retry|no retry|do not retry|don't retry|non-retryable|not retryable|declined again|fails again|must not be retried",
    )
});
static RETRYABLE: LazyLock<Regex> =
    LazyLock::new(|| re(r"transient|temporar|retry|retried|retryable|back ?off|try again"));
static SECRET: LazyLock<Regex> =
    LazyLock::new(|| re(r"secret|token|password|passwd|api[_ ]?key|credential|private[_ ]key"));
static FINANCIAL: LazyLock<Regex> = LazyLock::new(|| {
    re(r"card[_ ]?(number|no)\b|\bpan\b|\bcvv\b|\biban\b|account[_ ]number|\bcard\b")
});
static PII: LazyLock<Regex> =
    LazyLock::new(|| re(r"redact|personal|\bpii\b|e-?mail|phone|address|gdpr|date of birth"));

/// The unit a line states, if any (checked most specific first).
pub fn unit_of_line(line: &str) -> Option<&'static str> {
    let l = line.to_lowercase();
    UNIT_RULES
        .iter()
        .find(|(pattern, _)| pattern.is_match(&l))
        .map(|(_, unit)| *unit)
}

/// Whether a line says an error is retryable. A negative word wins over a positive one on
/// the same line ("retrying … is declined again" is a refusal).
pub fn retryable_of_line(line: &str) -> Option<bool> {
    let l = line.to_lowercase();
    if NOT_RETRYABLE.is_match(&l) {
        Some(false)
    } else if RETRYABLE.is_match(&l) {
        Some(true)
    } else {
        None
    }
}

/// The sensitivity class a line suggests: secret before financial before pii.
pub fn sensitivity_of_line(line: &str) -> Option<&'static str> {
    let l = line.to_lowercase();
    if SECRET.is_match(&l) {
        Some("secret")
    } else if FINANCIAL.is_match(&l) {
        Some("financial")
    } else if PII.is_match(&l) {
        Some("pii")
    } else {
        None
    }
}

/// The prose of a comment line (`#`, `//`, `/*`, `*`, `--`, docstring quotes), if it is one.
#[must_use]
pub fn comment_text(line: &str) -> Option<&str> {
    let t = line.trim_start();
    for marker in ["///", "//!", "//", "#", "/*", "*", "--", "\"\"\"", "'''"] {
        if let Some(rest) = t.strip_prefix(marker) {
            return Some(
                rest.trim()
                    .trim_end_matches("*/")
                    .trim_end_matches("\"\"\"")
                    .trim(),
            );
        }
    }
    None
}

/// A sentence built from a prose line: markup stripped, capitalised, ending with a period.
/// `None` when fewer than four words remain.
#[must_use]
pub fn sentence(prose: &str) -> Option<String> {
    let cleaned: String = prose.replace('`', "");
    let cleaned = cleaned
        .trim()
        .trim_start_matches(['-', '*', '>', ' '])
        .trim();
    if cleaned.split_whitespace().count() < 4 {
        return None;
    }
    let mut chars = cleaned.chars();
    let first = chars.next()?;
    let mut s: String = first.to_uppercase().chain(chars).collect();
    if !s.ends_with(['.', '!', '?']) {
        s.push('.');
    }
    Some(s)
}

/// The value one line votes for under `field`, and the line's own prose when it explains
/// the value.
fn vote(field: Field, region: &Region, line: &str, blanked: &str, distance: u32) -> Option<Value> {
    match field {
        Field::Unit => unit_of_line(blanked).map(|u| json!(u)),
        Field::Retryable => retryable_of_line(blanked).map(|b| json!(b)),
        Field::Sensitivity => sensitivity_of_line(blanked).map(|s| json!(s)),
        // A description comes only from prose that names the target itself.
        Field::Description if distance == 0 => {
            let prose = if region.prose {
                Some(line)
            } else {
                comment_text(line)
            };
            prose.and_then(sentence).map(Value::String)
        }
        Field::Description => None,
    }
}

fn allowed_value(v: &Value, allowed: &[String]) -> bool {
    let text = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    allowed.is_empty() || allowed.contains(&text)
}

/// The votes one region cast for one value.
#[derive(Debug, Clone)]
struct RegionVotes {
    region: usize,
    lines: Vec<u32>,
    weight: f64,
}

/// Everything said for one value; `best` is its heaviest line (weight, path, number, text).
#[derive(Debug, Clone)]
struct Tally {
    value: Value,
    weight: f64,
    regions: Vec<RegionVotes>,
    best: (f64, String, u32, String),
}

impl Tally {
    fn add(&mut self, region: &Region, ri: usize, line: u32, text: &str, weight: f64) {
        self.weight += weight;
        match self.regions.iter_mut().find(|r| r.region == ri) {
            Some(r) => {
                r.lines.push(line);
                r.weight += weight;
            }
            None => self.regions.push(RegionVotes {
                region: ri,
                lines: vec![line],
                weight,
            }),
        }
        if weight > self.best.0 {
            self.best = (weight, region.path.clone(), line, text.trim().to_string());
        }
    }
}

/// Infers a value for `field` from `regions`, where `needles` are the strings that name the
/// target and `allowed` the admissible values (empty: any).
#[must_use]
pub fn infer(field: Field, needles: &[String], allowed: &[String], regions: &[Region]) -> Verdict {
    let mut tallies: Vec<Tally> = Vec::new();
    for (ri, region) in regions.iter().enumerate() {
        let names: Vec<u32> = region
            .lines
            .iter()
            .filter(|(_, text)| needles.iter().any(|n| text.contains(n.as_str())))
            .map(|(n, _)| *n)
            .collect();
        for (n, text) in &region.lines {
            let Some(distance) = names.iter().map(|m| m.abs_diff(*n)).min() else {
                continue;
            };
            let weight = match distance {
                0 => 3.0,
                1 => 2.0,
                2 => 1.0,
                _ => continue,
            } * region.strength;
            let blanked = needles
                .iter()
                .fold(text.clone(), |t, n| t.replace(n.as_str(), " "));
            let Some(value) = vote(field, region, text, &blanked, distance) else {
                continue;
            };
            if !allowed_value(&value, allowed) {
                continue;
            }
            let i = if let Some(i) = tallies.iter().position(|t| t.value == value) {
                i
            } else {
                tallies.push(Tally {
                    value,
                    weight: 0.0,
                    regions: Vec::new(),
                    best: (0.0, String::new(), 0, String::new()),
                });
                tallies.len() - 1
            };
            tallies[i].add(region, ri, *n, text, weight);
        }
    }
    // Heaviest first; ties keep first-seen order (regions come strongest first).
    tallies.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    let Some(top) = tallies.first() else {
        return Verdict::Nothing;
    };
    if field != Field::Description
        && let Some(second) = tallies.get(1)
        && second.weight * CLEAR_WIN > top.weight
    {
        return Verdict::Conflict(vec![finding(top, regions), finding(second, regions)]);
    }
    Verdict::Found(finding(top, regions))
}

/// A tally as a finding: its heaviest regions (a region of a file not yet cited before a
/// second region of a cited one, since the engine counts each file once), each narrowed to
/// the lines that voted with one line either side.
fn finding(tally: &Tally, regions: &[Region]) -> Finding {
    let mut votes = tally.regions.clone();
    votes.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    let mut chosen: Vec<&RegionVotes> = Vec::new();
    for v in &votes {
        let path = &regions[v.region].path;
        if chosen.len() < MAX_SUPPORT && !chosen.iter().any(|c| &regions[c.region].path == path) {
            chosen.push(v);
        }
    }
    for v in &votes {
        if chosen.len() < MAX_SUPPORT && !chosen.iter().any(|c| c.region == v.region) {
            chosen.push(v);
        }
    }
    let support = chosen
        .iter()
        .map(|v| {
            let region = &regions[v.region];
            let first = region.lines.first().map_or(1, |l| l.0);
            let last = region.lines.last().map_or(first, |l| l.0);
            let lo = v.lines.iter().min().copied().unwrap_or(first);
            let hi = v.lines.iter().max().copied().unwrap_or(last);
            Support {
                path: region.path.clone(),
                start: lo.saturating_sub(1).max(first),
                end: (hi + 1).min(last),
            }
        })
        .collect();
    let (_, path, n, text) = &tally.best;
    Finding {
        value: tally.value.clone(),
        support,
        rationale: format!(
            "Line {n} of {path} reads: {text} — which establishes {}.",
            tally.value
        ),
    }
}

/// The spellings of a name to search for: itself, and its CamelCase or `snake_case` twin.
pub fn name_variants(name: &str) -> Vec<String> {
    let mut out = vec![name.to_string()];
    let twin = if name.contains('_') {
        name.split('_')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let lower = p.to_lowercase();
                let mut c = lower.chars();
                c.next()
                    .map(|f| f.to_uppercase().chain(c).collect::<String>())
                    .unwrap_or_default()
            })
            .collect::<String>()
    } else if name.chars().any(char::is_uppercase) && name.chars().any(char::is_lowercase) {
        let mut snake = String::new();
        for (i, c) in name.chars().enumerate() {
            if c.is_uppercase() && i > 0 {
                snake.push('_');
            }
            snake.extend(c.to_lowercase());
        }
        snake
    } else {
        String::new()
    };
    if twin.len() > 2 && twin != name {
        out.push(twin);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(path: &str, strength: f64, start: u32, text: &str) -> Region {
        Region {
            path: path.into(),
            strength,
            prose: path.ends_with(".md"),
            lines: text
                .lines()
                .enumerate()
                .map(|(i, l)| (start + i as u32, l.to_string()))
                .collect(),
        }
    }

    fn needles(name: &str) -> Vec<String> {
        name_variants(name)
    }

    #[test]
    fn unit_rules_read_conversions() {
        assert_eq!(
            unit_of_line("window = timedelta(seconds=request.x)"),
            Some("s")
        );
        assert_eq!(unit_of_line("deadline_ms = cfg.timeout * 1000"), Some("ms"));
        assert_eq!(unit_of_line("sleep(x / 1000)"), Some("ms"));
        assert_eq!(unit_of_line("limit in KiB"), Some("KiB"));
        assert_eq!(unit_of_line("max = size * 1024 * 1024"), Some("MiB"));
        assert_eq!(unit_of_line("max_bytes: int"), Some("B"));
        assert_eq!(unit_of_line("amount=1000, currency=EUR"), None);
    }

    #[test]
    fn retryable_rules_let_a_refusal_win_over_the_word_retry() {
        assert_eq!(
            retryable_of_line("# Throttling is transient; clients back off and retry."),
            Some(true)
        );
        assert_eq!(
            retryable_of_line(
                "# A decline is final for this card: retrying the same request is declined again."
            ),
            Some(false)
        );
        assert_eq!(retryable_of_line("do not retry"), Some(false));
        assert_eq!(retryable_of_line("raise Foo()"), None);
    }

    #[test]
    fn sensitivity_rules_rank_secret_over_financial_over_pii() {
        assert_eq!(
            sensitivity_of_line("the api_key and the email"),
            Some("secret")
        );
        assert_eq!(sensitivity_of_line("store the IBAN"), Some("financial"));
        assert_eq!(
            sensitivity_of_line("# Personal data: never log it"),
            Some("pii")
        );
        assert_eq!(sensitivity_of_line("log.info(redact(x))"), Some("pii"));
        assert_eq!(sensitivity_of_line("x = 1"), None);
    }

    #[test]
    fn the_name_itself_is_not_evidence() {
        let r = region(
            "src/a.py",
            0.9,
            10,
            "def send(customer_email: str):\n    pass",
        );
        assert_eq!(
            infer(Field::Sensitivity, &needles("customer_email"), &[], &[r]),
            Verdict::Nothing
        );
    }

    #[test]
    fn unit_is_inferred_near_the_name_with_tight_support() {
        let code = "    # The wire value is whole seconds.\n    window = timedelta(seconds=request.capture_timeout)\n    if window > MAX:\n";
        let far = "x = 1\ny = 2\nz = 3\nw = 4\nDEFAULT = timedelta(milliseconds=5)";
        let regions = [
            region("src/payments/service.py", 0.9, 35, code),
            region(
                "src/other.py",
                0.9,
                1,
                &format!("capture_timeout = 1\n{far}"),
            ),
        ];
        let allowed = vec!["ms".to_string(), "s".to_string()];
        let Verdict::Found(Finding {
            value,
            support,
            rationale,
        }) = infer(Field::Unit, &needles("capture_timeout"), &allowed, &regions)
        else {
            panic!("found")
        };
        assert_eq!(value, json!("s"));
        assert_eq!(
            support,
            [Support {
                path: "src/payments/service.py".into(),
                start: 35,
                end: 37
            }]
        );
        assert!(
            rationale.contains("Line 36 of src/payments/service.py"),
            "{rationale}"
        );
    }

    #[test]
    fn balanced_opposite_signals_are_a_conflict() {
        let text = "# final, never retry\nraise CardDeclined()\n# transient: back off";
        let v = infer(
            Field::Retryable,
            &needles("CARD_DECLINED"),
            &[],
            &[region("a.py", 0.9, 1, text)],
        );
        let Verdict::Conflict(sides) = v else {
            panic!("{v:?}")
        };
        // Each side carries the lines that said it, so both can be cited.
        let said: Vec<(Value, u32, u32)> = sides
            .iter()
            .map(|f| (f.value.clone(), f.support[0].start, f.support[0].end))
            .collect();
        assert_eq!(said, [(json!(false), 1, 2), (json!(true), 2, 3)]);
        let text = "# A decline is final: retrying is declined again.\nraise CardDeclined()\nx\n# transient";
        let v = infer(
            Field::Retryable,
            &needles("CARD_DECLINED"),
            &[],
            &[region("a.py", 0.9, 1, text)],
        );
        assert!(
            matches!(v, Verdict::Found(ref f) if f.value == json!(false)),
            "{v:?}"
        );
    }

    #[test]
    fn descriptions_come_from_prose_that_names_the_target() {
        let doc = "# Payments\n\n`GET /payments/{payment_id}` returns the payment created by `POST /payments`.";
        let code = "def f(payment_id):\n    # Personal data: never log the address in clear.\n    log(payment_id)";
        let regions = [
            region("src/r.py", 0.9, 1, code),
            region("docs/p.md", 0.6, 1, doc),
        ];
        let Verdict::Found(found) =
            infer(Field::Description, &needles("payment_id"), &[], &regions)
        else {
            panic!("found")
        };
        assert_eq!(
            found.value,
            json!("GET /payments/{payment_id} returns the payment created by POST /payments.")
        );
    }

    #[test]
    fn name_variants_cover_both_spellings() {
        assert_eq!(
            name_variants("CARD_DECLINED"),
            ["CARD_DECLINED", "CardDeclined"]
        );
        assert_eq!(
            name_variants("capture_timeout"),
            ["capture_timeout", "CaptureTimeout"]
        );
        assert_eq!(
            name_variants("captureTimeout"),
            ["captureTimeout", "capture_timeout"]
        );
        assert_eq!(name_variants("/payments"), ["/payments"]);
    }

    #[test]
    fn comments_and_sentences() {
        assert_eq!(comment_text("    # hello there"), Some("hello there"));
        assert_eq!(comment_text("x = 1"), None);
        assert_eq!(
            sentence("the id of the `payment` row"),
            Some("The id of the payment row.".into())
        );
        assert_eq!(sentence("too short"), None);
    }
}
