//! Durable result delivery in the built Job: the runner (and only the runner) gets the ticket and
//! the result CA, learns its own Pod's name and UID from the downward API, and the Job says it
//! delivers durably so the manager never reads its log.

mod common;

use common::{ALL_OPS, intent};
use k8s_openapi::api::core::v1::{Container, PodSpec};
use ptah_dataplane::env;
use ptah_workload::{
    RESULT_DELIVERY_ANNOTATION, RESULT_DELIVERY_DURABLE, ResultDelivery, build,
    containers::MAIN_CONTAINER,
    volumes::{RESULT_CA_FILE, RESULT_TICKET_FILE, RESULT_VOLUME},
};

fn durable() -> ResultDelivery {
    ResultDelivery {
        config_map: "orders-plan-abc".to_owned(),
        endpoint: "10.96.0.20:8444".to_owned(),
        server_name: "ptah-operator-webhook.ptah-system.svc".to_owned(),
    }
}

fn pod(job: &k8s_openapi::api::batch::v1::Job) -> &PodSpec {
    job.spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .expect("a Pod")
}

fn value<'a>(c: &'a Container, name: &str) -> Option<&'a str> {
    c.env
        .iter()
        .flatten()
        .find(|e| e.name == name)
        .and_then(|e| e.value.as_deref())
}

#[test]
fn a_durable_job_wires_the_ticket_into_the_runner_only() {
    for op in ALL_OPS {
        let mut i = intent(op);
        i.result_delivery = Some(durable());
        let job = build(&i).expect("built");
        let annotations = job.metadata.annotations.clone().unwrap_or_default();
        assert_eq!(
            annotations.get(RESULT_DELIVERY_ANNOTATION).map(String::as_str),
            Some(RESULT_DELIVERY_DURABLE),
            "{op:?}"
        );
        let spec = pod(&job);
        let main = spec
            .containers
            .iter()
            .find(|c| c.name == MAIN_CONTAINER)
            .expect("main");
        assert_eq!(
            value(main, env::RESULT_DELIVERY),
            Some(env::RESULT_DELIVERY_DURABLE)
        );
        assert_eq!(value(main, env::RESULT_ENDPOINT), Some("10.96.0.20:8444"));
        assert_eq!(
            value(main, env::RESULT_SERVER_NAME),
            Some("ptah-operator-webhook.ptah-system.svc")
        );
        assert_eq!(value(main, env::RESULT_TICKET_FILE), Some(RESULT_TICKET_FILE));
        assert_eq!(value(main, env::RESULT_CA_FILE), Some(RESULT_CA_FILE));
        for (name, path) in [(env::POD_NAME, "metadata.name"), (env::POD_UID, "metadata.uid")] {
            let var = main.env.iter().flatten().find(|e| e.name == name).expect(name);
            let field = var
                .value_from
                .as_ref()
                .and_then(|f| f.field_ref.as_ref())
                .expect(name);
            assert_eq!(field.field_path, path);
        }
        let volume = spec
            .volumes
            .iter()
            .flatten()
            .find(|v| v.name == RESULT_VOLUME)
            .expect("the ticket volume");
        assert_eq!(
            volume.config_map.as_ref().map(|c| c.name.as_str()),
            Some("orders-plan-abc")
        );
        // Mounted into the runner's container and no other.
        let mounts = |c: &Container| c.volume_mounts.iter().flatten().any(|m| m.name == RESULT_VOLUME);
        assert!(mounts(main));
        assert!(!spec.init_containers.iter().flatten().any(mounts), "{op:?}");
    }
}

#[test]
fn a_job_without_durable_delivery_has_none_of_it() {
    for op in ALL_OPS {
        let job = build(&intent(op)).expect("built");
        let annotations = job.metadata.annotations.clone().unwrap_or_default();
        assert!(!annotations.contains_key(RESULT_DELIVERY_ANNOTATION));
        let spec = pod(&job);
        assert!(!spec.volumes.iter().flatten().any(|v| v.name == RESULT_VOLUME));
        let main = spec
            .containers
            .iter()
            .find(|c| c.name == MAIN_CONTAINER)
            .expect("main");
        assert_eq!(value(main, env::RESULT_DELIVERY), None);
    }
}

#[test]
fn a_durable_intent_without_an_endpoint_or_a_valid_ticket_name_is_refused() {
    let mut i = intent(ptah_dataplane::Operation::Plan);
    i.result_delivery = Some(ResultDelivery {
        endpoint: " ".to_owned(),
        ..durable()
    });
    assert!(build(&i).is_err(), "an empty endpoint");
    i.result_delivery = Some(ResultDelivery {
        config_map: "Not_A_Name".to_owned(),
        ..durable()
    });
    assert!(build(&i).is_err(), "a ticket ConfigMap name that is no DNS label");
}
