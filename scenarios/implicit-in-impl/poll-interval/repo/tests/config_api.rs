mod support;

use support::{online_device, offline_device, TestServer};

#[tokio::test]
async fn unknown_device_is_404() {
    let server = TestServer::start().await;
    let res = server.put_config("dev-missing", support::sample_config()).await;
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn offline_device_is_rejected() {
    let server = TestServer::start().await;
    let id = offline_device(&server).await;
    let res = server.put_config(&id, support::sample_config()).await;
    assert_eq!(res.status(), 409);
    assert_eq!(res.code(), "DEVICE_OFFLINE");
}

#[tokio::test]
async fn config_version_increases() {
    let server = TestServer::start().await;
    let id = online_device(&server).await;
    let a = server.put_config(&id, support::sample_config()).await.json();
    let b = server.put_config(&id, support::sample_config()).await.json();
    assert!(b["config_version"].as_u64() > a["config_version"].as_u64());
}
