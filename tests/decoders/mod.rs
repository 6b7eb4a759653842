//! The on-disk decoders against damaged bytes: the fuzz target's body
//! (fuzz/fuzz_targets/decoders_check.rs) run as a proptest smoke over random bytes and over
//! valid encodings with bytes flipped, cut or added. The fuzz target (`fuzz/run.sh decoders`)
//! searches far longer; this keeps the property in CI.

#[path = "../../fuzz/fuzz_targets/decoders_check.rs"]
mod decoders_check;

use std::sync::OnceLock;

use proptest::prelude::*;
use rewind::id::Id;
use rewind::internals::{CacheEntry, DirCache, Stat};
use rewind::internals::{
    ChunkRef, Span, encode_artifact, encode_chunk, encode_chunked, encode_whole,
};
use rewind::progress::NoProgress;
use rewind::snapshot::SnapshotOptions;
use rewind::store::tree::{Kind, Tree, TreeEntry};
use rewind::store::{Store, StoreOptions};

/// Valid encodings of each record kind, to mutate.
fn seeds() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let span = Span {
            segment: 3,
            offset: 17,
            len: 99,
        };
        let id = Id::of(b"x");
        let entry = |name: &[u8], kind| TreeEntry {
            name: name.to_vec(),
            kind,
            id,
            size: 5,
        };
        let tree = Tree::from_unsorted(vec![
            entry(b"b.txt", Kind::File),
            entry(b"a", Kind::Dir),
            entry(b"run.sh", Kind::Executable),
            entry(b"l", Kind::Symlink),
        ]);
        let cache_entry = |name: &[u8], racy| CacheEntry {
            name: name.to_vec(),
            kind: Kind::File,
            id,
            size: 5,
            stat: Stat {
                mtime_ns: 1,
                ctime_ns: 2,
                size: 5,
                ino: 7,
                mode: 0o100644,
            },
            racy,
        };
        let cache = DirCache {
            tree: id,
            size: 10,
            entries: vec![cache_entry(b"a", false), cache_entry(b"zz", true)],
        };
        // A real snapshot record, from a real store.
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = tempfile::tempdir().expect("tempdir");
        std::fs::write(ws.path().join("f.txt"), "hello\n").expect("write");
        let store = Store::open(dir.path(), StoreOptions::default()).expect("store");
        let snap = store
            .snapshot(ws.path(), &SnapshotOptions::default(), &NoProgress)
            .expect("snapshot")
            .report
            .id
            .expect("an id");
        let record = store
            .reader()
            .expect("reader")
            .snapshot_raw(&snap)
            .expect("read")
            .expect("a stored record");
        // And a real artifact record, with metadata.
        let meta = vec![("run".to_string(), "42".to_string())];
        let put = rewind::artifact::put(&store, "logs/build.txt", &mut &b"ok\n"[..], meta, false)
            .expect("put");
        let artifact = encode_artifact(&put.artifact).expect("artifact");
        vec![
            encode_whole(99, true, &span),
            encode_chunked(
                2 << 20,
                &[ChunkRef { id, len: 1 << 20 }, ChunkRef { id, len: 1 << 20 }],
            ),
            encode_chunk(99, false, &span),
            tree.encode().expect("tree"),
            cache.encode(),
            record,
            artifact,
        ]
    })
}

/// One damage to a valid encoding.
#[derive(Debug, Clone)]
enum Damage {
    Flip(usize, u8),
    Cut(usize),
    Insert(usize, u8),
}

fn damaged() -> impl Strategy<Value = Vec<u8>> {
    let damage = prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(i, b)| Damage::Flip(i, b)),
        any::<usize>().prop_map(Damage::Cut),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Damage::Insert(i, b)),
    ];
    (0..7usize, prop::collection::vec(damage, 1..4)).prop_map(|(seed, damages)| {
        let mut bytes = seeds()[seed].clone();
        for d in damages {
            let n = bytes.len().max(1);
            match d {
                Damage::Flip(i, b) if !bytes.is_empty() => bytes[i % n] ^= b,
                Damage::Cut(i) => bytes.truncate(i % n),
                Damage::Insert(i, b) => bytes.insert(i % (bytes.len() + 1), b),
                Damage::Flip(..) => {}
            }
        }
        bytes
    })
}

#[test]
fn valid_encodings_decode() {
    for s in seeds() {
        decoders_check::check(s);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000),
        ..ProptestConfig::default()
    })]

    #[test]
    fn damaged_encodings_never_panic(bytes in damaged()) {
        decoders_check::check(&bytes);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        decoders_check::check(&bytes);
    }
}
