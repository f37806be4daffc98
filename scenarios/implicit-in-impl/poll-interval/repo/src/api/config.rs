use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde_json::json;

use crate::model::{ConfigApplied, ConfigRequest};
use crate::registry::{DeviceState, Registry};
use crate::schedule::AgentSchedule;

pub async fn put_config(
    State(registry): State<Registry>,
    Path(device_id): Path<String>,
    Json(req): Json<ConfigRequest>,
) -> Result<Json<ConfigApplied>, (StatusCode, Json<serde_json::Value>)> {
    let device = registry
        .get(&device_id)
        .ok_or_else(|| err(StatusCode::NOT_FOUND, "DEVICE_NOT_FOUND"))?;
    if device.state == DeviceState::Offline {
        return Err(err(StatusCode::CONFLICT, "DEVICE_OFFLINE"));
    }
    let schedule = AgentSchedule::from_request(&req)
        .map_err(|_| err(StatusCode::UNPROCESSABLE_ENTITY, "INTERVAL_OUT_OF_RANGE"))?;
    let applied = registry.push_config(&device_id, schedule, &req.firmware_channel, req.upload_batch_size);
    Ok(Json(ConfigApplied {
        config_version: applied.version,
        applied_at: applied.at.to_rfc3339(),
    }))
}

fn err(status: StatusCode, code: &str) -> (StatusCode, Json<serde_json::Value>) {
    (status, Json(json!({ "code": code })))
}
