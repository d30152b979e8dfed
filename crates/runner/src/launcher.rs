//! Starting the child: only while the deadlines allow and no SIGTERM has arrived.

use std::path::Path;

use tokio::signal::unix::Signal;

use crate::{command, error::RunnerError, inputs, supervise};

/// Starts children: each only while the deadlines allow and no SIGTERM has arrived.
pub(crate) struct Launcher<'a> {
    program: &'a Path,
    deadlines: &'a inputs::Deadlines,
    sigterm: &'a mut Signal,
}

impl<'a> Launcher<'a> {
    /// A launcher of `program` within `deadlines`, watching `sigterm`.
    pub(crate) fn new(program: &'a Path, deadlines: &'a inputs::Deadlines, sigterm: &'a mut Signal) -> Self {
        Launcher {
            program,
            deadlines,
            sigterm,
        }
    }

    /// Checks the deadlines and SIGTERM just before the start, then runs `cmd` to its end.
    pub(crate) async fn run(
        &mut self,
        cmd: &command::ChildCommand,
    ) -> Result<supervise::ChildRun, RunnerError> {
        self.deadlines.check_now()?;
        // One poll and no timer: a zero timeout parks the runtime for the timer's 1 ms tick.
        let terminated =
            std::future::poll_fn(|cx| std::task::Poll::Ready(self.sigterm.poll_recv(cx).is_ready())).await;
        if terminated {
            return Err(RunnerError::Terminated);
        }
        supervise::run(
            self.program,
            cmd,
            self.deadlines.remaining(),
            self.deadlines.grace,
            self.sigterm,
        )
        .await
    }
}
