use std::sync::Arc;

use axum::{extract::{Path, State}, http::StatusCode, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::engines::{Engine, Options};
use crate::jobs::{JobStore, State as JobState};

#[derive(Clone)]
pub struct AppState {
    pub jobs: Arc<JobStore>,
    pub engine: Arc<dyn Engine>,
}

#[derive(Deserialize)]
pub struct CreateJob {
    object_key: String,
}

pub async fn create_job(State(app): State<AppState>, Json(body): Json<CreateJob>) -> (StatusCode, Json<Value>) {
    let job = app.jobs.insert(&body.object_key);
    (StatusCode::CREATED, Json(json!({ "job_id": job.id })))
}

#[derive(Deserialize, Default)]
pub struct ProcessBody {
    #[serde(default)]
    options: Options,
}

pub async fn process(
    State(app): State<AppState>,
    Path(job_id): Path<String>,
    body: Option<Json<ProcessBody>>,
) -> (StatusCode, Json<Value>) {
    let Some(job) = app.jobs.get(&job_id) else {
        return (StatusCode::NOT_FOUND, Json(json!({"code": "JOB_NOT_FOUND", "message": "No job with this id."})));
    };
    if job.state == JobState::Running {
        return (StatusCode::CONFLICT, Json(json!({"code": "JOB_ALREADY_RUNNING", "message": "The job is being processed already."})));
    }
    app.jobs.set_state(&job_id, JobState::Running);
    let options = body.map(|Json(b)| b.options).unwrap_or_default();
    match app.engine.process(&job, &options) {
        Ok(()) => {
            app.jobs.set_state(&job_id, JobState::Done);
            (StatusCode::OK, Json(json!({"state": "done"})))
        }
        Err(e) => {
            app.jobs.set_state(&job_id, JobState::Failed);
            (StatusCode::BAD_GATEWAY, Json(json!({"code": "ENGINE_FAILED", "message": e})))
        }
    }
}
