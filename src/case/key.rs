//! Identities of cases and runs: [`CaseKey`] and [`RunId`].

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::air::TargetKey;
use crate::canon::sha256_hex;

/// Longest folded key before the hash suffix; keeps run paths well under `NAME_MAX`.
const MAX_FOLDED: usize = 150;

/// `<skill>--<target-key>`, path-safe and collision-free.
///
/// Characters outside `[A-Za-z0-9._-]` fold to `_`, and `..` folds to `._` (so no key is a
/// parent reference). Whenever folding or truncation changed anything, `-x` and 16 hex
/// digits of sha256 over the unfolded pair are appended, so two pairs that fold alike
/// still get distinct keys.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CaseKey(String);

impl CaseKey {
    #[must_use]
    pub fn new(skill: &str, target: &TargetKey) -> CaseKey {
        let raw = format!("{skill}--{target}");
        let mut folded: String = raw
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        while folded.contains("..") {
            folded = folded.replace("..", "._");
        }
        if folded.starts_with('.') || folded.starts_with('-') {
            folded.replace_range(0..1, "_");
        }
        let mut changed = folded != raw;
        if folded.len() > MAX_FOLDED {
            folded.truncate(MAX_FOLDED);
            changed = true;
        }
        if changed {
            let digest = sha256_hex(format!("{skill}\u{0}{target}").as_bytes());
            folded.push_str("-x");
            folded.push_str(&digest[..16]);
        }
        CaseKey(folded)
    }

    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CaseKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A run id: a ULID, so runs sort by creation time and never collide under concurrency.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RunId(ulid::Ulid);

impl RunId {
    #[must_use]
    pub fn generate() -> RunId {
        RunId(ulid::Ulid::new())
    }

    pub fn parse(s: &str) -> Option<RunId> {
        ulid::Ulid::from_string(s).ok().map(RunId)
    }
}

impl TryFrom<String> for RunId {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        RunId::parse(&s).ok_or_else(|| format!("`{s}` is not a run id (ULID)"))
    }
}

impl From<RunId> for String {
    fn from(id: RunId) -> String {
        id.0.to_string()
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_keys_are_left_alone() {
        let t: TargetKey = "op.get_user.input.body.email".parse().unwrap();
        assert_eq!(
            CaseKey::new("describe-field", &t).as_str(),
            "describe-field--op.get_user.input.body.email"
        );
    }

    #[test]
    fn folded_keys_carry_a_hash_and_stay_distinct() {
        let a: TargetKey = "op.x.input.body.a/b".parse().unwrap();
        let b: TargetKey = "op.x.input.body.a:b".parse().unwrap();
        let ka = CaseKey::new("describe-field", &a);
        let kb = CaseKey::new("describe-field", &b);
        assert_ne!(ka, kb);
        assert!(
            ka.as_str()
                .starts_with("describe-field--op.x.input.body.a_b-x")
        );
    }
}
