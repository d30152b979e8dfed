//! The run as the bench sees it happen: watches on the namespace's PtahSchemas, Jobs and Pods that
//! note the first moment each milestone shows. Object timestamps have whole seconds, and most
//! steps of an operation take less, so the breakdown is built from these instants instead.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex},
    time::Instant,
};

use futures_util::StreamExt;
use k8s_openapi::api::{batch::v1::Job, core::v1::Pod};
use kube::{
    Api, Client, ResourceExt,
    runtime::{WatchStreamExt, watcher},
};
use ptah_api::{
    PtahSchema,
    schema::{SchemaOperationType, SchemaPhase},
};

/// The main container of an operation Pod.
const MAIN: &str = ptah_workload::containers::MAIN_CONTAINER;

/// One operation as its claim named it.
#[derive(Clone, Debug)]
pub(super) struct Claimed {
    /// The PtahSchema.
    pub(super) schema: String,
    /// The Job's name.
    pub(super) job: String,
    /// The operation's kind, with ` (proof)` for the Observe and Plan an Apply owes.
    pub(super) kind: String,
}

/// First sightings, by object (`schema/NAME`, `job/NAME`, `pod/NAME`) and milestone.
#[derive(Default)]
struct Marks {
    seen: HashMap<String, BTreeMap<String, Instant>>,
    /// Claims in the order they appeared.
    claims: Vec<Claimed>,
    /// Each schema's claim at its last sighting.
    current: HashMap<String, Option<String>>,
    /// Each Pod's Job.
    pod_job: HashMap<String, String>,
}

impl Marks {
    fn mark(&mut self, object: &str, milestone: &str, at: Instant) {
        self.seen
            .entry(object.to_owned())
            .or_default()
            .entry(milestone.to_owned())
            .or_insert(at);
    }
}

/// The shared record the watches write into.
#[derive(Clone, Default)]
pub(super) struct Recorder(Arc<Mutex<Marks>>);

/// Whether a PtahSchema has converged: InSync, Ready, with an applied plan recorded (which only
/// a fresh Plan reporting no changes writes after an Apply).
pub(super) fn in_sync(s: &PtahSchema) -> bool {
    s.status.as_ref().is_some_and(|st| {
        st.phase == Some(SchemaPhase::InSync)
            && st.applied.is_some()
            && st
                .conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
    })
}

fn kind_name(t: SchemaOperationType, proof: bool) -> String {
    let base = match t {
        SchemaOperationType::Resolve => "Resolve",
        SchemaOperationType::Verify => "Verify",
        SchemaOperationType::Observe => "Observe",
        SchemaOperationType::Plan => "Plan",
        SchemaOperationType::Apply => "Apply",
    };
    if proof {
        format!("{base} (proof)")
    } else {
        base.to_owned()
    }
}

impl Recorder {
    fn with<T>(&self, f: impl FnOnce(&mut Marks) -> T) -> Option<T> {
        self.0.lock().ok().map(|mut m| f(&mut m))
    }

    fn schema(&self, s: &PtahSchema, at: Instant) {
        let name = s.name_any();
        let key = format!("schema/{name}");
        let status = s.status.as_ref();
        let claim = status.and_then(|st| st.active_operation.as_ref());
        let proof = status.is_some_and(|st| st.pending_observation.is_some());
        self.with(|m| {
            m.mark(&key, "seen", at);
            if let Some(phase) = status.and_then(|st| st.phase) {
                m.mark(&key, &format!("phase:{phase:?}"), at);
            }
            if in_sync(s) {
                m.mark(&key, "insync", at);
            }
            let now = claim.map(|c| c.job_name.clone());
            let before = m.current.insert(name.clone(), now.clone()).flatten();
            if let Some(prev) = before.filter(|p| Some(p) != now.as_ref()) {
                m.mark(&format!("job/{prev}"), "released", at);
            }
            if let Some(c) = claim {
                let job = format!("job/{}", c.job_name);
                if !m.seen.get(&job).is_some_and(|j| j.contains_key("claimed")) {
                    m.claims.push(Claimed {
                        schema: name.clone(),
                        job: c.job_name.clone(),
                        kind: kind_name(c.operation_type, proof),
                    });
                }
                m.mark(&job, "claimed", at);
                if c.lease_epoch.is_some() {
                    m.mark(&job, "lease", at);
                }
                if c.admission_snapshot.is_some() {
                    m.mark(&job, "snapshot", at);
                }
                if c.dispatch_started == Some(true) {
                    m.mark(&job, "dispatch", at);
                }
                if c.job_uid.is_some() {
                    m.mark(&job, "adopted", at);
                }
            }
        });
    }

    fn job(&self, j: &Job, at: Instant) {
        let key = format!("job/{}", j.name_any());
        let conditions = j
            .status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default();
        self.with(|m| {
            m.mark(&key, "created", at);
            for c in conditions.iter().filter(|c| c.status == "True") {
                match c.type_.as_str() {
                    "Complete" | "Failed" => m.mark(&key, "finished", at),
                    "SuccessCriteriaMet" | "FailureTarget" => m.mark(&key, "criteria", at),
                    _ => {}
                }
            }
        });
    }

    fn pod(&self, p: &Pod, at: Instant) {
        let name = p.name_any();
        let job = p.labels().get("job-name").cloned();
        let key = format!("pod/{name}");
        let status = p.status.clone().unwrap_or_default();
        self.with(|m| {
            if let Some(job) = job {
                m.pod_job.insert(name.clone(), job);
            }
            m.mark(&key, "created", at);
            for c in status.conditions.iter().flatten().filter(|c| c.status == "True") {
                m.mark(&key, &c.type_, at);
            }
            // The first container of any kind to run ends the sandbox phase: a Pod without an
            // `install-runner` (one image for runner and executor) starts with its fetch or main.
            let started = status
                .init_container_statuses
                .iter()
                .flatten()
                .chain(status.container_statuses.iter().flatten())
                .any(|c| {
                    c.state
                        .as_ref()
                        .is_some_and(|s| s.running.is_some() || s.terminated.is_some())
                });
            if started {
                m.mark(&key, "first:running", at);
            }
            for c in status.init_container_statuses.iter().flatten() {
                if c.state.as_ref().is_some_and(|s| s.running.is_some()) {
                    m.mark(&key, &format!("init:{}:running", c.name), at);
                }
                if c.state.as_ref().is_some_and(|s| s.terminated.is_some()) {
                    m.mark(&key, &format!("init:{}:done", c.name), at);
                }
            }
            for c in status
                .container_statuses
                .iter()
                .flatten()
                .filter(|c| c.name == MAIN)
            {
                let state = c.state.as_ref();
                if state.is_some_and(|s| s.running.is_some() || s.terminated.is_some()) {
                    m.mark(&key, "main:running", at);
                }
                if state.is_some_and(|s| s.terminated.is_some()) {
                    m.mark(&key, "main:done", at);
                }
            }
        });
    }

    /// Starts the three watches on `ns`; they run until the returned handles are aborted.
    pub(super) fn start(&self, client: &Client, ns: &str) -> Vec<tokio::task::JoinHandle<()>> {
        let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), ns);
        let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
        let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
        let (r1, r2, r3) = (self.clone(), self.clone(), self.clone());
        vec![
            tokio::spawn(async move {
                let mut s = Box::pin(
                    watcher(schemas, watcher::Config::default())
                        .default_backoff()
                        .applied_objects(),
                );
                while let Some(event) = s.next().await {
                    if let Ok(o) = event {
                        r1.schema(&o, Instant::now());
                    }
                }
            }),
            tokio::spawn(async move {
                let mut s = Box::pin(
                    watcher(jobs, watcher::Config::default())
                        .default_backoff()
                        .applied_objects(),
                );
                while let Some(event) = s.next().await {
                    if let Ok(o) = event {
                        r2.job(&o, Instant::now());
                    }
                }
            }),
            tokio::spawn(async move {
                let mut s = Box::pin(
                    watcher(pods, watcher::Config::default())
                        .default_backoff()
                        .applied_objects(),
                );
                while let Some(event) = s.next().await {
                    if let Ok(o) = event {
                        r3.pod(&o, Instant::now());
                    }
                }
            }),
        ]
    }

    /// Seconds from `t0` to each first sighting, and the claims in order.
    pub(super) fn snapshot(&self, t0: Instant) -> Snapshot {
        self.with(|m| {
            let secs = |i: &Instant| {
                if *i >= t0 {
                    i.duration_since(t0).as_secs_f64()
                } else {
                    -t0.duration_since(*i).as_secs_f64()
                }
            };
            let mut marks: HashMap<String, BTreeMap<String, f64>> = m
                .seen
                .iter()
                .map(|(k, v)| (k.clone(), v.iter().map(|(n, i)| (n.clone(), secs(i))).collect()))
                .collect();
            // Each Job's Pod marks, under the Job, prefixed `pod:` (a Job runs one Pod here).
            for (pod, job) in &m.pod_job {
                if let Some(pm) = m.seen.get(&format!("pod/{pod}")) {
                    let entry = marks.entry(format!("job/{job}")).or_default();
                    for (n, i) in pm {
                        entry.entry(format!("pod:{n}")).or_insert(secs(i));
                    }
                }
            }
            Snapshot {
                marks,
                claims: m.claims.clone(),
            }
        })
        .unwrap_or_default()
    }
}

/// What the watches saw, in seconds since the apply.
#[derive(Default)]
pub(super) struct Snapshot {
    /// Milestones by object.
    pub(super) marks: HashMap<String, BTreeMap<String, f64>>,
    /// Claims in order of appearance.
    pub(super) claims: Vec<Claimed>,
}

impl Snapshot {
    /// The time of `milestone` of `object`.
    pub(super) fn at(&self, object: &str, milestone: &str) -> Option<f64> {
        self.marks.get(object).and_then(|m| m.get(milestone)).copied()
    }
}
