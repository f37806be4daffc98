use std::time::Duration;

use crate::model::ConfigRequest;

/// The agent's timing, as the scheduler understands it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSchedule {
    pub poll_every: Duration,
    pub heartbeat_every: Duration,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ScheduleError {
    #[error("poll interval out of range")]
    PollOutOfRange,
    #[error("heartbeat interval out of range")]
    HeartbeatOutOfRange,
}

const MIN_POLL: Duration = Duration::from_millis(250);
const MAX_POLL: Duration = Duration::from_secs(3600);
const MAX_HEARTBEAT: Duration = Duration::from_secs(24 * 3600);

impl AgentSchedule {
    pub fn from_request(req: &ConfigRequest) -> Result<AgentSchedule, ScheduleError> {
        let poll_every = Duration::from_millis(req.poll_interval);
        if poll_every < MIN_POLL || poll_every > MAX_POLL {
            return Err(ScheduleError::PollOutOfRange);
        }
        let heartbeat_every = Duration::from_secs(req.heartbeat_interval);
        if heartbeat_every.is_zero() || heartbeat_every > MAX_HEARTBEAT {
            return Err(ScheduleError::HeartbeatOutOfRange);
        }
        Ok(AgentSchedule { poll_every, heartbeat_every })
    }

    // Legacy agents (< 1.0) took the poll interval in whole seconds; they were
    // retired in 2023 and this helper is no longer called.
    #[allow(dead_code)]
    fn legacy_poll_secs(&self) -> u64 {
        self.poll_every.as_secs()
    }
}
