//! The git-format renderer (src/diff/{render,text,quote,stat}.rs) against real git and patch.

mod common;

mod apply_roundtrip;
mod golden;
mod stat_vs_git;
mod streamed;
