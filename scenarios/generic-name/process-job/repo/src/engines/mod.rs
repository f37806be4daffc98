use std::collections::HashMap;
use std::sync::Arc;

use crate::jobs::Job;

mod archive;
mod thumbnail;
mod transcode;

pub type Options = HashMap<String, String>;

pub trait Engine: Send + Sync {
    fn process(&self, job: &Job, options: &Options) -> Result<(), String>;
}

/// The engine of this deployment, named by `JOBS_ENGINE`.
pub fn from_env() -> Result<Arc<dyn Engine>, String> {
    let name = std::env::var("JOBS_ENGINE").map_err(|_| "JOBS_ENGINE is not set".to_string())?;
    match name.as_str() {
        "thumbnail" => Ok(Arc::new(thumbnail::Thumbnailer::default())),
        "transcode" => Ok(Arc::new(transcode::Transcoder)),
        "archive" => Ok(Arc::new(archive::Archiver { days: 30 })),
        other => Err(format!("unknown engine `{other}`")),
    }
}
