//! Positional calls read by name: when an excerpt declares a function or constructor, a
//! call concerning the target in the same excerpt is also read with each argument named by
//! its parameter (`ALREADY_PAID(HttpStatus.CONFLICT, false)` under `BillingError(HttpStatus
//! status, boolean retryable)` reads `retryable=false`).

use super::line_regex::LineRegex;
use super::spelling::{MASK, ident};

/// Splits `s` at commas outside brackets.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut from) = (0i32, 0usize);
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'' | '`') => quote = Some(c),
            (None, '(' | '[' | '{' | '<') => depth += 1,
            // `>` also ends `=>` and `->`: only a bracket when one is open.
            (None, ')' | ']' | '}' | '>') if depth > 0 => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(&s[from..i]);
                from = i + 1;
            }
            // Inside a quote, or any other character.
            _ => {}
        }
    }
    if !s[from..].trim().is_empty() {
        out.push(&s[from..]);
    }
    out
}

fn signature_re() -> &'static LineRegex {
    static RE: std::sync::OnceLock<LineRegex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        LineRegex::fixed(
            r"(?P<kw>\b(?:fn|func|def|function)\s+(?:\([^)]*\)\s*)?|\bconstructor\s*)?(?P<name>[A-Za-z_]\w*)\s*(?:<[^()]*>)?\s*\((?P<params>[^()]*)\)",
        )
    })
}

/// The parameter names a declaration on this line gives (`BillingError(HttpStatus status,
/// boolean retryable) {`, `def __init__(self, code, retryable):`, `func New(code string,
/// retryable bool)`), so that a positional call in the same excerpt can be read by name.
pub(super) fn signature(line: &str, go: bool) -> Option<Vec<String>> {
    // The expression needs a parenthesis; most lines have none.
    if !line.contains('(') {
        return None;
    }
    let caps = signature_re().captures(line)?;
    let keyword = caps.name("kw").is_some();
    let name = caps.name("name")?;
    let params = split_top(caps.name("params")?);
    let trimmed = line.trim_end();
    // Without a keyword, only a constructor-like declaration: a capitalised name, typed
    // parameters, and a body opening on the line.
    let constructor_like = name.starts_with(|c: char| c.is_uppercase())
        && trimmed.ends_with('{')
        && !params.is_empty()
        && params
            .iter()
            .all(|p| p.split_whitespace().count() >= 2 || p.contains(':'));
    if !keyword && !constructor_like {
        return None;
    }
    let mut names = Vec::new();
    for p in params {
        let p = p.split('=').next().unwrap_or(p).trim();
        if p.starts_with('*') || p.contains("...") {
            return None;
        }
        let n = if let Some((before, _)) = p.split_once(':') {
            before.split_whitespace().last().unwrap_or(before)
        } else {
            // Modifiers and annotations (`final`, `mut`, `@Nullable`) come before the name,
            // so the last token is the name; in Go, where a type follows, the first is.
            let tokens: Vec<&str> = p.split_whitespace().collect();
            match (go, tokens.as_slice()) {
                (_, []) => return None,
                (true, [first, ..]) => *first,
                (false, [.., last]) => *last,
            }
        };
        let n = n.trim_start_matches(['&', '*']);
        if n == "self" || n == "cls" || n == "this" {
            continue;
        }
        if n.is_empty() || !n.chars().all(ident) {
            return None;
        }
        names.push(n.to_string());
    }
    (!names.is_empty()).then_some(names)
}

/// `name=value` or `name = value` (a keyword or named argument), not `a == b` nor a
/// lambda `e => e.status`.
fn keyword(arg: &str) -> bool {
    let t = arg.trim_start();
    let name_len = t.find(|c: char| !ident(c)).unwrap_or(t.len());
    let rest = t[name_len..].trim_start();
    name_len > 0
        && !t.starts_with(|c: char| c.is_ascii_digit())
        && rest.starts_with('=')
        && !rest.starts_with("==")
        && !rest.starts_with("=>")
}

fn call_re() -> &'static LineRegex {
    static RE: std::sync::OnceLock<LineRegex> = std::sync::OnceLock::new();
    RE.get_or_init(|| LineRegex::fixed(r"(?P<callee>[A-Za-z_][\w.]*)\s*\("))
}

/// Calls on a masked line that concern the target, their positional arguments read by the
/// names of the one declaration in the excerpt with that many parameters: `qqq(status=…,
/// retryable=false)`.
pub(super) fn named_calls(masked: &str, signatures: &[Vec<String>]) -> Vec<String> {
    let mut out = Vec::new();
    // Only a call whose callee or an argument holds the mask is read; a line without it
    // (most lines) has none.
    if !masked.contains(MASK) {
        return out;
    }
    for caps in call_re().captures_iter(masked) {
        let open = caps.end();
        let mut depth = 1i32;
        let mut close = None;
        for (i, c) in masked[open..].char_indices() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        let args = split_top(&masked[open..close]);
        let Some(callee) = caps.name("callee") else {
            continue;
        };
        if args.is_empty() || !(callee.ends_with(MASK) || args.iter().any(|a| a.contains(MASK))) {
            continue;
        }
        // A call whose every argument names its parameter already reads by name.
        if args.iter().all(|a| keyword(a)) {
            continue;
        }
        let fitting: Vec<&Vec<String>> = signatures
            .iter()
            .filter(|s| s.len() == args.len())
            .collect();
        if let [names] = fitting.as_slice() {
            // A keyword argument keeps the name it gives.
            let named: Vec<String> = names
                .iter()
                .zip(&args)
                .map(|(n, a)| {
                    if keyword(a) {
                        a.trim().to_string()
                    } else {
                        format!("{n}={}", a.trim())
                    }
                })
                .collect();
            out.push(format!("{callee}({})", named.join(", ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_expressions_compile_as_written() {
        assert!(signature_re().compiles_as_written());
        assert!(call_re().compiles_as_written());
    }

    #[test]
    fn a_lambda_argument_is_positional_not_a_named_one() {
        assert!(keyword("retryable = false") && keyword("retryable=false"));
        assert!(!keyword("a == b") && !keyword("e => e.status"));
        // A name is needed before the `=`, and a name does not start with a digit.
        assert!(!keyword("= false") && !keyword(" =x") && !keyword("1 = x"));
        let masked = format!("    {MASK}(e => e.status, false);");
        assert_eq!(
            named_calls(&masked, &[vec!["status".into(), "retryable".into()]]),
            vec![format!("{MASK}(status=e => e.status, retryable=false)")]
        );
    }

    /// Modifiers and annotations are read past, and a parameter that happens to be called
    /// like a modifier keeps its name: in Python (`final`) and in Go (`mut`, before its type).
    #[test]
    fn a_parameter_is_named_past_its_modifiers_even_when_called_like_one() {
        assert_eq!(
            signature(
                "  Err(final @Nullable HttpStatus status, boolean retryable) {",
                false
            ),
            Some(vec!["status".into(), "retryable".into()])
        );
        assert_eq!(
            signature("    fn new(mut self, code: u16) -> Self {", false),
            Some(vec!["code".into()])
        );
        assert_eq!(
            signature("    def __init__(self, final):", false),
            Some(vec!["final".into()])
        );
        assert_eq!(
            signature("func newErr(mut string, retryable bool) *APIError {", true),
            Some(vec!["mut".into(), "retryable".into()])
        );
    }

    #[test]
    fn positional_arguments_are_read_by_the_declared_names() {
        let java = signature(
            "    BillingError(HttpStatus status, boolean retryable) {",
            false,
        );
        assert_eq!(java, Some(vec!["status".into(), "retryable".into()]));
        let py = signature(
            "    def __init__(self, code: str, retryable: bool = False):",
            false,
        );
        assert_eq!(py, Some(vec!["code".into(), "retryable".into()]));
        let go = signature("func newErr(code string, retryable bool) *APIError {", true);
        assert_eq!(go, Some(vec!["code".into(), "retryable".into()]));
        assert_eq!(signature("    if (a, b) {", false), None);
        let sigs = vec![java.unwrap_or_default()];
        assert_eq!(
            named_calls("    qqq(HttpStatus.CONFLICT, false),", &sigs),
            ["qqq(status=HttpStatus.CONFLICT, retryable=false)".to_string()]
        );
        // Arguments that name their parameters keep those names: a keyword-only call is not
        // renamed after an unrelated one-parameter declaration, and a mixed one only names
        // its positional arguments.
        let one = vec![vec!["request".to_string()]];
        assert!(named_calls("    w = timedelta(seconds=request.qqq)", &one).is_empty());
        assert_eq!(
            named_calls("    qqq(409, retryable = False)", &sigs),
            ["qqq(status=409, retryable = False)".to_string()]
        );
        assert_eq!(
            named_calls("    qqq(a == b, x)", &sigs),
            ["qqq(status=a == b, retryable=x)".to_string()]
        );
    }

    fn status_and_retryable() -> Vec<Vec<String>> {
        vec![vec!["status".to_string(), "retryable".to_string()]]
    }

    #[test]
    fn a_closing_quote_ends_the_quote_so_a_later_comma_splits() {
        assert_eq!(
            named_calls(
                r#"    qqq("busy, retry later", false),"#,
                &status_and_retryable()
            ),
            [r#"qqq(status="busy, retry later", retryable=false)"#.to_string()]
        );
    }

    #[test]
    fn a_nested_call_with_its_own_commas_is_one_argument_of_the_call_around_it() {
        assert_eq!(
            named_calls("    qqq(pair(409, 410), false),", &status_and_retryable()),
            ["qqq(status=pair(409, 410), retryable=false)".to_string()]
        );
    }

    #[test]
    fn an_arrow_is_not_a_closing_bracket_so_the_comma_after_it_splits() {
        assert_eq!(
            named_calls("    qqq(e -> e.status, false),", &status_and_retryable()),
            ["qqq(status=e -> e.status, retryable=false)".to_string()]
        );
    }

    /// Without a keyword, a declaration needs all three marks of a constructor: a
    /// capitalised name, a body opening on the line, and every parameter typed.
    #[test]
    fn without_a_keyword_only_a_capitalised_typed_declaration_opening_a_body_declares() {
        // A lowercase name: a call or a method, not a constructor.
        assert_eq!(
            signature("    handle(int code, boolean retry) {", false),
            None
        );
        // Untyped parameters: a call followed by a block.
        assert_eq!(signature("    Point(x, y) {", false), None);
        // No body on the line: a typed call, or a declaration without a body.
        assert_eq!(
            signature("    report(int code, boolean retry);", false),
            None
        );
    }

    /// A variadic parameter takes any number of arguments, so positions past it have no
    /// one name: such a declaration names nothing.
    #[test]
    fn a_declaration_with_a_variadic_parameter_names_nothing() {
        assert_eq!(
            signature("    def __init__(self, code, *args):", false),
            None
        );
        assert_eq!(signature("    def wrap(**kwargs):", false), None);
        assert_eq!(
            signature("    Err(int code, String... parts) {", false),
            None
        );
        assert_eq!(signature("function fail(code, ...rest) {", false), None);
    }

    /// The receiver is passed by the call's own syntax, never as an argument: `self`,
    /// a classmethod's `cls` and a TypeScript `this` parameter are not positions.
    #[test]
    fn every_kind_of_receiver_parameter_is_left_out_of_the_positions() {
        let two = Some(vec!["code".to_string(), "retryable".to_string()]);
        assert_eq!(
            signature("    def make(self, code, retryable):", false),
            two
        );
        assert_eq!(signature("    def make(cls, code, retryable):", false), two);
        assert_eq!(
            signature(
                "function make(this: Err, code: number, retryable: boolean) {",
                false
            ),
            two
        );
    }

    /// A parameter whose name is empty or not an identifier means the line was not read
    /// as a declaration after all: nothing is named rather than a wrong position.
    #[test]
    fn a_parameter_without_an_identifier_name_leaves_the_declaration_unread() {
        assert_eq!(signature("    def make(code, retry-able):", false), None);
        assert_eq!(signature("function make(: number, code) {", false), None);
        assert_eq!(signature("    fn make(&, code: u16) {", false), None);
    }

    #[test]
    fn a_capitalised_call_without_a_body_opening_on_the_line_declares_nothing() {
        assert_eq!(signature("        return Point(x, y);", false), None);
        assert_eq!(
            signature("    Point(int x, int y) {", false),
            Some(vec!["x".into(), "y".into()])
        );
    }
}
