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

/// A manifest as a rail reads it: looks up the hash recorded for one path.
///
/// `source.json` whose bytes hash to the digest case.json records is exactly what open
/// wrote (sha256 admits no other bytes), so it is kept as bytes and searched, not built
/// into a map of up to [`MAX_FILES`] entries: most rails read one file, and one pass over
/// the JSON that allocates nothing costs a fraction of building the map. A caller that
/// looks up a second path gets the map, built once.
#[derive(Debug)]
pub struct Recorded {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Json {
        bytes: Vec<u8>,
        searched: std::sync::atomic::AtomicBool,
        map: std::sync::OnceLock<Result<SourceManifest, String>>,
    },
    Parsed(SourceManifest),
}

impl From<SourceManifest> for Recorded {
    fn from(manifest: SourceManifest) -> Recorded {
        Recorded {
            inner: Inner::Parsed(manifest),
        }
    }
}

impl Recorded {
    /// A manifest's canonical JSON, already checked against its digest by the caller.
    #[must_use]
    pub fn verified_json(bytes: Vec<u8>) -> Recorded {
        Recorded {
            inner: Inner::Json {
                bytes,
                searched: std::sync::atomic::AtomicBool::new(false),
                map: std::sync::OnceLock::new(),
            },
        }
    }

    /// The hash recorded for `rel`, `None` when the manifest has no such file.
    ///
    /// # Errors
    ///
    /// The parser's message when the bytes are not a manifest's JSON (never for bytes that
    /// hash to a manifest's digest).
    pub fn hash_of(&self, rel: &str) -> Result<Option<String>, String> {
        use std::sync::atomic::Ordering;
        match &self.inner {
            Inner::Parsed(m) => Ok(m.files.get(rel).cloned()),
            Inner::Json {
                bytes,
                searched,
                map,
            } => {
                if !searched.swap(true, Ordering::Relaxed) {
                    return find_file(bytes, rel).map_err(|e| e.to_string());
                }
                let parsed = map.get_or_init(|| {
                    serde_json::from_slice::<SourceManifest>(bytes).map_err(|e| e.to_string())
                });
                match parsed {
                    Ok(m) => Ok(m.files.get(rel).cloned()),
                    Err(e) => Err(e.clone()),
                }
            }
        }
    }
}

/// `files[rel]` in a manifest's JSON, in one pass that builds nothing but the hash found.
fn find_file(json: &[u8], rel: &str) -> Result<Option<String>, serde_json::Error> {
    use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
    use std::fmt;
    use std::marker::PhantomData;

    /// Whether a key equals `self.0`, read without allocating when it has no escape.
    struct KeyIs<'w>(&'w str);
    impl<'de> DeserializeSeed<'de> for KeyIs<'_> {
        type Value = bool;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
            d.deserialize_str(self)
        }
    }
    impl Visitor<'_> for KeyIs<'_> {
        type Value = bool;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a string")
        }
        fn visit_str<E>(self, v: &str) -> Result<bool, E> {
            Ok(v == self.0)
        }
    }

    /// The value under the key `self.0` of a map, read by the seed `self.1`, every other
    /// value skipped.
    #[derive(Clone)]
    struct Under<'w, S>(&'w str, S);
    impl<'de, S: DeserializeSeed<'de> + Clone> DeserializeSeed<'de> for Under<'_, S> {
        type Value = Option<S::Value>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
    }
    impl<'de, S: DeserializeSeed<'de> + Clone> Visitor<'de> for Under<'_, S> {
        type Value = Option<S::Value>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "a map that may hold `{}`", self.0)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found = None;
            while let Some(hit) = map.next_key_seed(KeyIs(self.0))? {
                if hit {
                    found = Some(map.next_value_seed(self.1.clone())?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(found)
        }
    }

    // The manifest object's `files`, and in it the path's hash.
    let mut de = serde_json::Deserializer::from_slice(json);
    let found = Under("files", Under(rel, PhantomData::<String>)).deserialize(&mut de)?;
    de.end()?;
    Ok(found.flatten())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paths that need escaping in JSON, or sort apart in bytes and characters.
    fn awkward_manifest() -> SourceManifest {
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
        SourceManifest {
            format: SOURCE_FORMAT.into(),
            format_version: SOURCE_FORMAT_VERSION,
            files,
        }
    }

    #[test]
    fn the_manifest_written_directly_is_its_canonical_json() {
        let manifest = awkward_manifest();
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

    /// The one-pass search finds what the map holds, escaped paths included, and nothing
    /// for a path the manifest lacks (a prefix or an unescaped spelling of a key).
    #[test]
    fn searching_the_json_finds_what_the_map_holds() {
        let manifest = awkward_manifest();
        let json = manifest.canonical_bytes();
        for (path, hash) in &manifest.files {
            assert_eq!(
                find_file(&json, path).unwrap().as_ref(),
                Some(hash),
                "{path}"
            );
        }
        for absent in [
            "src",
            "src/a.py ",
            "quote\\\"and\\\\back",
            "files",
            "format",
            "",
        ] {
            assert_eq!(find_file(&json, absent).unwrap(), None, "{absent}");
        }
        // Not a manifest: the parser's error, never a guess.
        for bad in [
            &b"{\"files\":[1]}"[..],
            b"{\"files\":{}} trailing",
            b"[]",
            b"",
        ] {
            assert!(
                find_file(bad, "a").is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    /// A manifest kept as bytes answers like the parsed one on every lookup: the first
    /// searches the bytes, the later ones read the map built once.
    #[test]
    fn a_manifest_kept_as_json_answers_like_the_parsed_one() {
        let manifest = awkward_manifest();
        let json = Recorded::verified_json(manifest.canonical_bytes());
        let parsed = Recorded::from(manifest.clone());
        let map_built = |r: &Recorded| match &r.inner {
            Inner::Json { map, .. } => map.get().is_some_and(Result::is_ok),
            Inner::Parsed(_) => panic!("kept as JSON"),
        };
        assert_eq!(json.hash_of("src/a.py"), parsed.hash_of("src/a.py"));
        assert!(!map_built(&json), "one lookup builds no map");
        for _ in 0..2 {
            for path in manifest.files.keys().chain([&"missing".to_string()]) {
                assert_eq!(json.hash_of(path), parsed.hash_of(path), "{path}");
            }
        }
        assert!(map_built(&json), "later lookups read the map");
        let broken = Recorded::verified_json(b"{\"files\":7}".to_vec());
        assert!(broken.hash_of("a").is_err());
        assert!(broken.hash_of("a").is_err(), "the map's error too");
    }
}
