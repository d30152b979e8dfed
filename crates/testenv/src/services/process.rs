//! Background processes: spawn detached, record and recognise PIDs, wait, stop.

use std::{
    fs,
    io::Write,
    net::TcpListener,
    path::Path,
    process::{Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use anyhow::{Context, bail};

use crate::step::{describe, run};

const PID_FILE: &str = "pid";
const POLL: Duration = Duration::from_millis(50);
/// How long a stop signal gets before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(15);

/// Is this process running as root?
pub fn is_root() -> bool {
    fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().next())
            == Some("0")
    })
}

/// Is `pid` a live process? A zombie (`State: Z`) counts as dead: PID 1 reaps orphans late here.
pub fn is_alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/status")) {
        Ok(status) => !status
            .lines()
            .any(|line| line.starts_with("State:") && line.contains('Z')),
        Err(_) => false,
    }
}

/// Does `pid` run `program` with `marker` (a path of ours) in its command line?
/// Guards against PID reuse and stale PID files.
fn runs(pid: u32, program: &str, marker: &Path) -> bool {
    let Ok(raw) = fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let args: Vec<String> = raw
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let marker = marker.to_string_lossy();
    let is_program = args
        .iter()
        .take(2)
        .any(|arg| Path::new(arg).file_name().is_some_and(|name| name == program));
    // The marker is a whole argument (`-D PATH`, `serve PATH`) or an option's value
    // (`--datadir=PATH`), never a mere substring: /b/a/x must not match /a/x.
    let is_marker = |arg: &String| {
        arg.as_str() == marker
            || arg
                .strip_suffix(marker.as_ref())
                .is_some_and(|option| option.starts_with("--") && option.ends_with('='))
    };
    is_program && args.iter().any(is_marker)
}

/// The PID recorded in `dir`, if that process is alive and is really ours.
pub fn recorded(dir: &Path, program: &str, marker: &Path) -> Option<u32> {
    let pid: u32 = fs::read_to_string(dir.join(PID_FILE)).ok()?.trim().parse().ok()?;
    (is_alive(pid) && runs(pid, program, marker)).then_some(pid)
}

/// Every live process that runs `program` with `marker` in its command line: the recorded one,
/// and any orphan whose PID file was lost or overwritten. Only processes started from this state
/// dir carry its paths, so this never matches a foreign server.
pub fn find(program: &str, marker: &Path) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|pid| is_alive(*pid) && runs(*pid, program, marker))
        .collect();
    pids.sort_unstable();
    pids
}

/// Records `pid` as the service running from `dir`.
pub fn record(dir: &Path, pid: u32) -> anyhow::Result<()> {
    let path = dir.join(PID_FILE);
    fs::write(&path, format!("{pid}\n")).with_context(|| format!("cannot write {}", path.display()))
}

/// Removes the PID file of `dir`, if any.
pub fn forget(dir: &Path) -> anyhow::Result<()> {
    match fs::remove_file(dir.join(PID_FILE)) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            Err(err).with_context(|| format!("cannot remove the pid file in {}", dir.display()))
        }
        _ => Ok(()),
    }
}

/// Starts `cmd` in its own session (so terminal signals and hang-ups do not reach it), with
/// stdin from /dev/null and stdout+stderr appended to `log`, and records its PID in `dir`.
pub fn spawn_detached(cmd: &Command, log: &Path, dir: &Path) -> anyhow::Result<u32> {
    let out = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("cannot open {}", log.display()))?;
    let err = out.try_clone()?;
    // `setsid` execs the program in place (it is not a group leader), so the PID is the server's.
    let mut detached = Command::new("setsid");
    detached
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    if let Some(cwd) = cmd.get_current_dir() {
        detached.current_dir(cwd);
    }
    let child = detached
        .spawn()
        .with_context(|| format!("cannot start `{}`", describe(cmd)))?;
    let pid = child.id();
    record(dir, pid)?;
    Ok(pid)
}

/// Polls `probe` until it succeeds; fails early when `pid` dies, and after `timeout`.
pub fn wait_ready(
    what: &str,
    pid: u32,
    timeout: Duration,
    log: &Path,
    mut probe: impl FnMut() -> bool,
) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        if probe() {
            return Ok(());
        }
        if !is_alive(pid) {
            bail!("{what} (pid {pid}) exited during start-up:\n{}", tail(log));
        }
        if started.elapsed() > timeout {
            bail!("{what} (pid {pid}) not ready after {timeout:?}:\n{}", tail(log));
        }
        thread::sleep(POLL);
    }
}

/// The last lines of a log file, for error messages.
pub fn tail(log: &Path) -> String {
    let text = fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(20);
    format!(
        "--- last lines of {} ---\n{}",
        log.display(),
        lines[from..].join("\n")
    )
}

/// Sends `signal` to `pid`, waits for it to exit, and SIGKILLs it after a grace period.
pub fn stop(pid: u32, signal: &str) -> anyhow::Result<()> {
    if !is_alive(pid) {
        return Ok(());
    }
    run(Command::new("kill").args(["-s", signal, &pid.to_string()]))?;
    let started = Instant::now();
    while is_alive(pid) {
        if started.elapsed() > STOP_GRACE {
            eprintln!("    pid {pid} ignored SIG{signal} for {STOP_GRACE:?}: SIGKILL");
            run(Command::new("kill").args(["-s", "KILL", &pid.to_string()]))?;
            while is_alive(pid) {
                thread::sleep(POLL);
            }
            break;
        }
        thread::sleep(POLL);
    }
    Ok(())
}

/// Fails with a helpful message when something else already listens on `port`.
pub fn ensure_port_free(port: u16, service: &str) -> anyhow::Result<()> {
    match TcpListener::bind(("127.0.0.1", port)) {
        Ok(_) => Ok(()),
        Err(err) => bail!(
            "127.0.0.1:{port} is taken ({err}), so {service} cannot start there; stop whatever \
             listens on it or choose another port (see `cargo xtask services --help`)"
        ),
    }
}

/// Runs `cmd` with `input` on its stdin (for SQL and secrets that must stay out of argv) and
/// returns its stdout; fails with the command line and stderr.
pub fn output_with_stdin(cmd: &mut Command, input: &[u8]) -> anyhow::Result<String> {
    let line = describe(cmd);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start `{line}`"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(input)
            .with_context(|| format!("cannot write to `{line}`"))?;
    }
    let out = child
        .wait_with_output()
        .with_context(|| format!("`{line}` did not finish"))?;
    if !out.status.success() {
        bail!(
            "`{line}` failed with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    String::from_utf8(out.stdout).with_context(|| format!("`{line}` printed non-UTF-8 output"))
}

/// Runs a probe command quietly; true when it exits 0 and its trimmed stdout equals `expected`.
pub fn probe(cmd: &mut Command, input: &[u8], expected: &str) -> bool {
    output_with_stdin(cmd, input).is_ok_and(|out| out.trim() == expected)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn this_process_is_alive_and_recognised_only_with_its_own_marker() {
        let pid = std::process::id();
        assert!(is_alive(pid));
        // The path this process was started by, as its command line has it (`current_exe` is
        // the resolved one, which differs when the target directory is behind a symlink).
        let exe = PathBuf::from(std::env::args_os().next().expect("argv[0]"));
        let program = exe.file_name().expect("exe name").to_string_lossy().into_owned();
        assert!(runs(pid, &program, &exe));
        assert!(!runs(pid, "postgres", &exe));
        assert!(!runs(pid, &program, Path::new("/nonexistent/marker")));
        // Test runners may run other processes of this same binary at the same time.
        assert!(find(&program, &exe).contains(&pid));
        // A suffix of the path is a different path.
        let suffix: PathBuf = exe.components().skip(2).collect();
        assert!(!runs(pid, &program, &Path::new("/").join(suffix)));
    }

    #[test]
    fn a_missing_pid_is_dead() {
        // PIDs are below 2^22 on Linux.
        assert!(!is_alive(u32::MAX));
    }
}
