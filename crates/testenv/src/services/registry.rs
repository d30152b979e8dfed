//! CNCF distribution 2.8 from Debian's `docker-registry`: one instance with TLS and htpasswd
//! basic auth, one plain-HTTP instance without auth.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use super::{Service, process, secret, tls};

/// The basic-auth user of the TLS registry.
const USERNAME: &str = "ptah";

/// A `docker-registry serve` process on 127.0.0.1.
pub struct Registry {
    dir: PathBuf,
    port: u16,
    secure: bool,
}

impl Registry {
    /// The TLS + basic-auth registry kept under `state_dir/registry`.
    pub fn tls(state_dir: &Path, port: u16) -> Self {
        Self {
            dir: state_dir.join("registry"),
            port,
            secure: true,
        }
    }

    /// The plain-HTTP, anonymous registry kept under `state_dir/registry-plain`.
    pub fn plain(state_dir: &Path, port: u16) -> Self {
        Self {
            dir: state_dir.join("registry-plain"),
            port,
            secure: false,
        }
    }

    fn config(&self) -> PathBuf {
        self.dir.join("config.yml")
    }

    fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    fn password(&self) -> PathBuf {
        self.dir.join("password")
    }

    /// The SANs the certificate was issued for, one per line.
    fn sans_file(&self) -> PathBuf {
        self.dir.join("sans")
    }

    fn log(&self) -> PathBuf {
        self.dir.join("registry.log")
    }

    fn url(&self) -> String {
        let scheme = if self.secure { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}/v2/", self.port)
    }

    /// The HTTP status of `GET /v2/`, with credentials when `password` is given (passed to curl
    /// on stdin, never in argv).
    fn status(&self, password: Option<&str>) -> String {
        let mut cmd = Command::new("curl");
        cmd.args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5"]);
        if self.secure {
            cmd.arg("--cacert").arg(self.ca());
        }
        let config = match password {
            Some(password) => {
                cmd.args(["-K", "-"]);
                format!("user = \"{USERNAME}:{password}\"\n")
            }
            None => String::new(),
        };
        cmd.arg(self.url());
        process::output_with_stdin(&mut cmd, config.as_bytes()).unwrap_or_default()
    }

    /// Writes the CA, the server certificate and key, and the bcrypt htpasswd file.
    fn write_credentials(&self) -> anyhow::Result<String> {
        let pki = tls::issue()?;
        fs::write(self.ca(), pki.ca_pem)?;
        fs::write(self.dir.join("server.pem"), pki.cert_pem)?;
        fs::write(self.sans_file(), tls::sans().join("\n"))?;
        secret::write(&self.dir.join("server.key"), &pki.key_pem)?;
        let password = secret::password()?;
        secret::write(&self.password(), &password)?;
        // -i reads the password from stdin, -B is bcrypt (the only hash distribution accepts).
        let line = process::output_with_stdin(
            Command::new("htpasswd").args(["-B", "-i", "-n", USERNAME]),
            password.as_bytes(),
        )?;
        secret::write(&self.dir.join("htpasswd"), line.trim_end())?;
        Ok(password)
    }

    fn render_config(&self, http_secret: &str) -> String {
        let dir = self.dir.display();
        let mut config = format!(
            "version: 0.1\n\
             log:\n  level: warn\n  accesslog:\n    disabled: true\n\
             storage:\n  filesystem:\n    rootdirectory: {dir}/data\n  delete:\n    enabled: true\n\
             http:\n  addr: 127.0.0.1:{port}\n  secret: {http_secret}\n",
            port = self.port
        );
        if self.secure {
            config.push_str(&format!(
                "  tls:\n    certificate: {dir}/server.pem\n    key: {dir}/server.key\n\
                 auth:\n  htpasswd:\n    realm: ptah-test-registry\n    path: {dir}/htpasswd\n"
            ));
        }
        config
    }
}

impl Service for Registry {
    fn name(&self) -> &'static str {
        if self.secure { "registry" } else { "registry-plain" }
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn port(&self) -> u16 {
        self.port
    }

    fn program(&self) -> &'static str {
        "docker-registry"
    }

    fn cmdline_marker(&self) -> PathBuf {
        self.config()
    }

    fn start(&self) -> anyhow::Result<()> {
        if self.secure {
            self.write_credentials()?;
        }
        secret::write(&self.config(), &self.render_config(&secret::password()?))?;
        let mut serve = Command::new("docker-registry");
        serve.arg("serve").arg(self.config()).current_dir(&self.dir);
        let pid = process::spawn_detached(&serve, &self.log(), &self.dir)?;
        process::wait_ready(self.name(), pid, Duration::from_secs(15), &self.log(), || {
            self.healthy()
        })
    }

    /// TLS: 200 with the CA and the credentials, 401 without credentials, and a certificate for
    /// today's SANs (an older one lacks the pod gateway, so it is reissued). Plain: 200.
    fn healthy(&self) -> bool {
        if !self.secure {
            return self.status(None) == "200";
        }
        if fs::read_to_string(self.sans_file()).ok() != Some(tls::sans().join("\n")) {
            return false;
        }
        let Ok(password) = secret::read(&self.password()) else {
            return false;
        };
        self.status(Some(&password)) == "200" && self.status(None) == "401"
    }

    fn env(&self) -> anyhow::Result<Vec<(&'static str, String)>> {
        let host = format!("127.0.0.1:{}", self.port);
        if !self.secure {
            return Ok(vec![("PTAH_TEST_REGISTRY_PLAIN", host)]);
        }
        Ok(vec![
            ("PTAH_TEST_REGISTRY", host),
            ("PTAH_TEST_REGISTRY_CA", self.ca().to_string_lossy().into_owned()),
            ("PTAH_TEST_REGISTRY_USERNAME", USERNAME.to_owned()),
            ("PTAH_TEST_REGISTRY_PASSWORD", secret::read(&self.password())?),
        ])
    }
}
