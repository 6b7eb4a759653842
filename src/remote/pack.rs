//! Pack files and their indexes: the remote's storage of blobs, chunks and trees.
//!
//! A pack is the stored bytes of many objects one after another, nothing else; its name is the
//! BLAKE3 of those bytes, so a pack whose bytes were changed no longer matches its name. Its
//! index, a separate small object, says what each byte range holds:
//!
//! ```text
//! index = "RWIDX" version:u8 postcard(Index) blake3(everything before):[u8;32]
//! Index = { pack: Id, pack_len: u64, entries: [Entry] }
//! Entry = { kind, id, zstd, size, offset, len }
//! ```
//!
//! Objects are stored as the local store stores them (one zstd frame or raw), so a push copies
//! compressed bytes and never recompresses; trees, raw postcard locally, are compressed here.

#[cfg(feature = "remote")]
use std::borrow::Cow;
#[cfg(feature = "remote")]
use std::sync::Arc;

use serde::{Deserialize, Serialize};

#[cfg(feature = "remote")]
use super::crypt::Crypt;

use crate::error::{Error, Result};
use crate::id::Id;
use crate::store::blob;
use crate::store::tree::Tree;

/// Version byte of the index encoding (the remote's format version is in `rewind-remote`).
const INDEX_VERSION: u8 = 1;
const INDEX_MAGIC: &[u8; 5] = b"RWIDX";

/// What an object in a pack is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ObjKind {
    /// A blob stored whole: id = BLAKE3 of its content.
    Blob,
    /// A chunk of a large blob: id = BLAKE3 of the chunk.
    Chunk,
    /// A large blob's chunk list (the local record format, see [`blob::encode_chunked`]):
    /// id = BLAKE3 of the whole content, checked once the chunks are in hand.
    ChunkedBlob,
    /// A tree: id = BLAKE3 of its postcard encoding.
    Tree,
}

impl ObjKind {
    /// The name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            ObjKind::Blob | ObjKind::ChunkedBlob => "blob",
            ObjKind::Chunk => "chunk",
            ObjKind::Tree => "tree",
        }
    }
}

/// One object in a pack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// What it is.
    pub kind: ObjKind,
    /// Its id.
    pub id: Id,
    /// Whether the stored bytes are a zstd frame.
    pub zstd: bool,
    /// Length of the content once decoded.
    pub size: u64,
    /// Where the stored bytes start in the pack.
    pub offset: u64,
    /// How many stored bytes.
    pub len: u32,
}

impl Entry {
    /// What an encrypted remote binds a sealed entry to (its associated data): kind, id,
    /// encoding and size, not its place, so gc can copy it into another pack as it is.
    pub fn seal_ad(&self) -> Vec<u8> {
        seal_ad(self.kind, &self.id, self.zstd, self.size)
    }
}

fn seal_ad(kind: ObjKind, id: &Id, zstd: bool, size: u64) -> Vec<u8> {
    let mut ad = Vec::with_capacity(42);
    ad.push(kind as u8);
    ad.extend_from_slice(&id.0);
    ad.push(u8::from(zstd));
    ad.extend_from_slice(&size.to_le_bytes());
    ad
}

/// A pack's index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    /// The pack it describes (BLAKE3 of the pack's bytes).
    pub pack: Id,
    /// The pack's length in bytes.
    pub pack_len: u64,
    /// Its objects, in pack order.
    pub entries: Vec<Entry>,
}

impl Index {
    /// The stored form, with its checksum.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut out = INDEX_MAGIC.to_vec();
        out.push(INDEX_VERSION);
        out.extend_from_slice(&crate::store::encode("pack index", self)?);
        let sum = Id::of(&out);
        out.extend_from_slice(&sum.0);
        Ok(out)
    }

    /// Decodes an index stored under the name `pack`, checking its checksum and that it
    /// describes that pack.
    pub fn decode(pack: &Id, bytes: &[u8]) -> Result<Index> {
        let bad = |why: String| Error::Corrupt {
            kind: "remote pack index",
            id: pack.hex(),
            why,
        };
        let body_len = bytes
            .len()
            .checked_sub(32)
            .filter(|n| *n > INDEX_MAGIC.len())
            .ok_or_else(|| bad("too short".into()))?;
        let (body, sum) = bytes.split_at(body_len);
        if Id::of(body).0 != sum {
            return Err(bad("checksum does not match".into()));
        }
        if &body[..5] != INDEX_MAGIC || body[5] != INDEX_VERSION {
            return Err(bad("not a version 1 index".into()));
        }
        let index: Index = postcard::from_bytes(&body[6..]).map_err(|e| bad(e.to_string()))?;
        if index.pack != *pack {
            return Err(bad(format!("it describes pack {}", index.pack.hex())));
        }
        for e in &index.entries {
            if e.offset + u64::from(e.len) > index.pack_len {
                return Err(bad(format!("entry {} lies outside the pack", e.id.hex())));
            }
        }
        Ok(index)
    }
}

/// Gathers objects into one pack (pushing needs the `remote` feature; the format's decoder
/// does not).
#[cfg(feature = "remote")]
#[derive(Default)]
pub struct PackBuilder {
    bytes: Vec<u8>,
    entries: Vec<Entry>,
    /// An encrypted remote's keys: each entry is sealed as it is added.
    crypt: Option<Arc<Crypt>>,
}

#[cfg(feature = "remote")]
impl PackBuilder {
    /// A builder that seals each entry with `crypt` when given.
    pub fn new(crypt: Option<Arc<Crypt>>) -> PackBuilder {
        PackBuilder {
            crypt,
            ..PackBuilder::default()
        }
    }

    /// Appends an object's stored bytes.
    pub fn add(
        &mut self,
        kind: ObjKind,
        id: Id,
        zstd: bool,
        size: u64,
        stored: &[u8],
    ) -> Result<()> {
        let sealed = self.seal(kind, &id, zstd, size, stored.into())?;
        self.add_sealed(kind, id, zstd, size, &sealed);
        Ok(())
    }

    /// What [`PackBuilder::add`] appends for these stored bytes: sealed on an encrypted
    /// remote, as they are otherwise. Takes `&self`, so a push seals many objects at once on
    /// the rayon pool and appends them in order with [`PackBuilder::add_sealed`].
    pub fn seal<'a>(
        &self,
        kind: ObjKind,
        id: &Id,
        zstd: bool,
        size: u64,
        stored: Cow<'a, [u8]>,
    ) -> Result<Cow<'a, [u8]>> {
        match &self.crypt {
            Some(c) => Ok(c
                .seal_entry(&seal_ad(kind, id, zstd, size), &stored)?
                .into()),
            None => Ok(stored),
        }
    }

    /// Appends bytes [`PackBuilder::seal`] returned for the same object.
    pub fn add_sealed(&mut self, kind: ObjKind, id: Id, zstd: bool, size: u64, sealed: &[u8]) {
        self.entries.push(Entry {
            kind,
            id,
            zstd,
            size,
            offset: self.bytes.len() as u64,
            len: sealed.len() as u32,
        });
        self.bytes.extend_from_slice(sealed);
    }

    /// Bytes gathered so far.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The pack's bytes and index; leaves the builder empty.
    pub fn take(&mut self) -> (Vec<u8>, Index) {
        let bytes = std::mem::take(&mut self.bytes);
        let entries = std::mem::take(&mut self.entries);
        let index = Index {
            pack: Id::of(&bytes),
            pack_len: bytes.len() as u64,
            entries,
        };
        (bytes, index)
    }
}

fn damaged(e: &Entry, pack: &Id, why: impl std::fmt::Display) -> Error {
    Error::Corrupt {
        kind: e.kind.name(),
        id: e.id.hex(),
        why: format!("in remote pack {}: {why}", pack.short()),
    }
}

/// Checks an object read from `pack` against its id and returns its decoded content (for a
/// chunked blob, its chunk list record, checked for form only). Nothing read from a remote is
/// used before passing here; its length, and on an encrypted remote its seal, were checked
/// before (`Remote::unseal_entry`).
pub fn check(e: &Entry, pack: &Id, stored: &[u8]) -> Result<Vec<u8>> {
    if e.kind == ObjKind::ChunkedBlob {
        return match blob::decode_blob(&e.id, stored) {
            Ok(blob::BlobRecord::Chunked { size, .. }) if size == e.size => Ok(stored.to_vec()),
            Ok(_) => Err(damaged(e, pack, "not a chunk list of the indexed size")),
            Err(err) => Err(damaged(e, pack, err)),
        };
    }
    let content = blob::inflate(e.kind.name(), &e.id, e.zstd, e.size, stored)
        .map_err(|err| damaged(e, pack, err))?;
    if Id::of(&content) != e.id {
        return Err(damaged(e, pack, "content does not match its id"));
    }
    if e.kind == ObjKind::Tree {
        Tree::decode(&e.id, &content).map_err(|err| damaged(e, pack, err))?;
    }
    Ok(content)
}

// The builder is what pushes: it is in the `remote` build only.
#[cfg(all(test, feature = "remote"))]
mod tests {
    use super::*;

    #[test]
    fn index_round_trips_and_rejects_damage() {
        let mut b = PackBuilder::default();
        let data = b"hello world";
        b.add(ObjKind::Blob, Id::of(data), false, 11, data).unwrap();
        let (bytes, index) = b.take();
        let enc = index.encode().unwrap();
        assert_eq!(Index::decode(&index.pack, &enc).unwrap(), index);
        let mut bad = enc.clone();
        bad[8] ^= 1;
        assert!(Index::decode(&index.pack, &bad).is_err());
        assert!(Index::decode(&Id::default(), &enc).is_err());
        let e = index.entries[0];
        assert_eq!(check(&e, &index.pack, &bytes).unwrap(), data);
        let mut flipped = bytes.clone();
        flipped[0] ^= 1;
        assert!(check(&e, &index.pack, &flipped).is_err());
    }
}
