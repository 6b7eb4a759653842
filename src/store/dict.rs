//! zstd dictionaries: the redundancy between files that per-blob compression loses.
//!
//! Each blob is compressed on its own so that one file reads without its neighbours. Source
//! files share licence headers, includes and idioms, and a solid archive (`tar | zstd`) wins
//! 15-20% from that; a dictionary trained from a sample of the store's own small files wins most
//! of it back while every blob stays readable alone (measured on the Linux tree: 235 MiB of
//! level-3 frames became 191 MiB at level 9 with a 110 KiB dictionary; see
//! `benches/dict-size.sh`).
//!
//! Dictionaries are a gc-time decision (see [`crate::gc`]): a snapshot writes plain frames at
//! its own fast level, and gc trains a dictionary when the store has none (or when most small
//! content was written after the current one was trained), then recompresses small blobs with
//! it at a denser level. A dictionary is a row of the `dicts` table, id -> the dictionary's
//! bytes as zstd's trainer made them; ids come from the `next_dict` counter and are never
//! reused, so a reader may cache a prepared dictionary by id for its whole life. gc deletes a
//! dictionary only in the transaction where no blob record names it any more.

use std::sync::{Arc, Mutex};

use redb::ReadableTable;
use rustc_hash::FxHashMap;
use zstd::zstd_safe::{CCtx, CDict, CParameter, DDict};

pub use super::tables::DICTS;
use crate::error::{Error, Result};
use crate::id::Id;

/// Largest dictionary gc trains. zstd's own default; larger ones did not pay on the Linux tree.
pub const DICT_SIZE: usize = 110 << 10;
/// Whole blobs up to this size are recompressed (every whole blob: larger files are chunked).
/// The dictionary matters for small ones; the denser level pays on all of them.
pub const DENSE_MAX: u64 = super::blob::CHUNK_THRESHOLD;
/// How many bytes of samples the trainer reads: about 100x the dictionary, zstd's advice.
pub const SAMPLE_BYTES: usize = 12 << 20;
/// At most this much of one blob goes into the sample: many short samples train a better
/// dictionary than a few long ones.
pub const SAMPLE_CAP: usize = 16 << 10;
/// Below this much small content a dictionary costs more than it saves.
pub const MIN_TRAIN_BYTES: u64 = 4 << 20;

/// Trains a dictionary from `samples`; `None` when zstd's trainer finds nothing worth keeping
/// (too few or too uniform samples), which is not an error: the store just goes without.
pub fn train(samples: &[&[u8]]) -> Option<Vec<u8>> {
    if samples.len() < 16 {
        return None;
    }
    zstd::dict::from_samples(samples, DICT_SIZE)
        .ok()
        .filter(|d| !d.is_empty())
}

/// A dictionary prepared for compression at one level.
pub struct Encoder {
    cdict: CDict<'static>,
}

impl Encoder {
    /// Prepares `dict` for compression at `level`.
    pub fn new(dict: &[u8], level: i32) -> Option<Encoder> {
        CDict::try_create(dict, level).map(|cdict| Encoder { cdict })
    }

    /// A compression context bound to this dictionary. The frame header leaves out the
    /// dictionary id and the content size (the blob record holds both), 4-8 bytes a blob.
    pub fn context(&self) -> Option<CCtx<'_>> {
        let mut cctx = CCtx::try_create()?;
        cctx.set_parameter(CParameter::DictIdFlag(false)).ok()?;
        cctx.set_parameter(CParameter::ContentSizeFlag(false))
            .ok()?;
        cctx.ref_cdict(&self.cdict).ok()?;
        Some(cctx)
    }
}

/// Compresses `data` with the dictionary `cctx` is bound to (see [`Encoder::context`]).
pub fn compress(cctx: &mut CCtx<'_>, data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(data.len()));
    cctx.compress2(&mut out, data).ok()?;
    Some(out)
}

/// The dictionaries one read view has needed, prepared once each.
#[derive(Default)]
pub struct Dictionaries {
    prepared: Mutex<FxHashMap<u32, Arc<DDict<'static>>>>,
}

impl Dictionaries {
    /// Dictionary `id`, read from `table` (the `dicts` table of the view, `None` when it does not
    /// exist) the first time. `blob` names the blob that needs it in an error.
    pub fn get(
        &self,
        table: Option<&impl ReadableTable<u32, &'static [u8]>>,
        id: u32,
        blob: &Id,
    ) -> Result<Arc<DDict<'static>>> {
        let mut map = self
            .prepared
            .lock()
            .map_err(|_| Error::Internal("dictionary cache poisoned".into()))?;
        if let Some(d) = map.get(&id) {
            return Ok(d.clone());
        }
        let bytes = match table {
            Some(t) => t.get(id)?.map(|v| v.value().to_vec()),
            None => None,
        };
        let bytes = bytes.ok_or_else(|| Error::Corrupt {
            kind: "blob",
            id: blob.hex(),
            why: format!("it was compressed with dictionary {id}, which is missing"),
        })?;
        let ddict = DDict::try_create(&bytes).ok_or_else(|| Error::Corrupt {
            kind: "dictionary",
            id: id.to_string(),
            why: "zstd cannot load it".into(),
        })?;
        let ddict = Arc::new(ddict);
        map.insert(id, ddict.clone());
        Ok(ddict)
    }
}

impl std::fmt::Debug for Dictionaries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Dictionaries")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Vec<Vec<u8>> {
        (0..400)
            .map(|i| {
                format!(
                    "// SPDX-License-Identifier: GPL-2.0\n#include <linux/module.h>\n\
                     #include <linux/kernel.h>\nstatic int probe_{i}(struct device *dev)\n{{\n\
                     \treturn dev_err_probe(dev, -ENODEV, \"no device {i}\");\n}}\n"
                )
                .into_bytes()
            })
            .collect()
    }

    #[test]
    fn dictionary_frames_round_trip_and_are_smaller() {
        let files = corpus();
        let samples: Vec<&[u8]> = files.iter().map(|f| f.as_slice()).collect();
        let dict = train(&samples).expect("a dictionary");
        let enc = Encoder::new(&dict, 9).unwrap();
        let mut cctx = enc.context().unwrap();
        let ddict = DDict::try_create(&dict).unwrap();
        let (mut plain, mut dense) = (0, 0);
        for f in &files {
            let frame = compress(&mut cctx, f).unwrap();
            plain += zstd::bulk::compress(f, 9).unwrap().len();
            dense += frame.len();
            let back = crate::store::blob::inflate_with(
                "blob",
                &Id::default(),
                true,
                Some(&ddict),
                f.len() as u64,
                frame,
            )
            .unwrap();
            assert_eq!(&back, f);
        }
        assert!(dense * 2 < plain, "dense {dense} plain {plain}");
    }

    #[test]
    fn too_few_samples_train_nothing() {
        assert!(train(&[b"abc".as_slice(); 3]).is_none());
    }

    #[test]
    fn a_wrong_dictionary_is_an_error_not_garbage() {
        let files = corpus();
        let samples: Vec<&[u8]> = files.iter().map(|f| f.as_slice()).collect();
        let dict = train(&samples).unwrap();
        let enc = Encoder::new(&dict, 3).unwrap();
        let frame = compress(&mut enc.context().unwrap(), &files[0]).unwrap();
        let other: Vec<Vec<u8>> = (0..400)
            .map(|i| format!("def f{i}(x):\n    return x * {i} + json.dumps(x)\n").into_bytes())
            .collect();
        let other: Vec<&[u8]> = other.iter().map(|f| f.as_slice()).collect();
        let wrong = DDict::try_create(&train(&other).unwrap()).unwrap();
        let r = crate::store::blob::inflate_with(
            "blob",
            &Id::default(),
            true,
            Some(&wrong),
            files[0].len() as u64,
            frame,
        );
        // Either zstd rejects the frame or the length/hash check that follows catches it; a
        // wrong dictionary never yields "success" with the right length here.
        if let Ok(b) = r {
            assert_ne!(b, files[0]);
        }
    }
}
