//! The store's settings, read from `config.toml` in the store directory. Every key is optional;
//! a missing file means the defaults. A malformed file is an error that names it, never ignored:
//! a typo in a retention setting must not silently keep (or forget) the wrong snapshots.
//!
//! ```toml
//! [retention]
//! run_keep_last = 100        # snapshots taken by `rewind run` kept per workspace (0: all)
//! undo_depth = 20            # a workspace's latest undoable operations keep their snapshots
//! gc_after_forgotten = 200   # `rewind run` collects garbage once this many were forgotten (0: never)
//! auto_keep_all_secs = 3600  # automatic snapshots (label=auto): every one this young is kept,
//! auto_hourly_secs = 86400   # then one an hour up to this age,
//! auto_daily_secs = 604800   # then one a day up to this age; older ones are forgotten
//! max_store_bytes = 0        # disk budget: past it, the oldest unprotected snapshots go (0: none)
//!
//! [ignore]
//! globs = ["*.csv", "scratch/"]  # gitignore-style globs every snapshot of this store leaves out
//! default_caches = true          # also leave out node_modules/, __pycache__/, .venv/, /target/
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
    /// Ignore rules for every workspace of the store.
    pub ignore: IgnoreConfig,
}

/// Well-known caches and build outputs left out of snapshots unless `default_caches = false`:
/// they are large, rebuilt from the tree, and often not in any ignore file outside git.
///
/// `target/` only at the workspace's root, where Cargo puts it: deeper, a directory of that
/// name is as often source (the Linux kernel's `drivers/target/`, `Documentation/target/`),
/// and leaving source out of a snapshot silently is worse than storing a build output.
pub const DEFAULT_CACHE_GLOBS: [&str; 4] = ["node_modules/", "__pycache__/", ".venv/", "/target/"];

/// Store-wide ignore rules.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct IgnoreConfig {
    /// gitignore-style globs every snapshot leaves out.
    pub globs: Vec<String>,
    /// Leave out [`DEFAULT_CACHE_GLOBS`] too.
    pub default_caches: bool,
}

impl Default for IgnoreConfig {
    fn default() -> Self {
        IgnoreConfig {
            globs: Vec::new(),
            default_caches: true,
        }
    }
}

impl IgnoreConfig {
    /// Reads only the `[ignore]` table of `config.toml` in `dir`: a snapshot depends on it, and
    /// on nothing else in the file, so a mistake elsewhere (which the retention reports) does
    /// not stop snapshots, while a mistake here does (it would change what they hold).
    pub fn load(dir: &Path) -> Result<IgnoreConfig> {
        let path = dir.join(CONFIG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(IgnoreConfig::default());
            }
            Err(e) => return Err(Error::io(path, e)),
        };
        let bad = |why: String| Error::BadConfig {
            path: path.clone(),
            why,
        };
        // A misspelt table name (`[ignroe]`) is refused too: it would silently change what
        // snapshots hold. The other tables' contents are not looked at.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Tables {
            #[serde(default)]
            ignore: Option<toml::Value>,
            #[allow(dead_code)]
            #[serde(default)]
            retention: Option<toml::Value>,
        }
        let tables: Tables = toml::from_str(&text).map_err(|e| bad(e.message().into()))?;
        match tables.ignore {
            None => Ok(IgnoreConfig::default()),
            Some(v) => v
                .try_into()
                .map_err(|e: toml::de::Error| bad(format!("[ignore]: {}", e.message()))),
        }
    }

    /// The globs a snapshot adds to its own: the defaults (when on), then the store's.
    pub fn globs(&self) -> Vec<String> {
        let defaults = DEFAULT_CACHE_GLOBS.iter().filter(|_| self.default_caches);
        defaults
            .map(|g| g.to_string())
            .chain(self.globs.iter().cloned())
            .collect()
    }
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
    /// Automatic snapshots younger than this (seconds) are all kept.
    pub auto_keep_all_secs: u64,
    /// Up to this age, one automatic snapshot an hour is kept.
    pub auto_hourly_secs: u64,
    /// Up to this age, one automatic snapshot a day is kept; older ones are forgotten.
    pub auto_daily_secs: u64,
    /// The store's disk budget in bytes: past it, a snapshot evicts the oldest unprotected
    /// snapshots; 0: none.
    pub max_store_bytes: u64,
}

impl Retention {
    /// The thinning schedule for automatic snapshots.
    pub fn auto_thinning(&self) -> crate::retention::Thinning {
        crate::retention::Thinning {
            keep_all_secs: self.auto_keep_all_secs,
            hourly_secs: self.auto_hourly_secs,
            daily_secs: self.auto_daily_secs,
        }
    }
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            run_keep_last: 100,
            undo_depth: 20,
            gc_after_forgotten: 200,
            auto_keep_all_secs: crate::retention::Thinning::default().keep_all_secs,
            auto_hourly_secs: crate::retention::Thinning::default().hourly_secs,
            auto_daily_secs: crate::retention::Thinning::default().daily_secs,
            max_store_bytes: 0,
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
        toml::from_str(&text).map_err(|e| Error::BadConfig {
            path: path.clone(),
            why: e.message().to_string(),
        })
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
        // Snapshots read only [ignore]: a mistake inside [retention] does not stop them, a
        // misspelt table does (whatever it holds, it is not what the user meant).
        assert_eq!(
            IgnoreConfig::load(dir.path()).unwrap(),
            IgnoreConfig::default()
        );
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "[ignroe]\nglobs = [\"*.csv\"]\n",
        )
        .unwrap();
        for e in [
            IgnoreConfig::load(dir.path()).unwrap_err().to_string(),
            Config::load(dir.path()).unwrap_err().to_string(),
        ] {
            assert!(e.contains("config.toml") && e.contains("ignroe"), "{e}");
        }
    }
}
