//! Running the child: output drained into bounded captures, the execution deadline and SIGTERM
//! turned into SIGTERM for the child, two thirds of the grace period for it to stop, then SIGKILL.
//! The last third of the grace period is left for writing the frame.

use std::{path::Path, process::Stdio, time::Duration};

use rustix::process::{Pid, Signal, kill_process};
use tokio::{
    io::{AsyncRead, AsyncReadExt},
    process::Command,
    signal::unix::Signal as SignalStream,
    time::{Instant, sleep_until, timeout},
};

use crate::{
    bounded::{Bounded, Keep},
    command::ChildCommand,
    error::RunnerError,
};

/// How much of the child's stdout (its JSON report) is kept.
pub const STDOUT_LIMIT: usize = 1024 * 1024;
/// How much of the child's stderr (its logs) is kept: the last 64 KiB.
pub const STDERR_LIMIT: usize = 64 * 1024;

/// Why the runner stopped the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The execution deadline arrived.
    Deadline,
    /// The runner received SIGTERM.
    Terminated,
}

/// What the child did.
#[derive(Debug)]
pub struct ChildRun {
    /// The exit code; 128 + signal number when a signal ended it.
    pub exit_code: i32,
    /// Why the runner stopped it, if it did.
    pub stopped: Option<Stop>,
    /// Whether it needed SIGKILL.
    pub killed: bool,
    /// Its stdout (head).
    pub stdout: Bounded,
    /// Its stderr (tail).
    pub stderr: Bounded,
}

async fn drain(stream: Option<impl AsyncRead + Unpin>, keep: Keep, limit: usize) -> Bounded {
    let mut out = Bounded::new(keep, limit);
    let Some(mut stream) = stream else {
        return out;
    };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => out.push(&buf[..n]),
        }
    }
    out
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// Starts `program` with exactly `cmd`'s arguments and environment and supervises it.
pub async fn run(
    program: &Path,
    cmd: &ChildCommand,
    deadline: Option<Duration>,
    grace: Duration,
    sigterm: &mut SignalStream,
) -> Result<ChildRun, RunnerError> {
    let mut child = Command::new(program)
        .args(&cmd.args)
        .env_clear()
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(RunnerError::Spawn)?;
    let pid = child.id();
    let stdout = tokio::spawn(drain(child.stdout.take(), Keep::Head, STDOUT_LIMIT));
    let stderr = tokio::spawn(drain(child.stderr.take(), Keep::Tail, STDERR_LIMIT));
    let at = deadline.map(|d| Instant::now() + d);
    let deadline_passes = async {
        match at {
            Some(at) => sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    let (status, stopped) = tokio::select! {
        status = child.wait() => (Some(status), None),
        () = deadline_passes => (None, Some(Stop::Deadline)),
        _ = sigterm.recv() => (None, Some(Stop::Terminated)),
    };
    let mut killed = false;
    let status = match status {
        Some(status) => status,
        None => {
            if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()).and_then(Pid::from_raw) {
                // The child may have exited in the meantime; then there is nothing to signal.
                let _ = kill_process(pid, Signal::TERM);
            }
            match timeout(grace * 2 / 3, child.wait()).await {
                Ok(status) => status,
                Err(_) => {
                    killed = true;
                    let _ = child.start_kill();
                    child.wait().await
                }
            }
        }
    }
    .map_err(|e| RunnerError::Internal(format!("waiting for ptah failed: {e}")))?;
    // A grandchild could hold the pipes open; do not wait for it past part of the last third.
    let collect = grace / 6;
    let stdout = timeout(collect, stdout).await.ok().and_then(Result::ok);
    let stderr = timeout(collect, stderr).await.ok().and_then(Result::ok);
    Ok(ChildRun {
        exit_code: exit_code(status),
        stopped,
        killed,
        stdout: stdout.unwrap_or_else(|| Bounded::new(Keep::Head, 0)),
        stderr: stderr.unwrap_or_else(|| Bounded::new(Keep::Tail, 0)),
    })
}
