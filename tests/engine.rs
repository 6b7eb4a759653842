//! The library's own integration tests, as one test binary: the patch engine (parser, applier,
//! three-way merge) and the git-format renderer, each against the real git, GNU diff and GNU
//! patch; the layer check; the decoders' smoke; that every test file is compiled. Tests that
//! drive the `rewind` binary live in the CLI package (cli/tests/).

mod decoders;
#[path = "support/git.rs"]
mod git;
mod layers;
mod patch;
mod render;
mod test_files;
