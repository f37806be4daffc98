//! Source access for the tools: enumerating and resolving files inside the inspect scopes,
//! and streaming a bounded selection of them.
//!
//! Invariant: a path reaches a read only through [`resolve_path`] and [`classify`] — the
//! very rules of add-evidence (no absolute path, no `..`, no symlink out of the repository,
//! nothing outside a scope) — and the whole selection of a batch is checked against the
//! file-count, per-file and combined byte limits before the first byte is read. A read
//! hashes every byte it hands on, in blocks of whole lines, so no file is ever held whole
//! unless its consumer keeps it; a file that grew past its limit, whose path no longer
//! names it, or that hashes differently when read again, is refused. Files are opened
//! read-only; nothing here writes.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{ErrorKind, Read};
use std::num::NonZero;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::canon::streamed_hash;
use crate::case::evidence::walk::{ScopedFile, scoped_files};
use crate::case::evidence::{Classifier, EvidenceError, resolve_path};
use crate::skill::Scope;

use super::error::ToolError;
use crate::case::ToolLimits;

/// The repository as the tools see it.
pub(crate) struct Repo {
    root: PathBuf,
    scopes: Classifier,
}

impl Repo {
    pub(crate) fn new(root: &Path, scopes: &[Scope]) -> Result<Repo, ToolError> {
        let root = fs::canonicalize(root).map_err(ToolError::io("resolve the repository", root))?;
        Ok(Repo {
            root,
            scopes: Classifier::new(scopes),
        })
    }

    /// Resolves a caller-given path with the evidence rules, then requires a scope.
    pub(crate) fn resolve(&self, request: &str, path: &str) -> Result<ScopedFile, ToolError> {
        let wrap = |source| ToolError::Source {
            request: request.into(),
            source,
        };
        let (rel, abs) = resolve_path(&self.root, path).map_err(wrap)?;
        let kind = self
            .scopes
            .classify(&rel)
            .ok_or_else(|| wrap(EvidenceError::OutOfScope { path: rel.clone() }))?;
        let size = fs::metadata(&abs)
            .map_err(ToolError::io("inspect", &abs))?
            .len();
        Ok(ScopedFile {
            rel,
            abs,
            kind,
            size,
        })
    }

    /// Every regular file inside a scope, in path order (see [`scoped_files`]).
    pub(crate) fn walk(&self) -> Result<Vec<ScopedFile>, ToolError> {
        Ok(scoped_files(&self.root, &self.scopes)?)
    }
}

/// A file's bytes, kept whole: only the database snapshots, which are parsed whole.
#[derive(Debug)]
pub(crate) struct Loaded {
    pub rel: String,
    pub bytes: Vec<u8>,
    /// `sha256:<hex>` of the whole file.
    pub sha256: String,
}

impl Loaded {
    /// The text, refusing NUL bytes and invalid UTF-8; a leading BOM is dropped.
    pub(crate) fn text(&self, request: &str) -> Result<&str, ToolError> {
        text_of(&self.bytes).map_err(|e| e.error(request, &self.rel))
    }
}

/// Why bytes are not text. A NUL anywhere wins over invalid UTF-8 before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotText {
    /// The offset of the first NUL byte.
    Binary(usize),
    /// The length of the longest valid UTF-8 prefix.
    NotUtf8(usize),
}

impl NotText {
    pub(crate) fn error(self, request: &str, rel: &str) -> ToolError {
        match self {
            NotText::Binary(offset) => ToolError::BinaryFile {
                request: request.into(),
                path: rel.into(),
                offset,
            },
            NotText::NotUtf8(offset) => ToolError::NotUtf8 {
                request: request.into(),
                path: rel.into(),
                offset,
            },
        }
    }
}

/// The text of whole-file `bytes`: no NUL, valid UTF-8, a leading BOM dropped.
fn text_of(bytes: &[u8]) -> Result<&str, NotText> {
    if let Some(offset) = memchr::memchr(0, bytes) {
        return Err(NotText::Binary(offset));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| NotText::NotUtf8(e.valid_up_to()))?;
    Ok(text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// The lines of a text: a line ends after `\n` (its `\n` and a `\r` before it are not
/// part of its text); a last line without `\n` counts; an empty text has no lines. This
/// is the numbering evidence uses, so a line number here cites the same line there.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive('\n').map(line_text)
}

/// A line without its `\n` and a `\r` before it.
pub(crate) fn line_text(line: &str) -> &str {
    let l = line.strip_suffix('\n').unwrap_or(line);
    l.strip_suffix('\r').unwrap_or(l)
}

/// Receives a file's bytes in order, in blocks of whole lines: every block ends with `\n`
/// except perhaps the file's last.
pub(crate) trait Blocks {
    fn block(&mut self, bytes: &[u8]);
}

/// Receives a file's text from a [`TextScan`].
pub(crate) trait TextSink {
    /// `text` is whole lines of the text (a leading BOM dropped), each ending in `\n`
    /// except perhaps the file's last, and `first` is the 0-based number of its first line.
    /// A block may come from a file later found not to be text: what is made of it is then
    /// never used.
    fn text(&mut self, first: u64, text: &str);
}

/// Decides block by block what [`text_of`] and [`lines`] decide on the whole file, and
/// hands the text on while it is text.
pub(crate) struct TextScan<S> {
    sink: S,
    seen: usize,
    nul: Option<usize>,
    not_utf8: Option<usize>,
    lines: u64,
    /// The text so far ends inside a line (only the file's last block can).
    open: bool,
    bytes: Option<Vec<u8>>,
}

impl<S: TextSink> TextScan<S> {
    /// A scan feeding `sink`, which also keeps the file's bytes when `keep` is set.
    pub(crate) fn new(sink: S, keep: bool) -> TextScan<S> {
        TextScan {
            sink,
            seen: 0,
            nul: None,
            not_utf8: None,
            lines: 0,
            open: false,
            bytes: keep.then(Vec::new),
        }
    }

    /// The file's line count or why it is not text, the sink, and the bytes if kept.
    pub(crate) fn finish(self) -> (Result<u64, NotText>, S, Option<Vec<u8>>) {
        let text = match (self.nul, self.not_utf8) {
            (Some(offset), _) => Err(NotText::Binary(offset)),
            (None, Some(offset)) => Err(NotText::NotUtf8(offset)),
            (None, None) => Ok(self.lines + u64::from(self.open)),
        };
        (text, self.sink, self.bytes)
    }
}

impl<S: TextSink> Blocks for TextScan<S> {
    fn block(&mut self, bytes: &[u8]) {
        let at = self.seen;
        self.seen += bytes.len();
        if let Some(kept) = &mut self.bytes {
            kept.extend_from_slice(bytes);
        }
        if self.nul.is_none() {
            self.nul = memchr::memchr(0, bytes).map(|i| at + i);
        }
        if self.nul.is_some() || self.not_utf8.is_some() {
            return;
        }
        // A block ends after `\n` or at the end of the file, never inside a character, so
        // the first invalid byte of the file is the first invalid byte of its block.
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                self.not_utf8 = Some(at + e.valid_up_to());
                return;
            }
        };
        // The first block holds the whole BOM when there is one: it has no `\n`.
        let text = match at {
            0 => text.strip_prefix('\u{feff}').unwrap_or(text),
            _ => text,
        };
        if text.is_empty() {
            return;
        }
        self.sink.text(self.lines, text);
        self.lines += memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
        self.open = !text.ends_with('\n');
    }
}

/// A file as one read of it found it.
#[derive(Debug, Clone)]
pub(crate) struct Streamed {
    /// The file, its `size` the bytes read.
    pub file: ScopedFile,
    /// `sha256:<hex>` of the whole file.
    pub sha256: String,
}

impl Streamed {
    /// Reads the file again into `sink`, refusing it unless its bytes hash as they did.
    pub(crate) fn reread(
        &self,
        request: &str,
        limits: &ToolLimits,
        sink: &mut impl Blocks,
    ) -> Result<(), ToolError> {
        let again = stream(request, &self.file, limits, BLOCK, &mut Vec::new(), sink)?;
        if again.sha256 != self.sha256 {
            return Err(changed(request, &self.file.rel));
        }
        Ok(())
    }
}

/// The distinct files a batch reads, with the request that first selected each.
#[derive(Default)]
pub(crate) struct Selection {
    files: BTreeMap<String, (String, ScopedFile)>,
}

impl Selection {
    pub(crate) fn add(&mut self, request: &str, file: &ScopedFile) {
        self.files
            .entry(file.rel.clone())
            .or_insert_with(|| (request.to_string(), file.clone()));
    }

    /// Checks every limit on the selection, then streams each file once, in path order,
    /// into the sink `sink` makes for it. Files are read on up to [`READERS`] threads; the
    /// outcome, and the first refusal, are those of reading them one by one.
    pub(crate) fn read<S: Blocks + Send>(
        self,
        limits: &ToolLimits,
        sink: impl Fn(&ScopedFile) -> S + Sync,
    ) -> Result<Vec<(Streamed, S)>, ToolError> {
        if self.files.len() > limits.selected_files {
            return Err(ToolError::TooManyFiles {
                count: self.files.len(),
                limit: limits.selected_files,
            });
        }
        let mut total: u64 = 0;
        for (request, f) in self.files.values() {
            if f.size > limits.file_bytes {
                return Err(too_large(request, &f.rel, f.size, limits));
            }
            total = total.saturating_add(f.size);
        }
        if total > limits.selected_bytes {
            return Err(ToolError::SelectionTooLarge {
                size: total,
                limit: limits.selected_bytes,
            });
        }
        let files: Vec<(String, ScopedFile)> = self.files.into_values().collect();
        let outcomes = crate::par::in_order(&files, readers(), |(request, f), buf| {
            let mut s = sink(f);
            stream(request, f, limits, BLOCK, buf, &mut s).map(|streamed| (streamed, s))
        });
        let mut out = Vec::with_capacity(files.len());
        let mut read_total: u64 = 0;
        for outcome in outcomes {
            let (streamed, s) = outcome.ok_or_else(|| ToolError::Run {
                kind: "io",
                message: "a selected file was not read".into(),
            })??;
            read_total = read_total.saturating_add(streamed.file.size);
            // A file that grew between the check and the read is refused, not cut.
            if read_total > limits.selected_bytes {
                return Err(ToolError::SelectionTooLarge {
                    size: read_total,
                    limit: limits.selected_bytes,
                });
            }
            out.push((streamed, s));
        }
        Ok(out)
    }
}

/// The most threads reading one selection. Reading is hashing and scanning at memory
/// speed, so a few threads are enough to keep up with the page cache.
const READERS: usize = 4;

/// Threads reading one selection: at most [`READERS`], at most the cores.
fn readers() -> usize {
    std::thread::available_parallelism()
        .map_or(1, NonZero::get)
        .min(READERS)
}

fn too_large(request: &str, rel: &str, size: u64, limits: &ToolLimits) -> ToolError {
    ToolError::FileTooLarge {
        request: request.into(),
        path: rel.into(),
        size,
        limit: limits.file_bytes,
    }
}

fn changed(request: &str, rel: &str) -> ToolError {
    ToolError::Source {
        request: request.into(),
        source: EvidenceError::ConcurrentChange { path: rel.into() },
    }
}

/// Bytes read at a time; a buffer grows past this only to hold a longer line.
const BLOCK: usize = 64 * 1024;

/// Reads `f` once into `sink`, in blocks of whole lines, hashing as it goes; at most
/// `fileBytes`, `block` bytes at a time (more for a longer line). `buf` is a buffer to
/// reuse.
pub(super) fn stream(
    request: &str,
    f: &ScopedFile,
    limits: &ToolLimits,
    block: usize,
    buf: &mut Vec<u8>,
    sink: &mut impl Blocks,
) -> Result<Streamed, ToolError> {
    let file = File::open(&f.abs).map_err(ToolError::io("open", &f.abs))?;
    let mut file = file.take(limits.file_bytes.saturating_add(1));
    let mut hasher = Sha256::new();
    let mut size: u64 = 0;
    // `buf[..filled]` is the start of a line not yet handed on.
    let mut filled = 0;
    buf.resize(block.max(1), 0);
    loop {
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(ToolError::io("read", &f.abs)(e)),
        };
        let fresh = filled..filled + n;
        hasher.update(&buf[fresh.clone()]);
        size += n as u64;
        filled += n;
        if let Some(nl) = memchr::memrchr(b'\n', &buf[fresh.clone()]) {
            let end = fresh.start + nl + 1;
            sink.block(&buf[..end]);
            buf.copy_within(end..filled, 0);
            filled -= end;
        }
    }
    if filled > 0 {
        sink.block(&buf[..filled]);
    }
    // A buffer grown for one long line is not kept for the next file.
    if buf.capacity() > 4 * block.max(BLOCK) {
        *buf = Vec::new();
    }
    if size > limits.file_bytes {
        return Err(too_large(request, &f.rel, size, limits));
    }
    // The path must still name a canonical in-repository file after the read.
    match fs::canonicalize(&f.abs) {
        Ok(now) if now == f.abs => Ok(Streamed {
            file: ScopedFile { size, ..f.clone() },
            sha256: streamed_hash(hasher),
        }),
        _ => Err(changed(request, &f.rel)),
    }
}
