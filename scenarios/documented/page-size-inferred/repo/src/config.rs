use std::env;

/// Server settings, read once at start-up.
#[derive(Debug, Clone)]
pub struct Config {
    pub database_url: String,
    /// Largest accepted request body, in bytes.
    pub max_body_size: usize,
    /// Rows fetched per round trip when streaming CSV exports, in bytes of buffer.
    pub export_chunk_size: usize,
}

impl Config {
    pub fn from_env() -> Config {
        Config {
            database_url: env::var("DATABASE_URL").unwrap_or_else(|_| "postgres://localhost/audit".into()),
            max_body_size: env::var("MAX_BODY_SIZE").ok().and_then(|v| v.parse().ok()).unwrap_or(64 * 1024),
            export_chunk_size: 256 * 1024,
        }
    }
}
