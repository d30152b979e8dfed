//! Scenario 5: the Apply is stopped from outside while it runs, and the result says so.
//!
//! - [job-deadline] `spec.execution.activeDeadlineSeconds` passes mid-Apply. The runner's own
//!   execution deadline (the claim's `executionNotAfter`; the Job's `activeDeadlineSeconds` leaves
//!   the runner its grace past it) fires first: it sends `ptah` SIGTERM and gives it two thirds of
//!   the grace period, then writes the frame: `execution_deadline_expired`, uncertain.
//! - [runner-termination] SIGTERM reaches the runner itself, the Pod left in place (as a
//!   container runtime stops a container): the frame says `terminated`, uncertain.
//!
//! Either way the manager settles the uncertain Apply by a read-only proof, never by replaying
//! it; the approval is consumed and the plan waits for a new one. "Mid-Apply" is made certain as
//! in scenario 4: an outside session holds the advisory lock, so `ptah` waits on the server (seen
//! there) when it is stopped, and nothing of the plan can have run.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::{Api, ResourceExt};
use serde_json::json;

use crate::{
    dataplane::{
        by_hand::said,
        database::{LockHolder, expect_tables},
        setup::{Run, STEP, approval_name},
    },
    lifecycle::app::{Engine, approve},
};

const BOUND: Duration = Duration::from_secs(480);

/// How the Apply is stopped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The execution deadline passes.
    Deadline,
    /// The runner receives SIGTERM.
    Sigterm,
}

/// The host pid of the runner in `pod`: the node's containers are processes of this host (both
/// kubelets run here), found by the Pod's cgroup (`cgroupDriver: cgroupfs`, `…/pod<uid>/…`).
fn runner_pid(pod: &Pod) -> Option<i32> {
    let uid = pod.uid()?;
    let needle = format!("pod{uid}");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|entry| {
        let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
        let cgroup = std::fs::read_to_string(entry.path().join("cgroup")).ok()?;
        let comm = std::fs::read_to_string(entry.path().join("comm")).ok()?;
        (cgroup.contains(&needle) && comm.trim() == "ptah-runner").then_some(pid)
    })
}

/// The Apply Pod's container once it has terminated, by name.
async fn terminated(run: &Run, name: &str) -> k8s_openapi::api::core::v1::ContainerStateTerminated {
    let pods: Api<Pod> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    let deadline = Instant::now() + STEP;
    loop {
        let pod = pods
            .get(name)
            .await
            .expect("the Apply Pod stays until it is read");
        let done = pod
            .status
            .and_then(|s| s.container_statuses)
            .unwrap_or_default()
            .into_iter()
            .find_map(|c| c.state.and_then(|s| s.terminated));
        if let Some(t) = done {
            return t;
        }
        assert!(Instant::now() < deadline, "the Apply Pod never ended");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn stopped_mid_apply(name: &'static str, engine: Engine, stop: Stop) {
    // The lock wait may not exceed the deadline (a CEL rule), but it starts with `ptah`, seconds
    // after the claim the runner's deadline counts from: so the deadline passes first. For
    // SIGTERM both are further away, so that only the signal ends the wait.
    let (lock_seconds, deadline_seconds) = match stop {
        Stop::Deadline => (45, 45),
        Stop::Sigterm => (75, 75),
    };
    let run = Run::start(
        name,
        engine,
        json!({"policy": {"lockTimeout": format!("{lock_seconds}s")},
               "execution": {"activeDeadlineSeconds": deadline_seconds}}),
    )
    .await;
    let first = run.awaiting(None).await;
    let mut holder = LockHolder::take(engine, &run.app.host_url).await;
    let ours = holder.session_id().await;
    approve(&run.app.client, &run.app.ns, &first).await;
    let pod = run.running_apply_pod().await;
    let until = Instant::now() + STEP;
    while holder.other_sessions().await == 0 {
        assert!(Instant::now() < until, "the Apply never reached the database");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let claim = run
        .app
        .schemas
        .get("orders")
        .await
        .expect("orders")
        .status
        .and_then(|s| s.active_operation)
        .expect("the Apply's claim");
    let grace = claim.termination_grace_period_seconds.expect("a grace period");
    let deadline = claim.execution_not_after.expect("an execution deadline").0;
    // When the runner is to stop `ptah`: the execution deadline, or the signal now.
    let stop_at = match stop {
        Stop::Deadline => deadline,
        Stop::Sigterm => {
            let pid = runner_pid(&pod).expect("the runner's process on this host");
            let at = jiff::Timestamp::now();
            let sent = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status()
                .expect("run kill");
            assert!(sent.success(), "SIGTERM to the runner ({pid})");
            at
        }
    };
    let ended = terminated(&run, &pod.name_any()).await;
    let frames = run.apply_pod_logs().await;
    // The frame says what happened, and that `ptah` stopped within its two thirds of the grace
    // period (SIGTERM sufficed, no SIGKILL), leaving the last third for the frame.
    let (code, why) = match stop {
        Stop::Deadline => ("execution_deadline_expired", "the execution deadline passed"),
        Stop::Sigterm => ("terminated", "the runner was asked to terminate"),
    };
    assert!(
        frames.contains(&format!("\"code\":\"{code}\""))
            && frames.contains(&format!("{why}; ptah was stopped with SIGTERM")),
        "the frame says {code}: {frames}\n{}",
        run.apply_pod_summaries().await
    );
    assert!(
        frames.contains("\"uncertain\":true"),
        "a stopped Apply is uncertain: {frames}"
    );
    let finished = ended.finished_at.expect("a finish time").0;
    let took = finished.duration_since(stop_at).as_secs_f64();
    eprintln!("{name}: the runner ended {took:.1} s after the stop (grace {grace} s)");
    assert!(
        took <= grace as f64,
        "the runner ended {took:.1} s after the stop, past the grace period of {grace} s"
    );

    // Uncertain: a read-only proof finds nothing applied, the plan waits for a new approval, and
    // the consumed one is never dispatched again.
    let settled = run.awaiting(None).await;
    if stop == Stop::Sigterm {
        // The frame says `ptah` has exited, so the proof need not wait out the deadline.
        let proved = jiff::Timestamp::now();
        assert!(
            proved < deadline,
            "proved at {proved}, not before the execution deadline {deadline}"
        );
    }
    assert!(
        run.approval_consumed(&approval_name(&first)).await,
        "the approval is consumed by the one dispatch: {}",
        said(&settled)
    );
    assert_eq!(
        holder.owner().await,
        Some(ours),
        "the outside session owned the lock throughout"
    );
    let database = expect_tables(engine, &run.app.host_url, &[]).await;
    holder.release().await;
    run.conclude(&[1], database, BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_job_deadline_mid_apply_is_reported_and_proved_never_replayed_postgresql() {
    stopped_mid_apply(
        "e2e_dataplane_job_deadline_mid_apply_is_reported_and_proved_never_replayed_postgresql",
        Engine::Postgres,
        Stop::Deadline,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_job_deadline_mid_apply_is_reported_and_proved_never_replayed_mysql() {
    stopped_mid_apply(
        "e2e_dataplane_job_deadline_mid_apply_is_reported_and_proved_never_replayed_mysql",
        Engine::Mariadb,
        Stop::Deadline,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_runner_sigterm_mid_apply_is_reported_and_proved_never_replayed_postgresql() {
    stopped_mid_apply(
        "e2e_dataplane_runner_sigterm_mid_apply_is_reported_and_proved_never_replayed_postgresql",
        Engine::Postgres,
        Stop::Sigterm,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_runner_sigterm_mid_apply_is_reported_and_proved_never_replayed_mysql() {
    stopped_mid_apply(
        "e2e_dataplane_runner_sigterm_mid_apply_is_reported_and_proved_never_replayed_mysql",
        Engine::Mariadb,
        Stop::Sigterm,
    )
    .await;
}
