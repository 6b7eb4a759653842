//! What the commands that name a remote (`restore --remote`, `verify --remote`, `gc --remote`)
//! get in a `rewind` built without the `remote` feature: an error that says so, as jj answers
//! without its watchman feature. `remote`, `push` and `pull` are absent from such a build.

use std::path::Path;

use rewind::error::Error;
use rewind::id::Id;
use rewind::store::Store;

use super::{CliResult, Ctx};

fn not_built() -> Error {
    Error::Invalid(
        "this rewind was built without remotes (cargo's `remote` feature, on by default); \
         install a build with default features to use --remote"
            .into(),
    )
}

/// Never an empty-directory restore from a remote: the restore asks `pull_for_restore`, which
/// refuses.
pub fn is_empty_dir(_: &Path) -> Result<bool, Error> {
    Ok(false)
}

/// Refused: no remotes in this build.
pub fn restore_empty(_: &Ctx, _: &Store, _: &Path, _: &str, _: &str) -> CliResult {
    Err(not_built().into())
}

/// Refused: no remotes in this build.
pub fn pull_for_restore(_: &Ctx, _: &Store, _: &str, _: &str) -> Result<Id, Error> {
    Err(not_built())
}

/// Refused: no remotes in this build.
pub fn verify(_: &Ctx, _: &str, _: bool) -> CliResult {
    Err(not_built().into())
}

/// Refused: no remotes in this build.
pub fn gc(_: &Ctx, _: &str) -> CliResult {
    Err(not_built().into())
}
