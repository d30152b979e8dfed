//! The kind provider: one kind cluster per Kubernetes minor, for machines with Docker
//! (developers' laptops, GitHub Actions), used by `cargo xtask e2e --provider kind`.
//!
//! **Untested on the machines this project is developed on: they have no Docker engine.** What
//! is covered is what unit tests can check: the generated kind config, every `kind`, `docker`,
//! `tar` and `kubectl` command line, the CSR object, the env files and `cluster.json`.
//!
//! [`provide`] for minor `1.35`, in `target/e2e/kind-1.35/`:
//! 1. checks that a Docker engine answers (else: [`NO_DOCKER`]) and builds `kind`
//!    (`sigs.k8s.io/kind` at `components.kind` of matrix/kubernetes.json) and kubectl from their
//!    Go modules (see [`crate::k8s`]);
//! 2. creates the cluster `ptah-1-35` from `kind-config.yaml` (see [`config`]: three
//!    control-plane nodes, a worker, a labelled and tainted isolation worker, all on the minor's
//!    node image, `containerLogMaxSize` set), or keeps a cluster made from the same config;
//! 3. runs the TLS + htpasswd registry, a plain registry, PostgreSQL and MySQL (images from
//!    matrix/databases.json, see [`database_image`]) as containers on the `kind` network with
//!    generated passwords (see [`containers`], [`secrets`]), or keeps them while they all run;
//! 4. points every node's containerd at the registries (`/etc/containerd/certs.d/<host>/`), so
//!    an image named `127.0.0.1:<port>/…` (the host's name of the registry) is pulled from the
//!    container;
//! 5. builds the workspace's images as OCI layouts named for that registry host and imports them
//!    with `kind load image-archive` (see [`images`]);
//! 6. makes the unprivileged user through a CertificateSigningRequest (see [`user`]);
//! 7. writes `admin.kubeconfig`, `user.kubeconfig`, `pod-endpoints.env` (the `PTAH_POD_*`
//!    variables of cluster/relay.rs: Pods reach the containers by name through the nodes'
//!    resolver, which is Docker's), `services.env` (the `PTAH_TEST_*` variables of the host
//!    side, copied to `target/services.env` unless `cargo xtask services up` wrote that file)
//!    and `cluster.json` (the local provider's keys plus `provider: "kind"`).

pub mod config;
pub mod containers;
pub mod databases;
pub mod endpoints;
pub mod images;
pub mod registry;
pub mod secrets;
pub mod user;

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    thread::sleep,
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use containers::{Container, Names};
use endpoints::{Endpoints, HostPorts};
use secrets::Credentials;
use serde_json::{Value, json};

use crate::{
    cluster::pki::USER_NAME,
    k8s::{Binaries, Component, Matrix, Minor},
    services::{Engine, process},
    step::{output, run, step, workspace_root},
};

/// The error when no Docker engine answers.
pub const NO_DOCKER: &str = "kind needs a Docker engine (none here): use --provider local";

/// `target/e2e/kind-<minor>/` under `root`.
pub fn cluster_dir(root: &Path, minor: &str) -> PathBuf {
    root.join("target").join("e2e").join(format!("kind-{minor}"))
}

/// Creates (or keeps) the minor's kind cluster and returns its cluster directory.
pub fn provide(root: &Path, minor: &Minor, matrix: &Matrix) -> anyhow::Result<PathBuf> {
    require_engine(&mut containers::engine_command())?;
    let shared_env = root.join(ptah_testservices::ENV_FILE);
    if !endpoints::ours_or_absent(&shared_env) {
        bail!(
            "{} was written by `cargo xtask services up`: the host side of the tests would use \
             those services instead of the kind cluster's; run `cargo xtask services down` first",
            shared_env.display()
        );
    }
    let bins = Binaries::new(minor, matrix)?;
    step("kind and kubectl", || {
        bins.ensure(&[Component::Kind, Component::Kubectl])
    })?;
    let kind = bins.path(Component::Kind);
    let dir = cluster_dir(root, &minor.minor);
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let name = config::cluster_name(&minor.minor);
    let admin = dir.join("admin.kubeconfig");
    step(
        &format!("kind cluster {name} ({})", minor.kind_node_image),
        || ensure_cluster(&kind, &name, &dir, &minor.kind_node_image),
    )?;
    let endpoints = step("registries, PostgreSQL and MySQL on the kind network", || {
        ensure_services(root, &dir, &name)
    })?;
    step("the nodes pull the registry hosts from the containers", || {
        configure_nodes(&kind, &name, &endpoints)
    })?;
    step("the workspace's images, loaded into every node", || {
        images::build_and_load(
            root,
            &kind,
            &bins.path(Component::Kubectl),
            &name,
            &endpoints.registry_host(),
            &dir.join("images"),
        )
    })?;
    let user_kubeconfig = dir.join("user.kubeconfig");
    let server = step(
        &format!("user {USER_NAME} through a CertificateSigningRequest"),
        || user::make(&bins.path(Component::Kubectl), &admin, &user_kubeconfig),
    )?;
    let pods = "the kind services as Pods reach them";
    endpoints::write(&dir.join("pod-endpoints.env"), pods, &endpoints.pod_vars())?;
    let host = "the kind services as the host reaches them";
    endpoints::write(&dir.join("services.env"), host, &endpoints.host_vars())?;
    endpoints::write(&shared_env, host, &endpoints.host_vars())?;
    let state = state_json(minor, &name, &server, &admin, &user_kubeconfig);
    fs::write(
        dir.join("cluster.json"),
        serde_json::to_string_pretty(&state)? + "\n",
    )
    .context("cannot write cluster.json")?;
    eprintln!(
        "kind cluster {name} ready; kubectl --kubeconfig {}",
        admin.display()
    );
    Ok(dir)
}

/// The image reference (with its digest when matrix/databases.json pins one) the kind provider
/// runs for `engine`; MariaDB stands for the MySQL row.
pub fn database_image(engine: Engine) -> anyhow::Result<String> {
    Ok(databases::load(&workspace_root(), engine)?.reference())
}

/// Fails with [`NO_DOCKER`] (the cause below it) unless `check` succeeds.
fn require_engine(check: &mut Command) -> anyhow::Result<()> {
    output(check).map(|_| ()).context(NO_DOCKER)
}

/// `cluster.json`: the local provider's keys, plus the provider, the cluster and its node image.
pub fn state_json(minor: &Minor, name: &str, server: &str, admin: &Path, user: &Path) -> Value {
    json!({
        "tier": "full",
        "provider": "kind",
        "version": minor.version,
        "server": server,
        "adminKubeconfig": admin,
        "userKubeconfig": user,
        "userName": USER_NAME,
        "clusterName": name,
        "nodeImage": minor.kind_node_image,
    })
}

/// Keeps a cluster made from today's config; otherwise (re)creates it. Writes the admin
/// kubeconfig either way.
fn ensure_cluster(kind: &Path, name: &str, dir: &Path, node_image: &str) -> anyhow::Result<()> {
    let text = config::cluster_config(node_image);
    let config_path = dir.join("kind-config.yaml");
    let admin = dir.join("admin.kubeconfig");
    let exists = config::has_cluster(&output(&mut config::clusters_command(kind))?, name);
    if exists && fs::read_to_string(&config_path).is_ok_and(|old| old == text) {
        eprintln!("    {name} exists with the same config: kept");
    } else {
        if exists {
            run(&mut config::delete_command(kind, name))?;
        }
        fs::write(&config_path, &text).context("cannot write kind-config.yaml")?;
        // `kind create` merges into an existing kubeconfig file.
        let _ = fs::remove_file(&admin);
        run(&mut config::create_command(kind, name, &config_path, &admin))?;
    }
    let kubeconfig = output(&mut config::kubeconfig_command(kind, name))?;
    secrets::write_private(&admin, &kubeconfig)
}

/// Keeps the four service containers while they all run with today's images and a healthy
/// registry; otherwise starts them afresh with new passwords.
fn ensure_services(root: &Path, dir: &Path, cluster: &str) -> anyhow::Result<Endpoints> {
    let names = Names::of(cluster);
    let secrets = dir.join("secrets");
    let registry_dir = dir.join("registry");
    let mut images = Vec::new();
    for engine in [Engine::Postgres, Engine::Mariadb] {
        let image = databases::load(root, engine)?;
        if let Some(warning) = image.warning() {
            eprintln!("    {warning}");
        }
        images.push(image.reference());
    }
    let images_file = dir.join("service-images");
    let recorded = format!("{}\n", images.join("\n"));
    let running = names
        .all()
        .iter()
        .all(|n| output(&mut containers::running_command(n)).is_ok_and(|s| s.trim() == "true"));
    let same_images = fs::read_to_string(&images_file).is_ok_and(|old| old == recorded);
    if running
        && same_images
        && let Ok(credentials) = Credentials::load(&secrets)
    {
        let endpoints = endpoints_of(&names, &registry_dir, credentials)?;
        let ca = registry_dir.join("ca.pem");
        if registry::healthy(&ca, endpoints.ports.registry, &endpoints.credentials.registry) {
            eprintln!("    {} running: kept", names.all().join(", "));
            return Ok(endpoints);
        }
    }
    // `docker rm -f` of a container that does not exist fails; that is fine here.
    let _ = containers::remove_command(&names.all()).output();
    let credentials = Credentials::generate()?;
    credentials.store(&secrets)?;
    registry::write_files(&registry_dir, &names.registry, &credentials.registry)?;
    let started = [
        Container::registry(&names, &registry_dir, &credentials),
        Container::registry_plain(&names, &credentials),
        Container::postgres(&names, &images[0], &credentials),
        Container::mysql(&names, &images[1], &credentials),
    ];
    for container in &started {
        let env_file = secrets.join(format!("{}.env", container.name));
        secrets::write_private(&env_file, &container.env_file_text())?;
        output(&mut container.run_command(cluster, &env_file))?;
    }
    fs::write(&images_file, &recorded).context("cannot record the service images")?;
    wait_until("PostgreSQL", 120, || {
        containers::postgres_ready_command(&names)
            .output()
            .is_ok_and(|o| o.status.success())
    })?;
    let sql = containers::postgres_app_sql(&credentials.postgres_app);
    process::output_with_stdin(&mut containers::psql_command(&names), sql.as_bytes())
        .context("cannot create PostgreSQL's app role")?;
    wait_until("MySQL", 240, || {
        containers::mysql_ready_command(&names)
            .output()
            .is_ok_and(|o| o.status.success())
    })?;
    let endpoints = endpoints_of(&names, &registry_dir, credentials)?;
    let ca = registry_dir.join("ca.pem");
    wait_until("the registry", 60, || {
        registry::healthy(&ca, endpoints.ports.registry, &endpoints.credentials.registry)
    })?;
    Ok(endpoints)
}

fn endpoints_of(names: &Names, registry_dir: &Path, credentials: Credentials) -> anyhow::Result<Endpoints> {
    let port = |name: &str, port: u16| -> anyhow::Result<u16> {
        containers::parse_host_port(&output(&mut containers::port_command(name, port))?)
    };
    let ports = HostPorts {
        registry: port(&names.registry, containers::REGISTRY_PORT)?,
        registry_plain: port(&names.registry_plain, containers::REGISTRY_PORT)?,
        postgres: port(&names.postgres, containers::POSTGRES_PORT)?,
        mysql: port(&names.mysql, containers::MYSQL_PORT)?,
    };
    Ok(Endpoints {
        names: names.clone(),
        gateway: containers::parse_gateway(&output(&mut containers::network_command())?)?,
        ports,
        registry_ca: registry_dir.join("ca.pem"),
        credentials,
    })
}

/// Writes the registries' `hosts.toml` (and the TLS one's CA) into every node's containerd.
fn configure_nodes(kind: &Path, cluster: &str, endpoints: &Endpoints) -> anyhow::Result<()> {
    let ca = fs::read_to_string(&endpoints.registry_ca).context("cannot read the registry CA")?;
    let tls_host = endpoints.registry_host();
    let plain_host = endpoints.registry_plain_host();
    let tls_dir = format!("{}/{tls_host}", config::CERTS_D);
    let ca_path = format!("{tls_dir}/ca.crt");
    let files = [
        (tls_dir.clone(), "ca.crt", ca),
        (
            tls_dir.clone(),
            "hosts.toml",
            config::hosts_toml(&tls_host, &endpoints.registry_in_network(), Some(&ca_path)),
        ),
        (
            format!("{}/{plain_host}", config::CERTS_D),
            "hosts.toml",
            config::hosts_toml(&plain_host, &endpoints.registry_plain_in_network(), None),
        ),
    ];
    let nodes = output(&mut config::nodes_command(kind, cluster))?;
    for node in nodes.lines().map(str::trim).filter(|n| !n.is_empty()) {
        for (dir, file, text) in &files {
            process::output_with_stdin(&mut node_write_command(node, dir, file), text.as_bytes())
                .with_context(|| format!("cannot write {dir}/{file} on {node}"))?;
        }
    }
    Ok(())
}

/// `docker exec -i <node> sh -c 'mkdir -p "$1" && cat > "$1/$2"' sh <dir> <file>`: stdin to a
/// file in a node.
pub fn node_write_command(node: &str, dir: &str, file: &str) -> Command {
    let mut cmd = Command::new("docker");
    cmd.args([
        "exec",
        "-i",
        node,
        "sh",
        "-c",
        r#"mkdir -p "$1" && cat > "$1/$2""#,
        "sh",
        dir,
        file,
    ]);
    cmd
}

fn wait_until(what: &str, seconds: u64, mut ready: impl FnMut() -> bool) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while !ready() {
        if Instant::now() > deadline {
            bail!("{what} is not ready after {seconds} s (see `docker logs`)");
        }
        sleep(Duration::from_secs(2));
    }
    eprintln!("    {what} ready");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::describe;

    #[test]
    fn without_a_docker_engine_the_error_says_to_use_the_local_provider() {
        let err = require_engine(&mut Command::new("/nonexistent/docker")).expect_err("no engine");
        assert_eq!(err.to_string(), NO_DOCKER);
        assert!(require_engine(&mut Command::new("true")).is_ok());
    }

    #[test]
    fn cluster_json_has_the_local_providers_keys_and_the_provider() {
        let matrix = Matrix::load(&workspace_root()).expect("matrix");
        let minor = matrix.select(Some("1.35")).expect("1.35");
        let dir = cluster_dir(Path::new("/w"), &minor.minor);
        assert_eq!(dir, PathBuf::from("/w/target/e2e/kind-1.35"));
        let state = state_json(
            minor,
            "ptah-1-35",
            "https://127.0.0.1:40000",
            &dir.join("admin.kubeconfig"),
            &dir.join("user.kubeconfig"),
        );
        assert_eq!(state["tier"], "full");
        assert_eq!(state["provider"], "kind");
        assert_eq!(state["version"], minor.version.as_str());
        assert_eq!(state["server"], "https://127.0.0.1:40000");
        assert_eq!(
            state["adminKubeconfig"],
            "/w/target/e2e/kind-1.35/admin.kubeconfig"
        );
        assert_eq!(state["userKubeconfig"], "/w/target/e2e/kind-1.35/user.kubeconfig");
        assert_eq!(state["userName"], USER_NAME);
    }

    #[test]
    fn database_images_come_from_the_matrix_file() {
        assert!(
            database_image(Engine::Postgres)
                .expect("pg")
                .starts_with("postgres:17")
        );
        assert!(
            database_image(Engine::Mariadb)
                .expect("mysql")
                .starts_with("mysql:8.4")
        );
    }

    #[test]
    fn a_node_file_is_written_from_stdin_without_its_content_in_argv() {
        let line = describe(&node_write_command(
            "ptah-1-35-worker",
            "/etc/containerd/certs.d/h",
            "hosts.toml",
        ));
        assert_eq!(
            line,
            r#"docker exec -i ptah-1-35-worker sh -c mkdir -p "$1" && cat > "$1/$2" sh /etc/containerd/certs.d/h hosts.toml"#
        );
    }
}
