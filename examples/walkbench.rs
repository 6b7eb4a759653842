//! Times the bare walk (ignore's WalkParallel + one lstat per entry) on a tree, with an
//! empty stat cache: the floor of a warm snapshot with this walker.
//! usage: cargo run --release --example walkbench -- DIR [RUNS]
fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("usage: walkbench DIR [RUNS]"));
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(5);
    let cache = rewind::scan::StatCache::default();
    for _ in 0..runs {
        let t = std::time::Instant::now();
        let out =
            rewind::scan::walk(&dir, &rewind::scan::WalkOptions::default(), &cache).expect("walk");
        println!(
            "{} entries in {:.3} s",
            out.entries.len(),
            t.elapsed().as_secs_f64()
        );
    }
}
