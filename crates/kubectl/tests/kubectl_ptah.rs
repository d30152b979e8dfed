//! T3: the `kubectl-ptah` binary against the real API server (`cargo xtask cluster up --tier api`).
//! Plans are published with the manager's own store, statuses are written as the manager writes
//! them, and the binary is run as a person runs it, with a kubeconfig.

use std::{
    io::Write as _,
    process::{Command, Output, Stdio},
};

use k8s_openapi::api::core::v1::Namespace;
use kube::{
    Api, Client, ResourceExt as _,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use ptah_api::{
    PtahMigration, PtahMigrationApproval, PtahMigrationPlan, PtahSchema, PtahSchemaApproval, PtahSchemaPlan,
    PtahSchemaPlanChunk, PtahSchemaPlanChunkSpec, schemaplan::ChunkData,
};
use ptah_apitests::{
    ClusterFiles,
    client::{admin_client, install_crds, namespace},
    fixtures,
};
use ptah_planstore::PlanStore;
use serde_json::{Value, json};

/// The plan document the tests publish: three statements, one of each severity.
fn document() -> Vec<u8> {
    let plan = json!({
        "format_version": 1,
        "dialect": "postgres",
        "from_fingerprint": fixtures::digest('c'),
        "to_fingerprint": fixtures::digest('d'),
        "destructive": true,
        "statements": [
            {"sql": "CREATE TABLE orders (id bigint PRIMARY KEY)", "severity": "safe",
             "reason": "creates table orders", "transactional": true},
            {"sql": "ALTER TABLE items ALTER COLUMN sku SET NOT NULL", "severity": "warning",
             "reason": "fails if sku holds NULL", "transactional": true},
            {"sql": "DROP TABLE legacy; -- semicolon inside", "severity": "destructive",
             "reason": "drops table legacy and its rows", "transactional": true}
        ]
    });
    serde_json::to_vec_pretty(&plan).expect("json")
}

struct Fixture {
    client: Client,
    ns: String,
    schema: PtahSchema,
    plan: PtahSchemaPlan,
}

impl Fixture {
    /// A namespace with PtahSchema `orders` whose current plan is [`document`], published.
    async fn new(prefix: &str) -> Fixture {
        let client = admin_client().await;
        install_crds(&client).await;
        let ns = namespace(&client, prefix).await;
        let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), &ns);
        let schema: PtahSchema = serde_json::from_value(fixtures::schema(&ns, "orders")).expect("schema");
        let schema = schemas
            .create(&PostParams::default(), &schema)
            .await
            .expect("create");
        let plan = PlanStore::new(client.clone())
            .publish(&schema, fixtures::schema_plan_spec(3, true), &document())
            .await
            .expect("publish");
        let spec = serde_json::to_value(&plan.spec).expect("spec");
        let mut current = json!({
            "name": plan.name_any(), "uid": plan.uid(),
            "statementCount": 3, "destructive": true,
            "rehearsal": {
                "outcome": "Failed", "failedStatement": 2,
                "message": "statement 2 of 3 failed: column \"sku\" contains null values",
                "statementMillis": [12, 7], "totalMillis": 19, "restored": true,
            },
        });
        for key in [
            "fingerprint",
            "contentDigest",
            "actualStateFingerprint",
            "desiredStateFingerprint",
        ] {
            current[key] = spec[key].clone();
        }
        if let (Value::Object(current), Value::Object(binding)) = (&mut current, fixtures::binding()) {
            current.extend(binding);
        }
        let condition = |type_: &str, status: &str, reason: &str| {
            json!({"type": type_, "status": status, "reason": reason, "message": "",
                   "lastTransitionTime": "2026-12-03T10:00:00Z", "observedGeneration": 1})
        };
        let status = json!({"status": {
            "observedGeneration": 1,
            "phase": "AwaitingApproval",
            "plan": current,
            "conditions": [
                condition("ApprovalRequired", "True", "AwaitingApproval"),
                condition("DriftDetected", "True", "DriftFound"),
            ],
        }});
        let schema = schemas
            .patch_status("orders", &PatchParams::default(), &Patch::Merge(&status))
            .await
            .expect("status");
        Fixture {
            client,
            ns,
            schema,
            plan,
        }
    }

    /// Runs `kubectl-ptah` as the admin with `args` in the fixture's namespace.
    fn run(&self, args: &[&str]) -> Output {
        self.run_with_input(args, None)
    }

    fn run_with_input(&self, args: &[&str], input: Option<&str>) -> Output {
        let cluster = ClusterFiles::require();
        let mut child = Command::new(env!("CARGO_BIN_EXE_kubectl-ptah"))
            .arg("--kubeconfig")
            .arg(&cluster.admin_kubeconfig)
            .args(["-n", &self.ns])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl-ptah runs");
        let mut stdin = child.stdin.take().expect("stdin");
        if let Some(input) = input {
            stdin.write_all(input.as_bytes()).expect("answer");
        }
        drop(stdin);
        child.wait_with_output().expect("kubectl-ptah ends")
    }

    /// The PtahSchemaApprovals of the namespace.
    async fn schema_approvals(&self) -> Vec<PtahSchemaApproval> {
        let api: Api<PtahSchemaApproval> = Api::namespaced(self.client.clone(), &self.ns);
        api.list(&Default::default()).await.expect("list approvals").items
    }

    async fn cleanup(self) {
        let api: Api<Namespace> = Api::all(self.client);
        let _ = api.delete(&self.ns, &DeleteParams::default()).await;
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn code(output: &Output) -> i32 {
    output.status.code().expect("an exit code")
}

#[tokio::test]
async fn plan_is_printed_as_text_sql_and_the_exact_stored_json_after_verification() {
    let fx = Fixture::new("kptah-plan").await;

    let shown = fx.run(&["plan", "orders"]);
    assert_eq!(code(&shown), 0, "{}", text(&shown.stderr));
    let out = text(&shown.stdout);
    for expected in [
        format!("Schema:       {}/orders", fx.ns),
        format!("Plan:         {}", fx.plan.name_any()),
        format!("Fingerprint:  {}", fx.plan.spec.fingerprint.as_str()),
        "every digest verified".to_owned(),
        "Statements:   3, destructive".to_owned(),
        "Severity:     destructive".to_owned(),
        "-- 1/3 safe: creates table orders\n-- rehearsed in 12 ms\nCREATE TABLE orders (id bigint PRIMARY KEY);"
            .to_owned(),
        "-- 2/3 warning: fails if sku holds NULL".to_owned(),
        "-- 3/3 DESTRUCTIVE: drops table legacy and its rows".to_owned(),
        "Rehearsal:    FAILED at statement 2: statement 2 of 3 failed: column \"sku\" contains null values"
            .to_owned(),
        "-- rehearsed in 7 ms\nALTER TABLE items".to_owned(),
    ] {
        assert!(out.contains(&expected), "missing {expected:?} in:\n{out}");
    }
    // By the plan's own name there is no PtahSchema status to read a rehearsal from.
    let by_name = fx.run(&["plan", &fx.plan.name_any()]);
    assert!(
        !text(&by_name.stdout).contains("Rehearsal:"),
        "{}",
        text(&by_name.stdout)
    );
    assert!(!out.contains('\x1b'), "colour in a pipe:\n{out}");

    // --sql: each statement terminated once, in order, a `;` inside a statement left alone.
    let sql = fx.run(&["plan", "orders", "--sql"]);
    assert_eq!(code(&sql), 0, "{}", text(&sql.stderr));
    assert_eq!(
        text(&sql.stdout),
        "CREATE TABLE orders (id bigint PRIMARY KEY);\n\
         ALTER TABLE items ALTER COLUMN sku SET NOT NULL;\n\
         DROP TABLE legacy; -- semicolon inside;\n"
    );

    // -o json: the stored document, byte for byte; by plan name as well as by schema name.
    for name in ["orders", fx.plan.name_any().as_str()] {
        let json = fx.run(&["plan", name, "-o", "json"]);
        assert_eq!(code(&json), 0, "{}", text(&json.stderr));
        assert_eq!(json.stdout, document(), "plan {name}");
    }

    // Nothing applied yet: exit 3, nothing on stdout.
    let applied = fx.run(&["plan", "orders", "--applied"]);
    assert_eq!(code(&applied), 3, "{}", text(&applied.stderr));
    assert!(applied.stdout.is_empty());
    assert!(text(&applied.stderr).contains("has no applied plan"));

    let missing = fx.run(&["plan", "nothing-here"]);
    assert_eq!(code(&missing), 1);
    assert!(
        text(&missing.stderr)
            .contains("no PtahSchema, PtahSchemaPlan or PtahMigrationPlan named nothing-here")
    );
    fx.cleanup().await;
}

#[tokio::test]
async fn a_tampered_chunk_is_reported_as_refused_and_nothing_is_printed() {
    let fx = Fixture::new("kptah-tamper").await;
    let victim = fx.plan.spec.chunks[0].name.clone();
    let chunks: Api<PtahSchemaPlanChunk> = Api::namespaced(fx.client.clone(), &fx.ns);
    let original = chunks.get(&victim).await.expect("chunk");
    chunks
        .delete(&victim, &DeleteParams::default())
        .await
        .expect("delete chunk");
    // The same length, another statement: only the digest can tell.
    let mut bytes = document();
    let at = text(&bytes).find("DROP TABLE legacy").expect("statement");
    bytes[at..at + 4].copy_from_slice(b"DROP");
    bytes[at + 11..at + 17].copy_from_slice(b"orders");
    let mut forged = PtahSchemaPlanChunk::new(
        &victim,
        PtahSchemaPlanChunkSpec {
            data: ChunkData(k8s_openapi::ByteString(bytes)),
        },
    );
    forged.metadata.labels = original.metadata.labels.clone();
    forged.metadata.owner_references = original.metadata.owner_references.clone();
    chunks
        .create(&PostParams::default(), &forged)
        .await
        .expect("forged chunk");

    for args in [
        vec!["plan", "orders"],
        vec!["plan", "orders", "--sql"],
        vec!["plan", "orders", "-o", "json"],
        vec!["approve", "orders", "--yes"],
    ] {
        let out = fx.run(&args);
        assert_eq!(code(&out), 1, "{args:?}: {}", text(&out.stderr));
        assert!(out.stdout.is_empty(), "{args:?} printed:\n{}", text(&out.stdout));
        let err = text(&out.stderr);
        assert!(
            err.contains("REFUSED") && err.contains(&victim),
            "{args:?}: {err}"
        );
    }
    assert!(fx.schema_approvals().await.is_empty());
    fx.cleanup().await;
}

#[tokio::test]
async fn approve_shows_the_plan_asks_and_creates_one_bound_approval_until_it_is_spent() {
    let fx = Fixture::new("kptah-approve").await;
    let declined = fx.run_with_input(&["approve", &fx.plan.name_any()], Some("n\n"));
    assert_eq!(code(&declined), 2, "{}", text(&declined.stderr));
    assert!(
        text(&declined.stdout).contains("-- 3/3 DESTRUCTIVE"),
        "the plan is shown first"
    );
    assert!(text(&declined.stderr).contains("[y/N]"));
    let unanswered = fx.run(&["approve", "orders"]);
    assert_eq!(code(&unanswered), 2);
    assert!(
        text(&unanswered.stderr).contains("--yes"),
        "{}",
        text(&unanswered.stderr)
    );
    assert!(fx.schema_approvals().await.is_empty());

    let approved = fx.run_with_input(&["approve", "orders"], Some("yes\n"));
    assert_eq!(code(&approved), 0, "{}", text(&approved.stderr));
    let items = fx.schema_approvals().await;
    assert_eq!(items.len(), 1);
    let spec = &items[0].spec;
    assert_eq!(spec.plan_ref.name, fx.plan.name_any());
    assert_eq!(Some(spec.plan_ref.uid.clone()), fx.plan.uid());
    assert_eq!(spec.plan_fingerprint, fx.plan.spec.fingerprint);
    assert_eq!(Some(spec.schema_ref.uid.clone()), fx.schema.uid());
    assert_eq!(spec.schema_ref.name, "orders");

    let again = fx.run(&["approve", "orders", "--yes"]);
    assert_eq!(code(&again), 1);
    assert!(
        text(&again.stderr).contains("exists already"),
        "{}",
        text(&again.stderr)
    );

    // The manager spends the approval on an Apply. A plan is named by its fingerprint, so the
    // same plan comes back when the database returns to an earlier state (drift undone): it
    // needs, and gets, a new approval.
    let first = items[0].name_any();
    let api: Api<PtahSchemaApproval> = Api::namespaced(fx.client.clone(), &fx.ns);
    let consumed = json!({"status": {"conditions": [{
        "type": "Consumed", "status": "True", "reason": "Dispatched",
        "message": "spent on an Apply", "lastTransitionTime": "2026-12-04T00:00:00Z"
    }]}});
    api.patch_status(&first, &PatchParams::default(), &Patch::Merge(&consumed))
        .await
        .expect("mark the approval consumed, as the manager does");
    let renewed = fx.run(&["approve", "orders", "--yes"]);
    assert_eq!(code(&renewed), 0, "{}", text(&renewed.stderr));
    let items = fx.schema_approvals().await;
    assert_eq!(items.len(), 2, "a second approval of the plan that came back");
    let second = items
        .iter()
        .find(|a| a.name_any() != first)
        .expect("the second approval");
    assert!(
        second.name_any().starts_with(&format!("{first}-")),
        "{}",
        second.name_any()
    );
    assert_eq!(second.spec.plan_ref, items[0].spec.plan_ref);
    fx.cleanup().await;
}

/// A PtahMigration `billing` with a plan, a partial run left unresolved and a modified version.
async fn migration(fx: &Fixture) -> (PtahMigration, PtahMigrationPlan) {
    let api: Api<PtahMigration> = Api::namespaced(fx.client.clone(), &fx.ns);
    let m: PtahMigration = serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigration",
        "metadata": {"name": "billing"},
        "spec": {
            "target": {"engine": "PostgreSQL", "coordinationKey": "billing-primary",
                       "urlFrom": {"name": "db", "key": "url"}},
            "artifact": {"ociRef": "oci://registry.example.com/shop/billing:v3",
                         "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"}}
        }
    }))
    .expect("migration");
    let m = api.create(&PostParams::default(), &m).await.expect("create");
    let uid = m.uid().expect("uid");
    let plans: Api<PtahMigrationPlan> = Api::namespaced(fx.client.clone(), &fx.ns);
    let plan = PtahMigrationPlan::new(
        "billing-3f2a",
        fixtures::migration_plan_spec(
            ("billing", &uid),
            2,
            &[(3, "add invoices"), (4, "backfill totals")],
        ),
    );
    let plan = plans.create(&PostParams::default(), &plan).await.expect("plan");
    let status = json!({"status": {
        "phase": "Blocked",
        "history": {
            "observedAt": "2026-12-03T10:00:00Z", "contractVersion": 1,
            "currentVersion": 2, "appliedCount": 2, "pendingCount": 2,
            "fingerprint": fixtures::digest('7'), "targetIdentityDigest": fixtures::digest('3'),
            "dirty": false, "modifiedVersions": [1], "outOfOrderVersions": []
        },
        "plan": {"name": plan.name_any(), "uid": plan.uid()},
        "lastRun": {"outcome": "Partial", "jobName": "billing-apply-1", "appliedVersions": [3],
                    "message": "migration 4 failed: relation totals does not exist"},
        "unresolvedRun": {"outcome": "Partial", "operationID": fixtures::digest('6'),
                          "jobName": "billing-apply-1", "recordedAt": "2026-12-03T10:05:00Z"},
        "conditions": [],
    }});
    let m = api
        .patch_status("billing", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status");
    (m, plan)
}

#[tokio::test]
async fn migration_shows_history_and_an_acknowledgment_that_the_api_server_accepts() {
    let fx = Fixture::new("kptah-migration").await;
    let (m, plan) = migration(&fx).await;

    let shown = fx.run(&["migration", "billing"]);
    assert_eq!(code(&shown), 0, "{}", text(&shown.stderr));
    let out = text(&shown.stdout);
    for expected in [
        "Phase:        Blocked",
        "Current:      2 (2 applied, 2 pending)",
        "Modified:     1",
        "Plan:         billing-3f2a",
        "  3 add invoices",
        "  4 backfill totals",
        "Last run:     Partial (Job billing-apply-1, applied 3)",
        "Unresolved:   Partial run of Job billing-apply-1",
        "kubectl create -f - <<'EOF'",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    // The printed acknowledgment is one the API server accepts as it stands.
    let manifest = out
        .split("<<'EOF'\n")
        .nth(1)
        .and_then(|rest| rest.split("EOF\n").next())
        .expect("a heredoc");
    let ack: ptah_api::PtahMigrationRunAcknowledgment =
        serde_saphyr::from_str(manifest).unwrap_or_else(|e| panic!("{e}:\n{manifest}"));
    assert_eq!(ack.spec.operation_id.as_str(), fixtures::digest('6'));
    assert_eq!(Some(ack.spec.migration_ref.uid.clone()), m.uid());
    let acks: Api<ptah_api::PtahMigrationRunAcknowledgment> = Api::namespaced(fx.client.clone(), &fx.ns);
    acks.create(&PostParams::default(), &ack)
        .await
        .expect("the printed acknowledgment");

    let json = fx.run(&["migration", "billing", "-o", "json"]);
    assert_eq!(code(&json), 0);
    let doc: Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(doc["unresolvedRun"]["operationID"], fixtures::digest('6'));
    assert_eq!(doc["plan"]["spec"]["migrations"][1]["version"], 4);

    // The migration plan: steps, never SQL; approving binds its UID and fingerprint.
    let steps = fx.run(&["plan", "billing-3f2a"]);
    assert_eq!(code(&steps), 0, "{}", text(&steps.stderr));
    assert!(text(&steps.stdout).contains("  4 backfill totals"));
    let approved = fx.run(&["approve", "billing-3f2a", "--yes"]);
    assert_eq!(code(&approved), 0, "{}", text(&approved.stderr));
    let approvals: Api<PtahMigrationApproval> = Api::namespaced(fx.client.clone(), &fx.ns);
    let items = approvals.list(&Default::default()).await.expect("list").items;
    assert_eq!(items.len(), 1);
    assert_eq!(Some(items[0].spec.plan_ref.uid.clone()), plan.uid());
    assert_eq!(items[0].spec.plan_fingerprint.as_str(), plan.spec.fingerprint);
    fx.cleanup().await;
}

#[tokio::test]
async fn status_prints_one_plain_line_per_resource_in_a_pipe() {
    let fx = Fixture::new("kptah-status").await;
    migration(&fx).await;

    let out = fx.run(&["status"]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(!table.contains('\x1b'), "colour in a pipe:\n{table}");
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    let words = |line: &str| line.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(
        words(lines[0]),
        [
            "KIND", "NAME", "PHASE", "REALM", "LAST", "OUTCOME", "APPROVAL", "DRIFT"
        ]
    );
    let migration_line = words(lines[1]);
    assert_eq!(
        migration_line[..7],
        [
            "PtahMigration",
            "billing",
            "Blocked",
            "billing-primary",
            "UNRESOLVED",
            "Partial",
            "-"
        ]
    );
    assert_eq!(migration_line[7..], ["1", "modified"]);
    let schema_line = words(lines[2]);
    assert_eq!(
        schema_line,
        [
            "PtahSchema",
            "orders",
            "AwaitingApproval",
            "orders-primary",
            "-",
            "waiting:",
            &fx.plan.name_any(),
            "drift:",
            "DriftFound"
        ]
    );

    let all = fx.run(&["status", "-A"]);
    assert_eq!(code(&all), 0);
    let all = text(&all.stdout);
    assert!(all.starts_with("NAMESPACE"), "{all}");
    assert!(
        all.lines().any(|l| l.starts_with(&fx.ns) && l.contains("orders")),
        "{all}"
    );
    fx.cleanup().await;
}
