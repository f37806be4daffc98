use std::collections::HashMap;

use crate::probe::ProbeSpec;

pub const MAX_PROBES_PER_WORKSPACE: usize = 50;

#[derive(Debug, PartialEq)]
pub enum ScheduleError {
    QuotaExceeded,
    Unavailable,
}

#[derive(Default)]
pub struct Scheduler {
    by_workspace: HashMap<String, Vec<(String, ProbeSpec)>>,
    next_id: u64,
    pub down: bool,
}

impl Scheduler {
    pub fn add(&mut self, workspace: &str, spec: ProbeSpec) -> Result<String, ScheduleError> {
        if self.down {
            return Err(ScheduleError::Unavailable);
        }
        let probes = self.by_workspace.entry(workspace.to_string()).or_default();
        if probes.len() >= MAX_PROBES_PER_WORKSPACE {
            return Err(ScheduleError::QuotaExceeded);
        }
        self.next_id += 1;
        let id = format!("prb_{:06}", self.next_id);
        probes.push((id.clone(), spec));
        Ok(id)
    }
}
