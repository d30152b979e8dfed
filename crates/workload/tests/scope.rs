//! The planning scope reaches only the Plan Job, encoded as the runner reads it; the Docker
//! config reaches registry containers as `DOCKER_CONFIG`, never by moving `HOME`.

mod common;

use common::{ALL_OPS, access_variants, docker_auth, intent, intent_with};
use k8s_openapi::api::core::v1::Container;
use ptah_dataplane::{
    Operation, env,
    scope::{self, ScopeError},
};
use ptah_workload::{OperationInputs, WorkloadError, build, containers::MAIN_CONTAINER, volumes};

fn containers(op: Operation, access: ptah_workload::SourceAccess) -> Vec<Container> {
    let job = build(&intent_with(op, access)).expect("builds");
    let pod = job.spec.and_then(|s| s.template.spec).expect("pod spec");
    pod.init_containers
        .into_iter()
        .flatten()
        .chain(pod.containers)
        .collect()
}

fn value<'a>(c: &'a Container, name: &str) -> Option<&'a str> {
    c.env
        .iter()
        .flatten()
        .find(|e| e.name == name)
        .and_then(|e| e.value.as_deref())
}

fn main(op: Operation) -> Container {
    let job = build(&intent(op)).expect("builds");
    let pod = job.spec.and_then(|s| s.template.spec).expect("pod spec");
    pod.containers
        .into_iter()
        .find(|c| c.name == MAIN_CONTAINER)
        .expect("main")
}

#[test]
fn only_the_plan_gets_the_scope_and_the_runner_can_read_it_back() {
    let db = common::db();
    for op in ALL_OPS {
        let main = main(op);
        let (exclude, protected) = (value(&main, env::EXCLUDE), value(&main, env::PROTECTED_TABLES));
        if op == Operation::Plan {
            let exclude = scope::parse_exclude(exclude.expect("set")).expect("valid");
            let protected = scope::parse_protected_tables(protected.expect("set")).expect("valid");
            assert_eq!(
                (exclude, protected),
                (db.exclude.clone(), db.protected_tables.clone())
            );
        } else {
            // Observe reads raw drift; Apply takes the scope recorded in its plan.
            assert_eq!((exclude, protected), (None, None), "{op}");
        }
    }
}

#[test]
fn an_empty_scope_is_omitted() {
    let mut i = intent(Operation::Plan);
    if let OperationInputs::Plan { db, .. } = &mut i.inputs {
        db.exclude.clear();
        db.protected_tables.clear();
    }
    let job = serde_json::to_string(&build(&i).expect("builds")).expect("json");
    assert!(!job.contains(env::EXCLUDE) && !job.contains(env::PROTECTED_TABLES));
}

/// Changes the exclude and protected-table lists of an intent.
type Edit = fn(&mut Vec<String>, &mut Vec<String>);

#[test]
fn a_scope_the_runner_would_refuse_is_refused_before_a_job_exists() {
    let cases: [(Edit, WorkloadError); 3] = [
        (
            |e, _| e.push("a,b".to_owned()),
            WorkloadError::InvalidScope {
                field: "db.exclude",
                reason: ScopeError::Comma { index: 2 },
            },
        ),
        (
            |_, p| p.push("a.b.c".to_owned()),
            WorkloadError::InvalidScope {
                field: "db.protected_tables",
                reason: ScopeError::NotATableName { index: 2 },
            },
        ),
        (
            |e, _| e.extend(vec!["t".to_owned(); 127]),
            WorkloadError::InvalidScope {
                field: "db.exclude",
                reason: ScopeError::TooMany { got: 129 },
            },
        ),
    ];
    for (edit, want) in cases {
        let mut i = intent(Operation::Plan);
        if let OperationInputs::Plan { db, .. } = &mut i.inputs {
            edit(&mut db.exclude, &mut db.protected_tables);
        }
        assert_eq!(build(&i), Err(want));
    }
}

#[test]
fn a_docker_config_is_named_by_docker_config_and_home_stays_the_work_directory() {
    for op in ALL_OPS {
        for access in access_variants() {
            let docker = access.registry_auth == Some(docker_auth());
            for c in containers(op, access) {
                let mounted = c
                    .volume_mounts
                    .iter()
                    .flatten()
                    .any(|m| m.name == volumes::DOCKER_CONFIG_VOLUME);
                let named = value(&c, env::DOCKER_CONFIG);
                assert_eq!(named.is_some(), mounted, "{op} {}", c.name);
                if mounted {
                    assert!(docker, "{op} {}", c.name);
                    assert_eq!(named, Some(volumes::DOCKER_CONFIG_DIR), "{op} {}", c.name);
                }
                if c.name == MAIN_CONTAINER {
                    assert_eq!(value(&c, env::HOME), Some(volumes::WORK_DIR), "{op}");
                }
            }
        }
    }
}
