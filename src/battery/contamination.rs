//! Contamination: a label's canary anywhere in what a trial produced (R-BAT-3).
//!
//! Invariant: every regular file under the scanned roots is read in bounded chunks (a
//! flood cannot exhaust memory) and never through a symlink; a symlink or special file an
//! agent planted is itself reported as suspicious. Any canary of the set counts, not only
//! the trial's own.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;

const PREFIX: &[u8] = b"ANVIL-CANARY-";
const CHUNK: usize = 1 << 16;

/// What the scan found: `<root label>/<relative path>` of each file holding a canary, and
/// of each non-regular file found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Findings {
    pub canaries: Vec<String>,
    pub special_files: Vec<String>,
}

/// Whether the stream holds any canary of `set`, anywhere (a canary with more characters
/// glued to it is still the canary: appending one must not evade detection).
fn stream_has_canary(mut r: impl Read, set: &BTreeSet<String>) -> std::io::Result<bool> {
    let longest = set.iter().map(String::len).max().unwrap_or(0);
    if longest == 0 {
        return Ok(false);
    }
    let mut window: Vec<u8> = Vec::with_capacity(CHUNK + longest);
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = r.read(&mut buf)?;
        window.extend_from_slice(&buf[..n]);
        let mut from = 0;
        while let Some(pos) = find(&window[from..], PREFIX) {
            let at = &window[from + pos..];
            if set.iter().any(|c| at.starts_with(c.as_bytes())) {
                return Ok(true);
            }
            from += pos + 1;
        }
        if n == 0 {
            return Ok(false);
        }
        // Keep the tail a canary could straddle.
        let keep = window.len().saturating_sub(longest - 1);
        window.drain(..keep);
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Scans every file under each `(label, root)`.
#[must_use]
pub fn scan(roots: &[(&str, &Path)], set: &BTreeSet<String>) -> Findings {
    let mut out = Findings::default();
    for (label, root) in roots {
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let rel = format!(
                    "{label}/{}",
                    path.strip_prefix(root).unwrap_or(&path).display()
                );
                let Ok(ty) = entry.file_type() else { continue };
                if ty.is_dir() {
                    stack.push(path);
                } else if ty.is_file() {
                    let hit = open_nofollow(&path)
                        .and_then(|f| stream_has_canary(f, set))
                        .unwrap_or(false);
                    if hit {
                        out.canaries.push(rel);
                    }
                } else {
                    out.special_files.push(rel);
                }
            }
        }
    }
    out.canaries.sort();
    out.special_files.sort();
    out
}

fn open_nofollow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> BTreeSet<String> {
        ["ANVIL-CANARY-abcdef0123456789".to_string()].into()
    }

    #[test]
    fn finds_a_canary_split_across_chunks() {
        for pad in [0, 1, CHUNK - 20, CHUNK - 5, CHUNK - 1, CHUNK, CHUNK + 3] {
            let mut bytes = vec![b'x'; pad];
            bytes.extend_from_slice(b"ANVIL-CANARY-abcdef0123456789 tail");
            assert!(stream_has_canary(&bytes[..], &set()).unwrap(), "pad {pad}");
        }
    }

    #[test]
    fn only_a_canary_of_the_set_counts_even_with_characters_glued_on() {
        let bytes = b"ANVIL-CANARY-zzzz and ANVIL-CANARY-abcdef012345678 (one short)";
        assert!(!stream_has_canary(&bytes[..], &set()).unwrap());
        let bytes = b"ANVIL-CANARY-zzzz then ANVIL-CANARY-abcdef0123456789";
        assert!(stream_has_canary(&bytes[..], &set()).unwrap());
        let bytes = b"xANVIL-CANARY-abcdef01234567890extra";
        assert!(stream_has_canary(&bytes[..], &set()).unwrap());
    }

    #[test]
    fn symlinks_are_reported_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(
            outside.path().join("l.json"),
            "ANVIL-CANARY-abcdef0123456789",
        )
        .unwrap();
        std::os::unix::fs::symlink(outside.path().join("l.json"), dir.path().join("link")).unwrap();
        let f = scan(&[("run", dir.path())], &set());
        assert!(f.canaries.is_empty());
        assert_eq!(f.special_files, ["run/link"]);
    }
}
