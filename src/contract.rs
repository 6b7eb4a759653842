//! File contracts: which paths a command may change.
//!
//! A contract has `allow` globs (when any are given, every changed path must match one),
//! `forbid` globs (no changed path may match one) and `no_new_files` (the command may not add
//! paths). It comes from `--allow`, `--forbid`, `--no-new-files`, or a TOML file with the same
//! keys:
//!
//! ```toml
//! allow = ["src/**", "tests/**", "Cargo.lock"]
//! forbid = ["*.pem", ".github/**"]
//! no_new_files = false
//! on_violation = "revert"   # optional: report | revert | fail
//! ```
//!
//! Globs follow gitignore's conventions, because that is what people already write for paths:
//! a pattern without a `/` matches a file name at any depth (`*.pem`); a pattern with a `/` is
//! anchored at the workspace root (a leading `/` is allowed, `./` is dropped); `*` and `?` do
//! not cross `/`, `**` does; a pattern that names a directory covers everything below it
//! (`docs` and `docs/` both cover `docs/a/b.md`).
//!
//! A rename is checked on both of its paths (moving a forbidden file away touches it), and is
//! not a new file (the number of files stays the same).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::diff::tree::{ChangeStatus, FileChange};
use crate::error::{Error, IoContext, Result};

/// What to do with violations after `rewind run`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum OnViolation {
    /// List them in the result; change nothing.
    #[default]
    Report,
    /// Put the violating paths back to the before snapshot.
    Revert,
    /// Report, and make rewind exit non-zero.
    Fail,
}

impl OnViolation {
    /// The lowercase name used in flags, TOML and JSON.
    pub fn name(self) -> &'static str {
        match self {
            OnViolation::Report => "report",
            OnViolation::Revert => "revert",
            OnViolation::Fail => "fail",
        }
    }
}

/// A contract as written by the user.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contract {
    /// When non-empty, every changed path must match one of these.
    #[serde(default)]
    pub allow: Vec<String>,
    /// No changed path may match one of these.
    #[serde(default)]
    pub forbid: Vec<String>,
    /// No path may be added.
    #[serde(default, alias = "no-new-files")]
    pub no_new_files: bool,
    /// What to do with violations (a command-line flag wins over the file).
    #[serde(default, alias = "on-violation")]
    pub on_violation: Option<OnViolation>,
}

impl Contract {
    /// Parses a contract from TOML text; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Contract> {
        toml::from_str(text).map_err(|e| Error::Contract(format!("{origin}: {e}")))
    }

    /// Reads a contract file.
    pub fn load(path: &Path) -> Result<Contract> {
        let text = std::fs::read_to_string(path).at(path)?;
        Contract::from_toml(&text, &path.display().to_string())
    }

    /// Adds `other`'s rules to this one's (used to combine a file with flags).
    pub fn merge(&mut self, other: Contract) {
        self.allow.extend(other.allow);
        self.forbid.extend(other.forbid);
        self.no_new_files |= other.no_new_files;
        if other.on_violation.is_some() {
            self.on_violation = other.on_violation;
        }
    }

    /// Whether the contract constrains nothing.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.forbid.is_empty() && !self.no_new_files
    }
}

/// Why a path violates a contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// It matches a `forbid` glob.
    Forbidden,
    /// `allow` globs were given and it matches none.
    NotAllowed,
    /// It was added and `no_new_files` is set.
    NewFileDisallowed,
}

impl Reason {
    /// The snake_case name used in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Forbidden => "forbidden",
            Reason::NotAllowed => "not_allowed",
            Reason::NewFileDisallowed => "new_file_disallowed",
        }
    }
}

/// One violation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The offending path (workspace-relative, raw bytes).
    pub path: Vec<u8>,
    /// Why.
    pub reason: Reason,
    /// What happened to the path.
    pub status: ChangeStatus,
    /// Every path that must be put back to undo this change: both sides of a rename.
    pub revert_paths: Vec<Vec<u8>>,
}

/// A compiled contract, ready to check changes.
#[derive(Clone, Debug)]
pub struct Checker {
    allow: Option<GlobSet>,
    forbid: GlobSet,
    no_new_files: bool,
}

fn compile(patterns: &[String]) -> Result<GlobSet> {
    let mut b = GlobSetBuilder::new();
    for raw in patterns {
        let mut p = raw.trim();
        while let Some(rest) = p.strip_prefix("./") {
            p = rest;
        }
        let p = p.trim_end_matches('/');
        let (anchored, p) = match p.strip_prefix('/') {
            Some(rest) => (true, rest),
            None => (p.contains('/'), p),
        };
        if p.is_empty() {
            return Err(Error::Contract(format!(
                "empty glob '{raw}': name files, e.g. 'src/**' or '*.rs'"
            )));
        }
        let base = if anchored {
            p.to_string()
        } else {
            format!("**/{p}")
        };
        for g in [base.clone(), format!("{base}/**")] {
            let glob = GlobBuilder::new(&g)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| Error::Contract(format!("glob '{raw}': {e}")))?;
            b.add(glob);
        }
    }
    b.build()
        .map_err(|e| Error::Contract(format!("globs {patterns:?}: {e}")))
}

impl Checker {
    /// Compiles a contract's globs; a malformed glob is an error that names it.
    pub fn new(c: &Contract) -> Result<Checker> {
        Ok(Checker {
            allow: if c.allow.is_empty() {
                None
            } else {
                Some(compile(&c.allow)?)
            },
            forbid: compile(&c.forbid)?,
            no_new_files: c.no_new_files,
        })
    }

    /// The reason `path` may not be touched, if any (ignoring `no_new_files`).
    pub fn path_reason(&self, path: &[u8]) -> Option<Reason> {
        let p = Path::new(OsStr::from_bytes(path));
        if self.forbid.is_match(p) {
            return Some(Reason::Forbidden);
        }
        if self.allow.as_ref().is_some_and(|a| !a.is_match(p)) {
            return Some(Reason::NotAllowed);
        }
        None
    }

    /// The violations among `changes`, one per change at most (the most serious reason:
    /// forbidden, then not allowed, then new file), sorted by path.
    pub fn check(&self, changes: &[FileChange]) -> Vec<Violation> {
        let mut out = Vec::new();
        for c in changes {
            let revert_paths: Vec<Vec<u8>> = match &c.old_path {
                Some(old) if old != &c.path => vec![c.path.clone(), old.clone()],
                _ => vec![c.path.clone()],
            };
            let found = revert_paths
                .iter()
                .filter_map(|p| self.path_reason(p).map(|r| (r, p.clone())))
                .min_by_key(|(r, _)| *r)
                .or_else(|| {
                    (self.no_new_files && c.status == ChangeStatus::Added)
                        .then(|| (Reason::NewFileDisallowed, c.path.clone()))
                });
            if let Some((reason, path)) = found {
                out.push(Violation {
                    path,
                    reason,
                    status: c.status,
                    revert_paths,
                });
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }
}

/// The paths to put back so that every violation is undone (renames bring both sides),
/// sorted and without duplicates.
pub fn revert_paths(violations: &[Violation]) -> Vec<crate::files::RelPath> {
    let mut out: Vec<crate::files::RelPath> = violations
        .iter()
        .flat_map(|v| v.revert_paths.iter().cloned())
        .map(crate::files::RelPath::trusted)
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::tree::EntryState;
    use crate::id::Id;
    use crate::store::tree::Kind;

    fn change(path: &str, status: ChangeStatus, old_path: Option<&str>) -> FileChange {
        let st = Some(EntryState {
            kind: Kind::File,
            id: Id::default(),
            size: 0,
        });
        FileChange {
            path: path.as_bytes().to_vec(),
            old_path: old_path.map(|p| p.as_bytes().to_vec()),
            old: if status == ChangeStatus::Added {
                None
            } else {
                st
            },
            new: if status == ChangeStatus::Deleted {
                None
            } else {
                st
            },
            status,
        }
    }

    fn checker(allow: &[&str], forbid: &[&str], no_new: bool) -> Checker {
        Checker::new(&Contract {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            forbid: forbid.iter().map(|s| s.to_string()).collect(),
            no_new_files: no_new,
            on_violation: None,
        })
        .unwrap()
    }

    #[test]
    fn globs_follow_gitignore_conventions() {
        let c = checker(&["src/**", "docs", "/Cargo.toml"], &["*.pem"], false);
        assert_eq!(c.path_reason(b"src/a/b.rs"), None);
        assert_eq!(c.path_reason(b"docs/x/y.md"), None);
        assert_eq!(c.path_reason(b"Cargo.toml"), None);
        assert_eq!(c.path_reason(b"sub/Cargo.toml"), Some(Reason::NotAllowed));
        assert_eq!(c.path_reason(b"src/keys/k.pem"), Some(Reason::Forbidden));
        assert_eq!(c.path_reason(b"README.md"), Some(Reason::NotAllowed));
        let star = checker(&["src/*.rs"], &[], false);
        assert_eq!(star.path_reason(b"src/a.rs"), None);
        assert_eq!(star.path_reason(b"src/x/a.rs"), Some(Reason::NotAllowed));
    }

    #[test]
    fn violations_pick_the_most_serious_reason_and_cover_renames() {
        let c = checker(&["src/**"], &["secret/**"], true);
        let v = c.check(&[
            change("src/new.rs", ChangeStatus::Added, None),
            change("src/moved.rs", ChangeStatus::Renamed, Some("secret/k")),
            change("top.txt", ChangeStatus::Added, None),
            change("src/ok.rs", ChangeStatus::Modified, None),
        ]);
        let got: Vec<(&[u8], Reason)> = v.iter().map(|v| (v.path.as_slice(), v.reason)).collect();
        assert_eq!(
            got,
            [
                (&b"secret/k"[..], Reason::Forbidden),
                (&b"src/new.rs"[..], Reason::NewFileDisallowed),
                (&b"top.txt"[..], Reason::NotAllowed),
            ]
        );
        assert_eq!(
            revert_paths(&v)
                .into_iter()
                .map(crate::files::RelPath::into_bytes)
                .collect::<Vec<_>>(),
            [
                b"secret/k".to_vec(),
                b"src/moved.rs".to_vec(),
                b"src/new.rs".to_vec(),
                b"top.txt".to_vec()
            ]
        );
    }

    #[test]
    fn toml_contracts_parse_and_reject_unknown_keys() {
        let c = Contract::from_toml(
            "allow = [\"a/**\"]\nforbid = [\"*.key\"]\nno_new_files = true\non_violation = \"revert\"\n",
            "t",
        )
        .unwrap();
        assert_eq!(c.allow, ["a/**"]);
        assert!(c.no_new_files);
        assert_eq!(c.on_violation, Some(OnViolation::Revert));
        assert!(Contract::from_toml("alow = []", "t").is_err());
        assert!(Checker::new(&Contract::from_toml("forbid = [\"a[\"]", "t").unwrap()).is_err());
        assert!(Checker::new(&Contract::from_toml("forbid = [\"/\"]", "t").unwrap()).is_err());
    }
}
