//! The git-format renderer (src/diff/{render,text,quote,stat}.rs) against real git and patch.

#[path = "render/common.rs"]
mod common;

#[path = "render/apply_roundtrip.rs"]
mod apply_roundtrip;
#[path = "render/golden.rs"]
mod golden;
#[path = "render/stat_vs_git.rs"]
mod stat_vs_git;
#[path = "render/streamed.rs"]
mod streamed;
