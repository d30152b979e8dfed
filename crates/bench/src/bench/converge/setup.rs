//! What the converge run needs before its timer starts, and taking it away again: one fresh
//! database per PtahSchema on the test services, their Secrets, the registry and CA objects, one
//! pushed schema artifact per engine, and the multi-document manifest of the PtahSchemas.

use anyhow::{Context, bail};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client, api::PostParams};
use ptah_testservices::TestServices;
use serde_json::{Value, json};

/// The engine a database runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Engine {
    Postgres,
    Mariadb,
}

impl Engine {
    /// As `spec.target.engine` spells it.
    pub(super) fn spec_name(self) -> &'static str {
        match self {
            Engine::Postgres => "PostgreSQL",
            Engine::Mariadb => "MySQL",
        }
    }

    /// Short label for names and the report.
    pub(super) fn label(self) -> &'static str {
        match self {
            Engine::Postgres => "pg",
            Engine::Mariadb => "mariadb",
        }
    }

    /// The desired schema: `tables` small tables, each with a key, a name and an index.
    pub(super) fn schema(self, tables: usize) -> String {
        let (header, attach) = match self {
            Engine::Postgres => ("schema \"public\" {}\n\n", "  schema = schema.public\n"),
            Engine::Mariadb => ("", ""),
        };
        let mut text = header.to_owned();
        for t in 0..tables {
            text.push_str(&format!(
                "table \"t{t:02}\" {{\n{attach}  column \"id\" {{\n    type = bigint\n  }}\n  column \"name\" {{\n    type = varchar(40)\n  }}\n  column \"amount\" {{\n    type = integer\n  }}\n  primary_key {{\n    columns = [column.id]\n  }}\n  index \"t{t:02}_name\" {{\n    columns = [column.name]\n  }}\n}}\n\n"
            ));
        }
        text
    }
}

/// One PtahSchema's database.
#[derive(Clone, Debug)]
pub(super) struct Database {
    /// The PtahSchema's name (also its realm key and its Secret's suffix).
    pub(super) schema: String,
    pub(super) engine: Engine,
    /// The database's name on the server.
    pub(super) name: String,
}

/// Creates an empty database `name` owned by (or granted to) the services' app user.
pub(super) async fn create_database(
    services: &TestServices,
    engine: Engine,
    name: &str,
) -> anyhow::Result<()> {
    match engine {
        Engine::Postgres => {
            let (client, conn) =
                tokio_postgres::connect(services.postgres.admin_url.expose(), tokio_postgres::NoTls)
                    .await
                    .context("cannot connect to PostgreSQL as admin")?;
            tokio::spawn(conn);
            client
                .batch_execute(&format!("CREATE DATABASE {name} OWNER app"))
                .await
                .with_context(|| format!("CREATE DATABASE {name}"))?;
        }
        Engine::Mariadb => {
            use mysql_async::prelude::Queryable;
            let mut conn = mysql_async::Conn::from_url(services.mysql.admin_url.expose())
                .await
                .context("cannot connect to MariaDB as admin")?;
            conn.query_drop(format!("CREATE DATABASE {name}"))
                .await
                .with_context(|| format!("CREATE DATABASE {name}"))?;
            conn.query_drop(format!("GRANT ALL ON {name}.* TO 'app'@'%'"))
                .await
                .with_context(|| format!("GRANT on {name}"))?;
            conn.disconnect().await.ok();
        }
    }
    Ok(())
}

/// Drops the database; a Job still connected is cut off (PostgreSQL's FORCE).
pub(super) async fn drop_database(services: &TestServices, db: &Database) -> anyhow::Result<()> {
    match db.engine {
        Engine::Postgres => {
            let (client, conn) =
                tokio_postgres::connect(services.postgres.admin_url.expose(), tokio_postgres::NoTls)
                    .await
                    .context("cannot connect to PostgreSQL as admin")?;
            tokio::spawn(conn);
            client
                .batch_execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", db.name))
                .await
                .with_context(|| format!("DROP DATABASE {}", db.name))?;
        }
        Engine::Mariadb => {
            use mysql_async::prelude::Queryable;
            let mut conn = mysql_async::Conn::from_url(services.mysql.admin_url.expose())
                .await
                .context("cannot connect to MariaDB as admin")?;
            conn.query_drop(format!("DROP DATABASE IF EXISTS {}", db.name))
                .await
                .with_context(|| format!("DROP DATABASE {}", db.name))?;
            conn.disconnect().await.ok();
        }
    }
    Ok(())
}

/// The database URL as Pods reach it: the pod relay's endpoint for the engine, pointed at
/// `database`, asking for verified TLS when the services run it.
pub(super) fn pod_url(services: &TestServices, engine: Engine, database: &str) -> anyhow::Result<String> {
    let endpoints = ptah_apitests::e2e::pod_endpoints();
    let key = match engine {
        Engine::Postgres => "PTAH_POD_PG_URL",
        Engine::Mariadb => "PTAH_POD_MARIADB_URL",
    };
    let base = endpoints
        .get(key)
        .with_context(|| format!("the pod relay names no {key}; run `cargo xtask cluster relay`"))?;
    let Some((prefix, _)) = base.rsplit_once('/') else {
        bail!("{key} is not a URL with a path");
    };
    let url = format!("{prefix}/{database}");
    Ok(match ca_path(services, engine) {
        Some(_) => format!("{url}?sslmode=verify-full"),
        None => url,
    })
}

fn ca_path(services: &TestServices, engine: Engine) -> Option<&std::path::Path> {
    match engine {
        Engine::Postgres => services.postgres.ca_path.as_deref(),
        Engine::Mariadb => services.mysql.ca_path.as_deref(),
    }
}

/// The registry as Pods reach it.
pub(super) fn pod_registry() -> anyhow::Result<String> {
    ptah_apitests::e2e::pod_endpoints()
        .get("PTAH_POD_REGISTRY")
        .cloned()
        .context("the pod relay names no PTAH_POD_REGISTRY; run `cargo xtask cluster relay`")
}

async fn create<K>(api: &Api<K>, value: Value) -> anyhow::Result<()>
where
    K: kube::Resource
        + Clone
        + k8s_openapi::serde::de::DeserializeOwned
        + k8s_openapi::serde::Serialize
        + std::fmt::Debug,
{
    let object: K = serde_json::from_value(value)?;
    api.create(&PostParams::default(), &object).await?;
    Ok(())
}

/// The shared objects of the namespace: registry credentials and CA, the verification policy,
/// each engine's database CA, and the image pull Secret.
pub(super) async fn shared_objects(
    client: &Client,
    ns: &str,
    services: &TestServices,
    engines: &[Engine],
) -> anyhow::Result<()> {
    ptah_apitests::release::registry_secret(client, ns, services, &pod_registry()?).await;
    ptah_apitests::release::pull_secret(client, ns, services).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let ca = String::from_utf8(services.registry.ca_pem()?).context("the registry CA is not PEM")?;
    create(
        &cms,
        json!({"metadata": {"name": "registry-ca"}, "immutable": true, "data": {"ca.pem": ca}}),
    )
    .await
    .context("create the registry CA ConfigMap")?;
    create(
        &cms,
        json!({"metadata": {"name": "policy"}, "immutable": true, "data": {
            "policy.yaml": "version: 1\nartifact_types: [application/vnd.stokaro.ptah.schema.v1]\n"}}),
    )
    .await
    .context("create the verification policy")?;
    for &engine in engines {
        if let Some(path) = ca_path(services, engine) {
            let pem =
                std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            create(
                &cms,
                json!({"metadata": {"name": format!("db-ca-{}", engine.label())}, "immutable": true,
                    "data": {"ca.pem": pem}}),
            )
            .await
            .context("create a database CA ConfigMap")?;
        }
    }
    Ok(())
}

/// The Secret `db-<schema>` with the database's Pod URL.
pub(super) async fn database_secret(
    client: &Client,
    ns: &str,
    db: &Database,
    url: &str,
) -> anyhow::Result<()> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
    create(
        &secrets,
        json!({"metadata": {"name": format!("db-{}", db.schema)}, "stringData": {"url": url}}),
    )
    .await
    .with_context(|| format!("create the Secret of {}", db.schema))
}

/// Pushes the desired schema of `engine` as `oci://<registry>/<repository>:v1` with the host's
/// `ptah` (built when missing); returns the reference Pods use.
pub(super) fn push_artifact(
    services: &TestServices,
    engine: Engine,
    tables: usize,
    repository: &str,
    pod_registry: &str,
) -> anyhow::Result<String> {
    let bin = ptah_apitests::e2e::build_bin("ptah-cli", "ptah");
    let dir = std::env::temp_dir().join(ptah_apitests::client::unique("bench-converge"));
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("schema.hcl");
    std::fs::write(&file, engine.schema(tables))?;
    let host_reference = format!("oci://{}/{repository}:v1", services.registry.host);
    let file_arg = file.display().to_string();
    let pushed = ptah_apitests::e2e::host_ptah(
        &bin,
        services,
        &[
            "oci",
            "push",
            "--kind",
            "schema",
            "--file",
            &file_arg,
            &host_reference,
        ],
    );
    std::fs::remove_dir_all(&dir).ok();
    if pushed["digest"].as_str().is_none() {
        bail!("ptah oci push reported no digest: {pushed}");
    }
    Ok(format!("oci://{pod_registry}/{repository}:v1"))
}

/// One PtahSchema of the run, as `kubectl apply` reads it (JSON is YAML).
pub(super) fn manifest(ns: &str, db: &Database, reference: &str, has_db_ca: bool) -> Value {
    let mut target = json!({
        "engine": db.engine.spec_name(),
        "coordinationKey": db.schema,
        "urlFrom": {"name": format!("db-{}", db.schema), "key": "url"},
    });
    if has_db_ca {
        target["caFrom"] = json!({"name": format!("db-ca-{}", db.engine.label()), "key": "ca.pem"});
    }
    json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema",
        "metadata": {"name": db.schema, "namespace": ns},
        "spec": {
            "target": target,
            "desired": {
                "ociRef": reference,
                "registryAuthFrom": {"name": "registry"},
                "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"},
                "transport": {"caFrom": {"name": "registry-ca", "key": "ca.pem"}}
            },
            // Long enough that no second cycle starts inside the measurement.
            "interval": "10m",
            "policy": {"apply": "Always"},
            "execution": {"activeDeadlineSeconds": 300, "imagePullSecrets": [{"name": "pull"}]}
        }
    })
}

/// Whether the services run `engine` with TLS (its Pods then get the CA from a ConfigMap).
pub(super) fn has_db_ca(services: &TestServices, engine: Engine) -> bool {
    ca_path(services, engine).is_some()
}
