//! Times `Store::fit` alone (the compaction a handle that grew the file runs when it drops) on
//! a copy of a store, e.g. one left by an older build's cold snapshot: wall and CPU seconds,
//! and the file's length and blocks before and after. See benches/store-fit.sh.
//! usage: cargo run --release --example storefit -- STORE
fn cpu() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    s(u.ru_utime) + s(u.ru_stime)
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: storefit STORE");
    let mut store = rewind::Store::open(
        std::path::Path::new(&dir),
        rewind::StoreOptions {
            create: false,
            ..rewind::StoreOptions::default()
        },
    )
    .expect("store");
    let (t, c) = (std::time::Instant::now(), cpu());
    let fit = store.fit();
    let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu() - c);
    match fit {
        Ok(f) => println!(
            "fit\t{wall:.3} s wall\t{cpu:.3} s cpu\tcompacted {}\tapparent {} -> {}\tallocated {} -> {}",
            f.compacted, f.before.apparent, f.after.apparent, f.before.allocated, f.after.allocated
        ),
        Err(why) => println!("fit\t{wall:.3} s wall\tskipped: {why}"),
    }
}
