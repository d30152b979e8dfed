//! A hand-built world for the decision function, and a tiny stand-in for the shell that applies
//! each action's durable effect to it (status writes, finalizer, Lease epoch, Job creation).

use jiff::Timestamp;
use ptah_api::{
    PtahSchemaSpec, PtahSchemaStatus,
    schema::SchemaOperationType as Op,
    shared::{Epoch, ImmutableObjectReference, PinnedImage, Sha256Digest},
};
use ptah_dataplane::{ArtifactResult, DriftResult, OperationId, PlanOutcome, PlanResult, ResultPayload};
use ptah_fingerprint::{Digest, Fingerprint};
use ptah_targetlock::census::CensusVerdict;

use crate::schema::{
    Action, ApprovalView, Binding, Finished, JobState, Meta, Observed, PlanState, PolicyRead, Realm,
    ResultRead, claim, decide,
};

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

pub struct World {
    pub now: Timestamp,
    pub meta: Meta,
    pub spec: PtahSchemaSpec,
    pub status: PtahSchemaStatus,
    pub binding: Binding,
    pub realm: Realm,
    pub policy: PolicyRead,
    pub job: JobState,
    pub result: ResultRead,
    pub plan: PlanState,
    pub approvals: Vec<ApprovalView>,
    /// Every Job the stand-in shell created, by name.
    pub created: Vec<String>,
    /// Every Job the stand-in shell deleted, by name.
    pub deleted: Vec<String>,
    /// Every Lease epoch handed out.
    pub epochs: u32,
}

pub fn spec(yaml_policy: &str) -> PtahSchemaSpec {
    let text = format!(
        r#"{{"target": {{"engine": "PostgreSQL", "coordinationKey": "orders", "urlFrom": {{"name": "db", "key": "url"}}}},
            "desired": {{"ociRef": "oci://registry.test/shop/orders:v1",
                        "verificationPolicyFrom": {{"name": "policy", "key": "policy.yaml"}}}},
            "policy": {yaml_policy}}}"#
    );
    serde_json::from_str(&text).expect("spec")
}

impl World {
    pub fn new() -> Self {
        World {
            now: t(0),
            meta: Meta {
                namespace: "shop".into(),
                name: "orders".into(),
                uid: "uid-orders".into(),
                generation: 1,
                deleting: false,
                has_finalizer: true,
            },
            spec: spec(r#"{"apply": "OnApproval"}"#),
            status: PtahSchemaStatus::default(),
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
                engine: "postgresql",
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
            created: Vec::new(),
            deleted: Vec::new(),
            epochs: 0,
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
            Action::ReleaseLease { .. } => self.status.pending_lock_release = None,
            Action::AddFinalizer => self.meta.has_finalizer = true,
            Action::RemoveFinalizer => self.meta.has_finalizer = false,
            Action::WriteStatus { status, .. } | Action::AdoptJob { status } => {
                let before = self.status.active_operation.as_ref().map(|c| c.job_name.clone());
                self.status = (**status).clone();
                let after = self.status.active_operation.as_ref().map(|c| c.job_name.clone());
                if before != after {
                    self.job = JobState::Absent;
                    self.result = ResultRead::NotRead;
                }
            }
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
                self.created.push(c.job_name.clone());
                c.job_uid = Some(format!("job-uid-{}", self.created.len()));
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
            Action::PublishAndRecord { status, .. } => {
                self.status = (**status).clone();
                if let Some(p) = self.status.plan.as_mut() {
                    p.uid = format!("plan-uid-{}", p.fingerprint.as_str().len());
                }
                self.plan = PlanState::Intact;
            }
            Action::MarkApprovals { consumed, stale } => {
                for a in &mut self.approvals {
                    if consumed.iter().any(|c| c.uid == a.object.uid) {
                        a.consumed = true;
                    }
                    if stale.iter().any(|c| c.uid == a.object.uid) {
                        a.stale = true;
                    }
                }
            }
            Action::MarkAcknowledgments { .. } | Action::Wait { .. } => {}
        }
    }

    /// The active claim (panics when there is none).
    pub fn claim(&self) -> &ptah_api::schema::SchemaOperationStatus {
        self.status.active_operation.as_ref().expect("an active claim")
    }

    /// Marks the claim's Job ended as `how`, its cleanup TTL already scheduled.
    pub fn end(&mut self, how: Finished) {
        if let JobState::Present {
            finished, ttl_set, ..
        } = &mut self.job
        {
            *finished = Some(how);
            *ttl_set = true;
        }
    }

    /// Marks the claim's Job finished with `payload` as its one Pod's frame.
    pub fn finish(&mut self, payload: ResultPayload) {
        if let JobState::Present { finished, .. } = &mut self.job {
            *finished = Some(Finished::Succeeded);
        }
        self.result = ResultRead::Frame(Box::new(payload));
    }

    /// A successful payload for the active claim.
    pub fn success(&self) -> ResultPayload {
        let c = self.claim();
        let op = claim::operation(c.operation_type);
        let mut p = ResultPayload::new(op, Some(OperationId::new(c.id.as_str()).expect("id")));
        p.child_exit_code = 0;
        match c.operation_type {
            Op::Resolve | Op::Verify => {
                p.artifact = Some(ArtifactResult {
                    resolved_digest: "sha256:1111111111111111111111111111111111111111111111111111111111111111".parse().expect("d"),
                    resolved_reference: "oci://registry.test/shop/orders@sha256:1111111111111111111111111111111111111111111111111111111111111111".into(),
                    artifact_type: Some(crate::schema::SCHEMA_ARTIFACT_TYPE.into()),
                    // As the runner does: a Resolve claimed under a policy verifies what it resolved.
                    verification_passed: (c.operation_type == Op::Verify
                        || c.verification_policy_uid.is_some())
                    .then_some(true),
                    satisfied_requirements: Vec::new(),
                    violated_requirements: Vec::new(),
                });
            }
            Op::Observe | Op::Plan | Op::Apply => {
                p.target_identity_digest = Some(fp("identity"));
                p.coordination_digest = c
                    .coordination_digest
                    .as_ref()
                    .map(|d| d.as_str().parse().expect("fp"));
                match c.operation_type {
                    // As the runner does: a Plan reads the drift before it plans.
                    Op::Observe | Op::Plan => {
                        p.drift = Some(DriftResult {
                            drift: true,
                            highest_severity: Some("safe".into()),
                            finding_count: 1,
                            findings: vec![ptah_dataplane::DriftFinding {
                                category: "tables_added".into(),
                                count: 1,
                                severity: "safe".into(),
                            }],
                            findings_truncated: false,
                            live_fingerprint: fp("live"),
                            desired_fingerprint: fp("desired"),
                        })
                    }
                    _ => {
                        p.mutation_started = Some(true);
                        p.uncertain = Some(false);
                    }
                }
            }
        }
        p
    }

    /// A Plan payload with changes: a plan document of the one statement `sql`.
    pub fn plan_changes(&self, sql: &str, destructive: bool) -> ResultPayload {
        self.plan_of_severity(sql, if destructive { "destructive" } else { "safe" })
    }

    /// A Plan payload with one statement of the executor's `severity` (`safe`, `warning`,
    /// `destructive`).
    pub fn plan_of_severity(&self, sql: &str, severity: &str) -> ResultPayload {
        let destructive = severity == "destructive";
        let document = serde_json::json!({
            "format_version": 1,
            "dialect": "postgres",
            "from_fingerprint": fp("live").to_string(),
            "to_fingerprint": fp("desired").to_string(),
            "destructive": destructive,
            "statements": [{
                "sql": sql,
                "severity": severity,
                "reason": "test",
                "transactional": true
            }]
        })
        .to_string();
        let mut p = self.success();
        p.stdout = Some(document.clone());
        let sql = document.as_str();
        p.plan = Some(PlanResult {
            plan_content_digest: Digest::of(sql.as_bytes()),
            plan_outcome: PlanOutcome::Changes,
            statement_count: 1,
            destructive,
            from_fingerprint: fp("live"),
            to_fingerprint: fp("desired"),
        });
        p
    }

    /// A Plan payload without changes (its drift read found none).
    pub fn plan_none(&self) -> ResultPayload {
        let mut p = self.success();
        if let Some(d) = p.drift.as_mut() {
            d.drift = false;
            d.highest_severity = None;
            d.finding_count = 0;
            d.findings.clear();
            d.live_fingerprint = fp("desired");
        }
        p.plan = Some(PlanResult {
            plan_content_digest: Digest::of(b""),
            plan_outcome: PlanOutcome::NoChanges,
            statement_count: 0,
            destructive: false,
            from_fingerprint: fp("desired"),
            to_fingerprint: fp("desired"),
        });
        p
    }

    /// A Resolve result without a verdict (a Resolve claimed without a policy): a Verify follows.
    pub fn resolved_only(&self) -> ResultPayload {
        let mut p = self.success();
        if let Some(a) = p.artifact.as_mut() {
            a.verification_passed = None;
        }
        p
    }

    /// Runs steps until the claim of `op` has a dispatched Job; returns its name.
    pub fn run_until_dispatched(&mut self, op: Op) -> String {
        for _ in 0..20 {
            if let Some(c) = &self.status.active_operation
                && c.operation_type == op
                && c.dispatch_started == Some(true)
            {
                return c.job_name.clone();
            }
            let a = self.step();
            assert!(
                !matches!(a, Action::Wait { .. }),
                "waited before {op:?} was dispatched: {:?}",
                self.status.phase
            );
        }
        panic!("{op:?} was never dispatched");
    }

    /// Dispatches `op`, finishes it with `payload_of(world)`, and steps until the claim is gone.
    pub fn complete(&mut self, op: Op, payload_of: impl Fn(&World) -> ResultPayload) {
        self.run_until_dispatched(op);
        let p = payload_of(self);
        self.finish(p);
        for _ in 0..10 {
            if self
                .status
                .active_operation
                .as_ref()
                .is_none_or(|c| c.operation_type != op)
            {
                return;
            }
            self.step();
        }
        panic!("{op:?} was never settled");
    }

    /// Brings a fresh world to a published plan awaiting approval (or ready, per policy).
    pub fn reach_plan(&mut self, sql: &str, destructive: bool) {
        self.reach_plan_of_severity(sql, if destructive { "destructive" } else { "safe" });
    }

    /// Resolves and plans one statement of the executor's `severity`.
    pub fn reach_plan_of_severity(&mut self, sql: &str, severity: &str) {
        self.complete(Op::Resolve, World::success);
        self.complete(Op::Plan, |w| w.plan_of_severity(sql, severity));
        while self.status.pending_lock_release.is_some() {
            self.step();
        }
    }

    /// An approval matching the current plan exactly.
    pub fn approve(&mut self, name: &str) -> ImmutableObjectReference {
        let p = self.status.plan.as_ref().expect("a plan");
        let object = ImmutableObjectReference {
            name: name.into(),
            uid: format!("uid-{name}"),
        };
        self.approvals.push(ApprovalView {
            object: object.clone(),
            schema_uid: self.meta.uid.clone(),
            plan: ImmutableObjectReference {
                name: p.name.clone(),
                uid: p.uid.clone(),
            },
            plan_fingerprint: p.fingerprint.clone(),
            execution_binding_id: None,
            approver: Some(ptah_api::shared::Approver {
                username: "alice".into(),
                uid: None,
                groups: Vec::new(),
            }),
            approved_at: Some(self.now),
            consumed: false,
            stale: false,
            created: Some(self.now),
        });
        object
    }
}
