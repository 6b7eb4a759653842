//! The patch library (src/patch/): parser, applier and three-way merge against real git,
//! GNU diff and GNU patch, plus the fixture corpus under fixtures/patches/.

#[path = "patch/common.rs"]
mod common;

#[path = "patch/differential.rs"]
mod differential;
#[path = "patch/fixtures.rs"]
mod fixtures;
#[path = "patch/merge_git.rs"]
mod merge_git;
