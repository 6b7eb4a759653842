//! The store's settings, read from `config.toml` in the store directory. Every key is optional;
//! a missing file means the defaults. A malformed file is an error that names it, never ignored:
//! a typo in a retention setting must not silently keep (or forget) the wrong snapshots.
//!
//! ```toml
//! [retention]
//! run_keep_last = 100        # snapshots taken by `rewind run` kept per workspace (0: all)
//! undo_depth = 20            # a workspace's latest undoable operations keep their snapshots
//! gc_after_forgotten = 200   # `rewind run` collects garbage once this many were forgotten (0: never)
//! ```

use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};

/// The file's name inside the store directory.
pub const CONFIG_FILE: &str = "config.toml";

/// Store settings.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Retention of snapshots and operations.
    pub retention: Retention,
}

/// How long snapshots and operations are kept.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Retention {
    /// How many of a workspace's snapshots taken by `rewind run` (labels `before`, `after`,
    /// `after_failure`) survive the automatic forget after each run; 0 keeps them all.
    pub run_keep_last: usize,
    /// How many of a workspace's latest operations that changed it stay undoable: their
    /// before and after snapshots are never forgotten.
    pub undo_depth: usize,
    /// After `rewind run` has forgotten this many snapshots since the last gc, it runs one;
    /// 0 never does.
    pub gc_after_forgotten: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            run_keep_last: 100,
            undo_depth: 20,
            gc_after_forgotten: 200,
        }
    }
}

impl Config {
    /// Reads `config.toml` from the store directory `dir` (defaults when there is none).
    pub fn load(dir: &Path) -> Result<Config> {
        let path = dir.join(CONFIG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(e) => return Err(Error::io(path, e)),
        };
        toml::from_str(&text)
            .map_err(|e| Error::Invalid(format!("{}: {}", path.display(), e.message())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_partial_files_and_typos() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Config::load(dir.path()).unwrap(), Config::default());
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "[retention]\nrun_keep_last = 4\n",
        )
        .unwrap();
        let c = Config::load(dir.path()).unwrap();
        assert_eq!(c.retention.run_keep_last, 4);
        assert_eq!(c.retention.undo_depth, 20);
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "[retention]\nrun_keep_lats = 4\n",
        )
        .unwrap();
        let e = Config::load(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("config.toml") && e.contains("run_keep_lats"),
            "{e}"
        );
    }
}
