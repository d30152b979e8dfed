//! A hand-built world for the migration decision, and a stand-in for the shell that applies each
//! action's durable effect (status writes, finalizer, Lease epoch, Job creation, plan, marks).

use jiff::Timestamp;
use ptah_api::{
    PtahMigrationSpec, PtahMigrationStatus,
    migration::{MigrationOperationStatus, MigrationOperationType as Op},
    shared::{Epoch, PinnedImage, Sha256Digest},
};
use ptah_dataplane::{
    ArtifactResult, MigrationHistoryResult, MigrationOutcome, MigrationRunResult, OperationId, ResultPayload,
    SequenceStep,
};
use ptah_fingerprint::{Digest, Fingerprint};
use ptah_targetlock::census::CensusVerdict;

use crate::migration::{
    AcknowledgmentView, Action, ApprovalView, Observed, PlanState, decide,
    observed::{Binding, Finished, JobState, Meta, PolicyRead, Realm, ResultRead},
};
use crate::operation::claim::migration_operation;

pub const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

pub fn digest(tag: &str) -> Sha256Digest {
    Digest::of(tag.as_bytes()).into()
}

pub fn fp(tag: &str) -> Fingerprint {
    digest(tag).as_str().parse().expect("fingerprint")
}

pub fn t(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).expect("ts")
}

pub fn spec(policy: &str) -> PtahMigrationSpec {
    let text = format!(
        r#"{{"target": {{"engine": "MySQL", "coordinationKey": "shop", "urlFrom": {{"name": "db", "key": "url"}}}},
            "artifact": {{"ociRef": "oci://registry.test/shop/migrations:v1",
                         "verificationPolicyFrom": {{"name": "policy", "key": "policy.yaml"}}}},
            "policy": {policy}}}"#
    );
    serde_json::from_str(&text).expect("spec")
}

pub fn step(version: i64) -> SequenceStep {
    SequenceStep {
        version,
        checksum: format!("{:064x}", version),
        transaction: "none".into(),
        description: Some(format!("step {version}")),
    }
}

pub struct World {
    pub now: Timestamp,
    pub meta: Meta,
    pub spec: PtahMigrationSpec,
    pub status: PtahMigrationStatus,
    pub binding: Binding,
    pub realm: Realm,
    pub policy: PolicyRead,
    pub job: JobState,
    pub result: ResultRead,
    pub plan: PlanState,
    pub approvals: Vec<ApprovalView>,
    pub acknowledgments: Vec<AcknowledgmentView>,
    /// Every Job the stand-in shell created, by name and operation.
    pub created: Vec<(String, Op)>,
    /// Every Job the stand-in shell deleted, by name.
    pub deleted: Vec<String>,
    /// Lease epochs handed out.
    pub epochs: u32,
    /// The pending steps the next History reading reports.
    pub pending: Vec<i64>,
    /// The current version the next History reading reports.
    pub current: Option<i64>,
    /// The lint the next History reading reports.
    pub lint: Option<ptah_dataplane::PendingLint>,
}

impl World {
    pub fn new() -> Self {
        World {
            now: t(0),
            meta: Meta {
                namespace: "shop".into(),
                name: "orders".into(),
                uid: "uid-migration".into(),
                generation: 1,
                deleting: false,
                has_finalizer: true,
            },
            spec: spec(r#"{"apply": "OnApproval"}"#),
            status: PtahMigrationStatus::default(),
            binding: Binding {
                epoch: Epoch::parse(&format!("v1-{}", &HEX[..32])).expect("epoch"),
                controller_state_version: 1,
                ptah_version: "0.1.0".into(),
                executor_image: PinnedImage::parse(&format!("registry.test/ptah@sha256:{HEX}"))
                    .expect("image"),
                runner_image: PinnedImage::parse(&format!("registry.test/ptah@sha256:{HEX}")).expect("image"),
                runner_protocol_version: i64::from(ptah_dataplane::PROTOCOL_VERSION),
                controller_image: "registry.test/manager:dev".into(),
                controller_revision: "dev".into(),
                result_endpoint: None,
            },
            realm: Realm::Claimable {
                engine: "mysql",
                coordination_digest: digest("realm"),
                census: CensusVerdict::Sole,
            },
            policy: PolicyRead::Ok {
                uid: "policy-uid".into(),
                digest: digest("policy"),
            },
            job: JobState::Absent,
            result: ResultRead::NotRead,
            plan: PlanState::None,
            approvals: Vec::new(),
            acknowledgments: Vec::new(),
            created: Vec::new(),
            deleted: Vec::new(),
            epochs: 0,
            pending: vec![1, 2, 3],
            current: None,
            lint: None,
        }
    }

    pub fn observed(&self) -> Observed<'_> {
        Observed {
            now: self.now,
            meta: &self.meta,
            spec: &self.spec,
            status: &self.status,
            binding: &self.binding,
            realm: &self.realm,
            policy: &self.policy,
            job: &self.job,
            result: &self.result,
            plan: &self.plan,
            approvals: &self.approvals,
            acknowledgments: &self.acknowledgments,
        }
    }

    pub fn decide(&self) -> Action {
        decide(&self.observed())
    }

    /// Decides and applies the durable effect of the action, as the shell would on success.
    pub fn step(&mut self) -> Action {
        let action = self.decide();
        self.apply(&action);
        action
    }

    pub fn apply(&mut self, action: &Action) {
        match action {
            Action::ReleaseLease { status, .. }
            | Action::AdoptJob { status }
            | Action::WriteStatus { status, .. } => {
                let before = self.status.active_operation.as_ref().map(|c| c.job_name.clone());
                self.status = (**status).clone();
                let after = self.status.active_operation.as_ref().map(|c| c.job_name.clone());
                if before != after {
                    self.job = JobState::Absent;
                    self.result = ResultRead::NotRead;
                }
            }
            Action::AddFinalizer => self.meta.has_finalizer = true,
            Action::RemoveFinalizer => self.meta.has_finalizer = false,
            Action::AcquireLease { .. } => {
                self.epochs += 1;
                let epoch = Epoch::parse(&format!("v1-{:032x}", self.epochs)).expect("epoch");
                if let Some(c) = self.status.active_operation.as_mut() {
                    c.lease_epoch = Some(epoch);
                }
            }
            Action::Dispatch { status, .. } => {
                self.status = (**status).clone();
                let c = self.status.active_operation.as_mut().expect("claim");
                self.created.push((c.job_name.clone(), c.operation_type));
                self.job = JobState::Present {
                    uid: format!("job-uid-{}", self.created.len()),
                    matches_intent: true,
                    finished: None,
                    ttl_set: false,
                    stuck: None,
                };
            }
            Action::SettleAndDeleteJob { status, job, .. } => {
                self.status = (**status).clone();
                self.deleted.push(job.clone());
                self.job = JobState::Absent;
                self.result = ResultRead::NotRead;
            }
            Action::ScheduleJobCleanup => {
                if let JobState::Present { ttl_set, .. } = &mut self.job {
                    *ttl_set = true;
                }
            }
            Action::PublishAndRecord { draft, status, .. } => {
                self.status = (**status).clone();
                if let Some(p) = self.status.plan.as_mut() {
                    p.uid = format!("plan-uid-{}", &draft.name);
                }
                self.plan = PlanState::Present(Box::new(draft.spec.clone()));
            }
            Action::MarkApprovals { consumed, stale } => {
                for a in &mut self.approvals {
                    a.consumed |= consumed.iter().any(|c| c.uid == a.object.uid);
                    a.stale |= stale.iter().any(|c| c.uid == a.object.uid);
                }
            }
            Action::MarkAcknowledgments { consumed, stale } => {
                for a in &mut self.acknowledgments {
                    a.consumed |= consumed.iter().any(|c| c.uid == a.object.uid);
                    a.stale |= stale.iter().any(|c| c.uid == a.object.uid);
                }
            }
            Action::Wait { .. } => {}
        }
    }

    pub fn claim(&self) -> &MigrationOperationStatus {
        self.status.active_operation.as_ref().expect("an active claim")
    }

    /// Marks the claim's Job finished with `payload` as its one Pod's frame.
    pub fn finish(&mut self, payload: ResultPayload) {
        if let JobState::Present { finished, .. } = &mut self.job {
            *finished = Some(Finished::Succeeded);
        }
        self.result = ResultRead::Frame(Box::new(payload));
    }

    fn base(&self) -> ResultPayload {
        let c = self.claim();
        let mut p = ResultPayload::new(
            migration_operation(c.operation_type),
            Some(OperationId::new(c.id.as_str()).expect("id")),
        );
        p.child_exit_code = 0;
        if matches!(c.operation_type, Op::History | Op::Apply) {
            p.target_identity_digest = Some(fp("identity"));
            p.coordination_digest = c
                .coordination_digest
                .as_ref()
                .map(|d| d.as_str().parse().expect("fp"));
        }
        p
    }

    /// A successful payload for the active claim, from the world's pending list.
    pub fn success(&self) -> ResultPayload {
        let c = self.claim();
        let mut p = self.base();
        match c.operation_type {
            Op::Resolve | Op::Verify => {
                let d = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
                p.artifact = Some(ArtifactResult {
                    resolved_digest: d.parse().expect("d"),
                    resolved_reference: format!("oci://registry.test/shop/migrations@{d}"),
                    artifact_type: Some(crate::migration::MIGRATION_ARTIFACT_TYPE.into()),
                    verification_passed: (c.operation_type == Op::Verify).then_some(true),
                    satisfied_requirements: Vec::new(),
                    violated_requirements: Vec::new(),
                });
            }
            Op::History => p.migration_history = Some(self.reading()),
            Op::Apply => {
                p.mutation_started = Some(true);
                p.uncertain = Some(false);
                p.migration_run = Some(self.run(MigrationOutcome::Applied));
            }
        }
        p
    }

    /// What a History reading reports now.
    pub fn reading(&self) -> MigrationHistoryResult {
        MigrationHistoryResult {
            current_version: self.current,
            applied_count: self.current.map_or(0, |c| c as u64),
            pending_count: self.pending.len() as u64,
            dirty: false,
            blocked: false,
            history_fingerprint: fp(&format!("history-{:?}", self.current)),
            pending_sequence_fingerprint: ptah_dataplane::expected_sequence(
                &self.pending.iter().map(|v| step(*v)).collect::<Vec<_>>(),
            )
            .ok()
            .map(|(_, d)| d),
            pending_sequence: Some(self.pending.iter().map(|v| step(*v)).collect()),
            modified_versions: Vec::new(),
            out_of_order_versions: Vec::new(),
            ahead_versions: Vec::new(),
            blocked_reason: None,
            pending_lint: self.lint.clone(),
        }
    }

    /// A run report of the plan being applied.
    pub fn run(&self, outcome: MigrationOutcome) -> MigrationRunResult {
        let steps: Vec<SequenceStep> = self.pending.iter().map(|v| step(*v)).collect();
        let (_, digest) = ptah_dataplane::expected_sequence(&steps).expect("sequence");
        MigrationRunResult {
            outcome,
            applied_count: self.pending.len() as u64,
            first_applied: self.pending.first().copied(),
            last_applied: self.pending.last().copied(),
            current_version: self.pending.last().copied(),
            history_fingerprint: fp("after"),
            sequence_fingerprint: digest,
        }
    }

    /// Runs steps until the claim of `op` is dispatched.
    pub fn run_until_dispatched(&mut self, op: Op) {
        for _ in 0..40 {
            let a = self.step();
            if matches!(a, Action::Dispatch { .. }) && self.claim().operation_type == op {
                return;
            }
            if matches!(a, Action::Wait { .. }) {
                panic!("waiting before {op:?} was dispatched: {a:?}\n{:#?}", self.status);
            }
        }
        panic!("{op:?} never dispatched");
    }

    /// Drives the claim's Job to completion with `result` and settles it.
    pub fn complete_with(&mut self, op: Op, result: impl FnOnce(&World) -> ResultPayload) {
        self.run_until_dispatched(op);
        self.step(); // adopt
        let payload = result(self);
        self.finish(payload);
        for _ in 0..10 {
            if self.status.active_operation.is_none() {
                return;
            }
            self.step();
        }
        panic!("{op:?} never settled");
    }

    pub fn complete(&mut self, op: Op) {
        self.complete_with(op, World::success)
    }

    /// Drives the world until it waits; returns that wait.
    pub fn settle(&mut self) -> Action {
        for _ in 0..20 {
            let a = self.step();
            if matches!(a, Action::Wait { .. }) {
                return a;
            }
        }
        panic!("never rested");
    }

    /// Reads to a published plan awaiting approval.
    pub fn drive_to_approval(&mut self) {
        self.complete(Op::Resolve);
        self.complete(Op::Verify);
        self.complete(Op::History);
        self.settle();
    }

    /// An approval of the current plan by `who`.
    pub fn approve(&mut self, name: &str) {
        let p = self.observed().plan_spec().cloned().expect("a plan");
        let r = self.status.plan.clone().expect("plan ref");
        self.approvals.push(ApprovalView {
            object: ptah_api::shared::ImmutableObjectReference {
                name: name.into(),
                uid: format!("uid-{name}"),
            },
            migration_uid: self.meta.uid.clone(),
            plan: r,
            plan_fingerprint: Sha256Digest::parse(&p.fingerprint).expect("fingerprint"),
            history_fingerprint: Some(p.history_fingerprint.clone()),
            approver: None,
            consumed: false,
            stale: false,
            created: Some(self.now),
        });
    }

    /// The Jobs created for `op`.
    pub fn jobs_of(&self, op: Op) -> usize {
        self.created.iter().filter(|(_, o)| *o == op).count()
    }
}
