//! The trees and stat cache rows a snapshot builds, written into its transaction as they are
//! made, so that a cold snapshot does not hold them all until the commit (at a million files:
//! 46 MB of trees and 76 MB of rows beside the walk's entries). redb keeps at most half its
//! cache of dirty pages and writes the rest to the file: the transaction's pages do not add up
//! in memory either.

use redb::{Table, WriteTransaction};

use crate::error::Result;
use crate::id::Id;
use crate::scan::cache_write::{Row, write_rows};
use crate::store::tables::{STAT_CACHE, TREES};

/// Cache rows gathered before they are written as one run: a run fills its pages (see
/// `scan::cache_write`), and a few megabytes is all the memory they take.
const ROWS_BATCH: usize = 4 << 20;

/// Where a build's trees and rows go.
pub(crate) enum Output<'t> {
    /// Kept in `Built::dirty_caches` (a dry run: nothing is written; its trees are made again
    /// from the rows).
    Keep,
    /// Written into the snapshot's transaction.
    Write(Box<Writer<'t>>),
}

/// Writes trees and cache rows into a snapshot's transaction.
pub(crate) struct Writer<'t> {
    trees: Table<'t, [u8; 32], &'static [u8]>,
    cache: Table<'t, (u64, &'static [u8]), &'static [u8]>,
    ws: u64,
    /// The reference counts: a new tree holds its entries, a row its tree.
    counts: crate::store::refcount::Counts<'t>,
    /// Rows not written yet, in the build's order (descending paths).
    rows: Vec<Row>,
    rows_bytes: usize,
    done: Written,
}

/// What a [`Writer`] wrote.
#[derive(Default)]
pub(crate) struct Written {
    /// Trees the store did not have.
    pub new_trees: u64,
    /// Their bytes.
    pub stored_bytes: u64,
    /// The ids of every tree written (new or not): what the commit checks after a concurrent
    /// gc.
    pub trees: Vec<Id>,
}

impl<'t> Writer<'t> {
    /// A writer into `txn`, for workspace `ws`'s cache.
    pub fn new(txn: &'t WriteTransaction, ws: u64) -> Result<Writer<'t>> {
        Ok(Writer {
            trees: txn.open_table(TREES)?,
            cache: txn.open_table(STAT_CACHE)?,
            ws,
            counts: crate::store::refcount::Counts::open(txn)?,
            rows: Vec::new(),
            rows_bytes: 0,
            done: Written::default(),
        })
    }

    /// Stores a tree (`bytes`, the encoding of `tree`).
    pub fn tree(&mut self, id: Id, tree: &crate::store::tree::Tree, bytes: &[u8]) -> Result<()> {
        if self.trees.insert(id.0, bytes)?.is_none() {
            self.counts.add_tree(tree)?;
            self.done.new_trees += 1;
            self.done.stored_bytes += bytes.len() as u64;
        }
        self.done.trees.push(id);
        Ok(())
    }

    /// Writes directory `dir`'s cache row; rows come in descending path order.
    pub fn row(&mut self, dir: Vec<u8>, row: Vec<u8>) -> Result<()> {
        debug_assert!(self.rows.last().is_none_or(|(last, _)| *last > dir));
        self.rows_bytes += dir.len() + row.len();
        self.rows.push((dir, row));
        if self.rows_bytes >= ROWS_BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the rows gathered so far.
    fn flush(&mut self) -> Result<()> {
        self.rows.reverse();
        write_rows(&mut self.cache, self.ws, &self.rows, Some(&mut self.counts))?;
        self.rows.clear();
        self.rows_bytes = 0;
        Ok(())
    }

    /// Writes the last rows; what was written.
    pub fn finish(mut self) -> Result<Written> {
        self.flush()?;
        Ok(self.done)
    }
}
