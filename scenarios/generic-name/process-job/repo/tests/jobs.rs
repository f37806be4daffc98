// The binary crate has no library target, so the store is compiled in directly. No engine
// is configured in these tests.
#[path = "../src/jobs.rs"]
mod jobs;

use jobs::{JobStore, State};

#[test]
fn new_jobs_start_created() {
    let store = JobStore::default();
    let job = store.insert("uploads/a.png");
    assert_eq!(job.state, State::Created);
    assert_eq!(store.get(&job.id).unwrap().object_key, "uploads/a.png");
}

#[test]
fn state_changes_are_kept() {
    let store = JobStore::default();
    let job = store.insert("uploads/b.mov");
    store.set_state(&job.id, State::Failed);
    assert_eq!(store.get(&job.id).unwrap().state, State::Failed);
}
