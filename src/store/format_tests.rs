//! The store's format version and features (see `format.rs`), on real stores: new stores are
//! at the current schema, a store at schema 1 is upgraded once by a writable open (however
//! many open it at once), newer schemas and unknown features are refused.

use std::path::Path;

use super::format::{Format, KNOWN_FEATURES, SCHEMA_VERSION, TEST_FEATURE};
use super::tables::META;
use super::{DB_FILE, Store, StoreOptions};
use crate::error::Error;

fn set_meta(store: &Store, name: &str, value: &[u8]) {
    let txn = store.begin_write().unwrap();
    txn.open_table(META).unwrap().insert(name, value).unwrap();
    txn.commit().unwrap();
}

/// A store whose `meta` says schema 1, as every store made before schema 2 does.
fn store_at_schema_1(dir: &Path) {
    let store = Store::open(dir, StoreOptions::default()).unwrap();
    set_meta(&store, "schema", &1u32.to_le_bytes());
    assert_eq!(store.format().unwrap().schema, 1);
}

fn open(dir: &Path) -> crate::Result<Store> {
    Store::open(dir, StoreOptions::default())
}

#[test]
fn a_new_store_is_at_the_current_schema_with_reference_counts() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).unwrap();
    assert_eq!(
        store.format().unwrap(),
        Format {
            schema: SCHEMA_VERSION,
            features: vec![crate::store::refcount::FEATURE.to_string()]
        }
    );
    assert_eq!(SCHEMA_VERSION, 2);
}

#[test]
fn a_writable_open_upgrades_schema_1_once() {
    let dir = tempfile::tempdir().unwrap();
    store_at_schema_1(dir.path());
    let store = open(dir.path()).unwrap();
    assert_eq!(store.format().unwrap().schema, SCHEMA_VERSION);
    // Already at the current schema: the upgrade finds its work done and writes nothing.
    let file = dir.path().join(DB_FILE);
    assert!(!store.upgrade(&file).unwrap());
    set_meta(&store, "schema", &1u32.to_le_bytes());
    assert!(store.upgrade(&file).unwrap());
}

#[test]
fn stores_opened_at_once_all_open_and_the_store_ends_upgraded() {
    let dir = tempfile::tempdir().unwrap();
    store_at_schema_1(dir.path());
    let start = std::sync::Barrier::new(4);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    let store = open(dir.path()).unwrap();
                    store.format().unwrap().schema
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), SCHEMA_VERSION);
        }
    });
}

#[test]
fn a_newer_schema_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    set_meta(&open(dir.path()).unwrap(), "schema", &3u32.to_le_bytes());
    match open(dir.path()) {
        Err(Error::SchemaVersion {
            found: 3,
            expected: SCHEMA_VERSION,
            ..
        }) => {}
        other => panic!("expected a refused schema, got {:?}", other.err()),
    }
    let msg = open(dir.path()).err().unwrap().to_string();
    assert!(msg.contains("newer rewind; upgrade rewind"), "{msg}");
}

#[test]
fn schema_0_or_garbage_is_not_a_store() {
    for value in [&0u32.to_le_bytes()[..], b"\x01\x00"] {
        let dir = tempfile::tempdir().unwrap();
        set_meta(&open(dir.path()).unwrap(), "schema", value);
        match open(dir.path()) {
            Err(Error::NotAStore { .. }) => {}
            other => panic!("{value:?}: expected NotAStore, got {:?}", other.err()),
        }
    }
}

#[test]
fn requiring_a_feature_twice_records_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).unwrap();
    assert!(store.require_feature(TEST_FEATURE).unwrap());
    assert!(!store.require_feature(TEST_FEATURE).unwrap());
    drop(store);
    // This build knows the feature, so it still opens the store.
    let store = open(dir.path()).unwrap();
    assert_eq!(
        store.format().unwrap().features,
        vec![crate::store::refcount::FEATURE, TEST_FEATURE]
    );
    // A build that does not know it refuses the store: the same check with another list.
    let file = dir.path().join(DB_FILE);
    let format = store.format().unwrap();
    assert!(format.check(&file, KNOWN_FEATURES).is_ok());
    match format.check(&file, &[crate::store::refcount::FEATURE]) {
        Err(Error::UnknownFeatures { features, .. }) => assert_eq!(features, vec![TEST_FEATURE]),
        other => panic!("expected unknown features, got {other:?}"),
    }
}

#[test]
fn a_feature_this_build_does_not_know_cannot_be_required() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).unwrap();
    assert!(matches!(
        store.require_feature("from-the-future"),
        Err(Error::Internal(_))
    ));
    assert_eq!(
        store.format().unwrap().features,
        vec![crate::store::refcount::FEATURE]
    );
}

#[test]
fn a_store_listing_unknown_features_is_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).unwrap();
    store.require_feature(TEST_FEATURE).unwrap();
    let listed = format!("b-feature\n{TEST_FEATURE}\na-feature");
    set_meta(&store, "features", listed.as_bytes());
    drop(store);
    match open(dir.path()) {
        Err(e @ Error::UnknownFeatures { .. }) => {
            let Error::UnknownFeatures { features, .. } = &e else {
                unreachable!()
            };
            assert_eq!(features, &["b-feature", "a-feature"]);
            let msg = e.to_string();
            assert!(
                msg.contains("(b-feature, a-feature)") && msg.contains("upgrade rewind"),
                "{msg}"
            );
        }
        other => panic!("expected unknown features, got {:?}", other.err()),
    }
}

#[test]
fn features_that_do_not_decode_are_damage() {
    let dir = tempfile::tempdir().unwrap();
    set_meta(&open(dir.path()).unwrap(), "features", b"\xff\xfe");
    match open(dir.path()) {
        Err(Error::Corrupt { id, .. }) => assert_eq!(id, "features"),
        other => panic!("expected damage, got {:?}", other.err()),
    }
}

#[test]
fn known_feature_names_fit_the_list_format() {
    for name in KNOWN_FEATURES {
        assert!(!name.is_empty());
        assert!(
            name.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "{name}"
        );
    }
}
