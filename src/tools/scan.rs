//! One batch's reads: every selected file streamed once, in path order, through what the
//! batch's requests make of it — each search's hit count, each context's lines, a
//! snapshot's bytes — and the text checks; then each search's page, whose lines are read
//! again for their text.
//!
//! Invariant: every result comes from bytes whose sha256 is the one this batch records for
//! the file: a file is read once, and the second read of a search page's files must hash
//! the same or the batch is refused. Memory holds per-file counts and the lines to show,
//! never the selection.

use std::collections::BTreeMap;
use std::ops::Range;

use super::error::ToolError;
use super::files::{Loaded, NotText, Selection, Streamed, TextScan};
use super::request::Page;
use super::result::{CheckedFile, ContextLine, LineMatch, PageInfo, ReadContextResult};
use super::source::{FileContext, FileSearch, Matcher, Reader};
use crate::case::ToolLimits;

/// What a batch's requests want of one file.
#[derive(Default)]
pub(crate) struct Wants {
    /// The searches reading it, by request index.
    pub searches: Vec<usize>,
    /// The `read_context` requests reading it: (request index, start, end).
    pub contexts: Vec<(usize, u32, u32)>,
    /// Its bytes, whole: it is a snapshot.
    pub whole: bool,
}

/// One file as the batch read it.
pub(crate) struct Scanned {
    pub streamed: Streamed,
    /// Its line count, or why it is not text.
    text: Result<u64, NotText>,
    /// (request index, lines hit) for each search reading it.
    hits: Vec<(usize, u64)>,
    /// (request index, lines) for each `read_context` reading it.
    contexts: Vec<(usize, Vec<ContextLine>)>,
}

impl Scanned {
    /// Its line count, refusing a file that is not text.
    pub(crate) fn lines(&self, request: &str) -> Result<u64, ToolError> {
        self.text
            .map_err(|e| e.error(request, &self.streamed.file.rel))
    }

    fn hits(&self, index: usize) -> u64 {
        self.hits
            .iter()
            .find(|(i, _)| *i == index)
            .map_or(0, |(_, n)| *n)
    }
}

/// What a batch read.
pub(crate) struct Read {
    pub files: BTreeMap<String, Scanned>,
    /// The files kept whole (the snapshots).
    pub whole: BTreeMap<String, Loaded>,
}

/// Reads `selection` once. `matchers` holds each request's matcher, by request index.
pub(crate) fn read(
    selection: Selection,
    wants: &BTreeMap<String, Wants>,
    matchers: &[Option<Matcher>],
    limits: &ToolLimits,
) -> Result<Read, ToolError> {
    let nothing = Wants::default();
    let streamed = selection.read(limits, |f| {
        let want = wants.get(&f.rel).unwrap_or(&nothing);
        let mut readers = Vec::new();
        for &i in &want.searches {
            if let Some(Some(m)) = matchers.get(i) {
                let search = FileSearch::new(m, 0..0, limits.line_chars);
                readers.push((i, Reader::Search(search)));
            }
        }
        for &(i, start, end) in &want.contexts {
            let context = FileContext::new(start, end, limits.line_chars);
            readers.push((i, Reader::Context(context)));
        }
        TextScan::new(readers, want.whole)
    })?;
    let mut files = BTreeMap::new();
    let mut whole = BTreeMap::new();
    for (streamed, scan) in streamed {
        let (text, readers, bytes) = scan.finish();
        let rel = streamed.file.rel.clone();
        if let Some(bytes) = bytes {
            let loaded = Loaded {
                rel: rel.clone(),
                bytes,
                sha256: streamed.sha256.clone(),
            };
            whole.insert(rel.clone(), loaded);
        }
        let mut hits = Vec::new();
        let mut contexts = Vec::new();
        for (i, reader) in readers {
            match reader {
                Reader::Search(s) => hits.push((i, s.hits)),
                Reader::Context(c) => contexts.push((i, c.lines)),
            }
        }
        let scanned = Scanned {
            streamed,
            text,
            hits,
            contexts,
        };
        files.insert(rel, scanned);
    }
    Ok(Read { files, whole })
}

impl Read {
    /// The files named by `rels` that were read, in that order.
    fn pick<'a>(&'a self, rels: &'a [String]) -> impl Iterator<Item = &'a Scanned> {
        rels.iter().filter_map(|r| self.files.get(r))
    }

    /// Refuses a search over a file that is not text.
    pub(crate) fn check_text(&self, request: &str, rels: &[String]) -> Result<(), ToolError> {
        for f in self.pick(rels) {
            f.lines(request)?;
        }
        Ok(())
    }

    /// What search request `index` checked: every file, its hash and its line count.
    pub(crate) fn checked(&self, rels: &[String]) -> Vec<CheckedFile> {
        self.pick(rels)
            .map(|f| CheckedFile {
                path: f.streamed.file.rel.clone(),
                sha256: f.streamed.sha256.clone(),
                lines: f.text.unwrap_or(0),
            })
            .collect()
    }

    /// Search request `index`'s page over `rels` (in request order): counted from the
    /// read, the text of its matches read again from the files holding them.
    pub(crate) fn page(
        &self,
        request: &str,
        index: usize,
        rels: &[String],
        matcher: &Matcher,
        page: Page,
        limits: &ToolLimits,
    ) -> Result<(PageInfo, Vec<LineMatch>), ToolError> {
        let total: u64 = self.pick(rels).map(|f| f.hits(index)).sum();
        // Matching lines across the selected files: saturates, never wraps, where `usize`
        // is narrower than `u64`.
        let total = usize::try_from(total).unwrap_or(usize::MAX);
        let (info, range) = PageInfo::of(total, page.offset, page.limit);
        let range = range.start as u64..range.end as u64;
        let mut found = Vec::with_capacity(usize::try_from(info.returned).unwrap_or(0));
        let mut before = 0;
        for f in self.pick(rels) {
            if before >= range.end {
                break;
            }
            let here = before..before + f.hits(index);
            before = here.end;
            let keep = local(&range, &here);
            if keep.is_empty() {
                continue;
            }
            let mut scan = TextScan::new(FileSearch::new(matcher, keep, limits.line_chars), false);
            f.streamed.reread(request, limits, &mut scan)?;
            let (_, search, _) = scan.finish();
            found.extend(search.kept.into_iter().map(|h| LineMatch {
                path: f.streamed.file.rel.clone(),
                sha256: f.streamed.sha256.clone(),
                line: h.line,
                occurrences: h.occurrences,
                text: h.text,
                text_truncated: h.text_truncated,
            }));
        }
        Ok((info, found))
    }

    /// Refuses a context outside its file, or in a file that is not text.
    pub(crate) fn check_context(
        &self,
        request: &str,
        rel: &str,
        start: u32,
        end: u32,
    ) -> Result<(&Scanned, u64), ToolError> {
        let f = self.files.get(rel).ok_or_else(|| ToolError::Run {
            kind: "io",
            message: "a preflighted file is missing".into(),
        })?;
        let line_count = f.lines(request)?;
        if u64::from(end) > line_count {
            return Err(ToolError::InvalidRange {
                request: request.into(),
                path: rel.into(),
                start: start.into(),
                end: end.into(),
                reason: format!("the file has {line_count} lines"),
            });
        }
        Ok((f, line_count))
    }

    /// `read_context` request `index`: lines `start..=end` of `rel`.
    pub(crate) fn context(
        &self,
        request: &str,
        index: usize,
        rel: &str,
        start: u32,
        end: u32,
    ) -> Result<ReadContextResult, ToolError> {
        let (f, line_count) = self.check_context(request, rel, start, end)?;
        let lines = f
            .contexts
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, lines)| lines.clone())
            .unwrap_or_default();
        Ok(ReadContextResult {
            path: f.streamed.file.rel.clone(),
            kind: f.streamed.file.kind,
            sha256: f.streamed.sha256.clone(),
            start_line: start.into(),
            end_line: end.into(),
            line_count,
            lines,
        })
    }
}

/// The part of the page `range` (indices among all hits) that falls in one file whose hits
/// are `here`, as indices among that file's hits.
fn local(range: &Range<u64>, here: &Range<u64>) -> Range<u64> {
    range.start.max(here.start) - here.start..range.end.min(here.end).saturating_sub(here.start)
}

#[cfg(test)]
mod tests;
