//! Probe for the large-file chunking choice: cuts one file (read whole into memory, `-`
//! for stdin) with FastCDC v2020 at each parameter set, and measures what a large file's
//! snapshots would pay: chunks and chunk-list bytes per GiB, chunking speed (one thread), zstd
//! -3 of every chunk (ratio, CPU, decompression CPU), chunks repeated within the file, and, over
//! EDITS seeded edit positions between 10% and 90% of the file, what each kind of edit stores:
//! new chunks, their bytes raw and compressed (mean and max). Not a benchmark of rewind itself.
//!
//!   tar -cf - -C /work/corpus linux | cargo run --release --example chunkprobe -- - 64 \
//!       256/512/1024/1 64/256/1024/1 ...
//!
//! A parameter set is MIN/AVG/MAX in KiB and the normalisation level (0-3). An edit "stores" a
//! chunk when the new chunking of the edited file has a chunk (start, length) that the old one
//! did not have at the same place (after the shift an insertion or deletion makes): the data is
//! assumed to have no repeats of its own at chunk scale, which holds for the files probed here.
use std::io::Read;
use std::time::Instant;

use fastcdc::v2020::{FastCDC, Normalization};
use rayon::prelude::*;

/// How far past an edit the new chunking is followed before giving up on resynchronising.
const WINDOW: usize = 24 << 20;

#[derive(Clone, Copy)]
struct Params {
    min: usize,
    avg: usize,
    max: usize,
    level: u32,
}

impl Params {
    fn chunks(&self, data: &[u8]) -> Vec<(usize, usize)> {
        self.iter(data).collect()
    }

    fn iter<'d>(&self, data: &'d [u8]) -> impl Iterator<Item = (usize, usize)> + 'd {
        let level = match self.level {
            0 => Normalization::Level0,
            1 => Normalization::Level1,
            2 => Normalization::Level2,
            _ => Normalization::Level3,
        };
        FastCDC::with_level(data, self.min, self.avg, self.max, level).map(|c| (c.offset, c.length))
    }
}

/// A splitmix64 step: the probe's only randomness, seeded, so runs compare.
fn mix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e3779b97f4a7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

enum Edit {
    /// `len` bytes at the position replaced by bytes from elsewhere in the file.
    Overwrite(usize),
    /// `len` bytes inserted at the position (copied from elsewhere in the file).
    Insert(usize),
    /// `len` bytes at the position removed.
    Delete(usize),
}

struct Stored {
    chunks: usize,
    raw: usize,
    zstd: usize,
    resynced: bool,
}

/// What the edit at `pos` stores, given the file's old chunks `old` (sorted by offset).
fn edit_cost(p: &Params, data: &[u8], old: &[(usize, usize)], pos: usize, edit: &Edit) -> Stored {
    // Start two chunks before the one holding `pos`: cuts before that depend only on bytes
    // before it, so they are unchanged.
    let j = old.partition_point(|&(o, _)| o <= pos).saturating_sub(3);
    let start = old[j].0;
    let src = (pos + data.len() / 3) % (data.len() - (1 << 20));
    let (end_old, shift): (usize, isize) = match edit {
        Edit::Overwrite(n) => (pos + n, 0),
        Edit::Insert(n) => (pos, *n as isize),
        Edit::Delete(n) => (pos + n, -(*n as isize)),
    };
    let tail_end = (end_old + WINDOW).min(data.len());
    let mut window = data[start..pos].to_vec();
    match edit {
        Edit::Overwrite(n) | Edit::Insert(n) => window.extend_from_slice(&data[src..src + n]),
        Edit::Delete(_) => {}
    }
    window.extend_from_slice(&data[end_old..tail_end]);
    let old_set: std::collections::HashSet<(usize, usize)> = old.iter().copied().collect();
    let edit_end_new = (end_old as isize + shift) as usize;
    let mut out = Stored {
        chunks: 0,
        raw: 0,
        zstd: 0,
        resynced: false,
    };
    for (o, l) in p.iter(&window) {
        let s = start + o;
        // Where this chunk's bytes were in the old file, if it lies wholly before or after the
        // edited span.
        let old_pos = if s + l <= pos {
            Some(s)
        } else if s >= edit_end_new {
            Some((s as isize - shift) as usize)
        } else {
            None
        };
        if let Some(op) = old_pos
            && old_set.contains(&(op, l))
        {
            if s >= edit_end_new {
                out.resynced = true;
                break;
            }
            continue;
        }
        if o + l == window.len() && tail_end < data.len() {
            break; // the window's artificial end
        }
        out.chunks += 1;
        out.raw += l;
        out.zstd += zstd::bulk::compress(&window[o..o + l], 3).unwrap().len();
    }
    out
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let data = if a[1] == "-" {
        let mut v = Vec::new();
        std::io::stdin().read_to_end(&mut v).unwrap();
        v
    } else {
        std::fs::read(&a[1]).unwrap()
    };
    let edits: usize = a[2].parse().unwrap();
    let gib = data.len() as f64 / (1u64 << 30) as f64;
    println!(
        "file: {} bytes ({gib:.2} GiB), {edits} positions per edit kind",
        data.len()
    );
    println!(
        "| min/avg/max KiB, level | chunks/GiB | mean chunk KiB | list KiB/GiB | cut s/GiB | zstd ratio | zstd CPU s/GiB | unzstd CPU s/GiB | repeated chunks | 1 MiB overwrite: chunks, raw KiB, zstd KiB (mean / max) | insert 100 B | delete 100 B | unsynced |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for spec in &a[3..] {
        let f: Vec<usize> = spec.split('/').map(|s| s.parse().unwrap()).collect();
        let p = Params {
            min: f[0] << 10,
            avg: f[1] << 10,
            max: f[2] << 10,
            level: f[3] as u32,
        };
        let t = Instant::now();
        let chunks = p.chunks(&data);
        let cut_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let frames: Vec<Vec<u8>> = chunks
            .par_iter()
            .map(|&(o, l)| zstd::bulk::compress(&data[o..o + l], 3).unwrap())
            .collect();
        let z_s = t.elapsed().as_secs_f64() * rayon::current_num_threads() as f64;
        let zbytes: usize = frames.iter().map(|f| f.len()).sum();
        let t = Instant::now();
        let back: usize = frames
            .par_iter()
            .zip(&chunks)
            .map(|(f, &(_, l))| zstd::bulk::decompress(f, l).unwrap().len())
            .sum();
        let unz_s = t.elapsed().as_secs_f64() * rayon::current_num_threads() as f64;
        assert_eq!(back, data.len());
        drop(frames);
        let ids: std::collections::HashSet<[u8; 32]> = chunks
            .iter()
            .map(|&(o, l)| *blake3::hash(&data[o..o + l]).as_bytes())
            .collect();
        let repeated = chunks.len() - ids.len();
        let mut seed = 17u64;
        let positions: Vec<usize> = (0..edits)
            .map(|_| {
                let span = data.len() * 8 / 10;
                data.len() / 10 + (mix(&mut seed) as usize % span)
            })
            .collect();
        let mut cols = Vec::new();
        let mut unsynced = 0;
        for edit in [
            Edit::Overwrite(1 << 20),
            Edit::Insert(100),
            Edit::Delete(100),
        ] {
            let costs: Vec<Stored> = positions
                .par_iter()
                .map(|&pos| edit_cost(&p, &data, &chunks, pos, &edit))
                .collect();
            unsynced += costs.iter().filter(|c| !c.resynced).count();
            let n = costs.len() as f64;
            let mean = |f: &dyn Fn(&Stored) -> usize| costs.iter().map(f).sum::<usize>() as f64 / n;
            let max = |f: &dyn Fn(&Stored) -> usize| costs.iter().map(f).max().unwrap_or(0);
            cols.push(format!(
                "{:.1} / {}, {:.0} / {}, {:.0} / {}",
                mean(&|c| c.chunks),
                max(&|c| c.chunks),
                mean(&|c| c.raw) / 1024.0,
                max(&|c| c.raw) >> 10,
                mean(&|c| c.zstd) / 1024.0,
                max(&|c| c.zstd) >> 10,
            ));
        }
        println!(
            "| {spec} | {:.0} | {:.0} | {:.0} | {:.2} | {:.3} | {:.2} | {:.2} | {repeated} | {} | {} | {} | {unsynced} |",
            chunks.len() as f64 / gib,
            data.len() as f64 / chunks.len() as f64 / 1024.0,
            chunks.len() as f64 * 36.0 / gib / 1024.0,
            cut_s / gib,
            zbytes as f64 / data.len() as f64,
            z_s / gib,
            unz_s / gib,
            cols[0],
            cols[1],
            cols[2],
        );
    }
}
