//! T4 (`e2e_alerting_…`, phase `alerting` of the suite `migrations-postgresql`): the chart's
//! PrometheusRule evaluated by promtool against what the real, helm-installed manager exported.
//!
//! On PostgreSQL a migration file with the `-- +ptah no_transaction` header whose second statement
//! fails leaves a Partial, unresolved run; a second PtahMigration whose database does not exist
//! fails its History reading again and again (`failureRetryInterval: 5s`). The manager's real
//! `/metrics` is scraped every 15 s through the API server's pod proxy (admin client) from the
//! install on, until the unresolved run is older than a minute. The PrometheusRule rendered by
//! `helm template` (`metrics.prometheusRule.enabled=true`,
//! `metrics.prometheusRule.alerts.unresolvedRunMinutes=1`) and the scrapes, turned into
//! promtool `input_series` on its simulated clock (scrape i at 15 i s; the timestamp-valued
//! `ptah_*_timestamp_seconds` series shifted by the first scrape's wall-clock time, so every age is
//! preserved; the `namespace`/`pod` labels a prometheus-operator scrape adds), are given to
//! `promtool test rules`: `PtahMigrationRunUnresolved` and `PtahOperatorOperationsFailing` fire;
//! without the unresolved-run series, or while the run is younger than a minute, the unresolved
//! alert does not. The rules keep their expressions, `for` and labels verbatim; their annotations
//! are dropped because promtool compares annotations exactly and one of them renders the
//! alert's value as a duration.

mod common;

use std::{
    collections::{BTreeMap, BTreeSet},
    process::Command,
    sync::{Arc, Mutex},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client, ResourceExt, api::ListParams};
use ptah_api::{PtahMigration, PtahMigrationPlan, migration::MigrationPhase};
use ptah_apitests::{
    ClusterFiles,
    e2e::{build_bin, create, data_plane_image, helm, host_ptah, kubectl, pod_endpoints},
    release::{self, Release, Sample, manager_pods, manager_story, parse_exposition, promtool, pull_secret},
    workspace_root,
};
use serde_json::{Value, json};

const STEP: Duration = Duration::from_secs(300);
const SCRAPE: Duration = Duration::from_secs(15);
const MIGRATIONS_TYPE: &str = "application/vnd.stokaro.ptah.migrations.v1";
const UNRESOLVED_TS: &str = "ptah_oldest_unresolved_migration_run_timestamp_seconds";
const RESULTS: &str = "ptah_operation_results_total";

/// One scrape round: every manager Pod's exposition at scrape index `i` (scrape i is taken at
/// `t0 + 15 i s`).
type Scrapes = Arc<Mutex<Vec<BTreeMap<String, Vec<Sample>>>>>;

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Scrapes every manager Pod every 15 s from now on; returns the shared rounds and `t0` (the
/// wall-clock time of round 0).
fn start_scraping(client: &Client, release_ns: &str) -> (Scrapes, f64) {
    let rounds: Scrapes = Default::default();
    let (out, client, ns) = (rounds.clone(), client.clone(), release_ns.to_owned());
    let t0 = unix_now();
    let start = tokio::time::Instant::now();
    tokio::spawn(async move {
        let mut i: u32 = 0;
        loop {
            tokio::time::sleep_until(start + SCRAPE * i).await;
            let mut round = BTreeMap::new();
            for pod in manager_pods(&client, &ns).await {
                match release::scrape_metrics(&client, &ns, &pod).await {
                    Ok(text) => {
                        let samples =
                            parse_exposition(&text).unwrap_or_else(|e| panic!("{pod} /metrics: {e}"));
                        round.insert(pod, samples);
                    }
                    Err(e) => eprintln!("scrape {i} of {pod} failed: {e}"),
                }
            }
            out.lock().expect("rounds").push(round);
            i += 1;
        }
    });
    (rounds, t0)
}

/// The value of `name` whose labels include all of `want`, summed over the Pods of a round.
fn sum_of(round: &BTreeMap<String, Vec<Sample>>, name: &str, want: &[(&str, &str)]) -> f64 {
    round
        .values()
        .flatten()
        .filter(|s| s.name == name)
        .filter(|s| {
            want.iter()
                .all(|(k, v)| s.labels.iter().any(|(lk, lv)| lk == k && lv == v))
        })
        .map(|s| s.value)
        .sum()
}

/// The largest value of `name` in a round (the leader's gauge; 0 elsewhere).
fn max_of(round: &BTreeMap<String, Vec<Sample>>, name: &str) -> f64 {
    round
        .values()
        .flatten()
        .filter(|s| s.name == name)
        .map(|s| s.value)
        .fold(0.0, f64::max)
}

/// Failed results per (kind, operation) between two rounds.
fn failures(
    first: &BTreeMap<String, Vec<Sample>>,
    last: &BTreeMap<String, Vec<Sample>>,
) -> BTreeMap<(String, String), f64> {
    let mut combos = BTreeSet::new();
    for s in last.values().flatten().filter(|s| s.name == RESULTS) {
        let get = |k: &str| {
            s.labels
                .iter()
                .find(|(lk, _)| lk == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        if get("result") == "failed" {
            combos.insert((get("kind"), get("operation")));
        }
    }
    combos
        .into_iter()
        .map(|(kind, op)| {
            let want = [
                ("kind", kind.as_str()),
                ("operation", op.as_str()),
                ("result", "failed"),
            ];
            let delta = sum_of(last, RESULTS, &want) - sum_of(first, RESULTS, &want);
            ((kind, op), delta)
        })
        .filter(|(_, d)| *d > 0.0)
        .collect()
}

/// promtool `input_series` from the rounds: each `ptah_*` series of each Pod with the labels a
/// prometheus-operator scrape adds, one value per round (`_` where a round lacks it); the
/// timestamp-valued series shifted onto promtool's clock (round 0 = 0 s). `skip` leaves series
/// out by name.
fn input_series(
    rounds: &[BTreeMap<String, Vec<Sample>>],
    t0: f64,
    release_ns: &str,
    skip: &[&str],
) -> Vec<Value> {
    let mut series: BTreeMap<String, Vec<Option<f64>>> = BTreeMap::new();
    for (i, round) in rounds.iter().enumerate() {
        for (pod, samples) in round {
            for s in samples {
                if !s.name.starts_with("ptah_") || skip.contains(&s.name.as_str()) || !s.value.is_finite() {
                    continue;
                }
                let mut labeled = s.clone();
                labeled
                    .labels
                    .retain(|(k, _)| !matches!(k.as_str(), "namespace" | "pod" | "instance" | "job"));
                labeled.labels.push(("namespace".into(), release_ns.into()));
                labeled.labels.push(("pod".into(), pod.clone()));
                labeled
                    .labels
                    .push(("instance".into(), format!("{pod}:{}", release::METRICS_PORT)));
                labeled
                    .labels
                    .push(("job".into(), "ptah-ptah-operator-metrics".into()));
                let value = if s.name.ends_with("_timestamp_seconds") && s.value > 0.0 {
                    s.value - t0
                } else {
                    s.value
                };
                let values = series
                    .entry(labeled.series())
                    .or_insert_with(|| vec![None; rounds.len()]);
                values[i] = Some(value);
            }
        }
    }
    series
        .into_iter()
        .map(|(name, values)| {
            let text: Vec<String> = values
                .iter()
                .map(|v| v.map_or_else(|| "_".to_owned(), |v| format!("{v}")))
                .collect();
            json!({"series": name, "values": text.join(" ")})
        })
        .collect()
}

/// The chart's PrometheusRule rendered for `release_ns`, as a promtool rule file (annotations
/// dropped, see the module docs).
fn rendered_rules(release_ns: &str) -> (Value, String) {
    let chart = workspace_root().join("charts/ptah-operator");
    let image = data_plane_image();
    let mut cmd = Command::new(helm());
    cmd.args(["template", release::RELEASE])
        .arg(&chart)
        .args(["--namespace", release_ns]);
    for key in ["manager", "executor", "runner", "certRotator", "crdManager"] {
        cmd.args(["--set", &format!("image.{key}={image}")]);
    }
    cmd.args([
        "--set",
        "metrics.prometheusRule.enabled=true",
        "--set",
        "metrics.prometheusRule.alerts.unresolvedRunMinutes=1",
        "--show-only",
        "templates/prometheusrule.yaml",
    ]);
    let text = release::run(&mut cmd);
    let rule: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("rendered rule: {e}\n{text}"));
    assert_eq!(rule["kind"], "PrometheusRule", "{text}");
    let mut groups = rule["spec"]["groups"].clone();
    for group in groups.as_array_mut().expect("groups") {
        for r in group["rules"].as_array_mut().expect("rules") {
            r.as_object_mut().expect("rule").remove("annotations");
        }
    }
    (json!({ "groups": groups }), text)
}

fn expr_of(rules: &Value, alert: &str) -> String {
    rules["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["rules"].as_array().cloned().unwrap_or_default())
        .find(|r| r["alert"] == alert)
        .and_then(|r| r["expr"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("the rendered rule has no alert {alert}"))
}

type File = (u32, &'static str, String);

fn push_migrations(services: &ptah_testservices::TestServices, repository: &str, tag: &str, files: &[File]) {
    let bin = build_bin("ptah-cli", "ptah");
    let dir = std::env::temp_dir().join(ptah_apitests::client::unique("alerting-artifact"));
    std::fs::create_dir_all(&dir).expect("dir");
    for (version, desc, up) in files {
        std::fs::write(dir.join(format!("{version:010}_{desc}.up.sql")), up).expect("up");
        std::fs::write(
            dir.join(format!("{version:010}_{desc}.down.sql")),
            format!("-- down of {desc}\n"),
        )
        .expect("down");
    }
    let d = dir.display().to_string();
    release::run(Command::new(&bin).args(["migrations", "hash", "--dir", &d]));
    let reference = format!("oci://{}/{repository}:{tag}", services.registry.host);
    host_ptah(&bin, services, &["migrations", "push", "--dir", &d, &reference]);
    std::fs::remove_dir_all(&dir).expect("clean");
}

async fn wait_migration(
    api: &Api<PtahMigration>,
    name: &str,
    what: &str,
    client: &Client,
    release_ns: &str,
    pred: impl Fn(&PtahMigration) -> bool,
) -> PtahMigration {
    let deadline = Instant::now() + STEP;
    loop {
        let m = api.get(name).await.unwrap_or_else(|e| panic!("get {name}: {e}"));
        if pred(&m) {
            return m;
        }
        if Instant::now() > deadline {
            panic!(
                "timed out after {STEP:?} waiting for {what}\nstatus: {}\n{}",
                serde_json::to_string_pretty(&m.status).unwrap_or_default(),
                manager_story(client, release_ns, 60).await
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

fn migration_manifest(name: &str, key: &str, secret: &str, oci: &str, extra_execution: Value) -> Value {
    let mut execution = json!({"activeDeadlineSeconds": 300, "imagePullSecrets": [{"name": "pull"}]});
    for (k, v) in extra_execution.as_object().cloned().unwrap_or_default() {
        execution[k] = v;
    }
    json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigration",
        "metadata": {"name": name},
        "spec": {
            "target": {"engine": "postgresql", "coordinationKey": key, "urlFrom": {"name": secret, "key": "url"}},
            "artifact": {
                "ociRef": oci,
                "registryAuthFrom": {"name": "registry"},
                "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"},
                "transport": {"caFrom": {"name": "registry-ca", "key": "ca.pem"}}
            },
            "interval": "10s",
            "policy": {"apply": "OnApproval"},
            "execution": execution
        }
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_alerting_unresolved_run_and_failing_operations_fire_the_chart_alerts() {
    let promtool = promtool();
    let t_start = Instant::now();
    let services = ptah_testservices::TestServices::require();
    let endpoints = pod_endpoints();
    let client = common::admin().await;
    ptah_apitests::client::install_crds(&client).await;
    let image = data_plane_image();
    let ns = common::namespace(&client, "e2e-alerting").await;
    let db = ptah_testservices::unique_name("e2e").replace('-', "_");
    let (_host_url, pod_url) = lifecycle_db(&services, &db).await;
    let missing_url = with_database(&pod_url, &format!("{db}_missing"));
    let registry = endpoints
        .get("PTAH_POD_REGISTRY")
        .expect("PTAH_POD_REGISTRY")
        .clone();
    let repository = format!("e2e/{ns}-alerting");

    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    for (name, url) in [("db", &pod_url), ("db-missing", &missing_url)] {
        create(
            &secrets,
            json!({"metadata": {"name": name}, "stringData": {"url": url}}),
        )
        .await;
    }
    ptah_apitests::release::registry_secret(&client, &ns, &services, &registry).await;
    pull_secret(&client, &ns, &services).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let ca = String::from_utf8(services.registry.ca_pem().expect("CA")).expect("PEM");
    create(
        &cms,
        json!({"metadata": {"name": "registry-ca"}, "immutable": true, "data": {"ca.pem": ca}}),
    )
    .await;
    create(
        &cms,
        json!({"metadata": {"name": "policy"}, "immutable": true, "data": {
        "policy.yaml": format!("version: 1\nartifact_types: [{MIGRATIONS_TYPE}]\n")}}),
    )
    .await;
    let release_ns = release::install(&client, &ns, &services, &image, &[]).await;
    let _release = Release(release_ns.clone());
    let (rounds, t0) = start_scraping(&client, &release_ns);
    eprintln!(
        "installed after {:?}; scraping every {SCRAPE:?}",
        t_start.elapsed()
    );

    // A migration whose second statement fails outside a transaction: Partial, unresolved.
    push_migrations(
        &services,
        &repository,
        "v1",
        &[
            (1, "create_items", "CREATE TABLE items (id BIGINT PRIMARY KEY);\n".into()),
            (
                2,
                "half",
                "-- +ptah no_transaction\nCREATE TABLE half_done (id BIGINT PRIMARY KEY);\nINSERT INTO no_such_table VALUES (1);\n"
                    .into(),
            ),
        ],
    );
    let oci = format!("oci://{registry}/{repository}:v1");
    let migrations: Api<PtahMigration> = Api::namespaced(client.clone(), &ns);
    create(
        &migrations,
        migration_manifest("billing", "billing", "db", &oci, json!({})),
    )
    .await;
    // A second one whose database does not exist: every History reading fails.
    create(
        &migrations,
        migration_manifest(
            "broken",
            "broken",
            "db-missing",
            &oci,
            json!({"failureRetryInterval": "5s"}),
        ),
    )
    .await;

    let m = wait_migration(
        &migrations,
        "billing",
        "a plan of 2 pending",
        &client,
        &release_ns,
        |m| {
            m.status.as_ref().is_some_and(|st| {
                st.phase == Some(MigrationPhase::AwaitingApproval)
                    && st.history.as_ref().is_some_and(|h| h.pending_count == 2)
                    && st.plan.is_some()
            })
        },
    )
    .await;
    let plan_ref = m.status.as_ref().and_then(|s| s.plan.clone()).expect("plan");
    let plan = Api::<PtahMigrationPlan>::namespaced(client.clone(), &ns)
        .get(&plan_ref.name)
        .await
        .expect("plan");
    let cluster = ClusterFiles::require();
    let manifest = json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigrationApproval",
        "metadata": {"name": format!("approve-{}", plan.name_any()), "namespace": ns},
        "spec": {
            "migrationRef": {"name": "billing", "uid": m.uid().expect("uid")},
            "planRef": {"name": plan.name_any(), "uid": plan.uid().expect("plan uid")},
            "planFingerprint": plan.spec.fingerprint,
        }
    });
    let logs = ptah_apitests::e2e_log_file(&format!("{ns}-alerting"));
    std::fs::create_dir_all(&logs).expect("log dir");
    let approval = logs.join("approval.json");
    std::fs::write(&approval, manifest.to_string()).expect("approval");
    release::run(
        Command::new(kubectl())
            .env("KUBECONFIG", &cluster.user_kubeconfig)
            .arg("create")
            .arg("-f")
            .arg(&approval),
    );
    let blocked = wait_migration(
        &migrations,
        "billing",
        "a Partial, unresolved run",
        &client,
        &release_ns,
        ptah_apitests::fixtures::partial_unresolved,
    )
    .await;
    eprintln!(
        "unresolved run after {:?}: {}",
        t_start.elapsed(),
        serde_json::to_string(&blocked.status.as_ref().and_then(|s| s.unresolved_run.clone()))
            .unwrap_or_default()
    );

    // Wait until a scrape shows the run older than 75 s and three failed operations of one kind.
    let deadline = Instant::now() + Duration::from_secs(360);
    let (first_seen, last) = loop {
        let snapshot = rounds.lock().expect("rounds").clone();
        if let (Some(first), Some(last)) = (snapshot.first(), snapshot.last()) {
            let ts = max_of(last, UNRESOLVED_TS);
            let scraped_at = t0 + SCRAPE.as_secs_f64() * (snapshot.len() - 1) as f64;
            let failing = failures(first, last);
            let enough = failing.values().any(|d| *d >= 3.0);
            if ts > 0.0 && scraped_at - ts > 75.0 && enough {
                let first_seen = snapshot
                    .iter()
                    .position(|r| max_of(r, UNRESOLVED_TS) > 0.0)
                    .expect("a round with the run");
                break (first_seen, snapshot.len() - 1);
            }
            if Instant::now() > deadline {
                let broken = migrations.get("broken").await.ok().and_then(|m| m.status);
                panic!(
                    "no scrape showed both conditions: unresolved timestamp {ts} (age {:.0} s), failures {failing:?}, {} rounds\nbroken: {}\n{}",
                    scraped_at - ts,
                    snapshot.len(),
                    serde_json::to_string_pretty(&broken).unwrap_or_default(),
                    manager_story(&client, &release_ns, 40).await
                );
            }
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
    };
    let snapshot: Vec<_> = rounds.lock().expect("rounds")[..=last].to_vec();
    let failing = failures(&snapshot[0], &snapshot[last]);
    let ts = max_of(&snapshot[last], UNRESOLVED_TS);
    let age = t0 + SCRAPE.as_secs_f64() * last as f64 - ts;
    eprintln!(
        "{} rounds scraped; run first exported in round {first_seen}; age at round {last}: {age:.0} s; failed operations: {failing:?}",
        snapshot.len()
    );

    // promtool: both alerts fire at the last round; the unresolved one does not without its series
    // or while the run is younger than a minute.
    let (rules, rendered) = rendered_rules(&release_ns);
    eprintln!(
        "PtahMigrationRunUnresolved: {}\nPtahOperatorOperationsFailing: {}",
        expr_of(&rules, "PtahMigrationRunUnresolved"),
        expr_of(&rules, "PtahOperatorOperationsFailing")
    );
    let secs = |i: usize| format!("{}s", i as u64 * SCRAPE.as_secs());
    let expected_failing: Vec<Value> = failing
        .iter()
        .filter(|(_, d)| **d >= 3.0)
        .map(|((kind, op), _)| {
            json!({"exp_labels": {"namespace": release_ns, "kind": kind, "operation": op, "severity": "warning"}})
        })
        .collect();
    let all = input_series(&snapshot, t0, &release_ns, &[]);
    let without_run = input_series(&snapshot, t0, &release_ns, &[UNRESOLVED_TS]);
    assert!(
        all.iter()
            .any(|s| s["series"].as_str().is_some_and(|n| n.starts_with(UNRESOLVED_TS))),
        "the scrapes export {UNRESOLVED_TS}"
    );
    let tests = json!({
        "rule_files": ["rules.yml"],
        "evaluation_interval": "15s",
        "tests": [
            {
                "name": "scraped: both alerts fire",
                "interval": "15s",
                "input_series": all,
                "alert_rule_test": [
                    {"eval_time": secs(last), "alertname": "PtahMigrationRunUnresolved",
                     "exp_alerts": [{"exp_labels": {"namespace": release_ns, "severity": "warning"}}]},
                    {"eval_time": secs(last), "alertname": "PtahOperatorOperationsFailing",
                     "exp_alerts": expected_failing},
                    {"eval_time": secs(first_seen), "alertname": "PtahMigrationRunUnresolved", "exp_alerts": []}
                ]
            },
            {
                "name": "scraped without the unresolved-run series: no unresolved alert",
                "interval": "15s",
                "input_series": without_run,
                "alert_rule_test": [
                    {"eval_time": secs(last), "alertname": "PtahMigrationRunUnresolved", "exp_alerts": []}
                ]
            }
        ]
    });
    std::fs::write(logs.join("prometheusrule.yaml"), rendered).expect("rendered");
    std::fs::write(
        logs.join("rules.yml"),
        serde_json::to_string_pretty(&rules).expect("json"),
    )
    .expect("rules");
    std::fs::write(
        logs.join("tests.yml"),
        serde_json::to_string_pretty(&tests).expect("json"),
    )
    .expect("tests");
    let out = Command::new(&promtool)
        .args(["test", "rules", "tests.yml"])
        .current_dir(&logs)
        .output()
        .expect("run promtool");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("promtool test rules ({}):\n{said}", logs.display());
    assert!(out.status.success(), "promtool test rules failed:\n{said}");
    assert!(!expected_failing.is_empty());

    // The check is not vacuous: the same file with a wrong expectation fails.
    let mut inverted = tests.clone();
    inverted["tests"][1]["alert_rule_test"][0]["exp_alerts"] =
        json!([{"exp_labels": {"namespace": release_ns, "severity": "warning"}}]);
    std::fs::write(
        logs.join("tests-inverted.yml"),
        serde_json::to_string_pretty(&inverted).expect("json"),
    )
    .expect("inverted");
    let out = Command::new(&promtool)
        .args(["test", "rules", "tests-inverted.yml"])
        .current_dir(&logs)
        .output()
        .expect("run promtool");
    assert!(
        !out.status.success(),
        "promtool accepted an unresolved alert without its series:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );

    release::uninstall(&release_ns);
    let _ = migrations.list(&ListParams::default()).await;
    eprintln!("alerting done after {:?}", t_start.elapsed());
}

fn with_database(url: &str, database: &str) -> String {
    let (base, _) = url.rsplit_once('/').expect("a URL with a path");
    format!("{base}/{database}")
}

/// A fresh PostgreSQL database owned by the app user; (host URL, Pod URL).
async fn lifecycle_db(services: &ptah_testservices::TestServices, name: &str) -> (String, String) {
    let admin = services.postgres.admin_url.expose().to_owned();
    let (client, conn) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
        .await
        .expect("connect admin");
    tokio::spawn(conn);
    client
        .batch_execute(&format!("CREATE DATABASE {name} OWNER app"))
        .await
        .expect("create database");
    let pod = pod_endpoints()
        .get("PTAH_POD_PG_URL")
        .expect("PTAH_POD_PG_URL")
        .clone();
    (
        services.postgres.url_for_database(name).expose().to_owned(),
        with_database(&pod, name),
    )
}
