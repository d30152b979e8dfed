//! Reading a Job's Pods: whether the one Pod has ended or is stuck, and once the operation has
//! finished its result: exactly one Pod of that Job, its log, the last valid frame, or the
//! termination message of the init container that stopped it before its main container started.

use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api, Client,
    api::{ListParams, LogParams},
};
use ptah_dataplane::{
    ParsedFrame,
    frame::{LOG_TAIL_BYTES, LOG_TAIL_LINES},
    parse_last_frame,
};

use crate::operation::{Finished, InitFailure, ResultRead, Stuck};

/// Reads the result of the Job `job_name` (UID `job_uid`) in `namespace`.
pub async fn read(client: &Client, namespace: &str, job_name: &str, job_uid: &str) -> ResultRead {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let list = match pods
        .list(&ListParams::default().labels(&format!("batch.kubernetes.io/controller-uid={job_uid}")))
        .await
    {
        Ok(l) => l,
        Err(e) => return ResultRead::Unavailable(format!("listing the Pods of {job_name}: {e}")),
    };
    let owned: Vec<&Pod> = list.items.iter().filter(|p| owned_by(p, job_uid)).collect();
    let [pod] = owned.as_slice() else {
        return ResultRead::PodCount(owned.len());
    };
    let Some(name) = pod.metadata.name.as_deref() else {
        return ResultRead::PodCount(0);
    };
    // The main container never started, so it has no log and wrote no frame: the refusal is in
    // the init container's termination message, on the Pod's status.
    if let Some(failure) = init_failure(pod) {
        return ResultRead::InitFailed(failure);
    }
    let log = match pods.logs(name, &log_params()).await {
        Ok(l) => l,
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 400 => {
            return ResultRead::NoFrame(format!("the log of Pod {name} is gone ({})", s.code));
        }
        Err(e) => return ResultRead::Unavailable(format!("reading the log of Pod {name}: {e}")),
    };
    match parse_last_frame(log.as_bytes()) {
        Ok(ParsedFrame { payload, .. }) => ResultRead::Frame(Box::new(payload)),
        Err(e) => ResultRead::NoFrame(e.to_string()),
    }
}

/// For a Job whose runner delivered nothing: the init container that stopped its one Pod before
/// the runner started, when one did, or why the Pods could not be read.
pub async fn init_failure_of(
    client: &Client,
    namespace: &str,
    job_name: &str,
    job_uid: &str,
) -> Option<ResultRead> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let list = match pods
        .list(&ListParams::default().labels(&format!("batch.kubernetes.io/controller-uid={job_uid}")))
        .await
    {
        Ok(l) => l,
        Err(e) => {
            return Some(ResultRead::Unavailable(format!(
                "listing the Pods of {job_name}: {e}"
            )));
        }
    };
    let owned: Vec<&Pod> = list.items.iter().filter(|p| owned_by(p, job_uid)).collect();
    match owned.as_slice() {
        [pod] => init_failure(pod).map(ResultRead::InitFailed),
        _ => None,
    }
}

/// What to read of the runner's container log: its tail, where the frame is. The kubelet takes
/// the last `tailLines` first and then the first `limitBytes` of those; the runner keeps all it
/// writes within both, so the tail holds the whole frame.
fn log_params() -> LogParams {
    LogParams {
        container: Some(ptah_workload::containers::MAIN_CONTAINER.into()),
        tail_lines: Some(LOG_TAIL_LINES as i64),
        limit_bytes: Some(LOG_TAIL_BYTES as i64),
        ..LogParams::default()
    }
}

/// Waiting reasons that do not resolve by themselves: the Pod will not start until someone acts.
const STUCK: &[&str] = &[
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
];

/// What the Pods of a Job without a terminal condition show.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// The Job's one Pod has ended (see [`ended`]). With `backoffLimit: 0` and `restartPolicy:
    /// Never` no other Pod follows, so its result may be read without waiting for the kubelet's
    /// terminal phase and the Job controller's condition (about 2.5 s per Job here).
    pub ended: Option<Finished>,
    /// Why the Pod cannot start (a missing Secret key, an image that cannot be pulled).
    pub stuck: Option<Stuck>,
}

/// The progress of the Job `job_uid` in `namespace`; nothing is known while its Pods cannot be
/// listed.
pub async fn progress(client: &Client, namespace: &str, job_uid: &str) -> Progress {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    match pods
        .list(&ListParams::default().labels(&format!("batch.kubernetes.io/controller-uid={job_uid}")))
        .await
    {
        Ok(list) => progress_of(&list.items, job_uid),
        Err(_) => Progress::default(),
    }
}

/// The progress shown by `pods`, of which only those the Job `job_uid` controls count.
fn progress_of(pods: &[Pod], job_uid: &str) -> Progress {
    let owned: Vec<&Pod> = pods.iter().filter(|p| owned_by(p, job_uid)).collect();
    let ended = match owned.as_slice() {
        [pod] => ended(pod),
        _ => None,
    };
    Progress {
        ended,
        stuck: owned.iter().find_map(|pod| stuck(pod)),
    }
}

/// How far `pod` has ended: its terminal phase, or before the kubelet reports that (it first tears
/// down the sandbox, seconds here) its main container having exited, or an init container having
/// failed (with `restartPolicy: Never` the main container then never starts). Its init containers
/// ran before the main one and no container restarts, so nothing of the operation runs any more.
pub fn ended(pod: &Pod) -> Option<Finished> {
    let status = pod.status.as_ref()?;
    match status.phase.as_deref() {
        Some("Succeeded") => return Some(Finished::Succeeded),
        Some("Failed") => return Some(Finished::Failed),
        _ => {}
    }
    if init_failure(pod).is_some() {
        return Some(Finished::Failed);
    }
    let main = main_status(pod)?;
    main.state.as_ref()?.terminated.as_ref().map(|_| Finished::Exited)
}

fn main_status(pod: &Pod) -> Option<&k8s_openapi::api::core::v1::ContainerStatus> {
    pod.status
        .as_ref()?
        .container_statuses
        .iter()
        .flatten()
        .find(|c| c.name == ptah_workload::containers::MAIN_CONTAINER)
}

/// The init container of `pod` that exited non-zero, with its termination message, while the main
/// container shows no sign of having run (never running, never terminated).
fn init_failure(pod: &Pod) -> Option<InitFailure> {
    let status = pod.status.as_ref()?;
    let (container, terminated) = status.init_container_statuses.iter().flatten().find_map(|cs| {
        let t = cs.state.as_ref()?.terminated.as_ref()?;
        (t.exit_code != 0).then_some((cs.name.clone(), t))
    })?;
    let main_ran = main_status(pod).is_some_and(|m| {
        m.started == Some(true)
            || m.last_state.as_ref().is_some_and(|l| l.terminated.is_some())
            || m.state
                .as_ref()
                .is_some_and(|st| st.running.is_some() || st.terminated.is_some())
    });
    (!main_ran).then(|| InitFailure {
        container,
        exit_code: terminated.exit_code,
        message: terminated.message.clone(),
    })
}

/// True when `pod` is controlled by the Job `job_uid` (a label can be forged; the owner UID
/// cannot).
fn owned_by(pod: &Pod, job_uid: &str) -> bool {
    pod.metadata
        .owner_references
        .as_ref()
        .is_some_and(|o| o.iter().any(|r| r.uid == job_uid && r.controller == Some(true)))
}

/// True when `pod`'s change is worth a pass over its resource: it ended, or it cannot start.
/// Pods starting or running normally are left alone.
pub fn wakes_owner(pod: &Pod) -> bool {
    ended(pod).is_some() || stuck(pod).is_some()
}

/// Why `pod` cannot start, when one of its containers waits on something that will not come by
/// itself (an image that cannot be pulled, a missing Secret key).
fn stuck(pod: &Pod) -> Option<Stuck> {
    let status = pod.status.as_ref()?;
    let all = status
        .init_container_statuses
        .iter()
        .flatten()
        .chain(status.container_statuses.iter().flatten());
    all.filter_map(|cs| {
        let waiting = cs.state.as_ref()?.waiting.as_ref()?;
        let reason = waiting.reason.as_deref()?;
        STUCK.contains(&reason).then(|| Stuck {
            pod: pod.metadata.name.clone().unwrap_or_else(|| "?".to_owned()),
            container: cs.name.clone(),
            reason: reason.to_owned(),
            message: waiting.message.clone().unwrap_or_default(),
        })
    })
    .next()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kubelet takes `tailLines` first, then the first `limitBytes` of those: the frame, at the
    /// end of the log, is in the tail the runner bounds.
    #[test]
    fn the_log_is_read_from_its_tail() {
        let p = log_params();
        assert_eq!(
            p.container.as_deref(),
            Some(ptah_workload::containers::MAIN_CONTAINER)
        );
        assert_eq!(p.tail_lines, Some(LOG_TAIL_LINES as i64));
        assert_eq!(p.limit_bytes, Some(LOG_TAIL_BYTES as i64));
    }

    fn pod(owner_uid: &str, phase: &str) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "ownerReferences": [{
                "apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": owner_uid,
                "controller": true}]},
            "status": {"phase": phase},
        }))
        .expect("a Pod")
    }

    fn exited(mut p: Pod, container: &str) -> Pod {
        p.status = Some(
            serde_json::from_value(serde_json::json!({"phase": "Running", "containerStatuses": [{
                "name": container, "image": "i", "imageID": "", "ready": false,
                "restartCount": 0, "state": {"terminated": {"exitCode": 0}}}]}))
            .expect("a status"),
        );
        p
    }

    #[test]
    fn only_an_ended_or_stuck_pod_wakes_its_resource() {
        assert!(!wakes_owner(&pod("uid-1", "Pending")));
        assert!(!wakes_owner(&pod("uid-1", "Running")));
        assert!(!wakes_owner(&exited(pod("uid-1", "Running"), "fetch-schema")));
        assert!(wakes_owner(&exited(pod("uid-1", "Running"), "ptah")));
        assert!(wakes_owner(&pod("uid-1", "Failed")));
    }

    /// Only the one Pod the Job controls, once in a terminal phase, ends the operation early.
    #[test]
    fn the_one_owned_pod_ending_finishes_the_job() {
        let ended = |pods: &[Pod]| progress_of(pods, "uid-1").ended;
        assert_eq!(ended(&[pod("uid-1", "Succeeded")]), Some(Finished::Succeeded));
        assert_eq!(ended(&[pod("uid-1", "Failed")]), Some(Finished::Failed));
        assert_eq!(ended(&[pod("uid-1", "Running")]), None);
        assert_eq!(
            ended(&[exited(pod("uid-1", "Running"), "ptah")]),
            Some(Finished::Exited)
        );
        // Only the main container's exit counts (an init container's leaves the main to run).
        assert_eq!(ended(&[exited(pod("uid-1", "Running"), "fetch-schema")]), None);
        assert_eq!(ended(&[pod("uid-1", "Pending")]), None);
        assert_eq!(ended(&[]), None);
        // A Pod another Job (or nobody) controls carries the label but not the owner UID.
        assert_eq!(ended(&[pod("uid-2", "Succeeded")]), None);
        // Two Pods for one operation: nothing is attributed until the Job controller decides.
        assert_eq!(ended(&[pod("uid-1", "Succeeded"), pod("uid-1", "Failed")]), None);
        assert_eq!(
            ended(&[pod("uid-1", "Succeeded"), pod("uid-2", "Running")]),
            Some(Finished::Succeeded)
        );
    }

    #[test]
    fn a_pod_waiting_on_a_missing_image_is_stuck() {
        let mut p = pod("uid-1", "Pending");
        p.status = Some(
            serde_json::from_value(serde_json::json!({"phase": "Pending", "containerStatuses": [{
                "name": "ptah", "image": "i", "imageID": "", "ready": false, "restartCount": 0,
                "state": {"waiting": {"reason": "ImagePullBackOff", "message": "not found"}}}]}))
            .expect("a status"),
        );
        assert!(wakes_owner(&p), "a Pod that cannot start wakes its resource");
        let seen = progress_of(&[p], "uid-1");
        assert_eq!(seen.ended, None);
        assert_eq!(
            seen.stuck.map(|s| s.to_string()).as_deref(),
            Some("Pod p container ptah: ImagePullBackOff: not found")
        );
    }

    fn init_failed(message: Option<&str>, main: serde_json::Value) -> Pod {
        let mut p = pod("uid-1", "Pending");
        p.status = Some(
            serde_json::from_value(serde_json::json!({"phase": "Pending",
                "initContainerStatuses": [{
                    "name": "fetch-schema", "image": "i", "imageID": "", "ready": false,
                    "restartCount": 0, "state": {"terminated": {"exitCode": 1, "message": message}}}],
                "containerStatuses": [main]}))
            .expect("a status"),
        );
        p
    }

    fn main_state(state: serde_json::Value) -> serde_json::Value {
        serde_json::json!({"name": "ptah", "image": "i", "imageID": "", "ready": false,
            "restartCount": 0, "state": state})
    }

    /// A failed fetch init container ends the operation at once, before the kubelet marks the
    /// Pod Failed, and its termination message is the result: no log is read.
    #[test]
    fn a_failed_init_container_ends_the_pod_with_its_message() {
        let line = "{\"code\":\"unsafe_path\",\"message\":\"unsafe path\"}\n";
        let p = init_failed(
            Some(line),
            main_state(serde_json::json!({"waiting": {"reason": "PodInitializing"}})),
        );
        assert!(wakes_owner(&p));
        assert_eq!(
            progress_of(std::slice::from_ref(&p), "uid-1").ended,
            Some(Finished::Failed)
        );
        assert_eq!(
            init_failure(&p),
            Some(InitFailure {
                container: "fetch-schema".into(),
                exit_code: 1,
                message: Some(line.into()),
            })
        );
        // Without a message the exit code is still reported.
        let bare = init_failed(None, main_state(serde_json::json!({"waiting": {}})));
        assert_eq!(init_failure(&bare).map(|f| f.message), Some(None));
    }

    /// A main container that ran is never reported as stopped by its init container.
    #[test]
    fn a_main_container_that_ran_is_not_an_init_failure() {
        for state in [
            serde_json::json!({"running": {}}),
            serde_json::json!({"terminated": {"exitCode": 0}}),
        ] {
            assert_eq!(init_failure(&init_failed(Some("x"), main_state(state))), None);
        }
    }
}
