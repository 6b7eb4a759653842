//! Times the bare walk (ignore's WalkParallel + one lstat per entry) on a tree, with an
//! empty stat cache: the floor of a warm snapshot with this walker. With a store, also the walk
//! with the workspace's stat cache, and with every directory trusted (as `run`'s watched
//! after snapshot does): the cost of the lstats themselves.
//! usage: cargo run --release --example walkbench -- DIR [RUNS] [STORE]
fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("usage: walkbench DIR [RUNS] [STORE]"));
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(5);
    let store = args.next();
    let empty = rewind::internals::StatCache::default();
    let time = |opts: &rewind::internals::WalkOptions, cache: &rewind::internals::StatCache| {
        let t = std::time::Instant::now();
        let out = rewind::internals::walk(&dir, opts, cache).expect("walk");
        (out.entries.len(), t.elapsed().as_secs_f64())
    };
    let plain = rewind::internals::WalkOptions::default();
    let Some(store) = store else {
        for _ in 0..runs {
            let (n, s) = time(&plain, &empty);
            println!("{n} entries in {s:.3} s");
        }
        return;
    };
    let store = rewind::Store::open(
        std::path::Path::new(&store),
        rewind::StoreOptions::default(),
    )
    .expect("store");
    let reader = store.reader().expect("reader");
    let root = dir.canonicalize().expect("canonical");
    let ws = reader
        .workspace(&root)
        .expect("ws")
        .expect("a snapshot of DIR in STORE");
    let cache = rewind::internals::StatCache::load(&reader, ws.id()).expect("cache");
    let all: rustc_hash::FxHashSet<Vec<u8>> = cache.dir_paths().map(<[u8]>::to_vec).collect();
    let trusted = rewind::internals::WalkOptions {
        trusted: Some(rewind::internals::Trust::Only(std::sync::Arc::new(all))),
        ..Default::default()
    };
    let (mut best_plain, mut best_trusted) = (f64::MAX, f64::MAX);
    for _ in 0..runs {
        best_plain = best_plain.min(time(&plain, &cache).1);
        best_trusted = best_trusted.min(time(&trusted, &cache).1);
    }
    println!(
        "best of {runs}: walk with lstat {best_plain:.3} s, trusted (no lstat) {best_trusted:.3} s"
    );
}
