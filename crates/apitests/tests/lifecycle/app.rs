//! The application side of the schema suites: a fresh database, the schema artifact, the
//! Secrets and ConfigMaps a PtahSchema names, and the PtahSchema itself.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client, ResourceExt};
use ptah_api::{
    PtahSchema, PtahSchemaApproval, PtahSchemaSpec, conditions::ConditionType, schema::SchemaPhase,
};
use ptah_apitests::e2e::{build_bin, create, data_plane_image, host_ptah, pod_endpoints};
use ptah_testservices::TestServices;
use serde_json::json;

use crate::common::{admin, namespace};

#[derive(Clone, Copy, PartialEq)]
pub enum Engine {
    Postgres,
    Mariadb,
}

impl Engine {
    pub fn schema(self, with_audit: bool) -> String {
        let (header, attach, int) = match self {
            Engine::Postgres => ("schema \"public\" {}\n\n", "  schema = schema.public\n", "bigint"),
            Engine::Mariadb => ("", "", "bigint"),
        };
        let mut text = format!(
            "{header}table \"items\" {{\n{attach}  column \"id\" {{\n    type = {int}\n  }}\n  column \"name\" {{\n    type = varchar(40)\n  }}\n  primary_key {{\n    columns = [column.id]\n  }}\n}}\n"
        );
        if with_audit {
            text.push_str(&format!(
                "\ntable \"audit\" {{\n{attach}  column \"id\" {{\n    type = {int}\n  }}\n  primary_key {{\n    columns = [column.id]\n  }}\n}}\n"
            ));
        }
        text
    }

    /// A fresh database owned by the app user; returns (host URL, Pod URL).
    pub async fn fresh_database(self, services: &TestServices, name: &str) -> (String, String) {
        let endpoints = pod_endpoints();
        match self {
            Engine::Postgres => {
                let admin = services.postgres.admin_url.expose().to_owned();
                let (client, conn) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
                    .await
                    .expect("connect admin");
                tokio::spawn(conn);
                client
                    .batch_execute(&format!("CREATE DATABASE {name} OWNER app"))
                    .await
                    .expect("create database");
                let pod = endpoints.get("PTAH_POD_PG_URL").expect("PTAH_POD_PG_URL").clone();
                (
                    services.postgres.url_for_database(name).expose().to_owned(),
                    with_database(&pod, name),
                )
            }
            Engine::Mariadb => {
                let admin = services.mysql.admin_url.expose().to_owned();
                let mut conn = mysql_async::Conn::from_url(&admin).await.expect("connect admin");
                use mysql_async::prelude::Queryable;
                conn.query_drop(format!("CREATE DATABASE {name}"))
                    .await
                    .expect("create database");
                conn.query_drop(format!("GRANT ALL ON {name}.* TO 'app'@'%'"))
                    .await
                    .expect("grant");
                let pod = endpoints
                    .get("PTAH_POD_MARIADB_URL")
                    .expect("PTAH_POD_MARIADB_URL")
                    .clone();
                (
                    services.mysql.url_for_database(name).expose().to_owned(),
                    with_database(&pod, name),
                )
            }
        }
    }

    pub async fn exec(self, url: &str, sql: &str) {
        match self {
            Engine::Postgres => {
                let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                    .await
                    .expect("connect");
                tokio::spawn(conn);
                client.batch_execute(sql).await.expect("exec");
            }
            Engine::Mariadb => {
                use mysql_async::prelude::Queryable;
                let mut conn = mysql_async::Conn::from_url(url).await.expect("connect");
                conn.query_drop(sql).await.expect("exec");
            }
        }
    }

    pub async fn has_table(self, url: &str, table: &str) -> bool {
        match self {
            Engine::Postgres => {
                let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                    .await
                    .expect("connect");
                tokio::spawn(conn);
                let row = client
                    .query_one("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name = $1", &[&table])
                    .await
                    .expect("query");
                row.get::<_, i64>(0) == 1
            }
            Engine::Mariadb => {
                use mysql_async::prelude::Queryable;
                let mut conn = mysql_async::Conn::from_url(url).await.expect("connect");
                let n: Option<i64> = conn
                    .exec_first("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?", (table,))
                    .await
                    .expect("query");
                n == Some(1)
            }
        }
    }
}

pub fn with_database(url: &str, database: &str) -> String {
    let (base, _) = url.rsplit_once('/').expect("a URL with a path");
    format!("{base}/{database}")
}

pub fn password_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let userinfo = rest.split_once('@').map_or("", |(u, _)| u);
    userinfo.split_once(':').map_or("", |(_, p)| p).to_owned()
}

pub fn push(services: &TestServices, repository: &str, tag: &str, hcl: &str) -> String {
    let bin = build_bin("ptah-cli", "ptah");
    let dir = std::env::temp_dir().join(ptah_apitests::client::unique("schema-artifact"));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("schema.hcl");
    std::fs::write(&file, hcl).expect("schema.hcl");
    let reference = format!("oci://{}/{repository}:{tag}", services.registry.host);
    let pushed = host_ptah(
        &bin,
        services,
        &[
            "oci",
            "push",
            "--kind",
            "schema",
            "--file",
            &file.display().to_string(),
            &reference,
        ],
    );
    std::fs::remove_dir_all(&dir).expect("clean");
    pushed["digest"].as_str().expect("digest").to_owned()
}

pub fn reason(s: &PtahSchema, t: ConditionType) -> String {
    s.status
        .as_ref()
        .and_then(|st| st.conditions.iter().find(|c| c.type_ == t.as_str()))
        .map(|c| c.reason.clone())
        .unwrap_or_default()
}

pub async fn approve(client: &kube::Client, ns: &str, s: &PtahSchema) -> String {
    let plan = s.status.as_ref().and_then(|st| st.plan.clone()).expect("a plan");
    let api: Api<PtahSchemaApproval> = Api::namespaced(client.clone(), ns);
    // The plan's uid too: a plan re-published after a proof has the same content-derived name.
    let name = format!("approve-{}-{}", &plan.name, &plan.uid[..8.min(plan.uid.len())]);
    create(
        &api,
        json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchemaApproval",
            "metadata": {"name": name},
            "spec": {
                "schemaRef": {"name": s.name_any(), "uid": s.uid().expect("uid")},
                "planRef": {"name": plan.name, "uid": plan.uid},
                "planFingerprint": plan.fingerprint,
            }
        }),
    )
    .await;
    plan.content_digest.as_str().to_owned()
}

pub fn phase(s: &PtahSchema) -> Option<SchemaPhase> {
    s.status.as_ref().and_then(|st| st.phase)
}

/// One application namespace with a database, a published schema and a PtahSchema `orders`.
pub struct App {
    /// Admin client.
    pub client: Client,
    /// The services.
    pub services: TestServices,
    /// The namespace.
    pub ns: String,
    /// PtahSchemas of the namespace.
    pub schemas: Api<PtahSchema>,
    /// The database URL from the host.
    pub host_url: String,
    /// The database password (what no log may contain).
    pub password: String,
    /// The registry as Pods reach it.
    pub registry: String,
    /// The artifact repository.
    pub repository: String,
    /// The pinned data-plane image.
    pub image: String,
    /// The database engine.
    pub engine: Engine,
}

/// The engine as `spec.target.engine` spells it.
fn engine_name(engine: Engine) -> &'static str {
    match engine {
        Engine::Postgres => "PostgreSQL",
        Engine::Mariadb => "MySQL",
    }
}

impl App {
    /// Creates everything; `prefix` names the namespace.
    pub async fn setup(engine: Engine, prefix: &str) -> App {
        let services = TestServices::require();
        let endpoints = pod_endpoints();
        let client = admin().await;
        ptah_apitests::client::install_crds(&client).await;
        let image = data_plane_image();
        let ns = namespace(&client, prefix).await;
        let db = ptah_testservices::unique_name("e2e").replace('-', "_");
        let (host_url, pod_url) = engine.fresh_database(&services, &db).await;
        let password = password_of(&pod_url);
        assert!(password.len() >= 8, "the scan needs a real password");
        // The Jobs reach the database over verified TLS: the URL asks for verify-full (the
        // server certificate names the pod gateway) and the CA comes from `spec.target.caFrom`.
        // Only the kind provider's database containers run without TLS.
        let db_ca = match engine {
            Engine::Postgres => services.postgres.ca_path.clone(),
            Engine::Mariadb => services.mysql.ca_path.clone(),
        };
        let pod_url = match db_ca {
            Some(_) => format!("{pod_url}?sslmode=verify-full"),
            None => pod_url,
        };
        let registry = endpoints
            .get("PTAH_POD_REGISTRY")
            .expect("PTAH_POD_REGISTRY")
            .clone();
        let repository = format!("e2e/{}", ns);
        push(&services, &repository, "v1", &engine.schema(true));

        let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
        create(
            &secrets,
            json!({"metadata": {"name": "db"}, "stringData": {"url": pod_url}}),
        )
        .await;
        ptah_apitests::release::registry_secret(&client, &ns, &services, &registry).await;
        // The Job's Pods pull the pinned data-plane image from the TLS registry.
        let auth = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            format!(
                "{}:{}",
                services.registry.username,
                services.registry.password.expose()
            ),
        );
        let docker = json!({"auths": {services.registry.host.clone(): {"auth": auth}}}).to_string();
        create(
            &secrets,
            json!({"metadata": {"name": "pull"}, "type": "kubernetes.io/dockerconfigjson",
            "stringData": {".dockerconfigjson": docker}}),
        )
        .await;
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
        let mut target = json!({"engine": engine_name(engine), "coordinationKey": "orders", "urlFrom": {"name": "db", "key": "url"}});
        if let Some(path) = &db_ca {
            let pem = std::fs::read_to_string(path).expect("the database CA");
            create(
                &cms,
                json!({"metadata": {"name": "db-ca"}, "immutable": true, "data": {"ca.pem": pem}}),
            )
            .await;
            target["caFrom"] = json!({"name": "db-ca", "key": "ca.pem"});
        }
        let ca = String::from_utf8(services.registry.ca_pem().expect("CA")).expect("PEM");
        create(
            &cms,
            json!({"metadata": {"name": "registry-ca"}, "immutable": true, "data": {"ca.pem": ca}}),
        )
        .await;
        create(
            &cms,
            json!({"metadata": {"name": "policy"}, "immutable": true, "data": {
            "policy.yaml": "version: 1\nartifact_types: [application/vnd.stokaro.ptah.schema.v1]\n"}}),
        )
        .await;
        let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), &ns);
        create(
            &schemas,
            json!({
                "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema",
                "metadata": {"name": "orders"},
                "spec": {
                    "target": target,
                    "desired": {
                        "ociRef": format!("oci://{registry}/{repository}:v1"),
                        "registryAuthFrom": {"name": "registry"},
                        "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"},
                        "transport": {"caFrom": {"name": "registry-ca", "key": "ca.pem"}}
                    },
                    "interval": "10s",
                    "policy": {"apply": "OnApproval"},
                    "execution": {"activeDeadlineSeconds": 300, "imagePullSecrets": [{"name": "pull"}]}
                }
            }),
        )
        .await;

        App {
            client,
            services,
            ns,
            schemas,
            host_url,
            password,
            registry,
            repository,
            image,
            engine,
        }
    }

    /// Whether the application database has `table` (read from the host).
    /// Creates a PtahSchema `name` like `orders` on a database of its own (Secret `<name>-db`,
    /// coordination key `name`: no realm is shared with `orders`), its spec edited by `edit`.
    pub async fn sibling_schema(&self, name: &str, edit: impl FnOnce(&mut PtahSchemaSpec)) {
        let db = ptah_testservices::unique_name("e2e").replace('-', "_");
        let (_, pod_url) = self.engine.fresh_database(&self.services, &db).await;
        let secrets: Api<Secret> = Api::namespaced(self.client.clone(), &self.ns);
        let db_secret = format!("{name}-db");
        create(
            &secrets,
            json!({"metadata": {"name": db_secret}, "stringData": {"url": format!("{pod_url}?sslmode=verify-full")}}),
        )
        .await;
        let mut spec = self.schemas.get("orders").await.expect("orders").spec;
        spec.target.coordination_key = Some(name.to_owned());
        spec.target.url_from.name = db_secret;
        edit(&mut spec);
        let mut schema = PtahSchema::new(name, spec);
        schema.metadata.namespace = Some(self.ns.clone());
        self.schemas
            .create(&Default::default(), &schema)
            .await
            .unwrap_or_else(|e| panic!("create {name}: {e}"));
    }

    pub async fn engine_has_table(&self, table: &str) -> bool {
        self.engine.has_table(&self.host_url, table).await
    }
}
