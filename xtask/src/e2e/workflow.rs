//! `cargo xtask ci-workflow [--check]` (stub; being completed).

/// Arguments of `cargo xtask ci-workflow`.
#[derive(clap::Args)]
pub struct Args {
    /// Fail when the checked-in workflow differs from the generated one.
    #[arg(long)]
    check: bool,
}

/// Runs `cargo xtask ci-workflow`.
pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::bail!("not written yet (check: {})", args.check)
}
