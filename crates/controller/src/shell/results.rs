//! Reading a finished Job's result: exactly one Pod of that Job, its log, the last valid frame.

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

use crate::operation::ResultRead;

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
    // Only Pods this exact Job owns count (a label can be forged; the owner UID cannot).
    let owned: Vec<&Pod> = list
        .items
        .iter()
        .filter(|p| {
            p.metadata
                .owner_references
                .as_ref()
                .is_some_and(|o| o.iter().any(|r| r.uid == job_uid && r.controller == Some(true)))
        })
        .collect();
    let [pod] = owned.as_slice() else {
        return ResultRead::PodCount(owned.len());
    };
    let Some(name) = pod.metadata.name.as_deref() else {
        return ResultRead::PodCount(0);
    };
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

/// What to read of the runner's container log: its tail, where the frame is. The kubelet takes
/// the last `tailLines` first and then the first `limitBytes` of those; the runner keeps all it
/// writes within both, so the tail holds the whole frame.
fn log_params() -> LogParams {
    LogParams {
        container: Some("ptah".into()),
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

/// Why the Job's Pod cannot start (a missing Secret key, an image that cannot be pulled), if it
/// is stuck; `None` while it progresses or cannot be read.
pub async fn stuck(client: &Client, namespace: &str, job_uid: &str) -> Option<String> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let list = pods
        .list(&ListParams::default().labels(&format!("batch.kubernetes.io/controller-uid={job_uid}")))
        .await
        .ok()?;
    list.items.iter().find_map(|pod| {
        let status = pod.status.as_ref()?;
        let all = status
            .init_container_statuses
            .iter()
            .flatten()
            .chain(status.container_statuses.iter().flatten());
        all.filter_map(|cs| {
            let waiting = cs.state.as_ref()?.waiting.as_ref()?;
            let reason = waiting.reason.as_deref()?;
            STUCK.contains(&reason).then(|| {
                format!(
                    "Pod {} container {}: {reason}: {}",
                    pod.metadata.name.as_deref().unwrap_or("?"),
                    cs.name,
                    waiting.message.as_deref().unwrap_or("")
                )
            })
        })
        .next()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kubelet takes `tailLines` first, then the first `limitBytes` of those: the frame, at the
    /// end of the log, is in the tail the runner bounds.
    #[test]
    fn the_log_is_read_from_its_tail() {
        let p = log_params();
        assert_eq!(p.container.as_deref(), Some("ptah"));
        assert_eq!(p.tail_lines, Some(LOG_TAIL_LINES as i64));
        assert_eq!(p.limit_bytes, Some(LOG_TAIL_BYTES as i64));
    }
}
