use serde::{Deserialize, Serialize};

/// Body of PUT /devices/{device_id}/config, as sent by operators.
#[derive(Debug, Clone, Deserialize)]
pub struct ConfigRequest {
    pub poll_interval: u64,
    pub heartbeat_interval: u64,
    pub firmware_channel: String,
    pub upload_batch_size: u32,
}

#[derive(Debug, Serialize)]
pub struct ConfigApplied {
    pub config_version: u64,
    pub applied_at: String,
}
