//! The store's format version: what a rewind must understand to read a store, checked when a
//! store is opened, so that a build too old for a store refuses it at once, saying so, instead
//! of failing part way through a read where it cannot tell new records from damage.
//!
//! Two entries of the `meta` table say it:
//!
//! - `schema` (u32, little-endian). **1**: every store made before this module existed. The
//!   releases that added blob tags 0x03-0x06 (dictionary frames, groups, gc's groups, paged
//!   chunk lists; see `store/blob.rs`) kept writing 1, so a store at 1 may hold any tag from
//!   0x00 to 0x06, and this build reads it as it is. **2**: blob records may use tags
//!   0x00-0x06, and `features` may list more. Every rewind since schema 1 refuses a store
//!   whose schema it does not know ([`Error::SchemaVersion`]): that check is the one lever an
//!   already released binary offers, so the first *writable* open of a store at 1 raises it to
//!   2 (one small write transaction, once in a store's life; later opens only read). A store
//!   opened read-only (its file is not writable) is read at 1 and left at 1.
//! - `features`: names of format features a reader must understand beyond schema 2, one per
//!   line (UTF-8, sorted, no duplicates; absent means none). A store that lists a name this
//!   build does not know is refused ([`Error::UnknownFeatures`]). A feature, unlike a schema
//!   bump, locks older builds out of only the stores that use it. One name per line rather than
//!   postcard because every future build must decode this list to name what it lacks: a format
//!   that cannot change and can be read in a hex dump is the right one for it.
//!
//! Opening a store created by any rewind therefore ends in one of: read as it is, upgraded to 2
//! and read, or refused with a message that says to upgrade rewind.

use std::path::Path;

use redb::{ReadableTable, WriteTransaction};

use super::Store;
use super::tables::META;
use crate::error::{Error, Result};

/// The schema version this build writes, and the newest it reads.
pub const SCHEMA_VERSION: u32 = 2;
/// The oldest schema version this build reads (and, opened writable, upgrades).
pub const SCHEMA_OLDEST: u32 = 1;

/// The format features this build reads. A store listing any other is refused at open.
#[cfg(not(test))]
pub const KNOWN_FEATURES: &[&str] = &[super::refcount::FEATURE];
/// The format features this build reads; the tests' build knows one more, so that requiring
/// a known feature can be tested before any real feature exists.
#[cfg(test)]
pub const KNOWN_FEATURES: &[&str] = &[super::refcount::FEATURE, TEST_FEATURE];
/// The feature only the library's own tests know.
#[cfg(test)]
pub(crate) const TEST_FEATURE: &str = "test-feature";

const SCHEMA_KEY: &str = "schema";
const FEATURES_KEY: &str = "features";

/// A store's format, as its `meta` table records it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Format {
    /// The schema version.
    pub schema: u32,
    /// The format features it lists, in its order (this build writes them sorted).
    pub features: Vec<String>,
}

impl Format {
    /// Reads the format from a `meta` table. `file` names the store in errors.
    pub(crate) fn read(
        meta: &impl ReadableTable<&'static str, &'static [u8]>,
        file: &Path,
    ) -> Result<Format> {
        let schema = meta
            .get(SCHEMA_KEY)?
            .and_then(|v| v.value().try_into().ok().map(u32::from_le_bytes))
            .ok_or_else(|| Error::NotAStore {
                path: file.to_path_buf(),
                why: "no schema version recorded".into(),
            })?;
        if schema < SCHEMA_OLDEST {
            return Err(Error::NotAStore {
                path: file.to_path_buf(),
                why: format!("schema version {schema}, which no rewind writes"),
            });
        }
        let features = match meta.get(FEATURES_KEY)? {
            None => Vec::new(),
            Some(v) => decode_features(v.value())?,
        };
        Ok(Format { schema, features })
    }

    /// Refuses a format this build cannot read, naming what it lacks; `known` is the list of
    /// features it reads ([`KNOWN_FEATURES`]).
    pub(crate) fn check(&self, file: &Path, known: &[&str]) -> Result<()> {
        if self.schema > SCHEMA_VERSION {
            return Err(Error::SchemaVersion {
                path: file.to_path_buf(),
                found: self.schema,
                expected: SCHEMA_VERSION,
            });
        }
        let unknown: Vec<String> = self
            .features
            .iter()
            .filter(|f| !known.contains(&f.as_str()))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return Err(Error::UnknownFeatures {
                path: file.to_path_buf(),
                features: unknown,
            });
        }
        Ok(())
    }
}

/// Writes a new store's format.
pub(crate) fn init(txn: &WriteTransaction) -> Result<()> {
    txn.open_table(META)?
        .insert(SCHEMA_KEY, SCHEMA_VERSION.to_le_bytes().as_slice())?;
    Ok(())
}

fn decode_features(bytes: &[u8]) -> Result<Vec<String>> {
    let text = std::str::from_utf8(bytes).map_err(|e| Error::Corrupt {
        kind: "meta entry",
        id: FEATURES_KEY.into(),
        why: format!("not UTF-8: {e}"),
    })?;
    Ok(text
        .split('\n')
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

fn encode_features(features: &[String]) -> Vec<u8> {
    features.join("\n").into_bytes()
}

impl Store {
    /// Reads and checks the store's format at open, upgrading a writable store at schema 1.
    pub(super) fn open_format(&self, file: &Path) -> Result<()> {
        let format = {
            let txn = self.db.begin_read()?;
            let meta = match txn.open_table(META) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => {
                    return Err(not_a_store(&txn, file)?);
                }
                Err(e) => return Err(e.into()),
            };
            Format::read(&meta, file)?
        };
        format.check(file, KNOWN_FEATURES)?;
        let writable = matches!(*self.db, super::Handle::ReadWrite(_));
        if format.schema < SCHEMA_VERSION && writable {
            self.upgrade(file)?;
        }
        if writable
            && !format
                .features
                .iter()
                .any(|f| f == super::refcount::FEATURE)
        {
            // Counted once, by a full count, in a transaction of its own: of processes
            // opening at once, the first counts and the others find the feature listed.
            let txn = self.begin_write()?;
            if super::refcount::upgrade_in(&txn)? {
                txn.commit()?;
            } else {
                txn.abort()?;
            }
        }
        Ok(())
    }

    /// Raises the schema to [`SCHEMA_VERSION`] in a write transaction of its own. The format is
    /// read again inside it: of two processes upgrading at once, the second finds the first's
    /// work done and commits nothing (and one that finds a newer format refuses it). Says
    /// whether it wrote.
    pub(super) fn upgrade(&self, file: &Path) -> Result<bool> {
        let txn = self.begin_write()?;
        let format = Format::read(&txn.open_table(META)?, file)?;
        format.check(file, KNOWN_FEATURES)?;
        if format.schema >= SCHEMA_VERSION {
            txn.abort()?;
            return Ok(false);
        }
        init(&txn)?;
        txn.commit()?;
        Ok(true)
    }

    /// The store's format, as a read view sees it now.
    pub fn format(&self) -> Result<Format> {
        let txn = self.db.begin_read()?;
        Format::read(&txn.open_table(META)?, &self.dir.join(super::DB_FILE))
    }

    /// Records that the store holds records of format feature `name`, so that a build that
    /// does not know it refuses the store. Call it in (or before) the transaction that first
    /// writes such a record. Idempotent; says whether the feature is new to the store. A name
    /// this build does not list in [`KNOWN_FEATURES`] is a bug in the caller (this build would
    /// lock itself out), refused with [`Error::Internal`].
    pub fn require_feature(&self, name: &str) -> Result<bool> {
        let txn = self.begin_write()?;
        let added = require_in(&txn, name)?;
        txn.commit()?;
        Ok(added)
    }
}

/// [`Store::require_feature`] inside an open write transaction.
pub(crate) fn require_in(txn: &WriteTransaction, name: &str) -> Result<bool> {
    if !KNOWN_FEATURES.contains(&name) {
        return Err(Error::Internal(format!(
            "format feature {name:?} is not one this build knows"
        )));
    }
    let mut meta = txn.open_table(META)?;
    let mut features = match meta.get(FEATURES_KEY)? {
        None => Vec::new(),
        Some(v) => decode_features(v.value())?,
    };
    if features.iter().any(|f| f == name) {
        return Ok(false);
    }
    features.push(name.to_string());
    features.sort();
    meta.insert(FEATURES_KEY, encode_features(&features).as_slice())?;
    Ok(true)
}

/// Why a database without a `meta` table is not a store (its tables, or that it has none).
fn not_a_store(txn: &redb::ReadTransaction, file: &Path) -> Result<Error> {
    use redb::TableHandle as _;
    let tables: Vec<String> = txn.list_tables()?.map(|t| t.name().to_string()).collect();
    let why = if tables.is_empty() {
        "an empty redb database".to_string()
    } else {
        format!("a redb database with other tables ({})", tables.join(", "))
    };
    Ok(Error::NotAStore {
        path: file.to_path_buf(),
        why,
    })
}
