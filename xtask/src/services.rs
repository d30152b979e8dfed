//! Placeholder until this task lands.

/// Arguments of this task.
#[derive(clap::Args)]
pub struct Args {}

/// Runs the task.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("not implemented yet")
}
