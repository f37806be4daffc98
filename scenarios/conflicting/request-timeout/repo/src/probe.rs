use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;
use url::Url;

/// Default request timeout for a probe.
pub const DEFAULT_REQUEST_TIMEOUT: u64 = 10;
/// Upper bound: a probe may not wait longer than its own interval allows.
pub const MAX_REQUEST_TIMEOUT: u64 = 60;

#[derive(Debug, Deserialize)]
pub struct CreateProbe {
    pub url: String,
    #[serde(default = "default_interval")]
    pub interval: u64,
    pub request_timeout: Option<u64>,
    #[serde(default = "default_status")]
    pub expected_status: u16,
}

fn default_interval() -> u64 {
    60
}

fn default_status() -> u16 {
    200
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProbeSpec {
    pub url: Url,
    pub interval: Duration,
    pub request_timeout: Duration,
    pub expected_status: u16,
}

#[derive(Debug, Error, PartialEq)]
pub enum ProbeError {
    #[error("INVALID_URL: {0}")]
    InvalidUrl(String),
}

impl CreateProbe {
    pub fn into_spec(self) -> Result<ProbeSpec, ProbeError> {
        let url = Url::parse(&self.url).map_err(|e| ProbeError::InvalidUrl(e.to_string()))?;
        if url.scheme() != "https" {
            return Err(ProbeError::InvalidUrl("scheme must be https".into()));
        }
        let interval = Duration::from_secs(self.interval.clamp(30, 3600));
        let timeout = self
            .request_timeout
            .unwrap_or(DEFAULT_REQUEST_TIMEOUT)
            .min(MAX_REQUEST_TIMEOUT);
        Ok(ProbeSpec {
            url,
            interval,
            request_timeout: Duration::from_secs(timeout),
            expected_status: self.expected_status,
        })
    }
}
