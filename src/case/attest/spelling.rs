//! How the target is spelled in an excerpt: its name in any casing, the names and literals
//! it flows into on assignment lines, and each line with all of them masked.
//!
//! Invariant: a name of one word is found only where it starts an identifier; a longer name
//! also inside one (`default_idle_timeout_ms`), so sibling quantities are never mistaken for
//! the target.

use std::sync::Arc;

use super::line_regex::LineRegex;

/// What the target's name and aliases are replaced with before rules are matched; rules
/// write it as `{q}`.
pub const MASK: &str = "qqq";

/// How the target is spelled in code and prose.
pub struct Spelling {
    /// Lowercase words of the name (`idle_timeout` → idle, timeout).
    words: Vec<String>,
    /// A name of one word must be a whole identifier, or start one (`timeout_ms`); a longer
    /// name may also sit inside one (`default_idle_timeout_ms`).
    finder: Option<Arc<LineRegex>>,
    /// The route of an operation, parameters generalised (`/payments/{id}` ~ `/payments/:id`).
    route: Option<Arc<LineRegex>>,
}

/// A finder this long or shorter compiles as written, far inside the regex size limit: it
/// is escaped words, whose letters fold to classes of at most three characters, joined by
/// a class of separators (a test builds the largest such finder).
const FINDER_COMPILES_BYTES: usize = 1024;

impl Spelling {
    /// `name` is a field name (its last dotted segment counts), an error code or an operation
    /// id; `route` the operation's path, when the target is an operation.
    pub fn new(name: &str, route: Option<&str>) -> Spelling {
        let last = name.rsplit('.').next().unwrap_or(name);
        let words = crate::air::name_words(last);
        let finder = (!words.is_empty()).then(|| {
            let joined: Vec<String> = words.iter().map(|w| regex::escape(w)).collect();
            let src = format!("(?i){}", joined.join(r"[_\-\s]?"));
            super::cached_line(&src, src.len() <= FINDER_COMPILES_BYTES)
        });
        let route = route.filter(|r| r.len() > 1).and_then(|r| {
            let parts: Vec<String> = r
                .split('/')
                .map(|seg| {
                    if seg.starts_with('{') || seg.starts_with(':') || seg.starts_with('<') {
                        r"[^/\s`'\x22)]+".to_string()
                    } else {
                        regex::escape(seg)
                    }
                })
                .collect();
            super::cached_line(&parts.join("/"), false)
        });
        Spelling {
            words,
            finder: finder.flatten(),
            route,
        }
    }

    /// Byte spans of the target's spellings in `text`.
    fn spans(&self, text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        if let Some(re) = &self.finder {
            let single = self.words.len() == 1;
            for (start, end) in re.find_iter(text) {
                if starts_word(text, start, single) && ends_word(text, end) {
                    out.push((start, end));
                }
            }
        }
        if let Some(re) = &self.route {
            out.extend(re.find_iter(text));
        }
        out.sort_unstable();
        out
    }
}

pub(super) fn ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A spelling starts at `at` when the character before cannot continue an identifier, or
/// (for names of several words) at a snake or camel boundary inside one.
fn starts_word(text: &str, at: usize, single: bool) -> bool {
    let before = text[..at].chars().next_back();
    let first = text[at..].chars().next();
    match (before, first) {
        (None, _) => true,
        (Some(b), _) if !ident(b) => true,
        (Some(_), _) if single => false,
        (Some('_'), _) => true,
        (Some(b), Some(f)) => (b.is_lowercase() || b.is_ascii_digit()) && f.is_uppercase(),
        _ => false,
    }
}

/// A spelling ends at `at` when what follows cannot continue its last word: not a letter,
/// or a snake or camel boundary (`timeout_ms`, `timeoutMs`).
fn ends_word(text: &str, at: usize) -> bool {
    let last = text[..at].chars().next_back();
    match (last, text[at..].chars().next()) {
        (_, None) => true,
        (_, Some(n)) if !n.is_alphanumeric() => true,
        (Some(l), Some(n)) => !l.is_uppercase() && n.is_uppercase(),
        _ => false,
    }
}

fn assignment_re() -> &'static LineRegex {
    static RE: std::sync::OnceLock<LineRegex> = std::sync::OnceLock::new();
    RE.get_or_init(|| LineRegex::fixed(r"^(?P<lhs>[^=!<>+\-*/%&|^~?]*?)\s*:?=(?P<rhs>[^=>].*)$"))
}

fn literal_re() -> &'static LineRegex {
    static RE: std::sync::OnceLock<LineRegex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        LineRegex::fixed(&format!(
            r#"{MASK}\b["'`]?\s*[:=]\s*(?P<n>\d[\d_]*(?:\.\d+)?)\b"#
        ))
    })
}

/// Round numbers that are conversion factors, not values: they never name a quantity.
fn is_conversion_constant(n: &str) -> bool {
    let digits: String = n.chars().filter(|c| *c != '_').collect();
    matches!(
        digits.as_str(),
        "0" | "1" | "2" | "10" | "24" | "60" | "100" | "1000" | "1024" | "3600" | "86400"
    ) || digits.len() > 12
}

/// The name a quantity flows into on an assignment line (`ms := req.PaymentTimeout`,
/// `ttl = clamp_ttl(token_ttl)`), or a literal the target is given (`"size": 512`).
pub(super) fn alias_on(masked: &str) -> Option<String> {
    if let Some(n) = literal_re().captures(masked).and_then(|c| c.name("n")) {
        let n = n.to_string();
        if !is_conversion_constant(&n) {
            return Some(n);
        }
    }
    let caps = assignment_re().captures(masked)?;
    let (lhs, rhs) = (caps.name("lhs")?, caps.name("rhs")?);
    if !rhs.contains(MASK) || lhs.contains(MASK) {
        return None;
    }
    // A keyword argument (`timedelta(milliseconds=qqq)`, a continuation line ending in `,`)
    // names a parameter of a call, not a variable the rest of the excerpt uses.
    let open = lhs.matches(['(', '[', '{']).count() > lhs.matches([')', ']', '}']).count();
    if open || rhs.trim_end().ends_with(',') {
        return None;
    }
    // `let x: T`, `x: int` → `x`; `Duration ttl` → `ttl`; `s.Field` → `Field`.
    let lhs = lhs.split(':').next().unwrap_or(lhs);
    let name = lhs
        .rsplit(|c: char| !ident(c))
        .find(|w| !w.is_empty())?
        .to_string();
    let keyword = matches!(
        name.as_str(),
        "let" | "mut" | "const" | "var" | "val" | "final" | "return" | "self" | "this"
    );
    (!keyword
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_'))
    .then_some(name)
}

/// Replaces the target's spellings and the aliases (whole identifiers or numbers) with
/// [`MASK`].
pub(super) fn mask(text: &str, spelling: &Spelling, aliases: &[String]) -> String {
    let mut spans = spelling.spans(text);
    for alias in aliases {
        let mut from = 0;
        while let Some(pos) = text[from..].find(alias.as_str()) {
            let (s, e) = (from + pos, from + pos + alias.len());
            let before = text[..s].chars().next_back();
            let after = text[e..].chars().next();
            let numeric = alias.starts_with(|c: char| c.is_ascii_digit());
            let stops = |c: Option<char>| c.is_none_or(|c| !(ident(c) || (numeric && c == '.')));
            if stops(before) && stops(after) {
                spans.push((s, e));
            }
            from = e;
        }
    }
    spans.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (s, e) in spans {
        if s < at {
            continue;
        }
        out.push_str(&text[at..s]);
        out.push_str(MASK);
        at = e;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The longest finder taken to compile does, with the most separators and the letters
    /// with the most case variants.
    #[test]
    fn a_finder_within_the_bound_compiles_as_written() {
        let name = ["sk"; 102].join("_");
        let spelling = Spelling::new(&name, None);
        let finder = spelling.finder.as_ref().unwrap();
        assert!(finder.source().len() > FINDER_COMPILES_BYTES - 24);
        assert!(finder.source().len() <= FINDER_COMPILES_BYTES);
        assert!(finder.compiles_as_written());
    }

    #[test]
    fn the_fixed_expressions_compile_as_written() {
        assert!(assignment_re().compiles_as_written());
        assert!(literal_re().compiles_as_written());
    }

    fn masked(name: &str, text: &str) -> String {
        mask(text, &Spelling::new(name, None), &[])
    }

    #[test]
    fn a_compound_name_is_found_inside_identifiers_and_prose() {
        assert_eq!(
            masked(
                "idle_timeout",
                "x = default_idle_timeout_ms + idleTimeoutMs"
            ),
            "x = default_qqq_ms + qqqMs"
        );
        assert_eq!(
            masked("idle_timeout", "the idle timeout, in s"),
            "the qqq, in s"
        );
        assert_eq!(masked("idle_timeout", "IDLE_TIMEOUT_MS"), "qqq_MS");
    }

    /// Inside an identifier a compound name starts at a camel boundary: a lowercase letter
    /// or a digit, then an uppercase one; never in the middle of a run of one case.
    #[test]
    fn a_compound_name_starts_inside_an_identifier_only_at_a_camel_boundary() {
        assert_eq!(
            masked("idle_timeout", "maxIdleTimeout v2IdleTimeout"),
            "maxqqq v2qqq"
        );
        assert_eq!(
            masked("idle_timeout", "maxidletimeout MAXIdleTimeout"),
            "maxidletimeout MAXIdleTimeout"
        );
    }

    #[test]
    fn a_one_word_name_must_start_an_identifier() {
        assert_eq!(
            masked("flag", "enum ReportFlag; flagged"),
            "enum ReportFlag; flagged"
        );
        assert_eq!(
            masked("flag", "req.flag, flag_ms, flagMs"),
            "req.qqq, qqq_ms, qqqMs"
        );
        assert_eq!(masked("data", "metadata = data"), "metadata = qqq");
    }

    #[test]
    fn assignments_and_literals_make_aliases() {
        assert_eq!(alias_on("ms := req.qqq"), Some("ms".into()));
        assert_eq!(alias_on("    ttl = clamp_ttl(qqq)"), Some("ttl".into()));
        assert_eq!(
            alias_on("        Duration ttl = Duration.ofSeconds(req.qqq());"),
            Some("ttl".into())
        );
        assert_eq!(alias_on(r#"json={"qqq": 512})"#), Some("512".into()));
        assert_eq!(alias_on("if qqq == 0 {"), None);
        assert_eq!(alias_on("    return timedelta(milliseconds=qqq)"), None);
        assert_eq!(alias_on("        timeout=qqq or DEFAULT,"), None);
        assert_eq!(alias_on("qqq = other"), None);
    }

    #[test]
    fn a_twelve_digit_literal_is_a_value_but_a_longer_one_is_not() {
        assert!(!is_conversion_constant("123456789012"));
        assert!(!is_conversion_constant("123_456_789_012"));
        assert!(is_conversion_constant("1234567890123"));
        assert_eq!(
            alias_on(r#""qqq": 123456789012"#),
            Some("123456789012".into())
        );
    }

    #[test]
    fn an_underscore_led_name_is_an_alias_but_an_index_is_not() {
        assert_eq!(alias_on("_ttl = qqq"), Some("_ttl".into()));
        assert_eq!(alias_on("xs[2] = qqq"), None);
    }

    #[test]
    fn a_numeric_alias_is_masked_as_a_whole_number_only() {
        let spelling = Spelling::new("size", None);
        let aliases = ["512".to_string()];
        assert_eq!(
            mask("limit(512) + 1.512 + 5120", &spelling, &aliases),
            "limit(qqq) + 1.512 + 5120"
        );
    }
}
