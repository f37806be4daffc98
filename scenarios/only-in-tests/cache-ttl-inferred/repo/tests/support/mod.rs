mod fake_edge;

use std::sync::{Arc, Mutex};

pub use fake_edge::FakeEdge;

/// Shared handle on the fake control plane the API under test talks to.
#[derive(Clone, Default)]
pub struct FakeEdgeHandle(Arc<Mutex<FakeEdge>>);

impl FakeEdgeHandle {
    pub fn fetch(&self, path: &str) -> &'static str {
        self.0.lock().unwrap().fetch(path)
    }
}

pub async fn spawn_api() -> (TestClient, FakeEdgeHandle) {
    let edge = FakeEdgeHandle::default();
    let client = TestClient::start(edgectl_api::app_with(edge.clone().into_control_plane())).await;
    (client, edge)
}

pub use edgectl_api::testing::TestClient;
