use std::sync::Arc;

use axum::{routing::{delete, get, post}, Router};
use projects_store::PgStore;

mod auth;
mod routes;

#[tokio::main]
async fn main() {
    let store = Arc::new(PgStore::connect_from_env().await.expect("database"));
    let app = Router::new()
        .route("/projects/:project_id", get(routes::projects::get_project))
        .route("/projects/:project_id", delete(routes::projects::delete_project))
        .route("/projects/:project_id/archive", post(routes::projects::archive_project))
        .with_state(store);
    let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await.unwrap();
    axum::serve(listener, app).await.unwrap();
}
