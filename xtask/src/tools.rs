//! Tools xtask runs that a fresh machine may lack. Each entry point gets its command from here, so
//! whichever one runs first installs the tool: `cargo xtask e2e --suite …` on a fresh clone failed
//! with `no such command: nextest` while only `cargo xtask test` installed it (issue 33).

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use ptah_testenv::step::{cargo, run as run_command};

/// The cargo-nextest release installed when the machine has none.
pub const NEXTEST_VERSION: &str = "0.9.151";

/// Set once `cargo nextest` answered (or was installed) in this process.
static NEXTEST_PRESENT: AtomicBool = AtomicBool::new(false);

/// `cargo nextest`, with the pinned release built from crates.io first when the machine has none.
pub fn nextest() -> anyhow::Result<Command> {
    ensure_nextest()?;
    let mut cmd = cargo();
    cmd.arg("nextest");
    Ok(cmd)
}

/// Installs cargo-nextest when `cargo nextest` does not answer (asked once per process).
pub fn ensure_nextest() -> anyhow::Result<()> {
    if NEXTEST_PRESENT.load(Ordering::Relaxed) {
        return Ok(());
    }
    let present = cargo()
        .args(["nextest", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !present {
        eprintln!(
            "    cargo-nextest is missing: installing {NEXTEST_VERSION} from crates.io (a few minutes, once)"
        );
        run_command(cargo().args([
            "install",
            "cargo-nextest",
            "--locked",
            "--version",
            NEXTEST_VERSION,
        ]))?;
    }
    NEXTEST_PRESENT.store(true, Ordering::Relaxed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read xtask/src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// Every nextest invocation goes through [`super::nextest`], so none can run before the
    /// install: a `"nextest"` argument anywhere else in xtask fails this test.
    #[test]
    fn nextest_is_run_only_through_the_installing_command() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&src, &mut files);
        let this = src.join("tools.rs");
        let offenders: Vec<String> = files
            .iter()
            .filter(|f| **f != this)
            .filter(|f| {
                std::fs::read_to_string(f)
                    .expect("read a source")
                    .contains("\"nextest\"")
            })
            .map(|f| f.display().to_string())
            .collect();
        assert!(files.len() > 10, "the scan found only {} sources", files.len());
        assert!(
            offenders.is_empty(),
            "run nextest through tools::nextest(): {offenders:?}"
        );
    }
}
