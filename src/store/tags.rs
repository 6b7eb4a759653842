//! Tag names: what the store accepts as a tag (the revision syntax of
//! [`crate::revision`] must never be mistaken for one).

use crate::error::{Error, Result};

/// The shortest hex prefix accepted as a snapshot id.
pub const MIN_PREFIX: usize = 4;

/// Checks that a tag name is usable: not empty, not a revision syntax, no whitespace or
/// control characters, at most 200 bytes, and no empty, `.` or `..` component nor a leading
/// `/` (a remote stores the tag as `refs/<name>`, so `../x` would land outside; the rule is
/// [`crate::files::RelPath`]'s, which artifact keys follow too).
pub fn validate_tag(name: &str) -> Result<()> {
    let bad = name.is_empty()
        || crate::files::RelPath::new(name.as_bytes()).is_err()
        || name.len() > 200
        || name.starts_with('@')
        || name.starts_with('-')
        || name == "live"
        || name.chars().any(|c| c.is_whitespace() || c.is_control())
        // It would hide the snapshots whose ids start with it.
        || (name.len() >= MIN_PREFIX && name.chars().all(|c| c.is_ascii_hexdigit()));
    if bad {
        return Err(Error::BadTagName(name.to_string()));
    }
    Ok(())
}
