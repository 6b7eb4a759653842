//! A damaged store file: bytes flipped at the start of b-tree pages across the whole file.
//! Every command that reads it answers or refuses (exit 0, 1 for verify's problems, or 2);
//! none crashes with redb's panic.

use crate::common::{Env, noise, write_file};

#[test]
fn flipped_pages_never_panic() {
    let env = Env::new();
    for round in 0..4u64 {
        for i in 0..60u64 {
            let name = format!("d{}/f{i}.txt", i % 5);
            write_file(&env.ws, name.as_bytes(), &noise(round * 100 + i, 300));
        }
        env.ok(&["snapshot", "-m", &format!("s{round}")]);
    }
    let file = env.store.join("store.redb");
    let clean = std::fs::read(&file).expect("read store");
    // Pages that start like a b-tree page (leaf 1, branch 2): the tables' own pages.
    let pages: Vec<usize> = (0..clean.len() / 4096)
        .filter(|p| matches!(clean[p * 4096], 1 | 2))
        .collect();
    assert!(!pages.is_empty());
    for (n, p) in pages.iter().enumerate().step_by(pages.len().div_ceil(24)) {
        let mut data = clean.clone();
        let at = p * 4096 + 1 + (n % 7);
        for b in &mut data[at..at + 8] {
            *b ^= 0xff;
        }
        std::fs::write(&file, &data).expect("write store");
        for args in [&["verify"][..], &["stats"][..], &["log"][..]] {
            let out = env.cmd().args(args).output().expect("spawn rewind");
            let err = String::from_utf8_lossy(&out.stderr);
            let code = out.status.code();
            assert!(
                matches!(code, Some(0..=2)),
                "{args:?} with page {p} damaged exited {code:?}: {err}"
            );
            assert!(!err.contains("panicked"), "{args:?} page {p}: {err}");
        }
    }
}
