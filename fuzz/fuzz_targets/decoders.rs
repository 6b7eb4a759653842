//! Fuzzes the decoders of what the store holds on disk (see decoders_check.rs): damaged or
//! hostile bytes in the database must give an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "decoders_check.rs"]
mod decoders_check;

fuzz_target!(|data: &[u8]| decoders_check::check(data));
