//! One process of the cluster: how it starts detached, is recognised and stops.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use anyhow::Context;

use crate::services::process;

/// One process of the cluster.
pub(crate) struct Proc {
    /// Directory name under `target/cluster/` and label.
    pub name: &'static str,
    /// The program (absolute path).
    pub program: PathBuf,
    /// Its arguments; one of them carries [`Proc::marker`].
    pub args: Vec<String>,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// A path of ours in its command line (`--opt=PATH`), which recognises it.
    pub marker: PathBuf,
    /// How long it may take to become ready.
    pub timeout: Duration,
    /// The named network namespace (`/run/netns/NAME`) it runs in; `None`: the host's.
    pub netns: Option<&'static str>,
}

impl Proc {
    pub(super) fn program_name(&self) -> String {
        self.program
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    pub(super) fn dir(&self, root: &Path) -> PathBuf {
        root.join(self.name)
    }

    pub(super) fn running(&self, root: &Path) -> Option<u32> {
        process::recorded(&self.dir(root), &self.program_name(), &self.marker)
    }

    /// Starts it detached (log in its dir) and waits until `ready` answers.
    pub(super) fn start(&self, root: &Path, ready: impl FnMut() -> bool) -> anyhow::Result<u32> {
        let dir = self.dir(root);
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let log = dir.join("log");
        // `spawn_detached` runs `setsid PROGRAM ARGS`; `env` in front carries the variables, and
        // `nsenter --net` in front of that enters the network namespace alone: the mount
        // namespace stays the host's (unlike `ip netns exec`), so the volumes a kubelet mounts
        // are seen by its containerd. Both exec in place, so the PID is the program's.
        let mut words: Vec<String> = Vec::new();
        if let Some(netns) = self.netns {
            words.push("nsenter".to_owned());
            words.push(format!("--net=/run/netns/{netns}"));
        }
        if !self.env.is_empty() {
            words.push("env".to_owned());
            words.extend(self.env.iter().map(|(name, value)| format!("{name}={value}")));
        }
        let mut cmd = match words.split_first() {
            Some((first, rest)) => {
                let mut cmd = Command::new(first);
                cmd.args(rest).arg(&self.program);
                cmd
            }
            None => Command::new(&self.program),
        };
        cmd.args(&self.args);
        let pid = process::spawn_detached(&cmd, &log, &dir)?;
        process::wait_ready(self.name, pid, self.timeout, &log, ready)?;
        Ok(pid)
    }

    /// Does process `pid` run exactly [`Proc::args`]? A flag added since it started means the
    /// running process must be restarted to get it.
    pub(super) fn runs_these_args(&self, pid: u32) -> bool {
        let Ok(raw) = fs::read(format!("/proc/{pid}/cmdline")) else {
            return false;
        };
        let words: Vec<String> = raw
            .split(|b| *b == 0)
            .filter(|w| !w.is_empty())
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        let program = self.program.display().to_string();
        // `env VAR=… PROGRAM ARGS` or `PROGRAM ARGS`: compare what follows the program.
        words
            .iter()
            .position(|w| *w == program)
            .is_some_and(|at| words[at + 1..] == self.args[..])
    }

    pub(super) fn stop(&self) -> anyhow::Result<()> {
        let pids = process::find(&self.program_name(), &self.marker);
        if pids.is_empty() {
            eprintln!("    {}: not running", self.name);
        }
        for pid in pids {
            process::stop(pid, "TERM")?;
            eprintln!("    {}: stopped pid {pid}", self.name);
        }
        Ok(())
    }
}
