//! Content ids: BLAKE3 hashes of blobs, chunks, trees and snapshot records.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A 32-byte BLAKE3 hash naming an object by its content.
///
/// For a blob this is exactly what `b3sum` prints for the file, so users can check a stored
/// file with standard tools.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
pub struct Id(pub [u8; 32]);

/// How many hex digits identify a snapshot for people.
pub const SHORT_HEX: usize = 12;

impl Id {
    /// Hashes `bytes`.
    pub fn of(bytes: &[u8]) -> Id {
        Id(*blake3::hash(bytes).as_bytes())
    }

    /// The full 64-digit lowercase hex form.
    pub fn hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }

    /// The 12-digit prefix shown to people.
    pub fn short(&self) -> String {
        let mut s = self.hex();
        s.truncate(SHORT_HEX);
        s
    }

    /// Parses a full 64-digit hex id.
    pub fn from_hex(s: &str) -> Option<Id> {
        blake3::Hash::from_hex(s).ok().map(|h| Id(*h.as_bytes()))
    }
}

impl From<blake3::Hash> for Id {
    fn from(h: blake3::Hash) -> Self {
        Id(*h.as_bytes())
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({})", self.short())
    }
}
