//! The manager under test: a release `manager` process against the running API server, its
//! resident memory and CPU time sampled from `/proc`, and its own request and reconcile counters
//! scraped from `/metrics`.

use std::{
    net::TcpListener,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use serde_json::{Value, json};

/// A fake pinned image: the Jobs never run, so nothing pulls it.
const IMAGE: &str =
    "registry.invalid/ptah@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// One sample of the process.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sample {
    /// Seconds since the process started.
    pub(super) at: f64,
    /// Resident set (VmRSS), KiB.
    pub(super) rss_kib: u64,
}

/// The running manager, killed on drop.
pub(super) struct Manager {
    child: Child,
    started: Instant,
    metrics_url: String,
    samples: Arc<Mutex<Vec<Sample>>>,
    sampler: tokio::task::JoinHandle<()>,
    /// Its log (JSON lines).
    pub(super) log: PathBuf,
}

impl Manager {
    /// Starts `binary` over `watch` (one namespace) or every namespace, coordinating in
    /// `coordination_ns`, logging to `log`.
    pub(super) fn start(
        binary: &Path,
        kubeconfig: &Path,
        coordination_ns: &str,
        watch: Option<&str>,
        log: PathBuf,
    ) -> anyhow::Result<Manager> {
        let http = free_port()?;
        let webhook = free_port()?;
        let out = std::fs::File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
        let err = out.try_clone()?;
        let child = Command::new(binary)
            .args(watch.map(|ns| format!("--watch-namespace={ns}")))
            .args([
                format!("--coordination-namespace={coordination_ns}"),
                format!("--executor-image={IMAGE}"),
                format!("--runner-image={IMAGE}"),
                "--identity=bench".to_owned(),
                format!("--http-addr=127.0.0.1:{http}"),
                format!("--webhook-addr=127.0.0.1:{webhook}"),
                // No certificate directory: no webhooks, as with a chart that disables them.
                "--webhook-cert-dir=/nonexistent/ptah-bench".to_owned(),
                "--leader-lease-seconds=15".to_owned(),
                "--log-format=json".to_owned(),
            ])
            .env("KUBECONFIG", kubeconfig)
            .env("RUST_LOG", "info")
            // As in its Pod: a developer's RUST_BACKTRACE=1 makes every error capture and
            // symbolize a backtrace, megabytes that a cluster never pays.
            .env_remove("RUST_BACKTRACE")
            .env_remove("RUST_LIB_BACKTRACE")
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .spawn()
            .with_context(|| format!("cannot start {}", binary.display()))?;
        let started = Instant::now();
        let samples = Arc::new(Mutex::new(Vec::new()));
        let pid = child.id();
        let sink = samples.clone();
        let sampler = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(500));
            loop {
                tick.tick().await;
                let Some(rss_kib) = status_kib(pid, "VmRSS:") else {
                    return;
                };
                if let Ok(mut s) = sink.lock() {
                    s.push(Sample {
                        at: started.elapsed().as_secs_f64(),
                        rss_kib,
                    });
                }
            }
        });
        Ok(Manager {
            child,
            started,
            metrics_url: format!("http://127.0.0.1:{http}/metrics"),
            samples,
            sampler,
            log,
        })
    }

    /// Seconds since the start.
    pub(super) fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Fails when the process has exited.
    pub(super) fn alive(&mut self) -> anyhow::Result<()> {
        if let Some(status) = self.child.try_wait()? {
            bail!("the manager exited ({status}); its log is {}", self.log.display());
        }
        Ok(())
    }

    /// The samples so far.
    pub(super) fn samples(&self) -> Vec<Sample> {
        self.samples.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Peak resident set (VmHWM), KiB.
    pub(super) fn peak_kib(&self) -> Option<u64> {
        status_kib(self.child.id(), "VmHWM:")
    }

    /// User plus system CPU seconds so far.
    pub(super) fn cpu_seconds(&self) -> Option<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        // Fields after the command (which may hold spaces) start at the last ')'.
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split(' ').collect();
        // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the command.
        let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        Some(ticks as f64 / clock_ticks())
    }

    /// The manager's counters from `/metrics`.
    pub(super) async fn counters(&self) -> anyhow::Result<Counters> {
        let text = http_get(&self.metrics_url).await?;
        Ok(Counters::parse(&text))
    }

    /// Median resident set over the last `window` seconds, KiB.
    pub(super) fn settled_kib(&self, window: f64) -> Option<u64> {
        let samples = self.samples();
        let end = samples.last()?.at;
        let mut recent: Vec<u64> = samples
            .iter()
            .filter(|s| s.at >= end - window)
            .map(|s| s.rss_kib)
            .collect();
        recent.sort_unstable();
        recent.get(recent.len() / 2).copied()
    }
}

impl Drop for Manager {
    fn drop(&mut self) {
        self.sampler.abort();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The manager's own counters at one instant.
#[derive(Clone, Debug, Default)]
pub(super) struct Counters {
    /// `ptah_kube_api_requests_total` by verb.
    pub(super) requests: Vec<(String, f64)>,
    /// `ptah_reconciliations_total`, every kind and outcome.
    pub(super) reconciliations: f64,
}

impl Counters {
    fn parse(text: &str) -> Counters {
        let mut c = Counters::default();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let Some((series, value)) = line.rsplit_once(' ') else {
                continue;
            };
            let Ok(value) = value.parse::<f64>() else { continue };
            if series.starts_with("ptah_reconciliations_total") {
                c.reconciliations += value;
            } else if let Some(labels) = series.strip_prefix("ptah_kube_api_requests_total{verb=\"") {
                c.requests
                    .push((labels.trim_end_matches("\"}").to_owned(), value));
            }
        }
        c
    }

    /// Requests of every verb.
    pub(super) fn total_requests(&self) -> f64 {
        self.requests.iter().map(|(_, v)| v).sum()
    }

    /// What happened between `before` and `self`: requests by verb, reconciliations, and requests
    /// per reconciliation.
    pub(super) fn since(&self, before: &Counters) -> Value {
        let reconciles = self.reconciliations - before.reconciliations;
        let by_verb: serde_json::Map<String, Value> = self
            .requests
            .iter()
            .map(|(verb, v)| {
                let was = before
                    .requests
                    .iter()
                    .find(|(b, _)| b == verb)
                    .map_or(0.0, |(_, v)| *v);
                (verb.clone(), json!(v - was))
            })
            .collect();
        let requests = self.total_requests() - before.total_requests();
        json!({
            "reconciliations": reconciles,
            "requests": requests,
            "requests_by_verb": by_verb,
            "requests_per_reconcile": if reconciles > 0.0 { super::round2(requests / reconciles) } else { 0.0 },
        })
    }
}

fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// A plain-HTTP GET of `url` (the manager's loopback metrics endpoint), body as text.
async fn http_get(url: &str) -> anyhow::Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").context("an http:// URL")?;
    let (host, path) = rest.split_once('/').context("a path")?;
    let mut stream = tokio::net::TcpStream::connect(host)
        .await
        .with_context(|| format!("cannot reach {url}"))?;
    stream
        .write_all(format!("GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes())
        .await?;
    let mut body = String::new();
    stream.read_to_string(&mut body).await?;
    let (head, text) = body.split_once("\r\n\r\n").context("an HTTP response")?;
    if !head.starts_with("HTTP/1.0 200") && !head.starts_with("HTTP/1.1 200") {
        bail!("{url}: {}", head.lines().next().unwrap_or(""));
    }
    Ok(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_read_the_managers_exposition() {
        let text = "# HELP x\nptah_reconciliations_total{kind=\"schema\",outcome=\"success\"} 7\n\
                    ptah_reconciliations_total{kind=\"migration\",outcome=\"error\"} 3\n\
                    ptah_kube_api_requests_total{verb=\"get\"} 20\n\
                    ptah_kube_api_requests_total{verb=\"watch\"} 5\n";
        let c = Counters::parse(text);
        assert_eq!(c.reconciliations, 10.0);
        assert_eq!(c.total_requests(), 25.0);
        let d = c.since(&Counters::default());
        assert_eq!(d["requests_per_reconcile"], json!(2.5));
        assert_eq!(d["requests_by_verb"]["watch"], json!(5.0));
    }
}
