//! A run the HTTP server started in the background: the answer that starts it
//! (`POST .../run` with `wait: false`) and its state (`GET /v1/runs/{run}`).

use serde::{Deserialize, Serialize};

use super::{ErrorBody, RunResult};

/// Where a background run is.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The command has not ended yet.
    Running,
    /// It ended and its result is kept.
    Finished,
    /// It could not run or its snapshots failed: the error is kept.
    Failed,
}

/// A run started in the background (status 202).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunStarted {
    /// The run's id (`GET /v1/runs/{run}`, the `run` of its events).
    pub run: u64,
    /// Always `running`.
    pub status: RunStatus,
}

/// A run's state: running, then its result or the error that stopped it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunState {
    /// The run's id.
    pub run: u64,
    /// The workspace's directory.
    pub workspace: String,
    /// Where it is.
    pub status: RunStatus,
    /// Its result, once `finished`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<RunResult>,
    /// What stopped it, once `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

impl RunState {
    /// Run `run` in `workspace`, just started.
    pub fn running(run: u64, workspace: String) -> Self {
        RunState {
            run,
            workspace,
            status: RunStatus::Running,
            result: None,
            error: None,
        }
    }

    /// The run ended: its result, or the error that stopped it.
    pub fn finish(&mut self, outcome: Result<RunResult, ErrorBody>) {
        match outcome {
            Ok(r) => {
                self.status = RunStatus::Finished;
                self.result = Some(r);
            }
            Err(e) => {
                self.status = RunStatus::Failed;
                self.error = Some(e);
            }
        }
    }
}
