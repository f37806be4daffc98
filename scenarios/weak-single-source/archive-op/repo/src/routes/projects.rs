use std::sync::Arc;

use axum::{
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    Json,
};
use projects_store::{PgStore, ProjectStore, StoreError};
use serde::Serialize;

use crate::auth::{self, Role};

type Shared = State<Arc<PgStore>>;
type ApiResult<T> = Result<T, (StatusCode, Json<ApiError>)>;

#[derive(Serialize)]
pub struct ApiError {
    code: &'static str,
}

#[derive(Serialize)]
pub struct ProjectView {
    project_id: String,
    name: String,
    archived: bool,
}

fn fail(status: StatusCode, code: &'static str) -> (StatusCode, Json<ApiError>) {
    (status, Json(ApiError { code }))
}

fn map_store(e: StoreError) -> (StatusCode, Json<ApiError>) {
    match e {
        StoreError::NotFound => fail(StatusCode::NOT_FOUND, "PROJECT_NOT_FOUND"),
        StoreError::Conflict => fail(StatusCode::CONFLICT, "PROJECT_ALREADY_ARCHIVED"),
        _ => fail(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL"),
    }
}

pub async fn get_project(State(store): Shared, Path(id): Path<String>, headers: HeaderMap) -> ApiResult<Json<ProjectView>> {
    auth::require(&headers, Role::Viewer).map_err(|_| fail(StatusCode::FORBIDDEN, "FORBIDDEN"))?;
    let p = store.get(&id).await.map_err(map_store)?;
    Ok(Json(ProjectView { project_id: p.id, name: p.name, archived: p.archived }))
}

pub async fn archive_project(State(store): Shared, Path(id): Path<String>, headers: HeaderMap) -> ApiResult<Json<ProjectView>> {
    auth::require(&headers, Role::Owner).map_err(|_| fail(StatusCode::FORBIDDEN, "FORBIDDEN"))?;
    let p = store.archive(&id).await.map_err(map_store)?;
    Ok(Json(ProjectView { project_id: p.id, name: p.name, archived: p.archived }))
}

/// Permanently removes the project, its boards and its attachments.
pub async fn delete_project(State(store): Shared, Path(id): Path<String>, headers: HeaderMap) -> ApiResult<StatusCode> {
    auth::require(&headers, Role::Owner).map_err(|_| fail(StatusCode::FORBIDDEN, "FORBIDDEN"))?;
    store.purge(&id).await.map_err(map_store)?;
    Ok(StatusCode::NO_CONTENT)
}

/// Pre-4.0 archiving copied the project's attachments to cold storage and dropped the rows.
/// Nothing routes here any more; kept until the last v3 tenants migrate.
#[allow(dead_code)]
async fn archive_project_v3(store: &PgStore, id: &str) -> Result<(), StoreError> {
    store.export_to_cold_storage(id).await?;
    store.purge(id).await
}
