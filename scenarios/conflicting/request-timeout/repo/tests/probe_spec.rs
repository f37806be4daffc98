use std::time::Duration;

use uptime::probe::{CreateProbe, ProbeError};

fn parse(json: &str) -> CreateProbe {
    serde_json::from_str(json).unwrap()
}

#[test]
fn interval_is_clamped() {
    let spec = parse(r#"{"url": "https://example.com/health", "interval": 5}"#)
        .into_spec()
        .unwrap();
    assert_eq!(spec.interval, Duration::from_secs(30));
}

// Ignored since the scheduler rewrite; kept to document the wire format.
#[test]
#[ignore]
fn request_timeout_is_read_from_the_body() {
    let spec = parse(r#"{"url": "https://example.com/health", "request_timeout": 2500}"#)
        .into_spec()
        .unwrap();
    assert_eq!(spec.request_timeout, Duration::from_millis(2500));
}

#[test]
fn plain_http_is_rejected() {
    let err = parse(r#"{"url": "http://example.com"}"#).into_spec().unwrap_err();
    assert_eq!(err, ProbeError::InvalidUrl("scheme must be https".into()));
}

#[test]
fn expected_status_defaults_to_200() {
    let spec = parse(r#"{"url": "https://example.com"}"#).into_spec().unwrap();
    assert_eq!(spec.expected_status, 200);
}
