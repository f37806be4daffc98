//! Reading one excerpt for attestation: which lines are prose (comments, docstrings, docs),
//! which concern the target, how strong each line is, and each line with the target masked.
//!
//! Invariant: a pure function of the excerpt, its coordinate and the target's spelling. A
//! comment line counts at `comment` strength unless it documents code that names the target
//! (DESIGN §5 applied line by line), so padding a comment with unrelated code gains nothing.

use crate::case::evidence::{EvidenceArtifact, is_comment_only};
use crate::skill::EvidenceKind;

use super::calls::{named_calls, signature};
pub use super::spelling::{MASK, Spelling};
use super::spelling::{alias_on, mask};

/// One line of an excerpt, read for attestation.
pub struct Line<'a> {
    /// 1-based line number in the file (in the excerpt for external evidence).
    pub number: u32,
    pub text: &'a str,
    /// The text rules see: the target and its aliases replaced by [`MASK`]; a markdown
    /// table row becomes `header: cell; …`; a positional call concerning the target is
    /// followed by `⟦callee(param=arg, …)⟧` when the excerpt declares its parameters.
    pub masked: String,
    /// The line concerns the target (names it or an alias, or is prose about it).
    pub in_scope: bool,
    /// The kind this line counts as: the artifact's, or `comment` for a comment that does
    /// not document code naming the target.
    pub kind: EvidenceKind,
    /// Indices of the enclosing lines (block headers, a markdown heading), innermost first.
    pub context: Vec<usize>,
}

fn is_doc_path(path: &str) -> bool {
    let ext = path.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    matches!(
        ext.as_str(),
        "md" | "markdown" | "rst" | "adoc" | "txt" | "rdoc"
    )
}

fn indent(s: &str) -> usize {
    s.len() - s.trim_start().len()
}

fn is_annotation(t: &str) -> bool {
    (t.starts_with('@') && t[1..].starts_with(|c: char| c.is_alphabetic())) || t.starts_with("#[")
}

/// Which lines are prose in a code file: comments (with `/* … */` blocks) and, in Python,
/// docstrings.
fn prose_lines(lines: &[&str], python: bool) -> Vec<bool> {
    let mut out = Vec::with_capacity(lines.len());
    let mut block = false;
    let mut doc: Option<&str> = None;
    for raw in lines {
        let t = raw.trim();
        if let Some(delim) = doc {
            out.push(true);
            if t.contains(delim) {
                doc = None;
            }
            continue;
        }
        if block {
            out.push(true);
            if t.contains("*/") {
                block = false;
            }
            continue;
        }
        if python && (t.starts_with("\"\"\"") || t.starts_with("'''")) {
            let delim = &t[..3];
            // Closed on the same line (`"""Doc."""`, `""""""`) or left open.
            if !t[3..].contains(delim) {
                doc = Some(delim);
            }
            out.push(true);
            continue;
        }
        if t.starts_with("/*") && !t.contains("*/") {
            block = true;
            out.push(true);
            continue;
        }
        out.push(!t.is_empty() && is_comment_only(raw));
    }
    out
}

/// Splits a markdown table row into cells.
fn cells(t: &str) -> Vec<String> {
    t.trim()
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

fn is_table_separator(t: &str) -> bool {
    t.starts_with('|') && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

/// Markdown rows read as `header: cell; …` so a rule can tell which column says what.
fn table_text(lines: &[&str]) -> Vec<Option<String>> {
    let mut out = vec![None; lines.len()];
    let mut header: Option<Vec<String>> = None;
    for (i, raw) in lines.iter().enumerate() {
        let t = raw.trim();
        if !t.starts_with('|') {
            header = None;
            continue;
        }
        if is_table_separator(t) {
            continue;
        }
        match &header {
            None => {
                let next_is_sep = lines
                    .get(i + 1)
                    .is_some_and(|n| is_table_separator(n.trim()));
                if next_is_sep {
                    header = Some(cells(t));
                }
            }
            Some(h) => {
                let row = cells(t);
                let text: Vec<String> = row
                    .iter()
                    .enumerate()
                    .map(|(j, c)| match h.get(j) {
                        Some(name) if !name.is_empty() => format!("{name}: {c}"),
                        _ => c.clone(),
                    })
                    .collect();
                out[i] = Some(text.join("; "));
            }
        }
    }
    out
}

/// Reads `artifact` for a target spelled `spelling`.
pub fn read<'a>(artifact: &'a EvidenceArtifact, spelling: &Spelling) -> Vec<Line<'a>> {
    let path = artifact.path.as_deref().unwrap_or(&artifact.uri);
    let texts: Vec<&str> = artifact.excerpt.lines().collect();
    let first = artifact.start_line.unwrap_or(1);
    let doc = artifact.kind == EvidenceKind::External || is_doc_path(path);
    let python = path.ends_with(".py") || path.ends_with(".pyi");
    let prose: Vec<bool> = if doc {
        texts.iter().map(|t| !t.trim().is_empty()).collect()
    } else {
        prose_lines(&texts, python)
    };
    let tables = if doc {
        table_text(&texts)
    } else {
        vec![None; texts.len()]
    };
    let source = |i: usize| tables[i].as_deref().unwrap_or(texts[i]);

    let aliases = find_aliases(texts.len(), &prose, source, spelling);
    let go = path.ends_with(".go");
    let masked = masked_lines(&texts, &prose, source, spelling, &aliases, go);
    let names = |i: usize| masked[i].contains(MASK);

    let blocks = prose_blocks(&texts, &prose, doc);

    let mut in_scope: Vec<bool> = (0..texts.len()).map(|i| !prose[i] && names(i)).collect();
    let mut anchored = vec![false; texts.len()];
    for &(s, e) in &blocks {
        let target = documented(&texts, &prose, doc, python, (s, e));
        let about = target.is_some_and(&names);
        let mentions = (s..=e).any(names);
        for i in s..=e {
            in_scope[i] = about || mentions;
            anchored[i] = about;
        }
    }
    // Annotations directly above a code line naming the target belong to it.
    for i in (0..texts.len()).filter(|&i| !prose[i] && names(i)) {
        let mut j = i;
        // A blank line is never an annotation, so the walk stops at one.
        while j > 0 && is_annotation(texts[j - 1].trim_start()) {
            j -= 1;
            in_scope[j] = true;
        }
    }
    // A markdown heading naming the target puts its section in scope.
    if doc {
        scope_named_sections(&texts, names, &mut in_scope);
    }

    let demoted = if artifact.kind.strength() > EvidenceKind::Comment.strength() {
        EvidenceKind::Comment
    } else {
        artifact.kind
    };
    (0..texts.len())
        .map(|i| Line {
            number: first + i as u32,
            text: texts[i],
            masked: masked[i].clone(),
            in_scope: in_scope[i],
            kind: if prose[i] && !doc && !anchored[i] {
                demoted
            } else {
                artifact.kind
            },
            context: context(&texts, &prose, i, doc),
        })
        .collect()
}

/// Each line as rules see it ([`Line::masked`]): `source(i)` with the target and `aliases`
/// masked; a code line's calls that concern the target follow it as `⟦callee(param=arg,
/// …)⟧` when the excerpt declares signatures (`go` reads them as Go declarations).
fn masked_lines<'t>(
    texts: &[&str],
    prose: &[bool],
    source: impl Fn(usize) -> &'t str,
    spelling: &Spelling,
    aliases: &[String],
    go: bool,
) -> Vec<String> {
    let signatures: Vec<Vec<String>> = (0..texts.len())
        .filter(|&i| !prose[i])
        .filter_map(|i| signature(texts[i], go))
        .collect();
    (0..texts.len())
        .map(|i| {
            let mut m = mask(source(i), spelling, aliases);
            if !prose[i] && !signatures.is_empty() {
                for named in named_calls(&m, &signatures) {
                    m.push_str("  ⟦");
                    m.push_str(&named);
                    m.push('⟧');
                }
            }
            m
        })
        .collect()
}

/// The code line the prose block `(s, e)` documents: the next line (a declaration under its
/// doc comment, skipping annotations), or for a Python docstring the `def`/`class` above
/// it. `None` in a document, or when no code line is there.
fn documented(
    texts: &[&str],
    prose: &[bool],
    doc: bool,
    python: bool,
    (s, e): (usize, usize),
) -> Option<usize> {
    if doc {
        return None;
    }
    let blank = |i: usize| texts[i].trim().is_empty();
    let docstring = python && {
        let t = texts[s].trim_start();
        t.starts_with("\"\"\"") || t.starts_with("'''")
    };
    if docstring {
        return (s > 0 && !prose[s - 1] && texts[s - 1].trim_end().ends_with(':')).then(|| s - 1);
    }
    let mut j = e + 1;
    while j < texts.len() && is_annotation(texts[j].trim_start()) {
        j += 1;
    }
    (j < texts.len() && !blank(j) && !prose[j]).then_some(j)
}

/// Names the quantity flows into on the code lines (`source(i)` is line `i` as read),
/// found in reading order: each line is masked with the aliases found before it.
fn find_aliases<'t>(
    count: usize,
    prose: &[bool],
    source: impl Fn(usize) -> &'t str,
    spelling: &Spelling,
) -> Vec<String> {
    let mut aliases: Vec<String> = Vec::new();
    for i in (0..count).filter(|&i| !prose[i]) {
        let masked = mask(source(i), spelling, &aliases);
        if let Some(a) = alias_on(&masked)
            && !aliases.contains(&a)
        {
            aliases.push(a);
        }
    }
    aliases
}

/// Prose blocks, as (first, last) line: runs of prose lines; in documents a heading, a
/// list item or a table row also starts a new block.
fn prose_blocks(texts: &[&str], prose: &[bool], doc: bool) -> Vec<(usize, usize)> {
    let starts_block = |i: usize| {
        let t = texts[i].trim_start();
        t.starts_with('#')
            || t.starts_with('|')
            || t.starts_with("- ")
            || t.starts_with("* ")
            || t.starts_with("+ ")
            || t.split_once(['.', ')']).is_some_and(|(n, rest)| {
                !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) && rest.starts_with(' ')
            })
    };
    let mut blocks: Vec<(usize, usize)> = Vec::new();
    for i in 0..texts.len() {
        if !prose[i] {
            continue;
        }
        let continues = i > 0 && prose[i - 1] && !(doc && starts_block(i));
        if continues {
            let b = blocks.len() - 1;
            blocks[b].1 = i;
        } else {
            blocks.push((i, i));
        }
    }
    blocks
}

/// In a document, puts in scope every non-blank line of a section whose heading names the
/// target, up to the next heading of the same or a higher level.
fn scope_named_sections(texts: &[&str], names: impl Fn(usize) -> bool, in_scope: &mut [bool]) {
    let mut level_in_scope: Option<usize> = None;
    for i in 0..texts.len() {
        if texts[i].trim_start().starts_with('#') {
            let level = texts[i]
                .trim_start()
                .chars()
                .take_while(|c| *c == '#')
                .count();
            if level_in_scope.is_some_and(|l| level <= l) {
                level_in_scope = None;
            }
            if names(i) {
                level_in_scope = Some(level);
            }
        } else if level_in_scope.is_some() && !texts[i].trim().is_empty() {
            in_scope[i] = true;
        }
    }
}

/// The enclosing lines of line `i`: in code, each earlier line less indented than the last
/// one found; in documents, the nearest heading above.
fn context(texts: &[&str], prose: &[bool], i: usize, doc: bool) -> Vec<usize> {
    let mut out = Vec::new();
    if doc {
        if let Some(h) = (0..i)
            .rev()
            .find(|&j| texts[j].trim_start().starts_with('#'))
        {
            out.push(h);
        }
        return out;
    }
    let mut level = indent(texts[i]);
    for j in (0..i).rev() {
        if level == 0 || out.len() >= 6 {
            break;
        }
        if prose[j] || texts[j].trim().is_empty() {
            continue;
        }
        let l = indent(texts[j]);
        if l < level {
            out.push(j);
            level = l;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_java(excerpt: &str, name: &str) -> Vec<(bool, EvidenceKind)> {
        read_at("src/Settings.java", excerpt, name)
    }

    /// Each line of `excerpt`, read as evidence at `path`: (in scope, kind).
    fn read_at(path: &str, excerpt: &str, name: &str) -> Vec<(bool, EvidenceKind)> {
        read(
            &super::super::tests::artifact(path, 1, excerpt),
            &Spelling::new(name, None),
        )
        .iter()
        .map(|l| (l.in_scope, l.kind))
        .collect()
    }

    /// Which lines of `excerpt`, read as evidence at `path`, are in scope.
    fn in_scope_at(path: &str, excerpt: &str, name: &str) -> Vec<bool> {
        read_at(path, excerpt, name).iter().map(|l| l.0).collect()
    }

    #[test]
    fn an_annotation_above_a_declaration_of_the_target_belongs_to_it() {
        let got = read_java(
            "    @Nullable\n    private Integer retryDelay;\n",
            "retry_delay",
        );
        assert_eq!(
            got,
            [
                (true, EvidenceKind::Implementation),
                (true, EvidenceKind::Implementation)
            ]
        );
    }

    #[test]
    fn a_doc_comment_over_an_annotated_declaration_of_the_target_documents_it() {
        let ex = "    /** In milliseconds. */\n    @Nullable\n    private Integer retryDelay;\n";
        let got = read_java(ex, "retry_delay");
        assert_eq!(got[0], (true, EvidenceKind::Implementation));
    }

    #[test]
    fn a_python_docstring_is_prose_up_to_its_closing_delimiter() {
        let lines = [
            "def retry(delay):",
            "    \"\"\"Waits before retrying.",
            "    The delay is in milliseconds.",
            "    \"\"\"",
            "    return delay",
        ];
        assert_eq!(prose_lines(&lines, true), [false, true, true, true, false]);
        // A docstring closed on its own line ends there; a bare delimiter opens one.
        let lines = [
            "def retry(delay):",
            "    '''Waits before retrying.'''",
            "    return delay",
            "    '''",
            "    In milliseconds.",
            "    '''",
        ];
        assert_eq!(
            prose_lines(&lines, true),
            [false, true, false, true, true, true]
        );
        // An empty docstring is opened and closed on its line.
        let lines = ["def retry(delay):", "    \"\"\"\"\"\"", "    return delay"];
        assert_eq!(prose_lines(&lines, true), [false, true, false]);
    }

    #[test]
    fn a_python_docstring_documents_the_def_above_it_whichever_quotes_it_uses() {
        for quotes in ["\"\"\"", "'''"] {
            let texts = [
                "def retry_delay(self):".to_string(),
                format!("    {quotes}In milliseconds.{quotes}"),
                "    return 5".to_string(),
            ];
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            let prose = prose_lines(&texts, true);
            assert_eq!(prose, [false, true, false], "{quotes}");
            assert_eq!(documented(&texts, &prose, false, true, (1, 1)), Some(0));
            // So the docstring counts at full strength for the target its def names.
            let got = read_at("pkg/retry.py", &texts.join("\n"), "retry_delay");
            assert_eq!(got[1], (true, EvidenceKind::Implementation), "{quotes}");
        }
    }

    #[test]
    fn a_python_docstring_on_the_first_line_documents_nothing() {
        let texts = ["\"\"\"Retry settings.\"\"\"", "retry_delay = 5"];
        let prose = prose_lines(&texts, true);
        assert_eq!(documented(&texts, &prose, false, true, (0, 0)), None);
    }

    /// In a document every non-blank line is prose, so a sentence that names the target
    /// on one line puts its continuation in scope too.
    #[test]
    fn a_document_sentence_naming_the_target_is_in_scope_on_every_line() {
        let in_scope = in_scope_at(
            "docs/retry.md",
            "The retry_delay setting\nis in milliseconds.\n\nUnrelated.\n",
            "retry_delay",
        );
        assert_eq!(in_scope, [true, true, false, false]);
    }

    /// A table column with an empty header reads as its bare cell; a named one as
    /// `header: cell`.
    #[test]
    fn a_table_cell_under_an_empty_header_is_read_without_a_name() {
        let lines = ["| | unit |", "|---|---|", "| retry_delay | ms |"];
        assert_eq!(
            table_text(&lines),
            [None, None, Some("retry_delay; unit: ms".to_string())]
        );
    }

    /// Annotations directly above a declaration belong to it; a blank line ends them.
    #[test]
    fn an_annotation_above_a_blank_line_does_not_belong_to_the_declaration() {
        let in_scope = in_scope_at(
            "src/Settings.java",
            "    @Deprecated\n\n    @Nullable\n    private Integer retryDelay;\n",
            "retry_delay",
        );
        assert_eq!(in_scope, [false, false, true, true]);
    }

    /// A markdown heading that names the target puts its section in scope, subsections
    /// included, up to the next heading of its level; blank lines stay out.
    #[test]
    fn a_heading_naming_the_target_puts_its_section_in_scope() {
        let in_scope = in_scope_at(
            "docs/retry.md",
            "# retry_delay\nIn milliseconds.\n\n## Details\nDoubles.\n# Next\nOther.\n",
            "retry_delay",
        );
        assert_eq!(in_scope, [true, true, false, false, true, false, false]);
    }

    /// A comment line's calls are not read by name: only code lines get `⟦…⟧`.
    #[test]
    fn a_call_in_a_comment_is_not_read_by_the_declared_names() {
        let ex = "    BillingError(HttpStatus status, boolean retryable) {\n    // retry_delay(409, false)\n    retry_delay(409, false);\n";
        let artifact = super::super::tests::artifact("src/Billing.java", 1, ex);
        let lines = read(&artifact, &Spelling::new("retry_delay", None));
        assert!(!lines[1].masked.contains('⟦'), "{}", lines[1].masked);
        assert!(lines[2].masked.contains('⟦'), "{}", lines[2].masked);
    }

    /// A docstring documents the `def` above it even when a comment follows it.
    #[test]
    fn a_docstring_followed_by_a_comment_still_documents_the_def_above() {
        let texts = [
            "def retry_delay(self):",
            "    \"\"\"In milliseconds.\"\"\"",
            "    # the default",
            "    return 5",
        ];
        let prose = prose_lines(&texts, true);
        assert_eq!(prose, [false, true, true, false]);
        assert_eq!(documented(&texts, &prose, false, true, (1, 2)), Some(0));
    }

    /// In a document, bulleted items of every marker start their own block, and a
    /// sentence break after a word does not.
    #[test]
    fn each_bullet_marker_starts_a_block_and_a_sentence_break_does_not() {
        let texts = [
            "Retries back off.",
            "* in seconds",
            "+ doubling",
            "Wait. Then retry.",
        ];
        assert_eq!(
            prose_blocks(&texts, &[true; 4], true),
            [(0, 0), (1, 1), (2, 3)]
        );
    }

    /// In a document, a line's context is the nearest heading above it.
    #[test]
    fn a_document_line_s_context_is_the_nearest_heading_above() {
        let texts = ["# Retries", "Intro.", "## Delay", "In seconds."];
        assert_eq!(context(&texts, &[true; 4], 3, true), [2]);
        assert_eq!(context(&texts, &[true; 4], 1, true), [0]);
    }

    /// A code line's context holds at most six enclosing lines.
    #[test]
    fn a_code_line_s_context_is_capped_at_six_enclosing_lines() {
        let texts: Vec<String> = (0..9)
            .map(|d| format!("{}x{d} {{", " ".repeat(d)))
            .collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        assert_eq!(context(&texts, &[false; 9], 8, false), [7, 6, 5, 4, 3, 2]);
    }

    #[test]
    fn a_numbered_list_item_starts_a_new_prose_block_in_a_document() {
        let texts = [
            "Retries back off.",
            "1. The delay is in milliseconds.",
            "2) It doubles each time,",
            "up to a limit.",
        ];
        let prose = [true; 4];
        assert_eq!(prose_blocks(&texts, &prose, true), [(0, 0), (1, 1), (2, 3)]);
        // In code, the same run of comment lines is one block.
        assert_eq!(prose_blocks(&texts, &prose, false), [(0, 3)]);
    }

    #[test]
    fn a_code_line_s_context_passes_over_less_indented_comments_and_blank_lines() {
        let texts = [
            "fn retry() {",
            "    let a = 1;",
            "",
            "// The delay is in milliseconds.",
            "    let delay = a;",
            "}",
        ];
        let prose = prose_lines(&texts, false);
        assert_eq!(prose, [false, false, false, true, false, false]);
        assert_eq!(context(&texts, &prose, 4, false), [0]);
        let texts = [
            "fn retry() {",
            "    let a = 1;",
            "",
            "    let delay = a;",
            "}",
        ];
        assert_eq!(context(&texts, &[false; 5], 3, false), [0]);
    }
}
