mod support;

use std::time::Duration;
use support::{spawn_api, FakeEdgeHandle};

#[tokio::test(start_paused = true)]
async fn cache_ttl_keeps_an_object_for_that_many_seconds() {
    let (api, edge): (_, FakeEdgeHandle) = spawn_api().await;
    let res = api
        .post("/sites/site_1/cache-rules", r#"{"path_pattern": "/assets/app.js", "cache_ttl": 90}"#)
        .await;
    assert_eq!(res.status(), 201);

    assert_eq!(edge.fetch("/assets/app.js"), "MISS");
    tokio::time::advance(Duration::from_secs(89)).await;
    assert_eq!(edge.fetch("/assets/app.js"), "HIT");
    tokio::time::advance(Duration::from_secs(2)).await;
    assert_eq!(edge.fetch("/assets/app.js"), "MISS");
}

#[tokio::test]
async fn zero_ttl_is_rejected() {
    let (api, _) = spawn_api().await;
    let res = api
        .post("/sites/site_1/cache-rules", r#"{"path_pattern": "/x", "cache_ttl": 0}"#)
        .await;
    assert_eq!(res.status(), 422);
    assert_eq!(res.json()["code"], "TTL_OUT_OF_RANGE");
}

#[tokio::test]
async fn unknown_site() {
    let (api, _) = spawn_api().await;
    let res = api
        .post("/sites/nope/cache-rules", r#"{"path_pattern": "/x", "cache_ttl": 60}"#)
        .await;
    assert_eq!(res.status(), 404);
}
