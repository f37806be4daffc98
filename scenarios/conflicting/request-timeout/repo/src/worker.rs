use std::time::Duration;

/// Worker-wide settings, read from `UPTIME_*` environment variables.
pub struct WorkerConfig {
    /// TCP + TLS handshake budget, shared by every probe.
    pub connect_timeout_ms: u64,
    pub concurrency: usize,
}

impl WorkerConfig {
    pub fn from_env() -> Self {
        let get = |k: &str, d: u64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
        WorkerConfig {
            connect_timeout_ms: get("UPTIME_CONNECT_TIMEOUT_MS", 3000),
            concurrency: get("UPTIME_CONCURRENCY", 64) as usize,
        }
    }

    pub fn connect_timeout(&self) -> Duration {
        Duration::from_millis(self.connect_timeout_ms)
    }
}
