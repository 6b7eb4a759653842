//! The one `git` helper every test binary uses (the library's tests/engine.rs and the CLI's
//! cli/tests/main.rs include this file): a `git` that sees neither the user's nor the system's
//! configuration nor an outer repository. Tests run inside a checkout and sometimes under a
//! git hook, where GIT_DIR, GIT_INDEX_FILE or GIT_WORK_TREE would point git at that repository
//! instead of the scratch one.

use std::path::Path;
use std::process::Command;

/// `git` run in `dir`, isolated: every inherited `GIT_*` variable removed, no system or global
/// configuration, `HOME` = `dir`, discovery stopped above `dir`, a fixed author and committer.
pub fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("GIT_") {
            c.env_remove(k);
        }
    }
    c.current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap_or(dir))
        .env("HOME", dir)
        .env_remove("COLUMNS")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t");
    c
}
