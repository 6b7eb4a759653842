//! Probe for the compression level and dictionary choice: compresses every file under 4 MiB of a
//! tree on its own, at each level, without and with a zstd dictionary trained from a sample, and
//! prints the totals and times (one thread). Not a benchmark of rewind itself.
//!   cargo run --release --example dictprobe -- /work/corpus/linux 112640 12000000 1,3,6,9
//! (tree, dictionary size, sample bytes, levels).
use std::time::Instant;
fn walk(d: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(d) else { return };
    for e in rd.flatten() {
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            if e.file_name() != ".git" {
                walk(&e.path(), out)
            }
        } else if ft.is_file() {
            out.push(e.path())
        }
    }
}
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let mut files = Vec::new();
    walk(std::path::Path::new(&a[1]), &mut files);
    files.sort();
    let dict_size: usize = a[2].parse().unwrap();
    let sample_budget: usize = a[3].parse().unwrap();
    let levels: Vec<i32> = a[4].split(',').map(|s| s.parse().unwrap()).collect();
    let data: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .filter(|d| d.len() < (4 << 20))
        .collect();
    let total: usize = data.iter().map(|d| d.len()).sum();
    println!("files {} bytes {}", data.len(), total);
    // sample: spread evenly, small files only, cap each sample at 128 KiB
    let small: Vec<&Vec<u8>> = data
        .iter()
        .filter(|d| d.len() >= 64 && d.len() <= 256 << 10)
        .collect();
    let tot: usize = small.iter().map(|d| d.len().min(128 << 10)).sum();
    let step = (tot / sample_budget).max(1);
    let mut samples: Vec<&[u8]> = Vec::new();
    let mut acc = 0usize;
    let mut i = 0;
    while i < small.len() {
        let s = &small[i][..small[i].len().min(128 << 10)];
        samples.push(s);
        acc += s.len();
        i += step.max(1);
        if acc > sample_budget {
            break;
        }
    }
    let t = Instant::now();
    let dict = zstd::dict::from_samples(&samples, dict_size).unwrap();
    println!(
        "trained {} bytes from {} samples ({} B) in {:?}",
        dict.len(),
        samples.len(),
        acc,
        t.elapsed()
    );
    for &l in &levels {
        let t = Instant::now();
        let mut c = zstd::bulk::Compressor::new(l).unwrap();
        let plain: usize = data
            .iter()
            .map(|d| c.compress(d).unwrap().len().min(d.len()))
            .sum();
        let tp = t.elapsed();
        let t = Instant::now();
        let mut c = zstd::bulk::Compressor::with_dictionary(l, &dict).unwrap();
        let mut frames = Vec::new();
        let withd: usize = data
            .iter()
            .map(|d| {
                let f = c.compress(d).unwrap();
                let n = f.len().min(d.len());
                frames.push(f);
                n
            })
            .sum();
        let td = t.elapsed();
        let t = Instant::now();
        let mut dc = zstd::bulk::Decompressor::with_dictionary(&dict).unwrap();
        for (f, d) in frames.iter().zip(&data) {
            if f.len() < d.len() {
                let _ = dc.decompress(f, d.len()).unwrap();
            }
        }
        println!(
            "level {l}: plain {:.1} MiB {:?} | dict {:.1} MiB {:?} | decode {:?}",
            plain as f64 / 1048576.0,
            tp,
            withd as f64 / 1048576.0,
            td,
            t.elapsed()
        );
    }
}
