//! The Pod's volumes and where containers mount them. Every writable volume is a memory-backed
//! emptyDir with a size limit: the root filesystem is read-only, nothing reaches the node's disk,
//! and a runaway child fills its own quota instead of the node.

use k8s_openapi::{
    api::core::v1::{
        ConfigMapProjection, ConfigMapVolumeSource, EmptyDirVolumeSource, KeyToPath, ProjectedVolumeSource,
        SecretVolumeSource, Volume, VolumeMount, VolumeProjection,
    },
    apimachinery::pkg::api::resource::Quantity,
};
use ptah_api::shared::{ConfigMapKeySelector, RegistryAuthSpec};

/// `ptah` inside the executor image (`crates/testenv/src/images`).
pub const IMAGE_PTAH_PATH: &str = "/usr/local/bin/ptah";
/// `ptah-runner` inside the runner image.
pub const IMAGE_RUNNER_PATH: &str = "/usr/local/bin/ptah-runner";

/// The runner copied by `install-runner`.
pub const RUNNER_VOLUME: &str = "runner";
/// Where the runner volume is mounted.
pub const RUNNER_DIR: &str = "/runner";
/// The installed runner, executed by the main container.
pub const RUNNER_PATH: &str = "/runner/ptah-runner";
/// The main container's home, temporary and working directory.
pub const WORK_VOLUME: &str = "work";
/// Where the work volume is mounted.
pub const WORK_DIR: &str = "/work";
/// The pulled schema artifact.
pub const SCHEMA_SOURCE_VOLUME: &str = "schema-source";
/// Where the schema-source volume is mounted.
pub const SOURCE_DIR: &str = "/source";
/// The directory `ptah oci pull --out` creates (it refuses an existing one).
pub const SCHEMA_DIR: &str = "/source/schema";
/// The schema file inside it: a schema artifact holds exactly one `schema.hcl`, and `ptah schema`
/// reads a directory as `.sql` files only, so `PTAH_SCHEMA_FROM` names the file.
pub const SCHEMA_FILE: &str = "/source/schema/schema.hcl";
/// The pulled migration directory artifact (migration operations).
pub const MIGRATIONS_SOURCE_VOLUME: &str = "migrations-source";
/// The directory `ptah migrations pull --out` creates: `PTAH_MIGRATIONS_DIR`.
pub const MIGRATIONS_DIR: &str = "/source/migrations";
/// The fetch container's home and temporary directory.
pub const FETCH_WORK_VOLUME: &str = "fetch-work";
/// Where the fetch-work volume is mounted.
pub const FETCH_WORK_DIR: &str = "/fetch-work";
/// The registry Docker config Secret (DockerConfigJSON mode).
pub const DOCKER_CONFIG_VOLUME: &str = "registry-docker-config";
/// Where the Docker config volume is mounted; the file is at `.docker/config.json` below it
/// (the layout predates `DOCKER_CONFIG` in the runner's contract and is kept stable).
pub const DOCKER_CONFIG_HOME: &str = "/credentials/registry";
/// `DOCKER_CONFIG` of every container that reaches the registry with a Docker config.
pub const DOCKER_CONFIG_DIR: &str = "/credentials/registry/.docker";
/// The registry CA ConfigMap.
pub const CA_VOLUME: &str = "registry-ca";
/// Where the CA volume is mounted.
pub const CA_DIR: &str = "/credentials/ca";
/// `PTAH_OCI_CA_FILE`.
pub const CA_FILE: &str = "/credentials/ca/ca.pem";
/// The database CA ConfigMap (`spec.target.caFrom`).
pub const DB_CA_VOLUME: &str = "database-ca";
/// Where the database CA volume is mounted.
pub const DB_CA_DIR: &str = "/credentials/database-ca";
/// `PTAH_DB_CA_FILE`.
pub const DB_CA_FILE: &str = "/credentials/database-ca/ca.pem";
/// The verification policy ConfigMap (Verify).
pub const POLICY_VOLUME: &str = "verification-policy";
/// Where the policy volume is mounted.
pub const POLICY_DIR: &str = "/policy";
/// `PTAH_VERIFICATION_POLICY` (the policy parser reads YAML and JSON alike).
pub const POLICY_FILE: &str = "/policy/policy.yaml";
/// The projected plan chunks (Apply), named as the runner reads them (`env::plan_chunk_name`).
pub const PLAN_VOLUME: &str = "plan";
/// `PTAH_PLAN_FILE`: a directory of `000.plan`, `001.plan`, … read in name order.
pub const PLAN_DIR: &str = "/plan";
/// The data key of every plan chunk ConfigMap.
pub const PLAN_CHUNK_KEY: &str = "chunk";

/// The operation's result-delivery ConfigMap (durable delivery).
pub const RESULT_VOLUME: &str = "result-delivery";
/// Where the result-delivery volume is mounted.
pub const RESULT_DIR: &str = "/credentials/result";
/// The ConfigMap key holding the enrolment ticket.
pub const RESULT_TICKET_KEY: &str = "result-enrolment";
/// The ConfigMap key holding the result CA bundle.
pub const RESULT_CA_KEY: &str = "result-ca.crt";
/// `PTAH_RESULT_TICKET_FILE`.
pub const RESULT_TICKET_FILE: &str = "/credentials/result/result-enrolment";
/// `PTAH_RESULT_CA_FILE`.
pub const RESULT_CA_FILE: &str = "/credentials/result/result-ca.crt";

/// Size limits of the memory-backed volumes.
pub const RUNNER_SIZE: &str = "64Mi";
/// Size limit of `work`: a plan (8 MiB) and the runner's copies of it fit many times over.
pub const WORK_SIZE: &str = "128Mi";
/// Size limit of `schema-source`.
pub const SCHEMA_SOURCE_SIZE: &str = "64Mi";
/// Size limit of `migrations-source`.
pub const MIGRATIONS_SOURCE_SIZE: &str = "64Mi";
/// Size limit of `fetch-work`.
pub const FETCH_WORK_SIZE: &str = "64Mi";

/// The most a pulled artifact's files may hold in all: below [`SCHEMA_SOURCE_SIZE`] and
/// [`MIGRATIONS_SOURCE_SIZE`], so `ptah` refuses an oversized artifact with a typed error before
/// the memory-backed volume overflows and the kubelet evicts the Pod.
pub const FETCH_MAX_TOTAL_BYTES: u64 = 48 * 1024 * 1024;
/// The most one file of a pulled artifact may hold.
pub const FETCH_MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// The most a manifest of a pulled artifact may hold.
pub const FETCH_MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// Mode of mounted credentials, policies and plan chunks: owner and group (fsGroup) read only.
pub const READ_ONLY_FILE_MODE: i32 = 0o440;

/// A memory-backed emptyDir with a size limit.
pub(crate) fn memory(name: &str, size: &str) -> Volume {
    Volume {
        name: name.to_owned(),
        empty_dir: Some(EmptyDirVolumeSource {
            medium: Some("Memory".to_owned()),
            size_limit: Some(Quantity(size.to_owned())),
        }),
        ..Volume::default()
    }
}

/// A mount of `name` at `path`.
pub(crate) fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.to_owned(),
        mount_path: path.to_owned(),
        read_only: read_only.then_some(true),
        ..VolumeMount::default()
    }
}

fn item(key: &str, path: &str) -> KeyToPath {
    KeyToPath {
        key: key.to_owned(),
        path: path.to_owned(),
        mode: Some(READ_ONLY_FILE_MODE),
    }
}

/// One ConfigMap key as one file (defaultMode set so the API server adds nothing).
pub(crate) fn config_map_file(name: &str, from: &ConfigMapKeySelector, file: &str) -> Volume {
    Volume {
        name: name.to_owned(),
        config_map: Some(ConfigMapVolumeSource {
            name: from.name.clone(),
            items: Some(vec![item(&from.key, file)]),
            default_mode: Some(READ_ONLY_FILE_MODE),
            optional: None,
        }),
        ..Volume::default()
    }
}

/// The ticket and the CA bundle of the operation's result-delivery ConfigMap.
pub(crate) fn result_delivery(config_map: &str) -> Volume {
    Volume {
        name: RESULT_VOLUME.to_owned(),
        config_map: Some(ConfigMapVolumeSource {
            name: config_map.to_owned(),
            items: Some(vec![
                item(RESULT_TICKET_KEY, RESULT_TICKET_KEY),
                item(RESULT_CA_KEY, RESULT_CA_KEY),
            ]),
            default_mode: Some(READ_ONLY_FILE_MODE),
            optional: None,
        }),
        ..Volume::default()
    }
}

/// The Docker config key of a registry Secret as `.docker/config.json`.
pub(crate) fn docker_config(auth: &RegistryAuthSpec, key: &str) -> Volume {
    Volume {
        name: DOCKER_CONFIG_VOLUME.to_owned(),
        secret: Some(SecretVolumeSource {
            secret_name: Some(auth.name.clone()),
            items: Some(vec![item(key, ".docker/config.json")]),
            default_mode: Some(READ_ONLY_FILE_MODE),
            optional: None,
        }),
        ..Volume::default()
    }
}

/// The plan chunk ConfigMaps projected into one directory, in order.
pub(crate) fn plan(chunks: &[String]) -> Volume {
    let sources = chunks
        .iter()
        .enumerate()
        .map(|(i, name)| VolumeProjection {
            config_map: Some(ConfigMapProjection {
                name: name.clone(),
                items: Some(vec![item(
                    PLAN_CHUNK_KEY,
                    &ptah_dataplane::env::plan_chunk_name(i),
                )]),
                optional: None,
            }),
            ..VolumeProjection::default()
        })
        .collect();
    Volume {
        name: PLAN_VOLUME.to_owned(),
        projected: Some(ProjectedVolumeSource {
            sources: Some(sources),
            default_mode: Some(READ_ONLY_FILE_MODE),
        }),
        ..Volume::default()
    }
}
