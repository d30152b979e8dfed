//! T4 (`e2e_demo_…`, phase `demo` of `cargo xtask e2e --suite demo`; `cargo xtask demo` runs it
//! with its output shown): the operator as people meet it. The platform team installs the chart
//! with helm and binds the chart's author and approver roles; a person of the application team,
//! with nothing but those roles, then works with `kubectl` and `kubectl ptah`:
//!
//! 1. a first PtahSchema: plan → `kubectl ptah plan` → `kubectl ptah approve` → InSync;
//! 2. a schema change: a new plan, read as SQL, approved → InSync;
//! 3. a destructive change refused (`DestructiveChangesDisabled`), then the spec put back;
//! 4. an out-of-band change seen as drift, planned back and approved → InSync;
//! 5. a PtahMigration from two pending migrations to InSync;
//! 6. a migration failing halfway: `unresolvedRun`, the acknowledgment `kubectl ptah migration`
//!    prints, created as printed, and the repaired migration applied → InSync.
//!
//! Each step reads the conditions it claims off the live objects (the admin client) and fails
//! the demo when they do not hold. Every step is recorded as an asciinema cast in `target/demo/`,
//! and the summary table of steps, times and checks goes to `target/demo/summary.md`.

mod common;
mod demo;
mod lifecycle;
mod migrations;

use std::time::Duration;

use demo::{As, Demo, Step};
use kube::{Api, ResourceExt};
use lifecycle::{
    InCluster,
    app::{Engine, phase, reason},
    wait_for,
};
use migrations::{File, Mig, NAME, push_migrations, v1_files};
use ptah_api::{PtahSchema, conditions::ConditionType, schema::SchemaPhase};
use ptah_apitests::{ClusterFiles, e2e::create};
use serde_json::json;

const STEP: Duration = Duration::from_secs(300);
const SCHEMA: &str = "orders";

/// The PtahSchema's database (PostgreSQL) beside the migration's (MariaDB, whose DDL is not
/// transactional, so a migration can fail halfway).
struct Orders {
    host_url: String,
    /// The database password (what no cast may contain).
    password: String,
    repository: String,
    schemas: Api<PtahSchema>,
}

fn hcl(extra: &str) -> String {
    format!(
        "schema \"public\" {{}}\n\ntable \"items\" {{\n  schema = schema.public\n  column \"id\" {{\n    type = bigint\n  }}\n  column \"name\" {{\n    type = varchar(40)\n  }}\n{extra}  primary_key {{\n    columns = [column.id]\n  }}\n}}\n"
    )
}

fn ready(s: &PtahSchema) -> bool {
    s.status.as_ref().is_some_and(|st| {
        st.conditions
            .iter()
            .any(|c| c.type_ == ConditionType::Ready.as_str() && c.status == "True")
    })
}

fn in_sync(s: &PtahSchema) -> bool {
    phase(s) == Some(SchemaPhase::InSync)
        && ready(s)
        && s.status.as_ref().is_some_and(|st| st.applied.is_some())
}

fn plan_name(s: &PtahSchema) -> String {
    s.status
        .as_ref()
        .and_then(|st| st.plan.as_ref())
        .map(|p| p.name.clone())
        .unwrap_or_default()
}

/// Waits for a plan other than `previous` awaiting approval.
async fn new_plan(o: &Orders, diag: &InCluster, what: &str, previous: &str) -> PtahSchema {
    wait_for(&o.schemas, SCHEMA, what, STEP, diag, |s| {
        phase(s) == Some(SchemaPhase::AwaitingApproval)
            && !plan_name(s).is_empty()
            && plan_name(s) != previous
    })
    .await
}

/// `kubectl ptah approve <plan> --yes`, again when the webhook answers that the resource left
/// AwaitingApproval for a moment (every interval re-resolves the tag).
fn approve(d: &Demo, step: &mut Step, plan: &str) {
    for _ in 0..20 {
        let display = format!("kubectl ptah approve {plan} --yes");
        match d.try_run(
            step,
            As::Person,
            &display,
            "kubectl",
            &["ptah", "approve", plan, "--yes"],
            None,
        ) {
            Ok(_) => return,
            Err(e) if e.contains("not waiting for a decision") => {
                std::thread::sleep(Duration::from_secs(1));
            }
            Err(e) => panic!("approving {plan}: {e}"),
        }
    }
    panic!("approving {plan}: the webhook never found it waiting for a decision");
}

async fn schema_in_sync(o: &Orders, diag: &InCluster, step: &mut Step, what: &str) -> PtahSchema {
    let s = wait_for(&o.schemas, SCHEMA, what, STEP, diag, in_sync).await;
    step.held(format!(
        "PtahSchema {SCHEMA}: phase InSync, Ready=True, applied plan recorded"
    ));
    s
}

/// Points the PtahSchema at `tag`, as the person would.
fn point_schema_at(d: &Demo, step: &mut Step, registry: &str, o: &Orders, tag: &str) {
    let patch = json!({"spec": {"desired": {"ociRef": format!("oci://{registry}/{}:{tag}", o.repository)}}});
    d.kubectl(
        step,
        &[
            "patch",
            "ptahschema",
            SCHEMA,
            "--type",
            "merge",
            "-p",
            &patch.to_string(),
        ],
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_demo_the_operator_from_helm_install_to_a_repaired_migration() {
    let cluster = ClusterFiles::require();
    let mut d = Demo::new(&cluster);

    // The platform team: a namespace with both databases' Secrets, the chart installed by helm.
    let mut step = d.step("the platform team installs the operator");
    let app = Mig::setup(Engine::Mariadb, "demo").await;
    let _release = migrations::Release(app.release_ns.clone());
    let diag = InCluster {
        client: app.client.clone(),
        namespace: app.release_ns.clone(),
    };
    step.note(&format!(
        "helm installed release ptah into {} (images pinned by digest), watching namespace {}",
        app.release_ns, app.ns
    ));
    d.run(
        &mut step,
        As::Platform,
        &format!("helm list -n {}", app.release_ns),
        &ptah_apitests::e2e::helm().display().to_string(),
        &["list", "-n", &app.release_ns],
    );
    let user = cluster.user_name.clone();
    let author = format!("--user={user}");
    d.run(
        &mut step,
        As::Platform,
        &format!("kubectl create rolebinding schema-authors --clusterrole=ptah-ptah-operator-author --user={user} -n {}", app.ns),
        "kubectl",
        &["create", "rolebinding", "schema-authors", "--clusterrole=ptah-ptah-operator-author", &author, "-n", &app.ns],
    );
    d.run(
        &mut step,
        As::Platform,
        &format!("kubectl get rolebindings -n {}", app.ns),
        "kubectl",
        &["get", "rolebindings", "-n", &app.ns],
    );
    let orders = schema_database(&app).await;
    step.note(
        "the Secrets db and orders-db (database URLs) and registry exist; their values are never shown",
    );
    d.kubectl(
        &mut step,
        &[
            "config",
            "set-context",
            "--current",
            &format!("--namespace={}", app.ns),
        ],
    );
    let can = d.kubectl(&mut step, &["auth", "can-i", "create", "ptahschemaapprovals"]);
    assert_eq!(can.trim(), "yes", "the person may approve");
    let cannot = d.try_run(
        &mut step,
        As::Person,
        "kubectl auth can-i get secrets",
        "kubectl",
        &["auth", "can-i", "get", "secrets"],
        None,
    );
    assert!(cannot.is_err(), "the person must not read Secrets: {cannot:?}");
    step.held("manager ready (2 replicas); the person may author and approve, and may not read Secrets");
    d.finish(step);

    // 1. A first PtahSchema.
    let mut step = d.step("a first PtahSchema: plan, read it, approve it");
    let manifest = d.manifest("orders.yaml", &schema_manifest(&app, &orders, "v1"));
    d.kubectl(&mut step, &["apply", "-f", &manifest.display().to_string()]);
    let s = new_plan(&orders, &diag, "a first plan awaiting approval", "").await;
    step.held(format!(
        "PtahSchema {SCHEMA}: phase AwaitingApproval with plan {}",
        plan_name(&s)
    ));
    d.ptah(&mut step, &["status"]);
    let text = d.ptah(&mut step, &["plan", SCHEMA]);
    assert!(text.contains("CREATE TABLE"), "the plan shows its SQL:\n{text}");
    approve(&d, &mut step, &plan_name(&s));
    schema_in_sync(&orders, &diag, &mut step, "InSync after the first approval").await;
    assert!(Engine::Postgres.has_table(&orders.host_url, "items").await);
    step.held("the database has table items");
    d.kubectl(&mut step, &["get", "ptahschema", SCHEMA]);
    d.finish(step);

    // 2. A change.
    let mut step = d.step("the schema changes: a new plan, approved");
    let previous = plan_name(&orders.schemas.get(SCHEMA).await.expect("schema"));
    lifecycle::app::push(
        &app.services,
        &orders.repository,
        "v2",
        &hcl("  column \"note\" {\n    type = text\n    null = true\n  }\n"),
    );
    step.note(&format!(
        "the team published {}:v2, adding column items.note",
        orders.repository
    ));
    point_schema_at(&d, &mut step, &app.registry, &orders, "v2");
    let s = new_plan(&orders, &diag, "the change's plan", &previous).await;
    step.held(format!("a new plan {} awaits approval", plan_name(&s)));
    let sql = d.ptah(&mut step, &["plan", SCHEMA, "--sql"]);
    assert!(sql.contains("note"), "the plan adds the column:\n{sql}");
    approve(&d, &mut step, &plan_name(&s));
    schema_in_sync(&orders, &diag, &mut step, "InSync after the change").await;
    d.finish(step);

    // 3. A destructive change, refused; then the spec put back.
    let mut step = d.step("a destructive change is refused");
    lifecycle::app::push(&app.services, &orders.repository, "v3", &hcl(""));
    step.note(&format!("{}:v3 drops column items.note", orders.repository));
    point_schema_at(&d, &mut step, &app.registry, &orders, "v3");
    wait_for(
        &orders.schemas,
        SCHEMA,
        "Blocked on the destructive plan",
        STEP,
        &diag,
        |s| {
            phase(s) == Some(SchemaPhase::Blocked)
                && reason(s, ConditionType::Ready) == "DestructiveChangesDisabled"
        },
    )
    .await;
    step.held("PtahSchema orders: phase Blocked, Ready reason DestructiveChangesDisabled");
    d.ptah(&mut step, &["status"]);
    d.kubectl(
        &mut step,
        &[
            "get",
            "ptahschema",
            SCHEMA,
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Ready\")].message}{\"\\n\"}",
        ],
    );
    point_schema_at(&d, &mut step, &app.registry, &orders, "v2");
    schema_in_sync(&orders, &diag, &mut step, "InSync once the spec is back at v2").await;
    d.finish(step);

    // 4. Drift.
    let mut step = d.step("an out-of-band change is closed as drift");
    let previous = plan_name(&orders.schemas.get(SCHEMA).await.expect("schema"));
    step.note("out of band, someone runs on the database: ALTER TABLE items DROP COLUMN note");
    Engine::Postgres
        .exec(&orders.host_url, "ALTER TABLE items DROP COLUMN note")
        .await;
    let s = new_plan(&orders, &diag, "a drift plan", &previous).await;
    assert_eq!(reason(&s, ConditionType::DriftDetected), "Observed");
    step.held("DriftDetected reason Observed; a plan that restores items.note awaits approval");
    d.ptah(&mut step, &["status"]);
    d.ptah(&mut step, &["plan", SCHEMA]);
    approve(&d, &mut step, &plan_name(&s));
    schema_in_sync(&orders, &diag, &mut step, "InSync after the drift plan").await;
    d.finish(step);

    migration_steps(&mut d, &app).await;

    let mut step = d.step("where everything stands");
    let all = d.ptah(&mut step, &["status"]);
    assert!(
        all.contains(SCHEMA) && all.contains(NAME),
        "status lists both:\n{all}"
    );
    step.held("kubectl ptah status lists the PtahSchema and the PtahMigration");
    d.finish(step);
    let recorded = demo::recorded();
    let registry_password = app.services.registry.password.expose().to_owned();
    for (what, secret) in [
        ("the migration database's password", &app.password),
        ("the schema database's password", &orders.password),
        ("the registry password", &registry_password),
    ] {
        assert!(secret.len() >= 8, "{what} is a real password");
        assert!(
            !recorded.contains(secret.as_str()),
            "{what} appears in a cast or manifest of target/demo"
        );
    }
    eprintln!("\n{}", d.summary());
}

/// Steps 5 and 6: a PtahMigration applied, then a migration failing halfway and repaired.
async fn migration_steps(d: &mut Demo, app: &Mig) {
    let mut step = d.step("a PtahMigration from pending to InSync");
    push_migrations(&app.services, &app.repository, "v1", &v1_files());
    step.note(&format!(
        "the team published {}:v1 with migrations 1 and 2",
        app.repository
    ));
    let manifest = d.manifest("billing.yaml", &migration_manifest(app, "v1"));
    d.kubectl(&mut step, &["apply", "-f", &manifest.display().to_string()]);
    let (_, plan) = app.wait_plan(None, 2).await;
    step.held("PtahMigration billing: AwaitingApproval, 2 pending");
    d.ptah(&mut step, &["migration", NAME]);
    approve(d, &mut step, &plan.name_any());
    app.in_sync(2).await;
    step.held("PtahMigration billing: InSync at version 2");
    d.finish(step);

    let mut step = d.step("a failing migration is acknowledged and repaired");
    let mut files: Vec<File> = v1_files();
    files.push((
        3,
        "half",
        "CREATE TABLE half_done (id BIGINT PRIMARY KEY);\nINSERT INTO no_such_table VALUES (1);\n".into(),
    ));
    push_migrations(&app.services, &app.repository, "v2-broken", &files);
    step.note("v2-broken adds migration 3, whose second statement fails after its first committed");
    point_migration_at(d, &mut step, app, "v2-broken");
    let (_, plan) = app.wait_plan(None, 1).await;
    approve(d, &mut step, &plan.name_any());
    let blocked = app.wait_partial().await;
    step.held("PtahMigration billing: Blocked, last run Partial, unresolvedRun recorded");
    let shown = d.ptah(&mut step, &["migration", NAME]);
    let ack = acknowledgment(&shown);
    step.note("a person checks the database, drops half_done and the history row of 3, and fixes the file");
    app.engine
        .exec(
            &app.host_url,
            "DROP TABLE half_done; DELETE FROM schema_migrations WHERE version = 3",
        )
        .await;
    files.pop();
    files.push((
        3,
        "half",
        "CREATE TABLE half_done (id BIGINT PRIMARY KEY);\n".into(),
    ));
    push_migrations(&app.services, &app.repository, "v2", &files);
    point_migration_at(d, &mut step, app, "v2");
    d.try_run(
        &mut step,
        As::Person,
        &format!("kubectl create -f - <<'EOF'\n{ack}EOF"),
        "kubectl",
        &["create", "-f", "-"],
        Some(&ack),
    )
    .unwrap_or_else(|e| panic!("the printed acknowledgment: {e}"));
    let (_, plan) = app.wait_plan(Some(&plan.name_any()), 1).await;
    approve(d, &mut step, &plan.name_any());
    let done = app.in_sync(3).await;
    assert!(
        done.status
            .as_ref()
            .and_then(|s| s.resolved_run.as_ref())
            .map(|r| r.operation_id.as_str())
            == blocked
                .status
                .as_ref()
                .and_then(|s| s.unresolved_run.as_ref())
                .map(|r| r.operation_id.as_str()),
        "the acknowledged run is recorded as resolvedRun"
    );
    step.held("PtahMigration billing: InSync at version 3, the acknowledged run recorded as resolvedRun");
    d.ptah(&mut step, &["migration", NAME]);
    d.finish(step);
}

fn point_migration_at(d: &Demo, step: &mut Step, app: &Mig, tag: &str) {
    let patch = json!({"spec": {"artifact": {"ociRef": app.oci(tag)}}});
    d.kubectl(
        step,
        &[
            "patch",
            "ptahmigration",
            NAME,
            "--type",
            "merge",
            "-p",
            &patch.to_string(),
        ],
    );
}

/// The acknowledgment manifest `kubectl ptah migration` printed in its heredoc.
fn acknowledgment(shown: &str) -> String {
    let body = shown
        .split_once("<<'EOF'\n")
        .and_then(|(_, rest)| rest.split_once("\nEOF"))
        .map(|(body, _)| format!("{body}\n"));
    body.unwrap_or_else(|| panic!("kubectl ptah migration printed no acknowledgment:\n{shown}"))
}

/// A second database, on PostgreSQL, for the PtahSchema, its Secret and CA, and `v1` published.
async fn schema_database(app: &Mig) -> Orders {
    let db = ptah_testservices::unique_name("demo").replace('-', "_");
    let (host_url, pod_url) = Engine::Postgres.fresh_database(&app.services, &db).await;
    let password = lifecycle::app::password_of(&pod_url);
    let client = app.client.clone();
    let mut url = pod_url;
    if let Some(path) = &app.services.postgres.ca_path {
        url.push_str("?sslmode=verify-full");
        let pem = std::fs::read_to_string(path).expect("the database CA");
        let cms: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(client.clone(), &app.ns);
        create(
            &cms,
            json!({"metadata": {"name": "orders-db-ca"}, "immutable": true, "data": {"ca.pem": pem}}),
        )
        .await;
    }
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(client.clone(), &app.ns);
    create(
        &secrets,
        json!({"metadata": {"name": "orders-db"}, "stringData": {"url": url}}),
    )
    .await;
    let repository = format!("{}-schema", app.repository);
    lifecycle::app::push(&app.services, &repository, "v1", &hcl(""));
    Orders {
        host_url,
        password,
        repository,
        schemas: Api::namespaced(client, &app.ns),
    }
}

fn schema_manifest(app: &Mig, o: &Orders, tag: &str) -> serde_json::Value {
    let mut target = json!({"engine": "PostgreSQL", "coordinationKey": "orders", "urlFrom": {"name": "orders-db", "key": "url"}});
    if app.services.postgres.ca_path.is_some() {
        target["caFrom"] = json!({"name": "orders-db-ca", "key": "ca.pem"});
    }
    json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema",
        "metadata": {"name": SCHEMA, "namespace": app.ns},
        "spec": {
            "target": target,
            "desired": {
                "ociRef": format!("oci://{}/{}:{tag}", app.registry, o.repository),
                "registryAuthFrom": {"name": "registry"},
                "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"},
                "transport": {"caFrom": {"name": "registry-ca", "key": "ca.pem"}}
            },
            "interval": "10s",
            "policy": {"apply": "OnApproval"},
            "execution": {"activeDeadlineSeconds": 300, "imagePullSecrets": [{"name": "pull"}]}
        }
    })
}

/// The suites' PtahMigration, in a realm of its own: its database is not the PtahSchema's.
fn migration_manifest(app: &Mig, tag: &str) -> serde_json::Value {
    let mut manifest = app.manifest(tag, false);
    manifest["spec"]["target"]["coordinationKey"] = json!("billing");
    manifest
}
