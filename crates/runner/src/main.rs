//! `ptah-runner`: parse the arguments and hand over to the library.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    ptah_runner::main_with(ptah_runner::Args::parse())
}
