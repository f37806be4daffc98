//! The recorded content of a repository that has no commit to read from.
//!
//! Invariant: a manifest maps each in-scope regular file (canonical, `/`-separated path)
//! to the sha256 of its bytes as they were when the manifest was built; its digest is the
//! canonical hash of that map. Symlinks are never followed, `.git` and the excluded
//! directories are never entered, so nothing written later under them can join it.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub const SOURCE_FORMAT: &str = "anvil-source";
pub const SOURCE_FORMAT_VERSION: u32 = 1;

/// The most files a manifest records; a larger uncommitted tree must be committed first.
pub const MAX_FILES: usize = 100_000;

/// `source.json`: what an uncommitted repository held at open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SourceManifest {
    pub format: String,
    pub format_version: u32,
    /// Repository-relative path → `sha256:` of its bytes.
    pub files: BTreeMap<String, String>,
}

impl SourceManifest {
    /// Hashes every regular file under `root` for which `include` holds, skipping
    /// symlinks, `.git` and every directory in `exclude` (canonical paths). Files larger
    /// than `max_file_bytes` are recorded by size only as unreadable (they are refused as
    /// evidence anyway).
    ///
    /// # Errors
    ///
    /// An I/O error when `root` cannot be canonicalized, a directory cannot be listed, an
    /// entry's type or metadata cannot be read, or an included file cannot be read as a
    /// regular file; an `io::Error::other` when more than [`MAX_FILES`] files are in scope.
    pub fn build(
        root: &Path,
        include: &dyn Fn(&str) -> bool,
        exclude: &[PathBuf],
        max_file_bytes: u64,
    ) -> io::Result<SourceManifest> {
        let root = std::fs::canonicalize(root)?;
        let mut files = BTreeMap::new();
        let mut stack = vec![(root.clone(), String::new())];
        while let Some((dir, prefix)) = stack.pop() {
            let mut entries = std::fs::read_dir(&dir)?.collect::<Result<Vec<_>, _>>()?;
            entries.sort_by_key(std::fs::DirEntry::file_name);
            for entry in entries {
                let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                    continue; // not UTF-8: no evidence path can name it
                };
                let rel = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}/{name}")
                };
                let path = entry.path();
                let kind = entry.file_type()?;
                if kind.is_dir() {
                    if name != ".git" && !exclude.contains(&path) {
                        stack.push((path, rel));
                    }
                } else if kind.is_file() && include(&rel) {
                    if files.len() >= MAX_FILES {
                        return Err(io::Error::other(format!(
                            "more than {MAX_FILES} files are in scope; commit the repository so evidence is read from git"
                        )));
                    }
                    let len = entry.metadata()?.len();
                    let hash = if len > max_file_bytes {
                        format!("oversize:{len}")
                    } else {
                        crate::canon::bytes_hash(&crate::fsio::read_regular(&path, max_file_bytes)?)
                    };
                    files.insert(rel, hash);
                }
            }
        }
        Ok(SourceManifest {
            format: SOURCE_FORMAT.into(),
            format_version: SOURCE_FORMAT_VERSION,
            files,
        })
    }

    /// The canonical hash of the manifest: what case.json records as `sourceDigest`.
    #[must_use]
    pub fn digest(&self) -> String {
        crate::canon::bytes_hash(&self.canonical_bytes())
    }

    /// The manifest's canonical JSON ([`crate::canon::canonical_json`]), written directly:
    /// its keys are already in order (the fields below sorted by hand, `files` a
    /// `BTreeMap` of `String` keys, which sorts as the canonical form does), so no
    /// intermediate `Value` is built for a map of up to [`MAX_FILES`] entries. This is what
    /// `source.json` holds, so that its bytes hash to the digest.
    #[must_use]
    pub fn canonical_bytes(&self) -> Vec<u8> {
        #[derive(Serialize)]
        struct Canonical<'a> {
            files: &'a BTreeMap<String, String>,
            format: &'a str,
            #[serde(rename = "formatVersion")]
            format_version: u32,
        }
        // A struct of strings and an integer: serialising it cannot fail.
        serde_json::to_vec(&Canonical {
            files: &self.files,
            format: &self.format,
            format_version: self.format_version,
        })
        .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_written_directly_is_its_canonical_json() {
        let files = [
            "src/z.py",
            "src/a.py",
            "Docs/\u{e9}t\u{e9}.md",
            "quote\"and\\back",
            "tab\there",
            "\u{1}control",
            "a/b",
            "a-b",
            "\u{1f600}.txt",
        ]
        .into_iter()
        .enumerate()
        .map(|(i, p)| (p.to_string(), format!("sha256:{i:064}")))
        .collect();
        let manifest = SourceManifest {
            format: SOURCE_FORMAT.into(),
            format_version: SOURCE_FORMAT_VERSION,
            files,
        };
        let canonical = crate::canon::canonical_json(&manifest);
        assert_eq!(
            String::from_utf8(manifest.canonical_bytes()).unwrap(),
            canonical
        );
        assert_eq!(manifest.digest(), crate::canon::canonical_hash(&manifest));
        // Keys in byte order: a control character first, the emoji last.
        assert!(
            canonical.starts_with("{\"files\":{\"\\u0001control\"")
                && canonical.contains("\"\u{1f600}.txt\":\"sha256:0"),
            "{canonical}"
        );
    }
}
