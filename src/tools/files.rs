//! Source access for the tools: enumerating and resolving files inside the inspect scopes,
//! and reading a bounded selection of them.
//!
//! Invariant: a path reaches a read only through [`resolve_path`] and [`classify`] — the
//! very rules of add-evidence (no absolute path, no `..`, no symlink out of the repository,
//! nothing outside a scope) — and the whole selection of a batch is checked against the
//! file-count, per-file and combined byte limits before the first byte is read. Files are
//! opened read-only; nothing here writes.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::canon::bytes_hash;
use crate::case::evidence::{Classifier, EvidenceError, resolve_path};
use crate::skill::{EvidenceKind, Scope};

use super::error::ToolError;
use super::limits::ToolLimits;

/// A regular file inside the repository and an inspect scope.
#[derive(Debug, Clone)]
pub(crate) struct ScopedFile {
    /// Canonical, `/`-separated, repository-relative.
    pub rel: String,
    pub abs: PathBuf,
    pub kind: EvidenceKind,
    pub size: u64,
}

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

    /// Every regular file inside a scope, in path order. Symlinks are not followed: a
    /// link's in-repository target is listed under its own canonical path, and a link
    /// leaving the repository is never listed. `.git` is repository metadata, not source.
    pub(crate) fn walk(&self) -> Result<Vec<ScopedFile>, ToolError> {
        let mut out = Vec::new();
        let mut stack = vec![(self.root.clone(), String::new())];
        while let Some((dir, prefix)) = stack.pop() {
            let entries = fs::read_dir(&dir).map_err(ToolError::io("list", &dir))?;
            for entry in entries {
                let entry = entry.map_err(ToolError::io("list", &dir))?;
                let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                    continue;
                };
                let rel = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}/{name}")
                };
                let ty = entry
                    .file_type()
                    .map_err(ToolError::io("inspect", entry.path()))?;
                if ty.is_dir() {
                    if !(prefix.is_empty() && name == ".git") {
                        stack.push((entry.path(), rel));
                    }
                } else if ty.is_file()
                    && let Some(kind) = self.scopes.classify(&rel)
                {
                    let size = entry
                        .metadata()
                        .map_err(ToolError::io("inspect", entry.path()))?
                        .len();
                    out.push(ScopedFile {
                        rel,
                        abs: entry.path(),
                        kind,
                        size,
                    });
                }
            }
        }
        out.sort_by(|a, b| a.rel.cmp(&b.rel));
        Ok(out)
    }
}

/// A file's bytes as read once for the whole batch.
#[derive(Debug)]
pub(crate) struct Loaded {
    pub rel: String,
    pub kind: EvidenceKind,
    pub bytes: Vec<u8>,
    /// `sha256:<hex>` of the whole file.
    pub sha256: String,
}

impl Loaded {
    /// The text, refusing NUL bytes and invalid UTF-8; a leading BOM is dropped.
    pub(crate) fn text(&self, request: &str) -> Result<&str, ToolError> {
        if let Some(offset) = self.bytes.iter().position(|&b| b == 0) {
            return Err(ToolError::BinaryFile {
                request: request.into(),
                path: self.rel.clone(),
                offset,
            });
        }
        let text = std::str::from_utf8(&self.bytes).map_err(|e| ToolError::NotUtf8 {
            request: request.into(),
            path: self.rel.clone(),
            offset: e.valid_up_to(),
        })?;
        Ok(text.strip_prefix('\u{feff}').unwrap_or(text))
    }
}

/// The lines of a text: a line ends after `\n` (its `\n` and a `\r` before it are not
/// part of its text); a last line without `\n` counts; an empty text has no lines. This
/// is the numbering evidence uses, so a line number here cites the same line there.
pub(crate) fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n')
        .map(|l| {
            let l = l.strip_suffix('\n').unwrap_or(l);
            l.strip_suffix('\r').unwrap_or(l)
        })
        .collect()
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

    /// Checks every limit on the selection, then reads it.
    pub(crate) fn read(self, limits: &ToolLimits) -> Result<BTreeMap<String, Loaded>, ToolError> {
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
        let mut out = BTreeMap::new();
        let mut read_total: u64 = 0;
        for (rel, (request, f)) in self.files {
            let bytes = read_bounded(&request, &f, limits)?;
            read_total = read_total.saturating_add(bytes.len() as u64);
            // A file that grew between the check and the read is refused, not cut.
            if read_total > limits.selected_bytes {
                return Err(ToolError::SelectionTooLarge {
                    size: read_total,
                    limit: limits.selected_bytes,
                });
            }
            out.insert(
                rel.clone(),
                Loaded {
                    rel,
                    kind: f.kind,
                    sha256: bytes_hash(&bytes),
                    bytes,
                },
            );
        }
        Ok(out)
    }
}

fn too_large(request: &str, rel: &str, size: u64, limits: &ToolLimits) -> ToolError {
    ToolError::FileTooLarge {
        request: request.into(),
        path: rel.into(),
        size,
        limit: limits.file_bytes,
    }
}

fn read_bounded(request: &str, f: &ScopedFile, limits: &ToolLimits) -> Result<Vec<u8>, ToolError> {
    let file = File::open(&f.abs).map_err(ToolError::io("open", &f.abs))?;
    let mut bytes = Vec::new();
    file.take(limits.file_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(ToolError::io("read", &f.abs))?;
    if bytes.len() as u64 > limits.file_bytes {
        return Err(too_large(request, &f.rel, bytes.len() as u64, limits));
    }
    // The path must still name a canonical in-repository file after the read.
    match fs::canonicalize(&f.abs) {
        Ok(now) if now == f.abs => Ok(bytes),
        _ => Err(ToolError::Source {
            request: request.into(),
            source: EvidenceError::ConcurrentChange {
                path: f.rel.clone(),
            },
        }),
    }
}
