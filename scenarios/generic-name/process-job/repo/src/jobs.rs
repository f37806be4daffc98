use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Clone, Debug, PartialEq)]
pub enum State {
    Created,
    Running,
    Done,
    Failed,
}

#[derive(Clone, Debug)]
pub struct Job {
    pub id: String,
    pub object_key: String,
    pub state: State,
}

#[derive(Default)]
pub struct JobStore {
    jobs: Mutex<HashMap<String, Job>>,
}

impl JobStore {
    pub fn insert(&self, object_key: &str) -> Job {
        let mut jobs = self.jobs.lock().unwrap();
        let job = Job { id: format!("job_{}", jobs.len() + 1), object_key: object_key.into(), state: State::Created };
        jobs.insert(job.id.clone(), job.clone());
        job
    }

    pub fn get(&self, id: &str) -> Option<Job> {
        self.jobs.lock().unwrap().get(id).cloned()
    }

    pub fn set_state(&self, id: &str, state: State) {
        if let Some(job) = self.jobs.lock().unwrap().get_mut(id) {
            job.state = state;
        }
    }
}
