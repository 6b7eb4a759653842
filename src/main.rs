//! The `rewind` command: parses arguments, calls the library, prints. Nothing else.

fn main() {
    std::process::exit(rewind::cli::main());
}
