//! The streamed read against the whole-file algorithm it replaced, on random files; and the
//! refusal of a file whose second read differs from its first.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;

use super::{Read, Wants, read};
use crate::case::ToolLimits;
use crate::case::evidence::EvidenceError;
use crate::case::evidence::walk::ScopedFile;
use crate::skill::EvidenceKind;
use crate::tools::error::ToolError;
use crate::tools::files::{NotText, Selection, TextScan, stream};
use crate::tools::request::Page;
use crate::tools::result::{CheckedFile, ContextLine, LineMatch, PageInfo};
use crate::tools::source::{FileContext, FileSearch, Matcher, Reader, symbol_occurrences};

// The whole-file algorithm, as it was: the file's bytes in memory, checked, split, searched.

fn old_text(bytes: &[u8]) -> Result<&str, NotText> {
    if let Some(offset) = bytes.iter().position(|&b| b == 0) {
        return Err(NotText::Binary(offset));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| NotText::NotUtf8(e.valid_up_to()))?;
    Ok(text.strip_prefix('\u{feff}').unwrap_or(text))
}

fn old_lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n')
        .map(|l| {
            let l = l.strip_suffix('\n').unwrap_or(l);
            l.strip_suffix('\r').unwrap_or(l)
        })
        .collect()
}

fn old_display(line: &str, max: usize) -> (String, bool) {
    match line.char_indices().nth(max) {
        Some((cut, _)) => (line[..cut].to_string(), true),
        None => (line.to_string(), false),
    }
}

#[derive(Debug, Clone)]
enum Query {
    Text(String, bool),
    Symbol(String),
}

impl Query {
    fn count(&self, line: &str) -> usize {
        match self {
            Query::Text(t, true) => line.matches(t.as_str()).count(),
            Query::Text(t, false) => line.to_lowercase().matches(&t.to_lowercase()).count(),
            Query::Symbol(s) => symbol_occurrences(line, s),
        }
    }

    fn matcher(&self) -> Matcher {
        match self {
            Query::Text(t, cs) => Matcher::text(t, *cs),
            Query::Symbol(s) => Matcher::symbol(s),
        }
    }
}

type Answer = (Vec<CheckedFile>, PageInfo, Vec<LineMatch>);

/// The old `search`: `files` are (path, bytes) in request order.
fn old_search(
    files: &[(String, Vec<u8>)],
    q: &Query,
    page: Page,
    line_chars: usize,
) -> Result<Answer, (String, NotText)> {
    let mut checked = Vec::new();
    let mut hits = Vec::new();
    let mut texts = Vec::new();
    for (i, (path, bytes)) in files.iter().enumerate() {
        let ls = old_lines(old_text(bytes).map_err(|e| (path.clone(), e))?);
        checked.push(CheckedFile {
            path: path.clone(),
            sha256: crate::canon::bytes_hash(bytes),
            lines: ls.len() as u64,
        });
        for (n, line) in ls.iter().enumerate() {
            let k = q.count(line);
            if k > 0 {
                hits.push((i, n, k));
            }
        }
        texts.push(ls);
    }
    let (info, range) = PageInfo::of(hits.len(), page.offset, page.limit);
    let matches = hits[range]
        .iter()
        .map(|&(i, n, k)| {
            let (text, text_truncated) = old_display(texts[i][n], line_chars);
            LineMatch {
                path: files[i].0.clone(),
                sha256: crate::canon::bytes_hash(&files[i].1),
                line: n as u64 + 1,
                occurrences: k as u64,
                text,
                text_truncated,
            }
        })
        .collect();
    Ok((checked, info, matches))
}

// Random files made of the pieces that matter: line ends of every kind, BOMs, NULs, bytes
// that are not UTF-8, characters whose case changes their length, and long runs.

fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::sample::select(vec!["ab", "a", "b", "AB", "x_ab", "ab_", " ", "abab", "k"])
            .prop_map(|s| s.as_bytes().to_vec()),
        3 => prop::sample::select(vec!["\n", "\r\n", "\r", "\n\n"]).prop_map(|s| s.as_bytes().to_vec()),
        1 => prop::sample::select(vec!["\u{e9}", "\u{c9}", "\u{3a3}", "\u{212a}", "\u{130}", "\u{feff}"])
            .prop_map(|s| s.as_bytes().to_vec()),
        1 => (1usize..300, prop::sample::select(vec!["ab", "x", "\u{e9}"]))
            .prop_map(|(n, s)| s.repeat(n).into_bytes()),
    ]
}

fn text_bytes() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<bool>(),
        prop::collection::vec(piece(), 0..40),
        any::<bool>(),
    )
        .prop_map(|(bom, pieces, newline)| {
            let mut bytes = if bom {
                "\u{feff}".as_bytes().to_vec()
            } else {
                Vec::new()
            };
            bytes.extend(pieces.concat());
            if newline {
                bytes.push(b'\n');
            }
            bytes
        })
}

fn file_bytes() -> impl Strategy<Value = Vec<u8>> {
    let broken = prop::sample::select(vec![
        &b"\0"[..],
        b"\xff",
        b"\xc3",
        b"\xe2\x82",
        b"\xef\xbb",
        b"\xc3\x28",
    ]);
    prop_oneof![
        6 => text_bytes(),
        1 => (text_bytes(), any::<prop::sample::Index>(), broken).prop_map(|(mut bytes, at, bad)| {
            let at = at.index(bytes.len() + 1);
            bytes.splice(at..at, bad.iter().copied());
            bytes
        }),
    ]
}

fn query() -> impl Strategy<Value = Query> {
    prop_oneof![
        (
            prop::sample::select(vec![
                "ab", "a", "b", "AB", "k", "\u{e9}", "b\u{e9}", "ab ab"
            ]),
            any::<bool>()
        )
            .prop_map(|(t, cs)| Query::Text(t.into(), cs)),
        prop::sample::select(vec!["ab", "a", "x_ab", "k"]).prop_map(|s| Query::Symbol(s.into())),
    ]
}

/// A directory holding `files`, and each as the selection sees it (canonical path).
fn world(files: &[Vec<u8>]) -> (tempfile::TempDir, Vec<ScopedFile>) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let scoped = files
        .iter()
        .enumerate()
        .map(|(i, bytes)| scoped(&root, &format!("f{i}.txt"), bytes))
        .collect();
    (dir, scoped)
}

fn scoped(root: &Path, rel: &str, bytes: &[u8]) -> ScopedFile {
    let abs = root.join(rel);
    std::fs::write(&abs, bytes).unwrap();
    ScopedFile {
        rel: rel.into(),
        abs,
        kind: EvidenceKind::Doc,
        size: bytes.len() as u64,
    }
}

/// Reads `files` as one batch whose request 0 searches them in `order` with `matchers[0]`.
fn read_search(
    files: &[ScopedFile],
    order: &[usize],
    matchers: &[Option<Matcher>],
    limits: &ToolLimits,
) -> Result<(Read, Vec<String>), ToolError> {
    let mut selection = Selection::default();
    let mut wants: BTreeMap<String, Wants> = BTreeMap::new();
    let rels: Vec<String> = order.iter().map(|&i| files[i].rel.clone()).collect();
    for &i in order {
        selection.add("q", &files[i]);
        wants
            .entry(files[i].rel.clone())
            .or_default()
            .searches
            .push(0);
    }
    let read = read(selection, &wants, matchers, limits)?;
    Ok((read, rels))
}

fn limits(line_chars: usize) -> ToolLimits {
    ToolLimits {
        line_chars,
        ..ToolLimits::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// One file streamed in blocks of any size (down to one byte, so lines span reads and
    /// the buffer grows) gives the whole-file hash, line count, refusal, hits, kept hits
    /// and context lines.
    #[test]
    fn a_file_streamed_in_any_blocks_reads_as_the_whole_file(
        bytes in file_bytes(),
        q in query(),
        block in 1usize..40,
        keep in (0u64..20, 0u64..20),
        context in (1u32..12, 0u32..6),
        line_chars in 1usize..12,
    ) {
        let (_dir, files) = world(std::slice::from_ref(&bytes));
        let matcher = q.matcher();
        let keep = keep.0..keep.0 + keep.1;
        let (start, end) = (context.0, context.0 + context.1);
        let readers = vec![
            (0, Reader::Search(FileSearch::new(&matcher, keep.clone(), line_chars))),
            (1, Reader::Context(FileContext::new(start, end, line_chars))),
        ];
        let mut scan = TextScan::new(readers, true);
        let streamed = stream("q", &files[0], &ToolLimits::default(), block, &mut Vec::new(), &mut scan).unwrap();
        let (text, readers, kept) = scan.finish();
        prop_assert_eq!(&streamed.sha256, &crate::canon::bytes_hash(&bytes));
        prop_assert_eq!(streamed.file.size, bytes.len() as u64);
        prop_assert_eq!(kept.as_deref(), Some(&bytes[..]));
        let old = old_text(&bytes).map(old_lines);
        prop_assert_eq!(text, old.as_ref().map(|ls| ls.len() as u64).map_err(|e| *e));
        let Ok(ls) = old else { return Ok(()) };
        let hits: Vec<(u64, u64, (String, bool))> = ls
            .iter()
            .enumerate()
            .filter_map(|(n, l)| {
                let k = q.count(l);
                (k > 0).then(|| (n as u64 + 1, k as u64, old_display(l, line_chars)))
            })
            .collect();
        let context: Vec<ContextLine> = (start..=end)
            .filter_map(|n| ls.get(n as usize - 1).map(|l| (n, l)))
            .map(|(n, l)| {
                let (text, text_truncated) = old_display(l, line_chars);
                ContextLine { line: n.into(), text, text_truncated }
            })
            .collect();
        for (_, reader) in readers {
            match reader {
                Reader::Search(s) => {
                    prop_assert_eq!(s.hits, hits.len() as u64);
                    let kept: Vec<(u64, u64, (String, bool))> = s
                        .kept
                        .into_iter()
                        .map(|h| (h.line, h.occurrences, (h.text, h.text_truncated)))
                        .collect();
                    let want: Vec<_> = hits
                        .iter()
                        .skip(usize::try_from(keep.start).unwrap())
                        .take(usize::try_from(keep.end - keep.start).unwrap())
                        .cloned()
                        .collect();
                    prop_assert_eq!(kept, want);
                }
                Reader::Context(c) => prop_assert_eq!(c.lines, context.clone()),
            }
        }
    }

    /// A search over several files, named in any order, answers as the whole-file search
    /// did: the checked files, the page and its matches, or the first file (in request
    /// order) that is not text.
    #[test]
    fn a_batch_search_answers_as_the_whole_file_search(
        files in prop::collection::vec(file_bytes(), 1..5),
        order_seed in any::<prop::sample::Index>(),
        q in query(),
        offset in 0usize..30,
        limit in 1usize..12,
        line_chars in 1usize..12,
    ) {
        let (_dir, scoped) = world(&files);
        // One of the orders of the files: rotated, reversed or not.
        let n = files.len();
        let turn = order_seed.index(2 * n);
        let mut order: Vec<usize> = (0..n).map(|i| (i + turn) % n).collect();
        if turn >= n {
            order.reverse();
        }
        let page = Page { offset, limit };
        let limits = limits(line_chars);
        let matchers = [Some(q.matcher())];
        let matcher = matchers[0].as_ref().unwrap();
        let (read, rels) = read_search(&scoped, &order, &matchers, &limits).unwrap();
        let named: Vec<(String, Vec<u8>)> = order.iter().map(|&i| (scoped[i].rel.clone(), files[i].clone())).collect();
        match old_search(&named, &q, page, line_chars) {
            Err((path, e)) => {
                let got = read.check_text("q", &rels).unwrap_err();
                prop_assert_eq!(got.to_string(), e.error("q", &path).to_string());
            }
            Ok((checked, info, matches)) => {
                read.check_text("q", &rels).unwrap();
                prop_assert_eq!(read.checked(&rels), checked);
                let (got_info, got_matches) = read.page("q", 0, &rels, matcher, page, &limits).unwrap();
                prop_assert_eq!(got_info, info);
                prop_assert_eq!(got_matches, matches);
            }
        }
    }
}

/// Files larger than one read block, with lines across the block boundaries, read as one.
#[test]
fn files_larger_than_a_block_read_as_the_whole_file() {
    let line = "capture_timeout padding \u{e9}\u{e9} and more text\r\n";
    let files = vec![
        line.repeat(9000).into_bytes(),
        format!(
            "\u{feff}{}",
            "x".repeat(200_000) + " ab\n" + &line.repeat(3000)
        )
        .into_bytes(),
    ];
    let (_dir, scoped) = world(&files);
    let q = Query::Text("\u{e9} and".into(), true);
    let matchers = [Some(q.matcher())];
    let matcher = matchers[0].as_ref().unwrap();
    let page = Page {
        offset: 8995,
        limit: 10,
    };
    let limits = limits(30);
    let (read, rels) = read_search(&scoped, &[1, 0], &matchers, &limits).unwrap();
    let named = vec![
        (scoped[1].rel.clone(), files[1].clone()),
        (scoped[0].rel.clone(), files[0].clone()),
    ];
    let (checked, info, found) = old_search(&named, &q, page, 30).unwrap();
    assert_eq!(read.checked(&rels), checked);
    let got = read.page("q", 0, &rels, matcher, page, &limits).unwrap();
    assert_eq!(got, (info, found));
}

fn is_concurrent_change(e: &ToolError) -> bool {
    matches!(
        e,
        ToolError::Source {
            source: EvidenceError::ConcurrentChange { .. },
            ..
        }
    )
}

/// Regression: under streaming a page's text is read a second time; a file that changed
/// between the two reads of one batch must be refused, never shown with the first read's
/// hash — even when its size and line count did not change.
#[test]
fn a_file_changed_between_two_reads_of_one_batch_is_refused() {
    let (_dir, scoped) = world(&[b"one ab\ntwo\n".to_vec(), b"three ab\n".to_vec()]);
    let matchers = [Some(Matcher::text("ab", true))];
    let matcher = matchers[0].as_ref().unwrap();
    let page = Page {
        offset: 0,
        limit: 10,
    };
    let limits = ToolLimits::default();
    let (read, rels) = read_search(&scoped, &[0, 1], &matchers, &limits).unwrap();
    std::fs::write(&scoped[1].abs, b"three ac\n").unwrap();
    let err = read
        .page("q", 0, &rels, matcher, page, &limits)
        .unwrap_err();
    assert!(is_concurrent_change(&err), "{err}");
    // The same bytes written again are the same file.
    std::fs::write(&scoped[1].abs, b"three ab\n").unwrap();
    let (_, found) = read.page("q", 0, &rels, matcher, page, &limits).unwrap();
    assert_eq!(found.len(), 2);
    // A second read of the file itself is held to the first read's hash.
    let first = &read.files[&scoped[0].rel].streamed;
    std::fs::write(&scoped[0].abs, b"one ab\ntwo!\n").unwrap();
    let mut scan = TextScan::new(Vec::<(usize, Reader)>::new(), false);
    let err = first.reread("q", &limits, &mut scan).unwrap_err();
    assert!(is_concurrent_change(&err), "{err}");
}
