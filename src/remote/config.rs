//! The store's remotes, kept in `remotes.toml` in the store directory (beside `config.toml`,
//! which holds settings that are read on every command and refuses unknown keys).
//!
//! ```toml
//! [remote.origin]
//! url = "s3://bucket/prefix"
//! encrypt = true                 # optional: an encrypted remote (see `super::crypt`)
//! key_file = "/home/me/.rewind-key"  # optional: its key file, else a password is asked for
//! ```
//!
//! The file is replaced whole through a temporary file and a rename, so a crash leaves the old
//! or the new list, never half of one.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext, Result};

/// The file's name inside the store directory.
pub const REMOTES_FILE: &str = "remotes.toml";

/// One remote's settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteConfig {
    /// `s3://bucket/prefix`, `gs://bucket/prefix`, `az://container/prefix` or `file:///path`.
    pub url: String,
    /// Workspace path on the remote (where it was pushed from) -> local workspace path, for
    /// pulled workspace logs whose path differs here (see `super::logs`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub workspaces: BTreeMap<String, String>,
    /// Whether the remote is encrypted: opening it needs a password or a key file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub encrypt: bool,
    /// The key file that unlocks it (the path only: the key is never stored here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_file: Option<String>,
}

#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    remote: BTreeMap<String, RemoteConfig>,
}

fn load(store_dir: &Path) -> Result<File> {
    let path = store_dir.join(REMOTES_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).map_err(|e| Error::BadConfig {
            path: path.clone(),
            why: e.message().to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(File::default()),
        Err(e) => Err(Error::io(path, e)),
    }
}

fn save(store_dir: &Path, file: &File) -> Result<()> {
    let text = toml::to_string(file).map_err(|e| Error::Encode {
        what: "remotes file",
        why: e.to_string(),
    })?;
    let mut tmp = tempfile::NamedTempFile::new_in(store_dir).at(store_dir)?;
    std::io::Write::write_all(&mut tmp, text.as_bytes()).at(tmp.path().to_path_buf())?;
    let path = store_dir.join(REMOTES_FILE);
    tmp.persist(&path).map_err(|e| Error::io(&path, e.error))?;
    Ok(())
}

/// Checks a remote name: what a tag may be, so it reads well on a command line.
pub fn validate_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok {
        Ok(())
    } else {
        Err(Error::BadRemoteName(name.to_string()))
    }
}

/// Checks a URL's form (the scheme rewind can open) without contacting it.
pub fn validate_url(url: &str) -> Result<()> {
    let ok = match url.split_once("://") {
        Some(("file", path)) => path.starts_with('/'),
        Some(("s3" | "gs" | "az", rest)) => !rest.split('/').next().unwrap_or("").is_empty(),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::BadRemoteUrl {
            url: url.to_string(),
            forms: super::URL_FORMS,
        })
    }
}

/// Every remote, by name.
pub fn list(store_dir: &Path) -> Result<BTreeMap<String, RemoteConfig>> {
    Ok(load(store_dir)?.remote)
}

/// Adds an unencrypted remote; an existing name is refused.
pub fn add(store_dir: &Path, name: &str, url: &str) -> Result<()> {
    add_with(store_dir, name, url, false, None)
}

/// Adds a remote, encrypted or not, with the key file that unlocks it; an existing name is
/// refused.
pub fn add_with(
    store_dir: &Path,
    name: &str,
    url: &str,
    encrypt: bool,
    key_file: Option<&str>,
) -> Result<()> {
    validate_name(name)?;
    validate_url(url)?;
    let mut file = load(store_dir)?;
    if let Some(old) = file.remote.get(name) {
        return Err(Error::RemoteExists {
            name: name.to_string(),
            url: old.url.clone(),
        });
    }
    file.remote.insert(
        name.to_string(),
        RemoteConfig {
            url: url.to_string(),
            workspaces: BTreeMap::new(),
            encrypt,
            key_file: key_file.map(str::to_string),
        },
    );
    save(store_dir, &file)
}

/// Removes a remote; returns whether it existed. Nothing on the remote is touched.
pub fn remove(store_dir: &Path, name: &str) -> Result<bool> {
    let mut file = load(store_dir)?;
    let existed = file.remote.remove(name).is_some();
    if existed {
        save(store_dir, &file)?;
    }
    Ok(existed)
}

/// Maps the workspace `remote_path` (the path it has where it was pushed from) to the local
/// workspace `local`: pulls from remote `name` append that workspace's log to `local`'s.
pub fn map_workspace(store_dir: &Path, name: &str, remote_path: &str, local: &Path) -> Result<()> {
    let mut file = load(store_dir)?;
    let local = local
        .to_str()
        .ok_or_else(|| Error::NonUtf8Workspace(local.to_path_buf()))?;
    let cfg = file.remote.get_mut(name).ok_or_else(|| no_remote(name))?;
    cfg.workspaces
        .insert(remote_path.to_string(), local.to_string());
    save(store_dir, &file)
}

/// Sets (or clears) the key file of remote `name`, after its key changed.
pub fn set_key_file(store_dir: &Path, name: &str, key_file: Option<&str>) -> Result<()> {
    let mut file = load(store_dir)?;
    let cfg = file.remote.get_mut(name).ok_or_else(|| no_remote(name))?;
    cfg.key_file = key_file.map(str::to_string);
    save(store_dir, &file)
}

fn no_remote(name: &str) -> Error {
    Error::NoRemote(name.to_string())
}

/// One remote's settings.
pub fn get(store_dir: &Path, name: &str) -> Result<RemoteConfig> {
    load(store_dir)?
        .remote
        .remove(name)
        .ok_or_else(|| no_remote(name))
}
