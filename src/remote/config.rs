//! The store's remotes, kept in `remotes.toml` in the store directory (beside `config.toml`,
//! which holds settings that are read on every command and refuses unknown keys).
//!
//! ```toml
//! [remote.origin]
//! url = "s3://bucket/prefix"
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
    /// `s3://bucket/prefix` or `file:///path`.
    pub url: String,
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
        Ok(text) => toml::from_str(&text)
            .map_err(|e| Error::Invalid(format!("{}: {}", path.display(), e.message()))),
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
        Err(Error::Invalid(format!(
            "invalid remote name '{name}': use 1-64 letters, digits, '-', '_' or '.', not starting with '-'"
        )))
    }
}

/// Checks a URL's form (the scheme rewind can open) without contacting it.
pub fn validate_url(url: &str) -> Result<()> {
    let ok = match (url.strip_prefix("s3://"), url.strip_prefix("file://")) {
        (Some(rest), _) => !rest.split('/').next().unwrap_or("").is_empty(),
        (_, Some(path)) => path.starts_with('/'),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "unsupported remote URL '{url}': expected s3://BUCKET[/PREFIX] or file:///ABSOLUTE/PATH"
        )))
    }
}

/// Every remote, by name.
pub fn list(store_dir: &Path) -> Result<BTreeMap<String, RemoteConfig>> {
    Ok(load(store_dir)?.remote)
}

/// Adds a remote; an existing name is refused.
pub fn add(store_dir: &Path, name: &str, url: &str) -> Result<()> {
    validate_name(name)?;
    validate_url(url)?;
    let mut file = load(store_dir)?;
    if let Some(old) = file.remote.get(name) {
        return Err(Error::Invalid(format!(
            "remote '{name}' already exists ({}): remove it first with `rewind remote rm {name}`",
            old.url
        )));
    }
    file.remote.insert(
        name.to_string(),
        RemoteConfig {
            url: url.to_string(),
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

/// One remote's settings.
pub fn get(store_dir: &Path, name: &str) -> Result<RemoteConfig> {
    load(store_dir)?.remote.remove(name).ok_or_else(|| {
        Error::Invalid(format!(
            "no remote '{name}': add it with `rewind remote add {name} URL` (see `rewind remote ls`)"
        ))
    })
}
