mod common;

use common::{seed_events, TestApp};

#[tokio::test]
async fn rejects_page_size_above_the_maximum() {
    let app = TestApp::spawn().await;
    let res = app.get("/audit-events?page_size=501").await;
    assert_eq!(res.status(), 400);
    assert_eq!(res.json()["code"], "PAGE_SIZE_TOO_LARGE");
}

#[tokio::test]
async fn pages_follow_the_token() {
    let app = TestApp::spawn().await;
    seed_events(&app, "tenant-a", 7).await;
    let first = app.get("/audit-events?page_size=5").await.json();
    assert_eq!(first["events"].as_array().unwrap().len(), 5);
    let token = first["next_page_token"].as_str().unwrap();
    let second = app.get(&format!("/audit-events?page_size=5&page_token={token}")).await.json();
    assert_eq!(second["events"].as_array().unwrap().len(), 2);
    assert!(second["next_page_token"].is_null());
}
