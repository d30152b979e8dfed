//! `kubectl-ptah`: see the library for what each subcommand does.

use std::io::IsTerminal as _;

use clap::Parser as _;

fn main() -> std::process::ExitCode {
    let args = ptah_kubectl::Args::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("kubectl-ptah: cannot start the async runtime: {e}");
            return ptah_kubectl::ExitCode::Failed.into();
        }
    };
    let stdout = std::io::stdout();
    let colour = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut out = stdout.lock();
    let mut err = std::io::stderr();
    let mut input = std::io::stdin().lock();
    let mut io = ptah_kubectl::Io {
        out: &mut out,
        err: &mut err,
        input: &mut input,
        colour,
    };
    runtime.block_on(ptah_kubectl::run(args, &mut io)).into()
}
