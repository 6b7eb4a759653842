//! The ids a snapshot decided to store, so that two files with the same content are compressed
//! and sent once.
//!
//! A cold snapshot of a million files claims a million ids. In a hash set that cost 33 bytes a
//! slot at a load of 7/16 to 7/8, and its growth held the old table beside the new one: 104 MB
//! at the peak of a cold snapshot of a million files, a third of its heap (heaptrack). Here
//! the ids live in one sorted list (32 bytes each, no slack that is ever touched) beside a
//! small hash set of the newest claims, merged into the list each [`MERGE_AT`] claims. A
//! claim costs a binary search and a hash lookup; a merge moves the list once, in place, from
//! the back, so the list is never held twice.

use std::sync::Mutex;

use rustc_hash::FxHashSet;

use crate::id::Id;

/// Newest claims held in the hash set before they are merged into the sorted list: the set
/// stays small (~4 MB), and a million claims take 16 merges.
const MERGE_AT: usize = 1 << 16;

/// A set of ids that many workers add to, each learning whether it added an id first.
#[derive(Default)]
pub(crate) struct Claims {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Every claim merged so far, sorted, without repeats.
    sorted: Vec<Id>,
    /// The claims since the last merge: none of them is in `sorted`.
    recent: FxHashSet<Id>,
}

impl Claims {
    /// Claims `id`: true when no one had (the caller stores it), false when someone had.
    pub(crate) fn claim(&self, id: Id) -> bool {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.sorted.binary_search(&id).is_ok() || !inner.recent.insert(id) {
            return false;
        }
        if inner.recent.len() >= MERGE_AT {
            inner.merge();
        }
        true
    }

    /// How many ids are claimed.
    #[cfg(test)]
    fn len(&self) -> usize {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.sorted.len() + inner.recent.len()
    }
}

impl Inner {
    /// Moves `recent` into `sorted`, keeping it sorted: the new ids are sorted on their own,
    /// then the two runs are merged from the back into the list's grown room.
    fn merge(&mut self) {
        let mut new: Vec<Id> = self.recent.drain().collect();
        new.sort_unstable();
        let old_len = self.sorted.len();
        self.sorted.resize(old_len + new.len(), Id::default());
        let (mut i, mut j, mut k) = (old_len, new.len(), self.sorted.len());
        // Each step fills slot k-1 with the larger of the two runs' last items. Slots at or
        // above `k` are done; `i <= k - j` always, so the old run is never overwritten before
        // it is read.
        while j > 0 {
            k -= 1;
            if i > 0 && self.sorted[i - 1] > new[j - 1] {
                self.sorted[k] = self.sorted[i - 1];
                i -= 1;
            } else {
                self.sorted[k] = new[j - 1];
                j -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> Id {
        Id::of(&n.to_le_bytes())
    }

    #[test]
    fn each_id_is_claimed_once_across_merges() {
        let claims = Claims::default();
        let n = 3 * MERGE_AT as u64 + 17;
        for k in 0..n {
            assert!(claims.claim(id(k)), "first claim of {k}");
        }
        // Every id again, both those merged into the sorted list and the recent ones.
        for k in 0..n {
            assert!(!claims.claim(id(k)), "second claim of {k}");
        }
        assert_eq!(claims.len(), n as usize);
        let inner = claims.inner.lock().unwrap();
        assert!(inner.sorted.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(inner.sorted.len(), 3 * MERGE_AT);
    }

    #[test]
    fn claims_from_many_threads_let_exactly_one_win_each_id() {
        let claims = Claims::default();
        let n = MERGE_AT as u64 + 1000;
        let wins: u64 = std::thread::scope(|s| {
            let workers: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..n).filter(|&k| claims.claim(id(k))).count() as u64))
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum()
        });
        assert_eq!(wins, n);
    }
}
