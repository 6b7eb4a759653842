//! `rewind completions SHELL` and `rewind man`: generated from the argument definitions, so
//! they list exactly the options the binary takes.

use std::path::PathBuf;

use clap::{Args, CommandFactory};

use super::{Cli, CliResult};

/// `rewind completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `rewind man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write rewind.1 and a page per command (rewind-snapshot.1, ...) into DIR instead of
    /// printing rewind.1
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// Prints the completion script for `a.shell` on stdout.
pub fn completions(a: CompletionsArgs) -> CliResult {
    let mut cmd = Cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(a.shell, &mut cmd, "rewind", &mut out);
    Ok(0)
}

/// Prints rewind's man page (roff) on stdout, or writes every page into a directory.
pub fn man(a: ManArgs) -> CliResult {
    let cmd = Cli::command();
    match a.out_dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(|e| rewind::Error::io(&dir, e))?;
            clap_mangen::generate_to(cmd, &dir).map_err(|e| rewind::Error::io(&dir, e))?;
            Ok(0)
        }
        None => {
            let mut out = std::io::stdout().lock();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            Ok(0)
        }
    }
}
