//! The patch library (src/patch/): parser, applier and three-way merge against real git,
//! GNU diff and GNU patch, plus the fixture corpus under fixtures/patches/.

mod common;

mod differential;
mod fixtures;
mod merge_git;
