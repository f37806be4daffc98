//! Origin DNS resolution for customer sites.

use std::time::Duration;

pub struct ResolverConfig {
    /// How long a failed lookup is remembered, in milliseconds.
    pub negative_ttl_ms: u64,
    /// Upper bound on any cached answer regardless of the record's own TTL.
    pub max_ttl: Duration,
}

impl Default for ResolverConfig {
    fn default() -> Self {
        ResolverConfig { negative_ttl_ms: 500, max_ttl: Duration::from_secs(300) }
    }
}
