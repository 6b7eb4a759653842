//! Writing the stat cache's rows so that they fill their pages.
//!
//! The stat cache is keyed by (workspace, directory path), and a snapshot writes the row of
//! every directory that changed: a cold one writes them all. Built bottom-up, they came in
//! descending key order, one insert after another, and redb splits a full leaf in two halves
//! that later inserts never come back to: the table took 2.3 times the bytes of its rows
//! (171 MiB for 74 MiB at a million files). Every warm snapshot without the watch daemon reads
//! the whole table, so its size is read time; on a machine whose page cache has let the store
//! go, it is disk reads (`status` at a million files: 3.6-4.0 s loose, 1.4-1.9 s packed).
//! redb's cursor packs a run of inserts into full leaves: [`write_rows`] gives it runs, and
//! gc's [`repack`] rewrites a table written before.

use redb::{ReadableTable, ReadableTableMetadata, TableHandle as _};

use crate::error::{Error, Result};
use crate::store::tables::STAT_CACHE;

/// A directory's path and its encoded row.
pub type Row = (Vec<u8>, Vec<u8>);

/// Writes a workspace's directory rows (`rows` sorted by path, ascending), overwriting those
/// that exist.
///
/// Rows the table does not have yet go in through a cursor, a run per gap between existing
/// rows (one run for a cold snapshot); rows it has are overwritten in place. With `counts`,
/// each row's tree gains the row's reference and a replaced row's tree loses it.
pub fn write_rows(
    table: &mut redb::Table<(u64, &[u8]), &[u8]>,
    ws: u64,
    rows: &[Row],
    mut counts: Option<&mut crate::store::refcount::Counts<'_>>,
) -> Result<()> {
    debug_assert!(rows.windows(2).all(|w| w[0].0 < w[1].0));
    let mut at = 0;
    while at < rows.len() {
        let first = (ws, rows[at].0.as_slice());
        let mut cursor = table
            .lower_bound_mut(std::ops::Bound::Included(first))
            .map_err(in_cache)?;
        // A run ends at the first row that does not go in the cursor's gap: one that exists
        // (overwritten below), or one beyond the next existing row (a cursor is opened there).
        let start = at;
        while let Some((dir, bytes)) = rows.get(at) {
            match cursor.insert_before((ws, dir.as_slice()), bytes.as_slice()) {
                Ok(()) => {
                    if let Some(c) = counts.as_deref_mut() {
                        c.row(None, Some(bytes))?;
                    }
                    at += 1;
                }
                Err(redb::CursorError::UnorderedKey) => break,
                Err(e) => return Err(in_cache(redb::Error::from(e))),
            }
        }
        cursor.close().map_err(in_cache)?;
        if at == start {
            let (dir, bytes) = &rows[at];
            let old = table.insert((ws, dir.as_slice()), bytes.as_slice())?;
            if let Some(c) = counts.as_deref_mut() {
                c.row(old.as_ref().map(|v| v.value()), Some(bytes))?;
            }
            at += 1;
        }
    }
    Ok(())
}

/// Names the stat cache in a damaged page's error: the database names the table of a point or
/// range access but not a cursor's, and a damaged cache page is told apart by its table (the
/// snapshot drops the cache and goes on).
fn in_cache(e: impl Into<Error>) -> Error {
    match e.into() {
        Error::DamagedPage { table: None, why } => Error::DamagedPage {
            table: Some(STAT_CACHE.name().to_string()),
            why,
        },
        e => e,
    }
}

/// Rows [`repack`] takes out and puts back at a time: its memory, a few megabytes.
const REPACK_SLICE: usize = 8 << 20;

/// What gc's repack did to the stat cache table: its bytes (rows, metadata and the empty part
/// of its pages) before and after.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Repacked {
    /// The table's bytes before.
    pub bytes_before: u64,
    /// The table's bytes after.
    pub bytes_after: u64,
}

/// Rewrites the stat cache table packed (see [`write_rows`]) when at least a third of its
/// pages is empty: a store written before `write_rows` holds its rows at 43% of their pages,
/// and a warm snapshot reads them all. Works in slices of a few megabytes: each slice's rows
/// are taken out and put back as one run. Returns None when the table was left as it was.
pub fn repack(txn: &redb::WriteTransaction) -> Result<Option<Repacked>> {
    let mut table = txn.open_table(STAT_CACHE)?;
    let total = |s: &redb::TableStats| s.stored_bytes() + s.metadata_bytes() + s.fragmented_bytes();
    let before = table.stats()?;
    if before.fragmented_bytes() < (1 << 20)
        || before.fragmented_bytes() * 2 < before.stored_bytes()
    {
        return Ok(None);
    }
    let mut after: Option<(u64, Vec<u8>)> = None;
    loop {
        // The slice's rows, by workspace.
        let mut slice: Vec<(u64, Vec<Row>)> = Vec::new();
        let mut bytes = 0;
        let range = match &after {
            None => table.range::<(u64, &[u8])>(..)?,
            Some((ws, dir)) => table.range::<(u64, &[u8])>((
                std::ops::Bound::Excluded((*ws, dir.as_slice())),
                std::ops::Bound::Unbounded,
            ))?,
        };
        for item in range {
            let (k, v) = item?;
            let (ws, dir) = k.value();
            bytes += dir.len() + v.value().len();
            let row = (dir.to_vec(), v.value().to_vec());
            match slice.last_mut() {
                Some((w, rows)) if *w == ws => rows.push(row),
                _ => slice.push((ws, vec![row])),
            }
            if bytes >= REPACK_SLICE {
                break;
            }
        }
        let Some((ws, rows)) = slice.last() else {
            break;
        };
        after = rows.last().map(|(dir, _)| (*ws, dir.clone()));
        for (ws, rows) in &slice {
            for (dir, _) in rows {
                table.remove((*ws, dir.as_slice()))?;
            }
            write_rows(&mut table, *ws, rows, None)?;
        }
    }
    Ok(Some(Repacked {
        bytes_before: total(&before),
        bytes_after: total(&table.stats()?),
    }))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use redb::ReadableDatabase;

    use super::*;

    type Model = BTreeMap<(u64, Vec<u8>), Vec<u8>>;

    fn db() -> (tempfile::TempDir, redb::Database) {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = redb::Database::create(dir.path().join("t.redb")).expect("db");
        (dir, db)
    }

    fn dump(db: &redb::Database) -> Model {
        let txn = db.begin_read().expect("read");
        let table = txn.open_table(STAT_CACHE).expect("table");
        table
            .iter()
            .expect("iter")
            .map(|item| {
                let (k, v) = item.expect("row");
                let (ws, dir) = k.value();
                ((ws, dir.to_vec()), v.value().to_vec())
            })
            .collect()
    }

    fn stats(db: &redb::Database) -> redb::TableStats {
        let txn = db.begin_read().expect("read");
        txn.open_table(STAT_CACHE)
            .expect("table")
            .stats()
            .expect("stats")
    }

    /// A directory row of about 1.8 KiB, as at a million files in 41,681 directories.
    fn row(i: usize, tag: u8) -> (Vec<u8>, Vec<u8>) {
        (format!("d{i:06}").into_bytes(), vec![tag; 1800 + i % 97])
    }

    /// Writes `rows` of workspace 7 one insert after another, in descending order, as
    /// snapshots did before (they build the trees bottom-up).
    fn insert_one_by_one(db: &redb::Database, rows: &[(Vec<u8>, Vec<u8>)]) {
        let txn = db.begin_write().expect("write");
        {
            let mut t = txn.open_table(STAT_CACHE).expect("table");
            for (dir, v) in rows.iter().rev() {
                t.insert((7, dir.as_slice()), v.as_slice()).expect("insert");
            }
        }
        txn.commit().expect("commit");
    }

    fn write(db: &redb::Database, ws: u64, rows: &[(Vec<u8>, Vec<u8>)]) {
        let txn = db.begin_write().expect("write");
        {
            let mut t = txn.open_table(STAT_CACHE).expect("table");
            write_rows(&mut t, ws, rows, None).expect("write_rows");
        }
        txn.commit().expect("commit");
    }

    #[test]
    fn rows_written_in_one_run_fill_their_pages() {
        let rows: Vec<_> = (0..3000).map(|i| row(i, 1)).collect();
        let (_d1, packed) = db();
        write(&packed, 7, &rows);
        let (_d2, loose) = db();
        insert_one_by_one(&loose, &rows);
        assert_eq!(dump(&packed), dump(&loose));
        let (p, l) = (stats(&packed), stats(&loose));
        // One insert after another leaves about half of every page empty; a run, little.
        assert!(
            l.fragmented_bytes() * 2 > l.stored_bytes(),
            "one by one: {} empty for {} stored",
            l.fragmented_bytes(),
            l.stored_bytes()
        );
        assert!(
            p.fragmented_bytes() * 5 < p.stored_bytes(),
            "packed: {} empty for {} stored",
            p.fragmented_bytes(),
            p.stored_bytes()
        );
    }

    #[test]
    fn a_repack_keeps_every_row_and_fills_the_pages() {
        let (_d, db) = db();
        let rows: Vec<_> = (0..3000).map(|i| row(i, 2)).collect();
        insert_one_by_one(&db, &rows);
        // Other workspaces' rows, before and after, and a slice boundary inside workspace 7.
        write(&db, 3, &rows[..40]);
        write(&db, 9, &rows[..40]);
        let before = dump(&db);
        let txn = db.begin_write().expect("write");
        let done = repack(&txn)
            .expect("repack")
            .expect("a loose table is repacked");
        txn.commit().expect("commit");
        assert!(done.bytes_after * 3 < done.bytes_before * 2, "{done:?}");
        assert_eq!(dump(&db), before);
        let txn = db.begin_write().expect("write");
        assert_eq!(
            repack(&txn).expect("repack"),
            None,
            "a packed table is left alone"
        );
        txn.abort().expect("abort");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever the table holds (this workspace's rows, its neighbours'), `write_rows`
        /// leaves it as one insert after another would: new rows added, existing ones
        /// overwritten, nothing else touched.
        #[test]
        fn write_rows_is_an_insert_of_each_row(
            existing in proptest::collection::btree_map((6u64..9, 0u16..60), 0u8..4, 0..40),
            new in proptest::collection::btree_map(0u16..60, 4u8..8, 0..40),
        ) {
            let key = |n: u16| format!("{n:03}").into_bytes();
            let (_d, db) = db();
            let mut model = Model::new();
            let txn = db.begin_write().expect("write");
            {
                let mut t = txn.open_table(STAT_CACHE).expect("table");
                for (&(ws, n), &v) in &existing {
                    t.insert((ws, key(n).as_slice()), vec![v; 300].as_slice()).expect("insert");
                    model.insert((ws, key(n)), vec![v; 300]);
                }
            }
            txn.commit().expect("commit");
            let rows: Vec<(Vec<u8>, Vec<u8>)> =
                new.iter().map(|(&n, &v)| (key(n), vec![v; 200 + n as usize])).collect();
            write(&db, 7, &rows);
            for (dir, v) in rows {
                model.insert((7, dir), v);
            }
            prop_assert_eq!(dump(&db), model);
        }
    }
}
