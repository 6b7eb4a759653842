//! Groups: small blobs compressed together in one zstd frame, to win back the redundancy
//! between files that a frame per blob loses.
//!
//! Why: source trees are mostly small files that share licence headers, includes and idioms.
//! Compressed one by one they lose all of it; a solid `tar | zstd` keeps it. Measured on the
//! Linux tree (`examples/groupprobe`, files under 4 MiB, level 3, one thread):
//!
//! | encoding | bytes | CPU |
//! |---|---|---|
//! | one frame per file | 235.2 MiB | 3.6 s |
//! | groups of 256 KiB of files up to 64 KiB | 197.9 MiB | 3.2 s |
//! | solid tar.zst -3 (not readable one file at a time) | 194.7 MiB | |
//!
//! Fewer frames also cost less CPU. A group is one frame in the segment log, and each member's
//! blob record names the frame's span and where the member starts in the decompressed bytes
//! (see [`super::blob`], tags 0x04 and 0x05). So a blob still reads on its own: it costs
//! decompressing its group (at most [`GROUP_BYTES`] + [`MEMBER_MAX`], ~0.2 ms), and a reader
//! keeps the last few groups it decompressed ([`GroupCache`]) so that restore, diff and verify,
//! which read neighbours in turn, decompress each group once.
//!
//! Invariants:
//! - A group frame records its content size in its zstd header, at most [`FRAME_LIMIT`], and
//!   every member lies inside it; members do not overlap.
//! - A group is never changed once written. When members are forgotten their bytes stay until
//!   gc regroups the live ones (`dense`); a snapshot's groups are made at its fast level, and
//!   the first gc after it regroups them at gc's denser level (tag 0x05), which later gcs leave
//!   alone unless members die.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::blob::{self, Span};
use crate::error::{Error, Result};
use crate::id::Id;

/// A group is sealed once it holds this many bytes. Larger groups compress better (1 MiB:
/// 186.6 MiB above) but every read of a member decompresses more of its group.
pub const GROUP_BYTES: usize = 512 << 10;
/// Blobs up to this size join groups; larger ones hold enough context of their own (and a
/// group with one of them in it would make its neighbours slower to read).
pub const MEMBER_MAX: u64 = 128 << 10;
/// The largest group frame a reader accepts: a damaged record or header cannot make it
/// allocate more. Well above what is written, so the sizes above may grow without a format
/// change.
pub const FRAME_LIMIT: u64 = 4 << 20;
/// Decompressed groups a reader keeps.
const CACHED_GROUPS: usize = 8;

/// Whether a blob of `size` bytes joins a group (the empty blob gains nothing from one).
pub fn joins(size: u64) -> bool {
    (1..=MEMBER_MAX).contains(&size)
}

/// One blob in a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// The blob.
    pub id: Id,
    /// Its length.
    pub size: u64,
    /// Where it starts in the group's decompressed bytes.
    pub skip: u32,
}

/// A group being filled.
#[derive(Default)]
pub struct Group {
    raw: Vec<u8>,
    members: Vec<Member>,
}

/// A group compressed: its frame and its members.
pub struct Sealed {
    /// One zstd frame of the members' bytes, in order.
    pub frame: Vec<u8>,
    /// The members.
    pub members: Vec<Member>,
}

impl Group {
    /// Adds a blob; true when the group is full and should be sealed.
    pub fn push(&mut self, id: Id, data: &[u8]) -> bool {
        self.members.push(Member {
            id,
            size: data.len() as u64,
            skip: self.raw.len() as u32,
        });
        self.raw.extend_from_slice(data);
        self.raw.len() >= GROUP_BYTES
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Takes the blobs out one by one (when the group cannot be compressed), emptying it.
    pub fn drain(&mut self) -> Vec<(Id, Vec<u8>)> {
        let raw = std::mem::take(&mut self.raw);
        std::mem::take(&mut self.members)
            .into_iter()
            .map(|m| {
                let start = m.skip as usize;
                (m.id, raw[start..start + m.size as usize].to_vec())
            })
            .collect()
    }

    /// Compresses what the group holds at `level` and empties it; None when it held nothing.
    pub fn seal(&mut self, level: i32) -> Result<Option<Sealed>> {
        if self.members.is_empty() {
            return Ok(None);
        }
        let frame = blob::zstd_frame(&self.raw, level)
            .ok_or_else(|| Error::Internal("zstd could not compress a group".into()))?;
        self.raw.clear();
        Ok(Some(Sealed {
            frame,
            members: std::mem::take(&mut self.members),
        }))
    }
}

/// Decompresses the group frame `stored` that blob `id` (`kind` in errors) is in.
pub fn decode_frame(kind: &'static str, id: &Id, stored: Vec<u8>) -> Result<Vec<u8>> {
    let size = match zstd::zstd_safe::get_frame_content_size(&stored) {
        Ok(Some(n)) if n <= FRAME_LIMIT => n,
        Ok(Some(n)) => {
            return Err(Error::Corrupt {
                kind,
                id: id.hex(),
                why: format!("its group claims {n} bytes, more than any group holds"),
            });
        }
        _ => {
            return Err(Error::Corrupt {
                kind,
                id: id.hex(),
                why: "its group is not a zstd frame with a size".into(),
            });
        }
    };
    blob::inflate(kind, id, true, size, stored)
}

/// Blob `id`'s bytes, `skip..skip + size` of its decompressed `group`.
pub fn member<'g>(group: &'g [u8], id: &Id, skip: u32, size: u64) -> Result<&'g [u8]> {
    let start = skip as usize;
    start
        .checked_add(size as usize)
        .and_then(|end| group.get(start..end))
        .ok_or_else(|| Error::Corrupt {
            kind: "blob",
            id: id.hex(),
            why: format!(
                "bytes {skip}..{} lie outside its group of {} bytes",
                u64::from(skip).saturating_add(size),
                group.len()
            ),
        })
}

/// The groups one reader decompressed last, newest first. Group frames never change once
/// written and segment numbers are never reused, so a span names the same bytes for the
/// reader's whole life.
#[derive(Default)]
pub struct GroupCache {
    slots: Mutex<VecDeque<(Span, Arc<Vec<u8>>)>>,
}

impl GroupCache {
    /// The decompressed group at `span`, from the cache or from `load`.
    pub fn get(&self, span: &Span, load: impl FnOnce() -> Result<Vec<u8>>) -> Result<Arc<Vec<u8>>> {
        {
            let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(i) = slots.iter().position(|(s, _)| s == span) {
                let hit = slots.remove(i).expect("position is in range");
                let group = hit.1.clone();
                slots.push_front(hit);
                return Ok(group);
            }
        }
        // Decompressed outside the lock: another thread's reads need not wait for it.
        let group = Arc::new(load()?);
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots.push_front((*span, group.clone()));
        slots.truncate(CACHED_GROUPS);
        Ok(group)
    }
}

impl std::fmt::Debug for GroupCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GroupCache")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Vec<Vec<u8>> {
        (0..300)
            .map(|i| {
                format!(
                    "// SPDX-License-Identifier: GPL-2.0\nstatic int f{i}(void) {{ return {i}; }}\n"
                )
                .into_bytes()
            })
            .collect()
    }

    #[test]
    fn members_read_back_from_the_frame_and_the_group_is_smaller_than_frames_apart() {
        let files = files();
        let mut g = Group::default();
        for f in &files {
            assert!(!g.push(Id::of(f), f));
        }
        let sealed = g.seal(3).unwrap().unwrap();
        assert!(g.seal(3).unwrap().is_none(), "sealing empties the group");
        let apart: usize = files
            .iter()
            .map(|f| blob::encode_payload(f, 3).bytes.len())
            .sum();
        assert!(
            sealed.frame.len() * 4 < apart,
            "{} vs {apart}",
            sealed.frame.len()
        );
        let group = decode_frame("blob", &Id::default(), sealed.frame).unwrap();
        for (m, f) in sealed.members.iter().zip(&files) {
            assert_eq!(member(&group, &m.id, m.skip, m.size).unwrap(), f.as_slice());
        }
    }

    #[test]
    fn a_group_is_full_at_its_size_and_empty_groups_seal_to_nothing() {
        let mut g = Group::default();
        assert!(g.seal(3).unwrap().is_none());
        let big = vec![7u8; MEMBER_MAX as usize];
        let full = (0..8)
            .map(|_| g.push(Id::of(&big), &big))
            .collect::<Vec<_>>();
        assert_eq!(full.iter().filter(|f| **f).count(), 5, "{full:?}");
        assert!(joins(1) && joins(MEMBER_MAX) && !joins(0) && !joins(MEMBER_MAX + 1));
    }

    #[test]
    fn damaged_frames_and_members_out_of_bounds_are_errors() {
        let id = Id::default();
        assert!(decode_frame("blob", &id, b"not zstd at all".to_vec()).is_err());
        let frame = blob::zstd_frame(b"hello group", 3).unwrap();
        let mut cut = frame.clone();
        cut.truncate(frame.len() - 2);
        assert!(decode_frame("blob", &id, cut).is_err());
        let group = decode_frame("blob", &id, frame).unwrap();
        assert!(member(&group, &id, 6, 5).is_ok());
        assert!(member(&group, &id, 6, 6).is_err());
        assert!(member(&group, &id, u32::MAX, u64::MAX).is_err());
    }

    #[test]
    fn the_cache_loads_each_group_once_and_keeps_the_newest() {
        let cache = GroupCache::default();
        let span = |n| Span {
            segment: n,
            offset: 0,
            len: 1,
        };
        let mut loads = 0;
        for round in 0..3 {
            for n in 0..CACHED_GROUPS as u64 {
                let g = cache
                    .get(&span(n), || {
                        loads += 1;
                        Ok(vec![n as u8])
                    })
                    .unwrap();
                assert_eq!(*g, vec![n as u8], "round {round}");
            }
        }
        assert_eq!(loads, CACHED_GROUPS);
        cache.get(&span(99), || Ok(vec![])).unwrap();
        // The oldest (0) went out; 1 is still there.
        cache.get(&span(1), || panic!("1 was cached")).unwrap();
        let mut reloaded = false;
        cache
            .get(&span(0), || {
                reloaded = true;
                Ok(vec![0])
            })
            .unwrap();
        assert!(reloaded);
    }
}
