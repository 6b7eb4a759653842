//! `verify --remote` and `gc --remote`: what the remote's snapshots reach, whether it is all
//! there and sound, and deleting the rest.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use super::lock::Lock;
use super::pack::{Entry, Index, ObjKind};
use super::{Remote, RemoteIndex, TransferProgress};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::store::blob::{self, BlobRecord};
use crate::store::tree::Tree;

/// One thing wrong with a remote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The object or file it is about ("pack 1a2b...", "snapshot ...").
    pub what: String,
    /// What is wrong.
    pub why: String,
}

/// What `verify --remote` found.
#[derive(Clone, Debug, Default)]
pub struct VerifyReport {
    /// Snapshots checked.
    pub snapshots: u64,
    /// Packs listed by an index.
    pub packs: u64,
    /// Objects reached from the snapshots and artifacts.
    pub reachable: u64,
    /// Bytes downloaded and hashed (with `full`).
    pub bytes_checked: u64,
    /// Packs without an index: left by an interrupted push, harmless, removed by gc.
    pub orphan_packs: u64,
    /// Everything wrong.
    pub problems: Vec<Problem>,
}

/// The objects the remote's snapshots and artifacts reach.
struct Marked {
    live: HashSet<Id>,
    snapshots: u64,
}

/// Marks from every snapshot and artifact on the remote. Trees and chunk lists are read from
/// their packs (and checked); a reference to an object no index lists is a problem.
fn mark(remote: &Remote, index: &RemoteIndex, problems: &mut Vec<Problem>) -> Result<Marked> {
    let mut live = HashSet::new();
    let mut frontier = Vec::new();
    let mut snapshots = 0;
    for id in remote.snapshot_ids()? {
        match remote.snapshot(&id) {
            Ok(Some(rec)) => {
                snapshots += 1;
                frontier.push((rec.root, format!("snapshot {}", id.short())));
            }
            Ok(None) => {}
            Err(e) => problems.push(Problem {
                what: format!("snapshot {}", id.hex()),
                why: e.to_string(),
            }),
        }
    }
    for a in remote.artifacts()? {
        frontier.push((a.blob(), format!("artifact {}", a.key())));
    }
    // Breadth first, so each level's trees and chunk lists are fetched a pack at a time.
    while !frontier.is_empty() {
        let mut wanted: HashMap<Id, Vec<Entry>> = HashMap::new();
        let mut referrer: HashMap<Id, String> = HashMap::new();
        for (id, by) in std::mem::take(&mut frontier) {
            if !live.insert(id) {
                continue;
            }
            let Some(loc) = index.objects.get(&id) else {
                problems.push(Problem {
                    what: id.hex(),
                    why: format!("missing from the remote (reached from {by})"),
                });
                continue;
            };
            if matches!(loc.entry.kind, ObjKind::Tree | ObjKind::ChunkedBlob) {
                wanted.entry(loc.pack).or_default().push(loc.entry);
                referrer.insert(id, by);
            }
        }
        for (pack, entries) in wanted {
            let got = remote.fetch(&pack, &entries, &mut |e, _, content| {
                let by = referrer.get(&e.id).cloned().unwrap_or_default();
                if e.kind == ObjKind::Tree {
                    for te in Tree::decode(&e.id, &content)?.entries {
                        frontier.push((te.id, by.clone()));
                    }
                } else if let BlobRecord::Chunked { chunks, .. } =
                    blob::decode_blob(&e.id, &content)?
                {
                    for c in chunks {
                        frontier.push((c.id, by.clone()));
                    }
                }
                Ok(())
            });
            if let Err(e) = got {
                problems.push(Problem {
                    what: format!("pack {}", pack.hex()),
                    why: e.to_string(),
                });
            }
        }
    }
    Ok(Marked { live, snapshots })
}

/// Checks the remote: every index decodes, every pack an index lists is there at its length,
/// every snapshot record matches its id and everything it reaches is indexed (trees and chunk
/// lists are downloaded and checked). With `full`, every pack is downloaded whole and every
/// object in it checked against its id.
pub fn verify(
    remote: &Remote,
    full: bool,
    progress: &dyn TransferProgress,
) -> Result<VerifyReport> {
    remote.check_format(false)?;
    let mut r = VerifyReport::default();
    let mut index = RemoteIndex::default();
    for (name, _) in remote.list("index")? {
        let Some(pack) = Id::from_hex(&name) else {
            continue;
        };
        let bytes = match remote.get(&format!("index/{name}")) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => continue,
            // Sealed, and the seal does not hold: reported like an index that fails its checksum.
            Err(e @ Error::RemoteForged { .. }) => {
                r.problems.push(Problem {
                    what: format!("index {name}"),
                    why: e.to_string(),
                });
                continue;
            }
            Err(e) => return Err(e),
        };
        match Index::decode(&pack, &bytes) {
            Ok(i) => {
                for e in &i.entries {
                    index
                        .objects
                        .entry(e.id)
                        .or_insert(super::Location { pack, entry: *e });
                }
                index.packs.insert(pack, i);
            }
            Err(e) => r.problems.push(Problem {
                what: format!("index {name}"),
                why: e.to_string(),
            }),
        }
    }
    let packs: HashMap<Id, u64> = remote
        .list("packs")?
        .into_iter()
        .filter_map(|(n, size)| Id::from_hex(&n).map(|id| (id, size)))
        .collect();
    r.packs = index.packs.len() as u64;
    r.orphan_packs = packs
        .keys()
        .filter(|p| !index.packs.contains_key(p))
        .count() as u64;
    for (id, i) in &index.packs {
        match packs.get(id) {
            None => r.problems.push(Problem {
                what: format!("pack {}", id.hex()),
                why: "listed by an index but missing".into(),
            }),
            Some(len) if *len != i.pack_len => r.problems.push(Problem {
                what: format!("pack {}", id.hex()),
                why: format!("{len} bytes, its index says {}", i.pack_len),
            }),
            Some(_) => {}
        }
    }
    let marked = mark(remote, &index, &mut r.problems)?;
    r.snapshots = marked.snapshots;
    r.reachable = marked.live.len() as u64;
    for (name, id) in remote.tags()? {
        if remote.snapshot(&id).ok().flatten().is_none() {
            r.problems.push(Problem {
                what: format!("tag {name}"),
                why: format!("points at {}, which is not on the remote", id.short()),
            });
        }
    }
    if full {
        let total: u64 = index.packs.values().map(|i| i.pack_len).sum();
        let objects: u64 = index.packs.values().map(|i| i.entries.len() as u64).sum();
        progress.start("verify", total, objects);
        let mut ids: Vec<&Id> = index.packs.keys().collect();
        ids.sort();
        let mut chunked: Vec<(Id, Vec<blob::ChunkRef>)> = Vec::new();
        for id in ids {
            let i = &index.packs[id];
            if !packs.contains_key(id) {
                continue;
            }
            let bytes = remote
                .get(&format!("packs/{}", id.hex()))?
                .unwrap_or_default();
            r.bytes_checked += bytes.len() as u64;
            if Id::of(&bytes) != *id {
                r.problems.push(Problem {
                    what: format!("pack {}", id.hex()),
                    why: "its bytes do not match its name (damaged)".into(),
                });
            }
            for e in &i.entries {
                let stored = bytes
                    .get(e.offset as usize..(e.offset + u64::from(e.len)) as usize)
                    .unwrap_or_default();
                match remote
                    .unseal_entry(e, id, stored)
                    .and_then(|stored| super::pack::check(e, id, &stored))
                {
                    Err(err) => r.problems.push(Problem {
                        what: format!("{} {}", e.kind.name(), e.id.hex()),
                        why: err.to_string(),
                    }),
                    Ok(content) if e.kind == ObjKind::ChunkedBlob => {
                        if let Ok(BlobRecord::Chunked { chunks, .. }) =
                            blob::decode_blob(&e.id, &content)
                        {
                            chunked.push((e.id, chunks));
                        }
                    }
                    Ok(_) => {}
                }
                progress.advance(u64::from(e.len), 1);
            }
        }
        progress.finish();
        // A chunked blob's id is the hash of its whole content: each chunk was checked above,
        // now their concatenation, a chunk at a time in order (memory stays at one chunk).
        for (bid, chunks) in chunked {
            if let Some(why) = rehash_chunked(remote, &index, &bid, &chunks)? {
                r.problems.push(Problem {
                    what: format!("blob {}", bid.hex()),
                    why,
                });
            }
        }
    }
    Ok(r)
}

/// Hashes a chunked blob's chunks in order, as read from the remote: None when they add up
/// to its id, else what is wrong.
fn rehash_chunked(
    remote: &Remote,
    index: &RemoteIndex,
    id: &Id,
    chunks: &[blob::ChunkRef],
) -> Result<Option<String>> {
    let mut h = blake3::Hasher::new();
    for c in chunks {
        let Some(loc) = index.objects.get(&c.id) else {
            return Ok(Some(format!("its chunk {} is in no pack", c.id.hex())));
        };
        let got = remote.fetch(&loc.pack, &[loc.entry], &mut |_, _, content| {
            h.update(&content);
            Ok(())
        });
        if let Err(e) = got {
            return Ok(Some(format!("its chunk {}: {e}", c.id.hex())));
        }
    }
    Ok((Id::from(h.finalize()) != *id).then(|| "its chunks do not add up to its id".into()))
}

/// What `gc --remote` did.
#[derive(Clone, Debug, Default)]
pub struct GcReport {
    /// Snapshots on the remote (its roots).
    pub snapshots: u64,
    /// Packs before.
    pub packs_before: u64,
    /// Packs deleted whole (nothing in them reachable).
    pub packs_deleted: u64,
    /// Packs rewritten without their unreachable objects.
    pub packs_repacked: u64,
    /// Packs without an index (an interrupted push's) deleted.
    pub orphans_deleted: u64,
    /// Bytes the remote holds less.
    pub bytes_freed: u64,
    /// Requests made.
    pub requests: u64,
    /// Wall time.
    pub seconds: f64,
}

/// Deletes what no remote snapshot or artifact reaches, under the remote's exclusive lock
/// (taken once no push holds the remote, waiting up to `lock_timeout`, `on_wait` told what it
/// waits for; see `super::lock`). A pack whose objects are all unreachable is
/// deleted (index first, so no reader ever finds an index without its pack); one that is at
/// least a fifth unreachable is rewritten with only the rest, and the new pack and index are
/// uploaded before the old are deleted. An object two pushes stored twice stays in one pack.
pub fn gc(
    remote: &Remote,
    progress: &dyn TransferProgress,
    lock_timeout: std::time::Duration,
    on_wait: &dyn Fn(&str),
) -> Result<GcReport> {
    let t0 = Instant::now();
    let requests0 = remote.requests();
    remote.check_format(false)?;
    let _lock = Lock::exclusive(remote, lock_timeout, on_wait)?;
    let mut r = GcReport::default();
    let index = remote.load_index()?;
    let mut problems = Vec::new();
    let marked = mark(remote, &index, &mut problems)?;
    if let Some(p) = problems.first() {
        // Deleting on a damaged remote could throw away what a repair needs.
        return Err(Error::RemoteDamaged {
            remote: remote.name.clone(),
            what: p.what.clone(),
            why: p.why.clone(),
            problems: problems.len(),
        });
    }
    r.snapshots = marked.snapshots;
    let listed: HashMap<Id, u64> = remote
        .list("packs")?
        .into_iter()
        .filter_map(|(n, size)| Id::from_hex(&n).map(|id| (id, size)))
        .collect();
    r.packs_before = listed.len() as u64;
    for (id, size) in &listed {
        if !index.packs.contains_key(id) {
            remote.delete(&format!("packs/{}", id.hex()))?;
            r.orphans_deleted += 1;
            r.bytes_freed += size;
        }
    }
    let mut ids: Vec<Id> = index.packs.keys().copied().collect();
    ids.sort();
    let total: u64 = index.packs.values().map(|i| i.pack_len).sum();
    progress.start("gc", total, ids.len() as u64);
    for pack in ids {
        let i = &index.packs[&pack];
        let live: Vec<Entry> = i
            .entries
            .iter()
            .filter(|e| marked.live.contains(&e.id) && index.objects[&e.id].pack == pack)
            .copied()
            .collect();
        let live_bytes: u64 = live.iter().map(|e| u64::from(e.len)).sum();
        if live.len() == i.entries.len() {
            // All reachable: kept as it is.
        } else if live.is_empty() {
            remote.delete(&format!("index/{}", pack.hex()))?;
            remote.delete(&format!("packs/{}", pack.hex()))?;
            r.packs_deleted += 1;
            r.bytes_freed += i.pack_len;
        } else if (i.pack_len - live_bytes) * 5 >= i.pack_len {
            let mut b = remote.pack_builder();
            remote.fetch(&pack, &live, &mut |e, stored, _| {
                b.add(e.kind, e.id, e.zstd, e.size, stored)
            })?;
            let (bytes, new_index) = b.take();
            let name = new_index.pack.hex();
            remote.put(&format!("packs/{name}"), bytes)?;
            remote.put(&format!("index/{name}"), new_index.encode()?)?;
            remote.delete(&format!("index/{}", pack.hex()))?;
            remote.delete(&format!("packs/{}", pack.hex()))?;
            r.packs_repacked += 1;
            r.bytes_freed += i.pack_len - new_index.pack_len;
        }
        progress.advance(i.pack_len, 1);
    }
    progress.finish();
    r.requests = remote.requests() - requests0;
    r.seconds = t0.elapsed().as_secs_f64();
    Ok(r)
}

/// Deletes snapshot records from the remote, and the remote tags that point at them; their
/// data stays until `gc --remote`. Returns the tags removed.
pub fn forget(remote: &Remote, ids: &[Id]) -> Result<Vec<String>> {
    remote.check_format(false)?;
    let mut tags = Vec::new();
    for (name, id) in remote.tags()? {
        if ids.contains(&id) {
            remote.delete(&format!("refs/{name}"))?;
            tags.push(name);
        }
    }
    for id in ids {
        remote.delete(&format!("snapshots/{}", id.hex()))?;
    }
    Ok(tags)
}
