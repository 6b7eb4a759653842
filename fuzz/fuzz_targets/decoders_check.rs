//! The body of the on-disk decoder fuzz target, shared with the proptest smoke run in
//! tests/decoders.rs: every decoder of what the store holds (blob and chunk records, stat-cache
//! views, trees, snapshot, operation, overlay and artifact records, remote pack indexes) is
//! given `data`.
//! None may panic; what decodes must encode back to something that decodes to the same value.

use rewind::id::Id;
use rewind::internals::PackIndex as Index;
use rewind::internals::{
    DirView, decode_artifact, decode_blob, decode_chunk, decode_op, decode_overlay,
    decode_snapshot, encode_artifact, encode_snapshot,
};
use rewind::store::tree::Tree;

/// Runs every decoder over `data`.
pub fn check(data: &[u8]) {
    let id = Id::default();
    let _ = decode_blob(&id, data);
    let _ = decode_chunk(&id, data);
    if let Ok(tree) = Tree::decode(&id, data) {
        let bytes = tree.encode().expect("a decoded tree encodes");
        assert_eq!(Tree::decode(&id, &bytes).expect("re-decodes"), tree);
    }
    if let Ok(snap) = decode_snapshot(&id, data) {
        let bytes = encode_snapshot(&snap).expect("a decoded snapshot record encodes");
        assert_eq!(decode_snapshot(&id, &bytes).expect("re-decodes"), snap);
    }
    if let Ok(a) = decode_artifact("key", data) {
        let bytes = encode_artifact(&a).expect("a decoded artifact record encodes");
        assert_eq!(decode_artifact("key", &bytes).expect("re-decodes"), a);
    }
    let _ = decode_op(data);
    let _ = decode_overlay(0, data);
    let _ = Index::decode(&id, data);
    if let Some(view) = DirView::parse(data) {
        let _ = (view.tree(), view.size(), view.len(), view.is_empty());
        let _ = view.ids().count();
        // Every name the view holds is found again by its binary search.
        for probe in [&b""[..], b"a", b"zz", data.get(..4).unwrap_or_default()] {
            if let Some(e) = view.get(probe) {
                assert_eq!(e.name(), probe);
                let _ = (e.kind(), e.racy(), e.id(), e.size(), e.stat());
            }
        }
    }
}
