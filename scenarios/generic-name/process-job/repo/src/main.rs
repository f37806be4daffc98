use std::sync::Arc;

use axum::{routing::post, Router};

mod engines;
mod handlers;
mod jobs;
mod shutdown;

#[tokio::main]
async fn main() {
    let engine = engines::from_env().unwrap_or_else(|e| shutdown::fatal(&e));
    let state = handlers::AppState { jobs: Arc::new(jobs::JobStore::default()), engine };
    let app = Router::new()
        .route("/jobs", post(handlers::create_job))
        .route("/jobs/:job_id/process", post(handlers::process))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await.unwrap();
    axum::serve(listener, app).await.unwrap();
}
