//! `run`, `check` and `artifact` (being built: see issue "rewind run").

use clap::{Args, Subcommand};

use super::{CliResult, Ctx};

/// `run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The command and its arguments
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// `check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The snapshot before
    pub a: String,
    /// The snapshot after
    pub b: String,
}

/// `artifact`.
#[derive(Args, Debug)]
pub struct ArtifactArgs {
    #[command(subcommand)]
    pub command: ArtifactCommand,
}

/// `artifact` subcommands.
#[derive(Subcommand, Debug)]
pub enum ArtifactCommand {
    /// List artifacts
    Ls,
}

/// `rewind run`.
pub fn run(_ctx: &Ctx, _a: RunArgs) -> CliResult {
    Err(crate::Error::Invalid("rewind run is not built yet".into()).into())
}

/// `rewind check`.
pub fn check(_ctx: &Ctx, _a: CheckArgs) -> CliResult {
    Err(crate::Error::Invalid("rewind check is not built yet".into()).into())
}

/// `rewind artifact`.
pub fn artifact(_ctx: &Ctx, _a: ArtifactArgs) -> CliResult {
    Err(crate::Error::Invalid("rewind artifact is not built yet".into()).into())
}
