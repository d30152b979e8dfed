//! [`Toxiproxy`]: one HTTP client for one Toxiproxy API, and the proxies it reports.

use std::{sync::Arc, time::Duration};

use reqwest::Method;
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::{Value, json};

use crate::{CutGuard, Error, ProxyGuard, Result, Toxic, ToxicGuard};

/// How long one API call may take; Toxiproxy answers in milliseconds unless it is wedged.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A proxy as Toxiproxy reports it.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Proxy {
    /// Its name, the key of every call about it.
    pub name: String,
    /// `host:port` it listens on (the actual port when it was created on port 0).
    pub listen: String,
    /// `host:port` it forwards to.
    pub upstream: String,
    /// Does it accept connections? A disabled proxy has closed its listener and its connections.
    pub enabled: bool,
    /// Its toxics, in the order they act.
    #[serde(default)]
    pub toxics: Vec<ToxicState>,
}

/// A toxic as Toxiproxy reports it.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ToxicState {
    /// Its name, unique on its proxy.
    pub name: String,
    /// `latency`, `timeout`, `reset_peer`, `limit_data`, `bandwidth`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// `upstream` (client to server) or `downstream` (server to client).
    pub stream: String,
    /// The share of connections it acts on (0 to 1).
    pub toxicity: f32,
    /// Its type's attributes, as Toxiproxy holds them (milliseconds, bytes, KB/s).
    pub attributes: Value,
}

/// A client of one Toxiproxy's HTTP API.
#[derive(Clone, Debug)]
pub struct Toxiproxy {
    api: String,
    http: reqwest::Client,
}

impl Toxiproxy {
    /// A client of the API at `api_url` (`http://127.0.0.1:58474`); nothing is sent yet.
    pub fn new(api_url: &str) -> Result<Self> {
        // Plain HTTP only, but reqwest's rustls backend wants a provider: name ring, the one
        // provider of the workspace, instead of relying on a process-wide default.
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(Error::Tls)?
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        let builder = reqwest::Client::builder()
            // A loopback API: an HTTP_PROXY of the environment must not reroute it.
            .no_proxy()
            .timeout(TIMEOUT)
            .tls_backend_preconfigured(tls);
        Ok(Self {
            api: api_url.trim_end_matches('/').to_owned(),
            http: builder.build().map_err(Error::Client)?,
        })
    }

    /// The client of the Toxiproxy `cargo xtask services up` started; panics, naming that
    /// command, where `target/services.env` has none.
    pub fn require() -> Self {
        let services = ptah_testservices::TestServices::require();
        let api_url = &services.require_fault_proxy().api_url;
        match Self::new(api_url) {
            Ok(client) => client,
            Err(err) => panic!("{err}"),
        }
    }

    /// The API's base URL.
    pub fn api_url(&self) -> &str {
        &self.api
    }

    /// The server's version (`v2.12.0`).
    pub async fn version(&self) -> Result<String> {
        let body = self.send(Method::GET, "/version", None).await?;
        // 2.x answers `{"version": "…"}`; older servers answered the bare string.
        Ok(match serde_json::from_str::<Value>(&body) {
            Ok(json) => json["version"].as_str().unwrap_or(body.trim()).to_owned(),
            Err(_) => body.trim().to_owned(),
        })
    }

    /// Every proxy, by name.
    pub async fn proxies(&self) -> Result<Vec<Proxy>> {
        let by_name: std::collections::BTreeMap<String, Proxy> =
            self.call(Method::GET, "/proxies", None).await?;
        Ok(by_name.into_values().collect())
    }

    /// One proxy.
    pub async fn proxy(&self, name: &str) -> Result<Proxy> {
        self.call(Method::GET, &proxy_path(name), None).await
    }

    /// Enables every proxy and removes every toxic (Toxiproxy's `POST /reset`).
    pub async fn reset(&self) -> Result<()> {
        self.send(Method::POST, "/reset", None).await.map(drop)
    }

    /// Creates a proxy from `listen` (`127.0.0.1:0` lets Toxiproxy pick the port; see
    /// [`Proxy::listen`]) to `upstream`; the guard deletes it.
    pub async fn create_proxy(&self, name: &str, listen: &str, upstream: &str) -> Result<ProxyGuard> {
        let body = json!({"name": name, "listen": listen, "upstream": upstream, "enabled": true});
        let proxy: Proxy = self.call(Method::POST, "/proxies", Some(body)).await?;
        Ok(ProxyGuard::new(self.clone(), proxy))
    }

    /// Deletes a proxy, closing its connections.
    pub async fn delete_proxy(&self, name: &str) -> Result<()> {
        self.send(Method::DELETE, &proxy_path(name), None).await.map(drop)
    }

    /// Enables or disables a proxy. Disabling closes its listener and every connection through it.
    pub async fn set_enabled(&self, name: &str, enabled: bool) -> Result<Proxy> {
        self.call(Method::POST, &proxy_path(name), Some(json!({"enabled": enabled})))
            .await
    }

    /// Disables a proxy (new connections are refused, open ones closed); the guard enables it
    /// again.
    pub async fn cut(&self, name: &str) -> Result<CutGuard> {
        self.set_enabled(name, false).await?;
        Ok(CutGuard::new(self.clone(), name.to_owned()))
    }

    /// Adds `toxic` to a proxy; the guard removes it.
    pub async fn add_toxic(&self, proxy: &str, toxic: &Toxic) -> Result<ToxicGuard> {
        let path = format!("{}/toxics", proxy_path(proxy));
        let state: ToxicState = self.call(Method::POST, &path, Some(toxic.to_json())).await?;
        Ok(ToxicGuard::new(self.clone(), proxy.to_owned(), state))
    }

    /// Changes a toxic's toxicity (the share of connections it acts on, from 0 to 1). Toxiproxy
    /// decides per connection when the toxic reaches it, so a connection it already held keeps
    /// what it lost, while new ones at toxicity 0 pass untouched; removing a `timeout` toxic
    /// instead closes the connections it held.
    pub async fn set_toxicity(&self, proxy: &str, toxic: &str, toxicity: f32) -> Result<ToxicState> {
        let path = format!("{}/toxics/{toxic}", proxy_path(proxy));
        self.call(
            Method::POST,
            &path,
            Some(serde_json::json!({ "toxicity": toxicity })),
        )
        .await
    }

    /// Removes a toxic from a proxy.
    pub async fn remove_toxic(&self, proxy: &str, toxic: &str) -> Result<()> {
        let path = format!("{}/toxics/{toxic}", proxy_path(proxy));
        self.send(Method::DELETE, &path, None).await.map(drop)
    }

    /// Sends a request and parses its JSON answer.
    async fn call<T: DeserializeOwned>(&self, method: Method, path: &str, body: Option<Value>) -> Result<T> {
        let name = method_name(&method);
        let text = self.send(method, path, body).await?;
        serde_json::from_str(&text).map_err(|source| Error::Decode {
            method: name,
            path: path.to_owned(),
            source,
        })
    }

    /// Sends a request; an error status becomes [`Error::Refused`] with Toxiproxy's message.
    async fn send(&self, method: Method, path: &str, body: Option<Value>) -> Result<String> {
        let name = method_name(&method);
        let url = format!("{}{path}", self.api);
        let mut request = self.http.request(method, &url);
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let unreachable = |source| Error::Unreachable {
            url: url.clone(),
            source,
        };
        let response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        let text = response.text().await.map_err(unreachable)?;
        if !status.is_success() {
            let message = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|json| json["error"].as_str().map(str::to_owned))
                .unwrap_or_else(|| text.trim().to_owned());
            return Err(Error::Refused {
                method: name,
                path: path.to_owned(),
                status: status.as_u16(),
                message,
            });
        }
        Ok(text)
    }
}

fn proxy_path(name: &str) -> String {
    format!("/proxies/{name}")
}

fn method_name(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::DELETE => "DELETE",
        _ => "request",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxy_parses_from_toxiproxys_json() {
        let text = r#"{"name":"postgres","listen":"127.0.0.1:58475","upstream":"127.0.0.1:55432",
            "enabled":true,"toxics":[{"attributes":{"latency":300,"jitter":0},"name":"latency_downstream",
            "type":"latency","stream":"downstream","toxicity":1}]}"#;
        let proxy: Proxy = serde_json::from_str(text).expect("proxy");
        assert_eq!(proxy.listen, "127.0.0.1:58475");
        assert_eq!(proxy.toxics[0].kind, "latency");
        assert_eq!(proxy.toxics[0].attributes["latency"], 300);
    }

    #[tokio::test]
    async fn an_unreachable_server_names_the_command_that_starts_it() {
        // Port 1 on loopback: nothing listens there.
        let client = Toxiproxy::new("http://127.0.0.1:1/").expect("client");
        assert_eq!(client.api_url(), "http://127.0.0.1:1");
        let err = client.proxies().await.expect_err("nothing listens on port 1");
        assert!(matches!(err, Error::Unreachable { .. }), "{err:?}");
        assert!(err.to_string().contains("cargo xtask services up"), "{err}");
    }
}
