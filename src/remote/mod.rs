//! Remotes: snapshots, trees, blobs and artifacts shared through object storage (S3 and what
//! speaks its protocol, or a directory through `file://`).
//!
//! The rest of rewind is synchronous; object_store is async, so a [`Remote`] owns a small
//! tokio runtime (two workers) and every call here blocks on it; only pack uploads and ranged
//! reads run several at a time. The remote's layout, its
//! invariants and the object-store guarantees it relies on are in ARCHITECTURE.md
//! ("Remotes"); in short:
//!
//! - packs (`packs/<id>`) and their indexes (`index/<id>`) are immutable and named by hash;
//!   a pack is uploaded before its index, and an index before any snapshot reaching it;
//! - snapshot records (`snapshots/<id>`) are written last, so a snapshot on the remote is
//!   complete; refs (`refs/<tag>`) and artifacts (`artifacts/<hex key>`) after that;
//! - pushes hold a shared lock file, gc an exclusive one (`locks/`), see `lock`.

pub mod config;
pub mod crypt;
pub mod gc;
pub(crate) mod lock;
pub(crate) mod logs;
pub(crate) mod pack;
pub mod pull;
pub mod push;
pub mod restore;

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as ObjPath;
use object_store::{
    GetOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::id::Id;
use pack::{Entry, Index};

pub use config::RemoteConfig;
use crypt::Crypt;
pub use crypt::Secret;

/// The remote format this build reads and writes (recorded in `rewind-remote`).
pub const FORMAT: u32 = 1;
/// The format of an encrypted remote: format 1's layout, every object sealed and every name
/// below a directory encrypted (see `crypt`). A rewind that reads only format 1 refuses it.
pub const FORMAT_ENCRYPTED: u32 = 2;
/// The marker object naming the format.
pub const MARKER: &str = "rewind-remote";
/// The revision naming a remote's newest snapshot (as restic's `latest`).
pub const LATEST: &str = "latest";
/// A pack is closed once it holds this many bytes: large enough that the Linux tree is a few
/// dozen uploads, small enough that one failed upload costs little and memory stays bounded.
pub const PACK_TARGET: usize = 32 << 20;
/// Ranges of one pack closer than this are fetched in one request.
const COALESCE_GAP: u64 = 1 << 20;
/// A coalesced fetch grows no larger than this.
const FETCH_MAX: u64 = 32 << 20;
/// Requests in flight at once in a transfer: enough to hide a round trip and keep a server
/// busy, few enough that memory stays at a few packs.
pub const PARALLEL: usize = 4;

/// Progress of a transfer, in bytes and objects. The library only calls these hooks.
pub trait TransferProgress: Sync {
    /// A phase starts with this much to move.
    fn start(&self, _phase: &str, _bytes: u64, _objects: u64) {}
    /// More was moved.
    fn advance(&self, _bytes: u64, _objects: u64) {}
    /// The phase is over.
    fn finish(&self) {}
}

/// Reports nothing.
pub struct NoTransferProgress;
impl TransferProgress for NoTransferProgress {}

/// Called for each object fetched: its entry, stored bytes and checked content.
pub type OnObject<'a> = dyn FnMut(&Entry, &[u8], Vec<u8>) -> Result<()> + 'a;

/// The step [`Remote::fetch_many_with`] runs on the rayon pool for each checked object.
pub type ParStep<'a, T> = dyn Fn(&Entry, &[u8], Vec<u8>) -> Result<T> + Sync + 'a;
/// The step [`Remote::fetch_many_with`] then runs on the calling thread, in order. It is given
/// the stored bytes (decrypted, still compressed) to keep: owned when decrypting made them, so
/// keeping them costs no copy.
pub type EachStep<'a, T> = dyn FnMut(&Entry, Cow<'_, [u8]>, T) -> Result<()> + 'a;

/// The marker's contents.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Marker {
    /// The remote format version.
    pub format: u32,
    /// When the remote was first written, ns since the epoch.
    pub created_ns: i64,
    /// The cipher of an encrypted remote (format 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<String>,
}

/// Whether `key`'s name is stored as it is on an encrypted remote: the marker and the key
/// objects, which are what opens the rest.
fn clear_name(key: &str) -> bool {
    key == MARKER || key.starts_with("keys/")
}

/// Whether `key`'s bytes are sealed whole on an encrypted remote (a pack's entries are sealed
/// one by one, so ranged reads still work).
fn sealed_whole(key: &str) -> bool {
    !clear_name(key) && !key.starts_with("packs/")
}

/// An open remote.
pub struct Remote {
    /// Its name in this store.
    pub name: String,
    /// Its URL.
    pub url: String,
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// For `file://`: the directory, where conditional updates take a lock file (object_store's
    /// local store has no `PutMode::Update`).
    local_root: Option<std::path::PathBuf>,
    rt: tokio::runtime::Runtime,
    /// The keys of an encrypted remote, once unlocked.
    crypt: Option<Arc<Crypt>>,
    requests: AtomicU64,
    bytes_up: AtomicU64,
    bytes_down: AtomicU64,
}

/// Where an object lives on the remote.
#[derive(Clone, Copy, Debug)]
pub struct Location {
    /// The pack.
    pub pack: Id,
    /// The entry in it.
    pub entry: Entry,
}

/// Every index on the remote, loaded.
#[derive(Default)]
pub struct RemoteIndex {
    /// Each pack's index, by pack id.
    pub packs: HashMap<Id, Index>,
    /// Where each object is (the first pack listed when two pushes stored it twice).
    pub objects: HashMap<Id, Location>,
}

impl Remote {
    /// Opens the remote at `url` (`s3://bucket/prefix`, `gs://bucket/prefix`,
    /// `az://container/prefix` or `file:///path`). Credentials, region and endpoint come from
    /// the environment object_store reads (`AWS_*`, `GOOGLE_*`, `AZURE_*`).
    pub fn open(name: &str, url: &str) -> Result<Remote> {
        Remote::open_with(name, url, &[])
    }

    /// [`Remote::open`] with object_store settings (`aws_endpoint`, `aws_access_key_id`, ...)
    /// given here rather than in the environment; they take precedence over it.
    pub fn open_with(name: &str, url: &str, settings: &[(&str, &str)]) -> Result<Remote> {
        let bad = |why: String| Error::Remote {
            remote: name.to_string(),
            why,
        };
        let local_root = url.strip_prefix("file://").map(std::path::PathBuf::from);
        let (store, prefix): (Arc<dyn ObjectStore>, String) =
            if let Some(path) = url.strip_prefix("file://") {
                if !path.starts_with('/') {
                    return Err(bad(format!("{url}: a file:// URL needs an absolute path")));
                }
                std::fs::create_dir_all(path).map_err(|e| Error::io(path, e))?;
                let fs = object_store::local::LocalFileSystem::new_with_prefix(path)
                    .map_err(|e| bad(format!("{url}: {e}")))?;
                (Arc::new(fs), String::new())
            } else if let Some((scheme, rest)) = url.split_once("://") {
                let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
                if bucket.is_empty() {
                    return Err(bad(format!("{url}: no bucket named")));
                }
                let store =
                    cloud(scheme, bucket, settings).map_err(|why| bad(format!("{url}: {why}")))?;
                (store, prefix.trim_matches('/').to_string())
            } else {
                return Err(bad(format!("{url}: unsupported URL ({URL_FORMS})")));
            };
        // Two workers: uploads run while this thread builds the next pack.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| Error::io("<tokio runtime>", e))?;
        Ok(Remote {
            name: name.to_string(),
            url: url.to_string(),
            store,
            prefix,
            local_root,
            rt,
            crypt: None,
            requests: AtomicU64::new(0),
            bytes_up: AtomicU64::new(0),
            bytes_down: AtomicU64::new(0),
        })
    }

    /// Requests sent so far (a listing counts one per page of 1,000 names).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Bytes uploaded and downloaded so far.
    pub fn bytes(&self) -> (u64, u64) {
        (
            self.bytes_up.load(Ordering::Relaxed),
            self.bytes_down.load(Ordering::Relaxed),
        )
    }

    fn path(&self, key: &str) -> ObjPath {
        if self.prefix.is_empty() {
            ObjPath::from(key)
        } else {
            ObjPath::from(format!("{}/{key}", self.prefix))
        }
    }

    /// Where `key` is stored: on an encrypted remote, the name below its directory encrypted.
    fn obj_path(&self, key: &str) -> ObjPath {
        match (&self.crypt, key.split_once('/')) {
            (Some(c), Some((dir, rest))) if !clear_name(key) => {
                self.path(&format!("{dir}/{}", c.encode_name(dir, rest)))
            }
            _ => self.path(key),
        }
    }

    fn seal(&self, key: &str, bytes: Vec<u8>) -> Result<Vec<u8>> {
        match &self.crypt {
            Some(c) if sealed_whole(key) => c.seal_object(key, &bytes),
            _ => Ok(bytes),
        }
    }

    fn unseal(&self, key: &str, bytes: Vec<u8>) -> Result<Vec<u8>> {
        match &self.crypt {
            Some(c) if sealed_whole(key) => {
                c.open_object(key, &bytes).map_err(|_| Error::RemoteForged {
                    remote: self.name.clone(),
                    object: key.to_string(),
                })
            }
            _ => Ok(bytes),
        }
    }

    /// The stored bytes of pack entry `e`, from `raw`, the bytes its index names: on an
    /// encrypted remote, opened (and refused when they do not authenticate as that entry).
    pub fn unseal_entry<'a>(&self, e: &Entry, pack: &Id, raw: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        if raw.len() != e.len as usize {
            return Err(Error::Corrupt {
                kind: e.kind.name(),
                id: e.id.hex(),
                why: format!("in remote pack {}: truncated", pack.short()),
            });
        }
        match &self.crypt {
            None => Ok(Cow::Borrowed(raw)),
            Some(c) => c
                .open_entry(&e.seal_ad(), raw)
                .map(Cow::Owned)
                .map_err(|_| Error::RemoteForged {
                    remote: self.name.clone(),
                    object: format!("{} {} in pack {}", e.kind.name(), e.id.hex(), pack.hex()),
                }),
        }
    }

    /// A pack builder that seals its entries when the remote is encrypted.
    pub(crate) fn pack_builder(&self) -> pack::PackBuilder {
        pack::PackBuilder::new(self.crypt.clone())
    }

    /// Whether this remote was unlocked with a key (see [`Remote::unlock`]).
    pub fn is_unlocked(&self) -> bool {
        self.crypt.is_some()
    }

    /// Whether the remote's marker says it is encrypted (false when there is no marker or it
    /// cannot be read: the operation that follows reports that).
    pub fn marker_encrypted(&self) -> bool {
        self.encrypted_marker().is_some()
    }

    /// The marker of an encrypted remote (None when there is no marker, it cannot be read or
    /// the remote is not encrypted).
    fn encrypted_marker(&self) -> Option<Marker> {
        let m = self.get(MARKER).ok()??;
        serde_json::from_slice::<Marker>(&m)
            .ok()
            .filter(|m| m.format == FORMAT_ENCRYPTED)
    }

    /// The suite an encrypted remote's marker names (remotes made before the marker named one
    /// seal with XChaCha20-Poly1305); a name this build does not know is refused.
    fn suite(&self) -> Result<crypt::Suite> {
        let Some(name) = self.encrypted_marker().and_then(|m| m.encryption) else {
            return Ok(crypt::Suite::XChaCha20);
        };
        crypt::Suite::from_name(&name).ok_or_else(|| Error::Remote {
            remote: self.name.clone(),
            why: format!(
                "sealed with '{name}', a cipher this rewind does not know (a newer rewind made \
                 the remote)"
            ),
        })
    }

    /// The key objects on the remote, by id.
    fn key_objects(&self) -> Result<Vec<(String, Vec<u8>)>> {
        let mut out = Vec::new();
        for (id, _) in self.list(crypt::KEYS_DIR)? {
            if let Some(bytes) = self.get(&format!("{}/{id}", crypt::KEYS_DIR))? {
                out.push((id, bytes));
            }
        }
        Ok(out)
    }

    /// Unlocks an encrypted remote: the first key object `secret` opens gives the master key.
    /// A remote that is not encrypted, or whose keys `secret` opens none of, is refused.
    pub fn unlock(&mut self, secret: &Secret) -> Result<()> {
        let keys = self.key_objects()?;
        if keys.is_empty() {
            if !self.marker_encrypted() {
                self.reach()?;
                return Err(Error::RemoteKeyNeeded {
                    remote: self.name.clone(),
                    why: format!("{} holds no encrypted remote", self.url),
                    encrypted: false,
                });
            }
            return Err(Error::Remote {
                remote: self.name.clone(),
                why: "encrypted, but its key objects (keys/) are gone".into(),
            });
        }
        let suite = self.suite()?;
        for (id, bytes) in &keys {
            if let Some(c) = Crypt::unwrap(id, bytes, secret, suite)? {
                self.crypt = Some(Arc::new(c));
                return Ok(());
            }
        }
        Err(Error::RemoteWrongKey {
            remote: self.name.clone(),
            keys: keys.len(),
        })
    }

    /// Sets up encryption on a remote: on an empty one, a new master key, its key object under
    /// `secret` and the marker of format 2; on one already encrypted (set up from another
    /// machine), unlocks it with `secret`, so both share the key (and deduplicate). A remote
    /// holding unencrypted data is refused. Returns whether the remote was new.
    pub fn init_encryption(&mut self, secret: &Secret) -> Result<bool> {
        if self.reach_marker()? || !self.list(crypt::KEYS_DIR)?.is_empty() {
            if !self.marker_encrypted() {
                return Err(Error::RemoteKeyNeeded {
                    remote: self.name.clone(),
                    why: format!(
                        "{} holds an unencrypted remote: encrypting it would leave its data in \
                         the clear; use an empty bucket or prefix",
                        self.url
                    ),
                    encrypted: false,
                });
            }
            self.unlock(secret)?;
            return Ok(false);
        }
        let (c, id, key) = Crypt::create(secret, crypt::Suite::NEW)?;
        self.put(&format!("{}/{id}", crypt::KEYS_DIR), key)?;
        let m = Marker {
            format: FORMAT_ENCRYPTED,
            created_ns: crate::files::now_ns(),
            encryption: Some(crypt::Suite::NEW.name().into()),
        };
        let bytes = serde_json::to_vec_pretty(&m).unwrap_or_default();
        if !self.put_if_absent(MARKER, bytes)? {
            // Another machine set it up at the same moment: use its key, drop ours.
            self.delete(&format!("{}/{id}", crypt::KEYS_DIR))?;
            self.unlock(secret)?;
            return Ok(false);
        }
        self.crypt = Some(Arc::new(c));
        Ok(true)
    }

    /// Wraps the master key of this unlocked remote under `secret` in a new key object, then
    /// deletes the key object it was unlocked with: the old password no longer opens it, and
    /// no data is re-uploaded. Returns the new key object's id.
    pub fn change_key(&mut self, secret: &Secret) -> Result<String> {
        let Some(c) = self.crypt.clone() else {
            return Err(Error::RemoteKeyNeeded {
                remote: self.name.clone(),
                why: "not an encrypted remote".into(),
                encrypted: false,
            });
        };
        let (_, id, _) = Crypt::create(&Secret::KeyFile(Vec::new()), c.suite())?;
        let bytes = c.wrap(&id, secret)?;
        self.put(&format!("{}/{id}", crypt::KEYS_DIR), bytes)?;
        // Written before the old one goes, so a failure in between leaves both working.
        self.delete(&format!("{}/{}", crypt::KEYS_DIR, c.key_id()))?;
        Ok(id)
    }

    fn err(&self, op: &str, key: &str, e: object_store::Error) -> Error {
        Error::Remote {
            remote: self.name.clone(),
            why: format!("{op} {key}: {}", self.describe(&e)),
        }
    }

    /// An object_store error in a sentence: the server's error code and message where it sent
    /// an S3-style XML body (never the body itself), a missing bucket said as such.
    fn describe(&self, e: &object_store::Error) -> String {
        let text = e.to_string();
        let Some(code) = xml_field(&text, "Code") else {
            return text;
        };
        let message = xml_field(&text, "Message").unwrap_or_default();
        let bucket = self
            .url
            .split_once("://")
            .and_then(|(_, rest)| rest.split('/').next())
            .unwrap_or_default();
        match code {
            "NoSuchBucket" | "ContainerNotFound" => {
                format!("the bucket '{bucket}' does not exist ({})", self.url)
            }
            "AccessDenied"
            | "InvalidAccessKeyId"
            | "SignatureDoesNotMatch"
            | "AuthenticationFailed"
            | "AuthorizationFailure" => {
                format!(
                    "access to {} was refused ({code}: {message}): check the credentials",
                    self.url
                )
            }
            _ => format!("the server answered {code}: {message}"),
        }
    }

    /// Reaches the remote once (one listing of its prefix): a missing bucket, refused
    /// credentials or an unreachable server is an error that says which, and a prefix holding
    /// a remote of another format is refused. Returns whether a rewind remote is there already
    /// (false: nothing pushed yet; the first push creates it).
    pub fn reach(&self) -> Result<bool> {
        if !self.reach_marker()? {
            return Ok(false);
        }
        self.check_format(false)?;
        Ok(true)
    }

    /// [`Remote::reach`] without the format check: whether there is a marker.
    fn reach_marker(&self) -> Result<bool> {
        let base = (!self.prefix.is_empty()).then(|| ObjPath::from(self.prefix.as_str()));
        self.count(0, 0);
        self.rt
            .block_on(self.store.list_with_delimiter(base.as_ref()))
            .map_err(|e| Error::Remote {
                remote: self.name.clone(),
                why: self.describe(&e),
            })?;
        Ok(self.get(MARKER)?.is_some())
    }

    fn count(&self, up: u64, down: u64) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes_up.fetch_add(up, Ordering::Relaxed);
        self.bytes_down.fetch_add(down, Ordering::Relaxed);
    }

    /// Writes `key`, replacing what is there.
    pub fn put(&self, key: &str, bytes: Vec<u8>) -> Result<()> {
        let bytes = self.seal(key, bytes)?;
        self.count(bytes.len() as u64, 0);
        self.rt
            .block_on(self.store.put(&self.obj_path(key), PutPayload::from(bytes)))
            .map_err(|e| self.err("writing", key, e))?;
        Ok(())
    }

    /// Writes `key` only if it does not exist (a conditional put); false when it existed.
    pub fn put_if_absent(&self, key: &str, bytes: Vec<u8>) -> Result<bool> {
        let bytes = self.seal(key, bytes)?;
        self.count(bytes.len() as u64, 0);
        let opts = PutOptions {
            mode: PutMode::Create,
            ..PutOptions::default()
        };
        match self.rt.block_on(self.store.put_opts(
            &self.obj_path(key),
            PutPayload::from(bytes),
            opts,
        )) {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
            Err(e) => Err(self.err("writing", key, e)),
        }
    }

    /// Reads `key` with its version (the ETag), for [`Remote::put_if_version`]; None when it
    /// does not exist.
    pub fn get_versioned(&self, key: &str) -> Result<Option<(Vec<u8>, UpdateVersion)>> {
        let path = self.obj_path(key);
        let got = self.rt.block_on(async {
            let r = self.store.get_opts(&path, GetOptions::default()).await?;
            let version = UpdateVersion {
                e_tag: r.meta.e_tag.clone(),
                version: r.meta.version.clone(),
            };
            Ok::<_, object_store::Error>((r.bytes().await?, version))
        });
        match got {
            Ok((b, v)) => {
                self.count(0, b.len() as u64);
                Ok(Some((self.unseal(key, b.to_vec())?, v)))
            }
            Err(object_store::Error::NotFound { .. }) => {
                self.count(0, 0);
                Ok(None)
            }
            Err(e) => Err(self.err("reading", key, e)),
        }
    }

    /// Replaces `key` only if it is still at `version` (an S3 `If-Match` on its ETag, i.e.
    /// object_store's `PutMode::Update`); false when another writer changed or deleted it
    /// since it was read. On `file://` the check and the write happen under a lock file in
    /// the remote's directory (`update.lock`), which every rewind honours.
    pub fn put_if_version(
        &self,
        key: &str,
        bytes: Vec<u8>,
        version: UpdateVersion,
    ) -> Result<bool> {
        let bytes = self.seal(key, bytes)?;
        self.count(bytes.len() as u64, 0);
        let path = self.obj_path(key);
        if let Some(root) = &self.local_root {
            let lock_path = root.join("update.lock");
            let lock = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock_path)
                .map_err(|e| Error::io(&lock_path, e))?;
            lock.lock().map_err(|e| Error::io(&lock_path, e))?;
            let now = match self.rt.block_on(self.store.head(&path)) {
                Ok(m) => Some(m.e_tag),
                Err(object_store::Error::NotFound { .. }) => None,
                Err(e) => return Err(self.err("reading", key, e)),
            };
            if now.is_none() || now != Some(version.e_tag) {
                return Ok(false);
            }
            self.rt
                .block_on(self.store.put(&path, PutPayload::from(bytes)))
                .map_err(|e| self.err("writing", key, e))?;
            return Ok(true); // the lock goes with the file handle
        }
        let opts = PutOptions {
            mode: PutMode::Update(version),
            ..PutOptions::default()
        };
        match self
            .rt
            .block_on(self.store.put_opts(&path, PutPayload::from(bytes), opts))
        {
            Ok(_) => Ok(true),
            Err(
                object_store::Error::Precondition { .. } | object_store::Error::NotFound { .. },
            ) => Ok(false),
            Err(e) => Err(self.err("writing", key, e)),
        }
    }

    /// Reads `key`; None when it does not exist.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let got = self.rt.block_on(self.fetch_object(key));
        self.got(key, got)
    }

    /// Reads every one of `keys`, [`PARALLEL`] requests in flight; in their order, None for
    /// one that does not exist.
    pub fn get_many(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
        let got: Vec<_> = self.rt.block_on(
            futures::stream::iter(keys.iter().map(|k| self.fetch_object(k)))
                .buffered(PARALLEL)
                .collect(),
        );
        keys.iter().zip(got).map(|(k, g)| self.got(k, g)).collect()
    }

    async fn fetch_object(&self, key: &str) -> object_store::Result<Vec<u8>> {
        Ok(self
            .store
            .get(&self.obj_path(key))
            .await?
            .bytes()
            .await?
            .to_vec())
    }

    /// What a read of `key` gave: its (unsealed) bytes, None when it does not exist.
    fn got(&self, key: &str, got: object_store::Result<Vec<u8>>) -> Result<Option<Vec<u8>>> {
        match got {
            Ok(b) => {
                self.count(0, b.len() as u64);
                Ok(Some(self.unseal(key, b)?))
            }
            Err(object_store::Error::NotFound { .. }) => {
                self.count(0, 0);
                Ok(None)
            }
            Err(e) => Err(self.err("reading", key, e)),
        }
    }

    /// Reads a byte range of `key`.
    pub fn get_range(&self, key: &str, range: Range<u64>) -> Result<Vec<u8>> {
        let got = self
            .rt
            .block_on(self.store.get_range(&self.obj_path(key), range))
            .map_err(|e| self.err("reading", key, e))?;
        self.count(0, got.len() as u64);
        Ok(got.to_vec())
    }

    /// Deletes `key` (a missing key is not an error).
    pub fn delete(&self, key: &str) -> Result<()> {
        self.count(0, 0);
        match self.rt.block_on(self.store.delete(&self.obj_path(key))) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.err("deleting", key, e)),
        }
    }

    /// The names (relative to `dir`) and sizes of the objects under `dir`.
    pub fn list(&self, dir: &str) -> Result<Vec<(String, u64)>> {
        let base = self.path(dir);
        let items: Vec<object_store::ObjectMeta> = self
            .rt
            .block_on(self.store.list(Some(&base)).try_collect())
            .map_err(|e| self.err("listing", dir, e))?;
        for _ in 0..items.len() / 1000 + 1 {
            self.count(0, 0);
        }
        let mut out = Vec::with_capacity(items.len());
        for m in items {
            let full = m.location.as_ref();
            let Some(name) = full
                .strip_prefix(base.as_ref())
                .map(|n| n.trim_start_matches('/'))
            else {
                continue;
            };
            if name.is_empty() {
                continue;
            }
            match &self.crypt {
                // A name this key did not encrypt is not rewind's (or another key's): skipped.
                Some(c) if !clear_name(&format!("{dir}/")) => {
                    if let Some(name) = c.decode_name(dir, name) {
                        out.push((name, m.size));
                    }
                }
                _ => out.push((name.to_string(), m.size)),
            }
        }
        out.sort();
        Ok(out)
    }

    /// Checks the marker, writing it (put-if-absent) when `create` and the remote is new.
    pub fn check_format(&self, create: bool) -> Result<()> {
        let marker = match self.get(MARKER)? {
            Some(m) => m,
            None if create && self.crypt.is_none() => {
                let m = Marker {
                    format: FORMAT,
                    created_ns: crate::files::now_ns(),
                    encryption: None,
                };
                let bytes = serde_json::to_vec_pretty(&m).unwrap_or_default();
                // Two first pushes at once: one creates it, both go on with its content.
                self.put_if_absent(MARKER, bytes)?;
                self.get(MARKER)?.unwrap_or_default()
            }
            None => {
                return Err(Error::Remote {
                    remote: self.name.clone(),
                    why: format!(
                        "{} holds no rewind remote (nothing was pushed yet)",
                        self.url
                    ),
                });
            }
        };
        let m: Marker = serde_json::from_slice(&marker).map_err(|e| Error::Remote {
            remote: self.name.clone(),
            why: format!("{MARKER} does not decode: {e}"),
        })?;
        match (m.format, self.crypt.is_some()) {
            (FORMAT, false) | (FORMAT_ENCRYPTED, true) => Ok(()),
            (FORMAT_ENCRYPTED, false) => Err(Error::RemoteKeyNeeded {
                remote: self.name.clone(),
                why: "it is encrypted, and was opened as an unencrypted remote".into(),
                encrypted: true,
            }),
            (FORMAT, true) => Err(Error::RemoteKeyNeeded {
                remote: self.name.clone(),
                why: format!("{} holds an unencrypted remote", self.url),
                encrypted: false,
            }),
            _ => Err(Error::Remote {
                remote: self.name.clone(),
                why: format!(
                    "remote format {} but this rewind reads formats {FORMAT} and \
                     {FORMAT_ENCRYPTED}",
                    m.format
                ),
            }),
        }
    }

    /// Loads every pack index. An index that fails its checksum is an error: what it lists
    /// cannot be trusted, and `verify --remote` names it.
    pub fn load_index(&self) -> Result<RemoteIndex> {
        let mut out = RemoteIndex::default();
        for (name, _) in self.list("index")? {
            let Some(pack) = Id::from_hex(&name) else {
                continue;
            };
            let Some(bytes) = self.get(&format!("index/{name}"))? else {
                continue; // deleted by a gc since the listing
            };
            let index = Index::decode(&pack, &bytes)?;
            for e in &index.entries {
                out.objects
                    .entry(e.id)
                    .or_insert(Location { pack, entry: *e });
            }
            out.packs.insert(pack, index);
        }
        Ok(out)
    }

    /// Snapshot ids on the remote.
    pub fn snapshot_ids(&self) -> Result<Vec<Id>> {
        Ok(self
            .list("snapshots")?
            .into_iter()
            .filter_map(|(n, _)| Id::from_hex(&n))
            .collect())
    }

    /// A snapshot record, checked against its id.
    pub(crate) fn snapshot(
        &self,
        id: &Id,
    ) -> Result<Option<crate::store::snapshot::SnapshotRecord>> {
        match self.get(&format!("snapshots/{}", id.hex()))? {
            Some(bytes) => self.snapshot_record(id, &bytes).map(Some),
            None => Ok(None),
        }
    }

    /// The snapshot record `bytes` read for `id`, checked against it.
    fn snapshot_record(
        &self,
        id: &Id,
        bytes: &[u8],
    ) -> Result<crate::store::snapshot::SnapshotRecord> {
        if Id::of(bytes) != *id {
            return Err(Error::Corrupt {
                kind: "snapshot",
                id: id.hex(),
                why: format!("on remote {}: the record does not match its id", self.name),
            });
        }
        crate::store::snapshot::SnapshotRecord::decode(id, bytes)
    }

    /// Every snapshot on the remote, newest first (one read per snapshot record, several at
    /// once, each checked against its id).
    pub fn snapshots(&self) -> Result<Vec<crate::Snapshot>> {
        let ids = self.snapshot_ids()?;
        let keys: Vec<String> = ids
            .iter()
            .map(|id| format!("snapshots/{}", id.hex()))
            .collect();
        let mut out = Vec::new();
        for (id, got) in ids.into_iter().zip(self.get_many(&keys)?) {
            // Listed, then gone: forgotten by another machine meanwhile.
            if let Some(bytes) = got {
                out.push(crate::Snapshot::new(id, self.snapshot_record(&id, &bytes)?));
            }
        }
        out.sort_by_key(|s| std::cmp::Reverse((s.time_ns(), s.id())));
        Ok(out)
    }

    /// Tags on the remote.
    pub fn tags(&self) -> Result<Vec<(String, Id)>> {
        let mut out = Vec::new();
        for (name, _) in self.list("refs")? {
            if let Some(id) = self.tag(&name)? {
                out.push((name, id));
            }
        }
        Ok(out)
    }

    /// One tag.
    pub fn tag(&self, name: &str) -> Result<Option<Id>> {
        let Some(bytes) = self.get(&format!("refs/{name}"))? else {
            return Ok(None);
        };
        parse_tag(self, name, &bytes).map(Some)
    }

    /// Artifacts on the remote.
    pub fn artifacts(&self) -> Result<Vec<crate::store::artifact::Artifact>> {
        let mut out = Vec::new();
        for (name, _) in self.list("artifacts")? {
            let Some(key) = artifact_key(&name) else {
                continue;
            };
            if let Some(bytes) = self.get(&format!("artifacts/{name}"))? {
                out.push(crate::store::artifact::Artifact::decode(key, &bytes)?);
            }
        }
        Ok(out)
    }

    /// Resolves a revision against the remote: a tag, a full id, `latest` (the newest snapshot
    /// on the remote, whatever its workspace; a tag of that name comes first), or a unique
    /// prefix of 4+ hex digits of a snapshot on the remote.
    pub fn resolve(&self, rev: &str) -> Result<Id> {
        if crate::revision::validate_tag(rev).is_ok()
            && let Some(id) = self.tag(rev)?
        {
            return Ok(id);
        }
        if let Some(id) = Id::from_hex(rev) {
            return Ok(id);
        }
        if rev == LATEST
            && let Some(newest) = self.snapshots()?.first()
        {
            return Ok(newest.id());
        }
        let lower = rev.to_ascii_lowercase();
        if lower.len() >= 4 && lower.chars().all(|c| c.is_ascii_hexdigit()) {
            let hits: Vec<Id> = self
                .snapshot_ids()?
                .into_iter()
                .filter(|id| id.hex().starts_with(&lower))
                .collect();
            match hits.len() {
                1 => return Ok(hits[0]),
                0 => {}
                _ => {
                    return Err(Error::AmbiguousRevision {
                        prefix: rev.to_string(),
                        candidates: hits.iter().take(5).map(|i| i.short()).collect(),
                    });
                }
            }
        }
        // A missing bucket reads as missing objects: say that rather than "no such tag".
        self.reach()?;
        Err(Error::Remote {
            remote: self.name.clone(),
            why: format!("no snapshot or tag '{rev}' on the remote"),
        })
    }

    /// Reads `entries` (sorted or not) of one pack and checks each; see [`Remote::fetch_many`].
    pub fn fetch(&self, pack: &Id, entries: &[Entry], each: &mut OnObject<'_>) -> Result<()> {
        self.fetch_many(vec![(*pack, entries.to_vec())], each)
    }

    /// Reads the entries of several packs, coalescing near ranges of a pack into one request
    /// and keeping [`PARALLEL`] requests in flight, and checks each object against its id.
    /// Calls `each` with the entry, its stored bytes and its checked content.
    pub fn fetch_many(&self, jobs: Vec<(Id, Vec<Entry>)>, each: &mut OnObject<'_>) -> Result<()> {
        self.fetch_many_with(
            jobs,
            &|_, _, content| Ok(content),
            &mut |e, stored, content| each(e, &stored, content),
        )
    }

    /// [`Remote::fetch_many`] with a first step run on the rayon pool for each checked object
    /// (while the next ranges download): `par` gets the entry, stored bytes and content, and
    /// what it returns goes to `each`, which runs on this thread in order.
    pub fn fetch_many_with<T: Send>(
        &self,
        jobs: Vec<(Id, Vec<Entry>)>,
        par: &ParStep<'_, T>,
        each: &mut EachStep<'_, T>,
    ) -> Result<()> {
        // (pack, byte range, the entries inside it)
        let mut reads: Vec<(Id, Range<u64>, Vec<Entry>)> = Vec::new();
        for (pack, mut entries) in jobs {
            entries.sort_by_key(|e| e.offset);
            let mut i = 0;
            while i < entries.len() {
                let start = entries[i].offset;
                let mut end = start + u64::from(entries[i].len);
                let mut j = i + 1;
                while j < entries.len() {
                    let e = &entries[j];
                    let e_end = e.offset + u64::from(e.len);
                    if e.offset > end + COALESCE_GAP || e_end - start > FETCH_MAX {
                        break;
                    }
                    end = end.max(e_end);
                    j += 1;
                }
                reads.push((pack, start..end, entries[i..j].to_vec()));
                i = j;
            }
        }
        let store = &self.store;
        let paths: Vec<ObjPath> = reads
            .iter()
            .map(|(p, _, _)| self.obj_path(&format!("packs/{}", p.hex())))
            .collect();
        self.rt.block_on(async {
            let mut results = futures::stream::iter(reads.iter().zip(&paths))
                .map(|((_, range, _), path)| store.get_range(path, range.clone()))
                .buffered(PARALLEL);
            let mut k = 0;
            while let Some(got) = results.next().await {
                let (pack, range, entries) = &reads[k];
                k += 1;
                let bytes =
                    got.map_err(|e| self.err("reading", &format!("packs/{}", pack.hex()), e))?;
                self.count(0, bytes.len() as u64);
                // Checking (decompress and hash) is the CPU cost of a pull: on the rayon pool,
                // while the next ranges download.
                let checked: Vec<Result<(Cow<'_, [u8]>, T)>> = entries
                    .par_iter()
                    .map(|e| {
                        let from = (e.offset - range.start) as usize;
                        let raw = bytes.get(from..from + e.len as usize).ok_or_else(|| {
                            Error::Corrupt {
                                kind: "remote pack",
                                id: pack.hex(),
                                why: "shorter than its index says".into(),
                            }
                        })?;
                        let stored = self.unseal_entry(e, pack, raw)?;
                        let content = pack::check(e, pack, &stored)?;
                        let t = par(e, &stored, content)?;
                        Ok((stored, t))
                    })
                    .collect();
                for (e, c) in entries.iter().zip(checked) {
                    let (stored, t) = c?;
                    each(e, stored, t)?;
                }
            }
            Ok(())
        })
    }

    /// Starts uploading a pack and then its index (in that order: the index is what makes the
    /// pack's objects visible); [`Remote::wait`] returns its result.
    pub fn upload_pack(&self, bytes: Vec<u8>, index: &Index) -> Result<Upload> {
        let name = index.pack.hex();
        let store = Arc::clone(&self.store);
        let pack_path = self.obj_path(&format!("packs/{name}"));
        let index_path = self.obj_path(&format!("index/{name}"));
        let index_bytes = self.seal(&format!("index/{name}"), index.encode()?)?;
        self.count(bytes.len() as u64, 0);
        self.count(index_bytes.len() as u64, 0);
        let handle = self.rt.spawn(async move {
            store
                .put(&pack_path, PutPayload::from(bytes))
                .await
                .map_err(|e| (format!("packs/{name}"), e))?;
            store
                .put(&index_path, PutPayload::from(index_bytes))
                .await
                .map_err(|e| (format!("index/{name}"), e))?;
            Ok(())
        });
        Ok(Upload(handle))
    }

    /// Waits for an upload.
    pub fn wait(&self, up: Upload) -> Result<()> {
        match self.rt.block_on(up.0) {
            Ok(Ok(())) => Ok(()),
            Ok(Err((key, e))) => Err(self.err("writing", &key, e)),
            Err(e) => Err(Error::Remote {
                remote: self.name.clone(),
                why: format!("upload task failed: {e}"),
            }),
        }
    }
}

/// The snapshot id a tag object holds.
fn parse_tag(remote: &Remote, name: &str, bytes: &[u8]) -> Result<Id> {
    let hex = String::from_utf8_lossy(bytes);
    Id::from_hex(hex.trim()).ok_or_else(|| Error::Corrupt {
        kind: "remote tag",
        id: name.to_string(),
        why: format!("on remote {}: does not hold a snapshot id", remote.name),
    })
}

/// A pack upload in flight.
pub struct Upload(tokio::task::JoinHandle<std::result::Result<(), (String, object_store::Error)>>);

/// The URL forms [`Remote::open`] takes, for messages.
pub const URL_FORMS: &str =
    "expected s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX] or file:///PATH";

/// The object store behind an `s3://`, `gs://` or `az://` URL: the builder's settings from
/// the environment object_store reads, then `settings` (its config keys, e.g. `aws_endpoint`,
/// `google_service_account`, `azure_storage_account_name`) over them. Building checks what
/// can be checked without a request (an Azure account named, a service-account file that
/// reads); a credential that is missing altogether shows at the first request.
fn cloud(
    scheme: &str,
    bucket: &str,
    settings: &[(&str, &str)],
) -> std::result::Result<Arc<dyn ObjectStore>, String> {
    let key_err = |k: &str, e: object_store::Error| format!("setting {k}: {e}");
    Ok(match scheme {
        "s3" => {
            let mut b = object_store::aws::AmazonS3Builder::from_env();
            for (k, v) in settings {
                b = b.with_config(k.parse().map_err(|e| key_err(k, e))?, *v);
            }
            Arc::new(
                b.with_bucket_name(bucket)
                    .build()
                    .map_err(|e| e.to_string())?,
            )
        }
        "gs" => {
            let mut b = object_store::gcp::GoogleCloudStorageBuilder::from_env();
            for (k, v) in settings {
                b = b.with_config(k.parse().map_err(|e| key_err(k, e))?, *v);
            }
            Arc::new(
                b.with_bucket_name(bucket)
                    .build()
                    .map_err(|e| e.to_string())?,
            )
        }
        "az" => {
            let mut b = object_store::azure::MicrosoftAzureBuilder::from_env();
            for (k, v) in settings {
                b = b.with_config(k.parse().map_err(|e| key_err(k, e))?, *v);
            }
            let built = b.with_container_name(bucket).build().map_err(|e| {
                // object_store says "Account must be specified": name the setting.
                if matches!(&e, object_store::Error::Generic { source, .. } if source.to_string().contains("Account must be specified")) {
                    "no storage account: set AZURE_STORAGE_ACCOUNT_NAME (and a credential: AZURE_STORAGE_ACCOUNT_KEY, AZURE_STORAGE_SAS_KEY, or a client id and secret)".to_string()
                } else {
                    e.to_string()
                }
            })?;
            Arc::new(built)
        }
        other => return Err(format!("unsupported URL scheme {other}:// ({URL_FORMS})")),
    })
}

/// The text of the first `<name>...</name>` element in an error's text (an S3-style XML body).
fn xml_field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let start = text.find(&open)? + open.len();
    let len = text[start..].find(&format!("</{name}>"))?;
    Some(&text[start..start + len])
}

/// The object name of an artifact key: hex, so any key is a valid, flat object name.
pub fn artifact_object(key: &str) -> String {
    key.bytes().map(|b| format!("{b:02x}")).collect()
}

/// The key an artifact object name stands for.
pub fn artifact_key(name: &str) -> Option<String> {
    if !name.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..name.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(name.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}
