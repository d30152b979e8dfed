//! Toxiproxy (`toxiproxy-server`, built from `github.com/Shopify/toxiproxy/v2` at the version
//! `components.toxiproxy` of matrix/kubernetes.json pins, by `cargo xtask k8s-bin`'s machinery)
//! in front of the other services, so that tests can add latency, hang, reset or cut their
//! connections through its HTTP API.
//!
//! Its API listens on 127.0.0.1:<port> and the four proxies on the next four ports, on loopback
//! like the services they front, so Pods reach them the same way: through the pod relay on the
//! gateway address with the same port. The proxies come from a `-config` file at start-up, so a
//! restarted Toxiproxy has them again, with no toxic and every proxy enabled.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use anyhow::Context;
use ptah_testservices::{proxies, vars};
use serde_json::{Value, json};

use super::{Service, process};
use crate::{
    k8s::{Binaries, Component, Matrix},
    step::workspace_root,
};

/// One proxy: its name in Toxiproxy's API, its variable in the env file, and its ports.
struct Proxy {
    name: &'static str,
    var: &'static str,
    listen: u16,
    upstream: u16,
}

/// A `toxiproxy-server` process on 127.0.0.1 and its proxies.
pub struct Toxiproxy {
    dir: PathBuf,
    port: u16,
    proxies: Vec<Proxy>,
}

impl Toxiproxy {
    /// Toxiproxy kept under `state_dir/toxiproxy`, its API on `port` and the proxies for
    /// PostgreSQL, MariaDB, the TLS and the plain registry (their ports, in this order) on
    /// `port + 1` to `port + 4`.
    pub fn new(state_dir: &Path, port: u16, upstreams: [u16; 4]) -> Self {
        let named = [
            (proxies::POSTGRES, vars::PG_PROXY),
            (proxies::MARIADB, vars::MYSQL_PROXY),
            (proxies::REGISTRY, vars::REGISTRY_PROXY),
            (proxies::REGISTRY_PLAIN, vars::REGISTRY_PLAIN_PROXY),
        ];
        let proxies = named
            .into_iter()
            .zip(upstreams)
            .zip(1u16..)
            .map(|(((name, var), upstream), offset)| Proxy {
                name,
                var,
                listen: port.saturating_add(offset),
                upstream,
            })
            .collect();
        Self {
            dir: state_dir.join("toxiproxy"),
            port,
            proxies,
        }
    }

    fn config(&self) -> PathBuf {
        self.dir.join("proxies.json")
    }

    fn log(&self) -> PathBuf {
        self.dir.join("toxiproxy.log")
    }

    fn api_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The proxies as Toxiproxy's `-config` file and `GET /proxies` describe them.
    fn expected(&self) -> Vec<(&'static str, String, String)> {
        self.proxies
            .iter()
            .map(|p| {
                (
                    p.name,
                    format!("127.0.0.1:{}", p.listen),
                    format!("127.0.0.1:{}", p.upstream),
                )
            })
            .collect()
    }

    fn render_config(&self) -> String {
        let list: Vec<Value> = self
            .expected()
            .into_iter()
            .map(|(name, listen, upstream)| {
                json!({"name": name, "listen": listen, "upstream": upstream, "enabled": true})
            })
            .collect();
        Value::Array(list).to_string()
    }
}

/// The pinned `toxiproxy-server`, built into the Go program cache when missing.
fn program() -> anyhow::Result<PathBuf> {
    let matrix = Matrix::load(&workspace_root())?;
    let bins = Binaries::new(matrix.select(None)?, &matrix)?;
    bins.ensure(&[Component::ToxiproxyServer])?;
    Ok(bins.path(Component::ToxiproxyServer))
}

impl Service for Toxiproxy {
    fn name(&self) -> &'static str {
        "toxiproxy"
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn port(&self) -> u16 {
        self.port
    }

    fn ports(&self) -> Vec<u16> {
        let mut ports = vec![self.port];
        ports.extend(self.proxies.iter().map(|p| p.listen));
        ports
    }

    fn program(&self) -> &'static str {
        "toxiproxy-server"
    }

    fn cmdline_marker(&self) -> PathBuf {
        self.config()
    }

    fn start(&self) -> anyhow::Result<()> {
        let program = program()?;
        fs::write(self.config(), self.render_config())
            .with_context(|| format!("cannot write {}", self.config().display()))?;
        let mut serve = Command::new(program);
        serve
            .args(["-host", "127.0.0.1", "-port", &self.port.to_string(), "-config"])
            .arg(self.config())
            .current_dir(&self.dir);
        let pid = process::spawn_detached(&serve, &self.log(), &self.dir)?;
        process::wait_ready(self.name(), pid, Duration::from_secs(15), &self.log(), || {
            self.healthy()
        })
    }

    /// `GET /proxies` lists every proxy with its listen and upstream address. A proxy a test
    /// left disabled, or with toxics, still counts: `POST /reset` undoes that, a restart is not
    /// needed.
    fn healthy(&self) -> bool {
        let body = process::output_with_stdin(
            Command::new("curl").args(["-sS", "--max-time", "5", &format!("{}/proxies", self.api_url())]),
            b"",
        )
        .unwrap_or_default();
        let Ok(listed) = serde_json::from_str::<Value>(&body) else {
            return false;
        };
        self.expected().iter().all(|(name, listen, upstream)| {
            let proxy = &listed[*name];
            proxy["listen"].as_str() == Some(listen) && proxy["upstream"].as_str() == Some(upstream)
        })
    }

    fn env(&self) -> anyhow::Result<Vec<(&'static str, String)>> {
        let mut vars = vec![(vars::TOXIPROXY_URL, self.api_url())];
        vars.extend(
            self.proxies
                .iter()
                .map(|p| (p.var, format!("127.0.0.1:{}", p.listen))),
        );
        Ok(vars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxies_take_the_ports_after_the_api_and_point_at_the_services() {
        let proxy = Toxiproxy::new(Path::new("/state"), 58474, [55432, 53306, 55443, 55000]);
        assert_eq!(proxy.ports(), [58474, 58475, 58476, 58477, 58478]);
        let config: Value = serde_json::from_str(&proxy.render_config()).expect("json");
        assert_eq!(config[0]["name"], "postgres");
        assert_eq!(config[0]["listen"], "127.0.0.1:58475");
        assert_eq!(config[0]["upstream"], "127.0.0.1:55432");
        assert_eq!(config[3]["name"], "registry-plain");
        assert_eq!(config[3]["upstream"], "127.0.0.1:55000");
        let env = proxy.env().expect("env");
        assert_eq!(
            env[0],
            ("PTAH_TEST_TOXIPROXY_URL", "http://127.0.0.1:58474".to_owned())
        );
        assert_eq!(env[2], ("PTAH_TEST_MYSQL_PROXY", "127.0.0.1:58476".to_owned()));
        assert_eq!(proxy.cmdline_marker(), Path::new("/state/toxiproxy/proxies.json"));
    }
}
