//! `cargo xtask docs`: build `docs/` as an mdBook site into `target/book`, then check every
//! relative link of the docs and the README (the file exists, the `#anchor` is a heading of it)
//! and that every page of `docs/` is in the book's `SUMMARY.md`. mdBook is installed from
//! crates.io at a pinned version into the tool cache, once.

mod links;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use ptah_testenv::step::{cargo, run as run_command, step, workspace_root};

/// The mdBook release the site is built with.
const MDBOOK_VERSION: &str = "0.5.4";

/// Arguments of `cargo xtask docs`.
#[derive(clap::Args, Default)]
pub struct Args {
    /// Check the links only; do not install mdBook or build the site.
    #[arg(long)]
    pub links_only: bool,
}

/// Builds the site (unless `--links-only`) and checks the links.
pub fn run(args: Args) -> anyhow::Result<()> {
    let root = workspace_root();
    if !args.links_only {
        let mdbook = step("mdbook present", ensure_mdbook)?;
        step("mdbook build docs", || {
            run_command(
                std::process::Command::new(&mdbook)
                    .arg("build")
                    .arg(root.join("docs"))
                    .arg("--dest-dir")
                    .arg(root.join("target/book")),
            )
        })?;
        println!("the site is in {}", root.join("target/book/index.html").display());
    }
    step("links of docs/ and README.md", || check_links(&root))
}

/// The pinned mdbook binary, installed into the tool cache when missing.
fn ensure_mdbook() -> anyhow::Result<PathBuf> {
    let home = std::env::var_os("HOME").context("HOME is not set")?;
    let prefix = Path::new(&home).join(format!(".cache/ptah-operator/tools/mdbook-{MDBOOK_VERSION}"));
    let binary = prefix.join("bin/mdbook");
    if binary.is_file() {
        return Ok(binary);
    }
    eprintln!(
        "    installing mdbook {MDBOOK_VERSION} from crates.io into {} (about 3 minutes on 2 idle cores, once)",
        prefix.display()
    );
    run_command(
        cargo()
            .args([
                "install",
                "mdbook",
                "--locked",
                "--no-default-features",
                "--features",
                "search",
                "--version",
                MDBOOK_VERSION,
                "--root",
            ])
            .arg(&prefix),
    )?;
    if !binary.is_file() {
        bail!("cargo install finished but {} is missing", binary.display());
    }
    Ok(binary)
}

/// Every broken link, and every page missing from the book, fails the check.
fn check_links(root: &Path) -> anyhow::Result<()> {
    let mut pages = vec![root.join("README.md")];
    collect_markdown(&root.join("docs"), &mut pages)?;
    let mut problems = Vec::new();
    for page in &pages {
        problems.extend(links::broken(root, page)?);
    }
    problems.extend(links::not_in_summary(root, &pages)?);
    if problems.is_empty() {
        println!(
            "    {} pages, every relative link resolves and every page is in SUMMARY.md",
            pages.len()
        );
        return Ok(());
    }
    for problem in &problems {
        eprintln!("    {problem}");
    }
    bail!("{} documentation problem(s)", problems.len())
}

fn collect_markdown(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::path);
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            collect_markdown(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    Ok(())
}
