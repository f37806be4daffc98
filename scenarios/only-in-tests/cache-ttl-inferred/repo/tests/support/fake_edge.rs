//! A fake Edgeplane control plane. Its expiry rule mirrors the recorded
//! behaviour of the real edge: an object cached under a rule is served from
//! cache until the rule's ttl has elapsed on the edge clock.

use std::collections::HashMap;
use std::time::Duration;
use tokio::time::Instant;

#[derive(Default)]
pub struct FakeEdge {
    rules: HashMap<String, u64>,
    cached_at: HashMap<String, Instant>,
}

impl FakeEdge {
    pub fn put_rule(&mut self, pattern: &str, ttl: u64) {
        self.rules.insert(pattern.to_string(), ttl);
    }

    pub fn fetch(&mut self, path: &str) -> &'static str {
        let ttl = self.rules.get(path).copied().unwrap_or(0);
        let now = Instant::now();
        match self.cached_at.get(path) {
            Some(t) if now.duration_since(*t) < Duration::from_secs(ttl) => "HIT",
            _ => {
                self.cached_at.insert(path.to_string(), now);
                "MISS"
            }
        }
    }
}
