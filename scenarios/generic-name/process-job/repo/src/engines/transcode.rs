use super::{Engine, Options};
use crate::jobs::Job;

pub struct Transcoder;

impl Engine for Transcoder {
    /// Spawns ffmpeg to produce an HLS rendition next to the source object.
    fn process(&self, job: &Job, options: &Options) -> Result<(), String> {
        let preset = options.get("preset").map(String::as_str).unwrap_or("720p");
        let status = std::process::Command::new("ffmpeg")
            .args(["-i", &job.object_key, "-preset", preset, "-f", "hls", &format!("{}.m3u8", job.object_key)])
            .status()
            .map_err(|e| e.to_string())?;
        status.success().then_some(()).ok_or_else(|| format!("ffmpeg exited with {status}"))
    }
}
