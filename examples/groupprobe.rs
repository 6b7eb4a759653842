//! Probe for the store's size goal: compresses the small files of a tree in groups (files in
//! walk order, concatenated until a group holds `group` raw bytes) at a level, with and
//! without a dictionary, and prints the total and time (one thread). Not a benchmark of rewind.
//!   cargo run --release --example groupprobe -- /work/corpus/linux 3 0,16384,65536,262144
use std::time::Instant;
fn walk(d: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(d) else { return };
    let mut v: Vec<_> = rd.flatten().collect();
    v.sort_by_key(|e| e.file_name());
    for e in v {
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
    let level: i32 = a[2].parse().unwrap();
    let groups: Vec<usize> = a[3].split(',').map(|s| s.parse().unwrap()).collect();
    let small_max: usize = a.get(4).map(|s| s.parse().unwrap()).unwrap_or(4 << 20);
    let data: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .filter(|d| d.len() < (4 << 20))
        .collect();
    let total: usize = data.iter().map(|d| d.len()).sum();
    println!("files {} bytes {}", data.len(), total);
    let mut c = zstd::bulk::Compressor::new(level).unwrap();
    for &g in &groups {
        let t = Instant::now();
        let mut out = 0usize;
        let mut frames = 0usize;
        let mut buf: Vec<u8> = Vec::new();
        for d in &data {
            if g == 0 || d.len() > small_max {
                out += c.compress(d).unwrap().len().min(d.len());
                frames += 1;
                continue;
            }
            buf.extend_from_slice(d);
            if buf.len() >= g {
                out += c.compress(&buf).unwrap().len();
                frames += 1;
                buf.clear();
            }
        }
        if !buf.is_empty() {
            out += c.compress(&buf).unwrap().len();
            frames += 1;
        }
        println!(
            "group {:>8}  level {}  frames {:>6}  {:>7.1} MiB  {:.2} s",
            g,
            level,
            frames,
            out as f64 / 1048576.0,
            t.elapsed().as_secs_f64()
        );
    }
}
