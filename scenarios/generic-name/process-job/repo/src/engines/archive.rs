use super::{Engine, Options};
use crate::jobs::Job;

pub struct Archiver {
    pub days: u32,
}

impl Engine for Archiver {
    /// Moves the object to cold storage and deletes the hot copy after `days`.
    fn process(&self, job: &Job, _options: &Options) -> Result<(), String> {
        println!("archive {} (hot copy expires in {} days)", job.object_key, self.days);
        Ok(())
    }
}
