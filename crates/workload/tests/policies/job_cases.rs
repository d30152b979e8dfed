//! The cases of the Job and Pod rules, each refused by `<release>-operation-jobs` (one also by the
//! owner's spec): the images, the token, the volumes and variables, the commands, the grants.

use k8s_openapi::api::{
    batch::v1::Job,
    core::v1::{
        Capabilities, EnvFromSource, EnvVar, EnvVarSource, ExecAction, HostPathVolumeSource, Lifecycle,
        LifecycleHandler, ObjectFieldSelector, SecretEnvSource, SecretVolumeSource, Volume, VolumeMount,
    },
};
use ptah_dataplane::Operation;

use crate::{
    policies::cases::*,
    policies::owners::{Auth, Family},
};

/// The cases of the Job and Pod rules, refused by `<release>-operation-jobs`.
pub fn job_cases() -> Vec<Case> {
    use Auth::{Anonymous as Anon, DockerConfig as Docker, Environment as Env};
    let case =
        |what: &'static str, op: Operation, auth: Auth, rule: &'static str, edit: fn(&mut Job, &Context)| {
            Case {
                what,
                op,
                family: Family::of(op),
                auth,
                rules: vec![(Policy::Jobs, rule)],
                edit,
            }
        };
    vec![
        case(
            "a Pod template without its operation-id label",
            Operation::Plan,
            Docker,
            LABELS,
            |j, _| {
                let labels = j
                    .spec
                    .as_mut()
                    .and_then(|s| s.template.metadata.as_mut())
                    .and_then(|m| m.labels.as_mut());
                labels.expect("labels").remove("operator.ptah.run/operation-id");
            },
        ),
        case("a suspended Job", Operation::Observe, Env, SUSPENDED, |j, _| {
            j.spec.as_mut().expect("spec").suspend = Some(true)
        }),
        case(
            "a Job without an owner",
            Operation::Observe,
            Env,
            OWNER,
            |j, _| j.metadata.owner_references = None,
        ),
        case(
            "another image in the main container",
            Operation::Apply,
            Env,
            IMAGES,
            |j, _| container(j, "ptah").image = Some(format!("evil.example/tool@sha256:{}", "e".repeat(64))),
        ),
        case(
            "a mounted ServiceAccount token",
            Operation::Plan,
            Docker,
            TOKEN,
            |j, _| spec(j).automount_service_account_token = Some(true),
        ),
        case(
            "the manager's own ServiceAccount",
            Operation::Observe,
            Env,
            TOKEN,
            |j, cx| spec(j).service_account_name = Some(cx.manager_sa.clone()),
        ),
        case(
            "envFrom a whole Secret",
            Operation::Observe,
            Env,
            ENV_FROM,
            |j, _| {
                container(j, "ptah").env_from = Some(vec![EnvFromSource {
                    secret_ref: Some(SecretEnvSource {
                        name: "kube-secrets".to_owned(),
                        optional: None,
                    }),
                    ..EnvFromSource::default()
                }])
            },
        ),
        case("a hostPath volume", Operation::Verify, Docker, VOLUMES, |j, _| {
            spec(j).volumes.get_or_insert_with(Vec::new).push(Volume {
                name: "host".to_owned(),
                host_path: Some(HostPathVolumeSource {
                    path: "/etc".to_owned(),
                    type_: None,
                }),
                ..Volume::default()
            })
        }),
        case(
            "a variable from the downward API",
            Operation::Observe,
            Env,
            VALUE_FROM,
            |j, _| {
                env_mut(j, "ptah").push(EnvVar {
                    name: "PTAH_NODE".to_owned(),
                    value: None,
                    value_from: Some(EnvVarSource {
                        field_ref: Some(ObjectFieldSelector {
                            field_path: "spec.nodeName".to_owned(),
                            api_version: None,
                        }),
                        ..EnvVarSource::default()
                    }),
                })
            },
        ),
        case(
            "the database URL in a fetch container",
            Operation::Plan,
            Docker,
            SECRETS_REACH,
            |j, _| env_mut(j, "fetch-schema").push(secret_env("PTAH_DB_URL", "orders-db", "url")),
        ),
        case(
            "another Secret key in the main container",
            Operation::Apply,
            Env,
            SECRETS_REACH,
            |j, _| env_mut(j, "ptah").push(secret_env("STOLEN", "other-team-db", "url")),
        ),
        case(
            "registry credentials beside the grant of another Secret, owner unknown",
            Operation::Resolve,
            Env,
            ONE_SECRET,
            |j, _| {
                ghost_owner(j);
                env_mut(j, "ptah").push(secret_env("PTAH_REGISTRY_GRANT", "attacker-grants", "registry"));
            },
        ),
        case(
            "a grant the Job writes itself",
            Operation::Resolve,
            Env,
            GRANT_FROM_SECRET,
            |j, _| {
                let grant = env_mut(j, "ptah")
                    .iter_mut()
                    .find(|e| e.name == "PTAH_REGISTRY_GRANT")
                    .expect("the registry grant variable");
                grant.value_from = None;
                grant.value = Some("attacker.example".to_owned());
            },
        ),
        case(
            "registry credentials without the grant check",
            Operation::Resolve,
            Env,
            GRANT_MODE,
            |j, _| env_mut(j, "ptah").retain(|e| e.name != "PTAH_REGISTRY_GRANT_MODE"),
        ),
        case(
            "a Docker config checked as variables",
            Operation::Plan,
            Docker,
            GRANT_MODE,
            |j, _| {
                for e in env_mut(j, "fetch-schema")
                    .iter_mut()
                    .filter(|e| e.name == "PTAH_REGISTRY_GRANT_MODE")
                {
                    e.value = Some("environment".to_owned());
                }
            },
        ),
        case(
            "a proxy variable",
            Operation::Resolve,
            Env,
            PLAIN_NAMES,
            |j, _| {
                env_mut(j, "ptah").push(EnvVar {
                    name: "HTTPS_PROXY".to_owned(),
                    value: Some("http://attacker.example:3128".to_owned()),
                    value_from: None,
                })
            },
        ),
        case("the shell command", Operation::Resolve, Env, COMMANDS, |j, _| {
            let c = container(j, "ptah");
            c.command = Some(
                ["/bin/sh", "-c", "echo $PTAH_REGISTRY_PASSWORD"]
                    .map(str::to_owned)
                    .to_vec(),
            );
            c.args = None;
        }),
        case(
            "another operation in the runner's arguments",
            Operation::Observe,
            Env,
            COMMANDS,
            |j, _| {
                let args = container(j, "ptah").args.as_mut().expect("args");
                args[1] = "resolve".to_owned();
            },
        ),
        case(
            "a fetch that pushes",
            Operation::Plan,
            Docker,
            COMMANDS,
            |j, _| {
                let args = container(j, "fetch-schema").args.as_mut().expect("args");
                args[1] = "push".to_owned();
            },
        ),
        case(
            "a postStart hook",
            Operation::MigrationHistory,
            Env,
            COMMANDS,
            |j, _| {
                container(j, "ptah").lifecycle = Some(Lifecycle {
                    post_start: Some(LifecycleHandler {
                        exec: Some(ExecAction {
                            command: Some(vec!["/usr/local/bin/ptah".to_owned()]),
                        }),
                        ..LifecycleHandler::default()
                    }),
                    ..Lifecycle::default()
                })
            },
        ),
        case(
            "the registry Docker config mounted beside the database URL",
            Operation::Plan,
            Docker,
            DOCKER_MOUNT,
            |j, _| {
                // With the grant check on, so only the mount rule can tell.
                env_mut(j, "ptah").push(EnvVar {
                    name: "PTAH_REGISTRY_GRANT_MODE".to_owned(),
                    value: Some("docker-config".to_owned()),
                    value_from: None,
                });
                container(j, "ptah")
                    .volume_mounts
                    .get_or_insert_with(Vec::new)
                    .push(VolumeMount {
                        name: "registry-docker-config".to_owned(),
                        mount_path: "/registry".to_owned(),
                        read_only: Some(true),
                        ..VolumeMount::default()
                    })
            },
        ),
        case("the host network", Operation::Resolve, Anon, HOST, |j, _| {
            spec(j).host_network = Some(true)
        }),
        case(
            "an added capability",
            Operation::MigrationApply,
            Docker,
            RESTRICTED,
            |j, _| {
                let sc = container(j, "ptah")
                    .security_context
                    .get_or_insert_with(Default::default);
                sc.capabilities = Some(Capabilities {
                    add: Some(vec!["NET_ADMIN".to_owned()]),
                    drop: Some(vec!["ALL".to_owned()]),
                });
            },
        ),
        // Refused by three rules at once: no volume but the Docker config may be a Secret, the
        // registry Secret is the only one a registry container's Pod mounts, and the owner's spec
        // names no such Secret.
        Case {
            what: "another Secret as a volume",
            op: Operation::Observe,
            family: Family::Schema,
            auth: Env,
            rules: vec![
                (Policy::Jobs, VOLUMES),
                (Policy::Jobs, ONE_SECRET),
                (Policy::SchemaSecrets, DOCKER_CONFIG),
            ],
            edit: |j, _| {
                spec(j).volumes.get_or_insert_with(Vec::new).push(Volume {
                    name: "stolen".to_owned(),
                    secret: Some(SecretVolumeSource {
                        secret_name: Some("other-team-db".to_owned()),
                        ..SecretVolumeSource::default()
                    }),
                    ..Volume::default()
                })
            },
        },
    ]
}
