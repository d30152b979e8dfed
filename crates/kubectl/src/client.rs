//! The API client: from `--kubeconfig`/`--context`, else kubectl's own resolution, identifying
//! itself as `kubectl-ptah/<version>`.

use std::path::Path;

use kube::{
    Client, Config,
    config::{KubeConfigOptions, Kubeconfig},
};

use crate::Error;

/// A client and the namespace its context names.
pub(crate) struct Cluster {
    pub client: Client,
    pub namespace: String,
}

/// Connects as kubectl would for the same flags.
pub(crate) async fn connect(kubeconfig: Option<&Path>, context: Option<&str>) -> Result<Cluster, Error> {
    let options = KubeConfigOptions {
        context: context.map(str::to_owned),
        ..KubeConfigOptions::default()
    };
    let mut config = match kubeconfig {
        Some(path) => {
            let file =
                Kubeconfig::read_from(path).map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
            Config::from_custom_kubeconfig(file, &options)
                .await
                .map_err(|e| Error::Config(format!("{}: {e}", path.display())))?
        }
        None if context.is_some() => Config::from_kubeconfig(&options)
            .await
            .map_err(|e| Error::Config(e.to_string()))?,
        None => Config::infer().await.map_err(|e| Error::Config(e.to_string()))?,
    };
    let agent = concat!("kubectl-ptah/", env!("CARGO_PKG_VERSION"));
    config
        .headers
        .push((http::header::USER_AGENT, http::HeaderValue::from_static(agent)));
    let namespace = config.default_namespace.clone();
    let client = Client::try_from(config).map_err(|e| Error::Config(e.to_string()))?;
    Ok(Cluster { client, namespace })
}
