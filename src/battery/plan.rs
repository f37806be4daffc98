//! Which trials a battery runs: the selected scenarios × arms × repeats, and the stable
//! share a partition takes (R-BAT-13).
//!
//! Invariant: the plan is a pure function of the corpus, the selection, the arms, the
//! repeats and the partition; a scenario's trials all land in one shard, so every shard is
//! self-contained and the shards together cover every trial exactly once.

use globset::{Glob, GlobSetBuilder};

use super::arm::Arm;

/// `hash:K/N` — the K-th of N shards (1-based, as nextest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    pub k: u32,
    pub n: u32,
}

impl Partition {
    /// Parses `hash:K/N`: shard K of N.
    ///
    /// # Errors
    ///
    /// A [`PartitionError`] naming `s` when it is not of the form `hash:K/N`, K or N is
    /// not a number, or not 1 <= K <= N.
    pub fn parse(s: &str) -> Result<Partition, PartitionError> {
        let bad = |why| PartitionError {
            given: s.to_string(),
            why,
        };
        let rest = s.strip_prefix("hash:").ok_or(bad(PartitionFault::Form))?;
        let (k, n) = rest.split_once('/').ok_or(bad(PartitionFault::Form))?;
        let k: u32 = k.parse().map_err(|_| bad(PartitionFault::KNotANumber))?;
        let n: u32 = n.parse().map_err(|_| bad(PartitionFault::NNotANumber))?;
        if n == 0 || k == 0 || k > n {
            return Err(bad(PartitionFault::OutOfRange));
        }
        Ok(Partition { k, n })
    }

    /// Whether the scenario `id` falls in this shard.
    #[must_use]
    pub fn takes(&self, id: &str) -> bool {
        shard_of(id, self.n) == self.k - 1
    }
}

/// A `--partition` that is not `hash:K/N` with 1 <= K <= N.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{given}`: {why}")]
pub struct PartitionError {
    pub given: String,
    pub why: PartitionFault,
}

/// What is wrong with a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PartitionFault {
    #[error("a partition is `hash:K/N` (e.g. hash:1/3)")]
    Form,
    #[error("K is not a number")]
    KNotANumber,
    #[error("N is not a number")]
    NNotANumber,
    #[error("K must be between 1 and N, and N at least 1")]
    OutOfRange,
}

impl std::fmt::Display for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "hash:{}/{}", self.k, self.n)
    }
}

/// FNV-1a of the scenario id modulo `n`: stable across machines and releases.
#[must_use]
pub fn shard_of(id: &str, n: u32) -> u32 {
    let h = id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    (h % u64::from(n)) as u32
}

/// Scenario selection: classes, id globs, a limit.
#[derive(Debug, Clone, Default)]
pub struct Selector {
    pub classes: Vec<String>,
    pub globs: Vec<String>,
    pub limit: Option<usize>,
}

impl Selector {
    /// The selected ids, in order. A glob that does not compile is an error naming it.
    ///
    /// # Errors
    ///
    /// A message naming the `--scenario` glob that does not compile (or the glob set that
    /// cannot be built), or the filters when they select nothing from a corpus that is not
    /// empty (an unknown class, a glob that matches no id, `--limit 0`).
    pub fn select<'a>(
        &self,
        ids: &'a [(String, String)],
    ) -> Result<Vec<&'a (String, String)>, String> {
        let mut b = GlobSetBuilder::new();
        for g in &self.globs {
            b.add(Glob::new(g).map_err(|e| format!("--scenario `{g}`: {e}"))?);
        }
        let set = b.build().map_err(|e| e.to_string())?;
        let mut out: Vec<&(String, String)> = ids
            .iter()
            .filter(|(id, class)| {
                (self.classes.is_empty() || self.classes.contains(class))
                    && (self.globs.is_empty() || set.is_match(id))
            })
            .collect();
        if let Some(n) = self.limit {
            out.truncate(n);
        }
        if out.is_empty() && !ids.is_empty() {
            return Err(format!(
                "the selection ({}) matches no scenario of the corpus: nothing would be measured",
                self.describe()
            ));
        }
        Ok(out)
    }

    /// The filters as given on the command line.
    fn describe(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(self.classes.iter().map(|c| format!("--class {c}")));
        parts.extend(self.globs.iter().map(|g| format!("--scenario {g}")));
        parts.extend(self.limit.map(|n| format!("--limit {n}")));
        parts.join(" ")
    }
}

/// One planned trial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub scenario: String,
    pub arm: Arm,
    pub repeat: u32,
}

/// Scenarios × arms × repeats, scenario-major, arms in the given order.
#[must_use]
pub fn plan(scenarios: &[&str], arms: &[Arm], repeats: u32) -> Vec<Planned> {
    let mut out = Vec::new();
    for s in scenarios {
        for arm in arms {
            for r in 0..repeats {
                out.push(Planned {
                    scenario: s.to_string(),
                    arm: *arm,
                    repeat: r,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_cover_every_scenario_exactly_once() {
        let ids: Vec<String> = (0..200).map(|i| format!("class{}/s{i}", i % 7)).collect();
        for n in 1..6 {
            for id in &ids {
                let takers = (1..=n).filter(|k| Partition { k: *k, n }.takes(id)).count();
                assert_eq!(takers, 1, "{id} in {n} shards");
            }
        }
    }

    #[test]
    fn bad_partitions_are_refused() {
        for bad in [
            "1/3", "hash:0/3", "hash:4/3", "hash:1/0", "hash:a/3", "hash:1",
        ] {
            assert!(Partition::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Partition::parse("hash:2/3").unwrap(),
            Partition { k: 2, n: 3 }
        );
    }
}
