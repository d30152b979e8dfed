//! `spec.target.caFrom` reaches only the main container of a database operation, as a read-only
//! file named by `PTAH_DB_CA_FILE`; without it nothing of the kind is in the Job.

mod common;

use common::{ALL_OPS, intent};
use ptah_api::shared::ConfigMapKeySelector;
use ptah_dataplane::{Operation, env};
use ptah_workload::{OperationInputs, build, containers::MAIN_CONTAINER, volumes};

fn with_ca(op: Operation) -> ptah_workload::JobIntent {
    let mut i = intent(op);
    let ca = Some(ConfigMapKeySelector::new("orders-db-ca", "bundle.pem"));
    match &mut i.inputs {
        OperationInputs::Observe { db, .. }
        | OperationInputs::Plan { db, .. }
        | OperationInputs::Apply { db, .. }
        | OperationInputs::MigrationHistory { db, .. }
        | OperationInputs::MigrationApply { db, .. } => db.ca_from = ca,
        OperationInputs::Resolve { .. } | OperationInputs::Verify { .. } => {}
    }
    i
}

#[test]
fn the_database_ca_is_a_read_only_file_of_the_main_container_only() {
    let mut database_ops = 0;
    for op in ALL_OPS {
        let job = build(&with_ca(op)).expect("builds");
        let pod = job.spec.and_then(|s| s.template.spec).expect("pod spec");
        let volume = pod
            .volumes
            .iter()
            .flatten()
            .find(|v| v.name == volumes::DB_CA_VOLUME);
        if matches!(op, Operation::Resolve | Operation::Verify) {
            assert!(volume.is_none(), "{op}: a registry operation has no database");
            continue;
        }
        database_ops += 1;
        let source = volume
            .and_then(|v| v.config_map.as_ref())
            .unwrap_or_else(|| panic!("{op}: no database CA volume"));
        assert_eq!(source.name, "orders-db-ca");
        let items = source.items.as_deref().unwrap_or_default();
        assert_eq!(items.len(), 1);
        assert_eq!(
            (items[0].key.as_str(), items[0].path.as_str()),
            ("bundle.pem", "ca.pem")
        );
        assert_eq!(items[0].mode, Some(volumes::READ_ONLY_FILE_MODE));
        for c in pod.init_containers.iter().flatten().chain(&pod.containers) {
            let mount = c
                .volume_mounts
                .iter()
                .flatten()
                .find(|m| m.name == volumes::DB_CA_VOLUME);
            let var = c
                .env
                .iter()
                .flatten()
                .find(|e| e.name == env::DB_CA_FILE)
                .and_then(|e| e.value.as_deref());
            if c.name == MAIN_CONTAINER {
                let mount = mount.unwrap_or_else(|| panic!("{op}: main does not mount the CA"));
                assert_eq!(
                    (mount.mount_path.as_str(), mount.read_only),
                    (volumes::DB_CA_DIR, Some(true))
                );
                assert_eq!(var, Some(volumes::DB_CA_FILE), "{op}");
                assert!(volumes::DB_CA_FILE.starts_with(volumes::DB_CA_DIR));
            } else {
                assert!(
                    mount.is_none() && var.is_none(),
                    "{op}: {} gets the database CA",
                    c.name
                );
            }
        }
    }
    assert_eq!(database_ops, 5);
}

#[test]
fn without_ca_from_the_job_names_no_database_ca() {
    for op in ALL_OPS {
        let job = serde_json::to_string(&build(&intent(op)).expect("builds")).expect("json");
        assert!(
            !job.contains(env::DB_CA_FILE) && !job.contains(volumes::DB_CA_VOLUME),
            "{op}"
        );
    }
}
