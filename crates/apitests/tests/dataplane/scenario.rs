//! What every data-plane scenario measures and reports: the Apply Jobs per plan (seen by a
//! background poll, since the manager shortens a finished Job's life), the database's verdict, a
//! scan of everything the namespace said for the services' passwords, and the scenario's time.
//! The result is one `ptah_apitests::scenario::Record` appended to `$PTAH_E2E_SCENARIOS_FILE`
//! (the e2e driver collects them, the gate prints them as a table) and asserted.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use k8s_openapi::api::{batch::v1::Job, core::v1::ConfigMap};
use kube::{Api, Client, ResourceExt, api::ListParams};
use ptah_api::{PtahSchema, PtahSchemaPlan, PtahSchemaPlanChunk};
use ptah_apitests::scenario::{self as report, Database, FILE_ENV, LeakScan, Record};
use ptah_dataplane::Operation;
use ptah_testservices::TestServices;
use ptah_workload::labels::{MIGRATION_LABEL, OPERATION_LABEL, PLAN_CONTENT_DIGEST_ANNOTATION, SCHEMA_LABEL};

use crate::lifecycle::{app::Engine, everything_said};

/// Apply Job name → (its PtahSchema or PtahMigration, the content digest of the plan it
/// applies), for every Apply Job ever seen: two schemas may apply plans of the same content.
type AppliesSeen = Arc<Mutex<BTreeMap<String, (String, String)>>>;

/// One running scenario: its name, engine, start and the Apply Jobs seen in its namespace.
pub struct Scenario {
    name: &'static str,
    engine: Engine,
    started: Instant,
    client: Client,
    ns: String,
    applies: AppliesSeen,
}

/// What a scenario found at its end.
pub struct Verdict {
    /// Plan name (the content digest where the plan object is gone) → Apply Jobs.
    pub apply_jobs: BTreeMap<String, usize>,
    /// `Ok` or why the database is not in the state the scenario expects.
    pub database: Result<(), String>,
    /// `Ok` or where a password appeared.
    pub leak_scan: Result<(), String>,
    /// The scenario's own time.
    pub seconds: f64,
}

impl Scenario {
    /// Starts the clock and the Apply Job poll of `ns`.
    pub fn start(name: &'static str, engine: Engine, client: &Client, ns: &str) -> Scenario {
        let applies: AppliesSeen = Arc::default();
        let (jobs, out): (Api<Job>, AppliesSeen) = (Api::namespaced(client.clone(), ns), applies.clone());
        // A PtahMigration's Apply is an operation of its own (`migration-apply`).
        let selector = format!(
            "{OPERATION_LABEL} in ({},{})",
            Operation::Apply.as_str(),
            Operation::MigrationApply.as_str()
        );
        tokio::spawn(async move {
            loop {
                if let Ok(list) = jobs.list(&ListParams::default().labels(&selector)).await {
                    let mut seen = out.lock().expect("applies seen");
                    for job in list.items {
                        let digest = job
                            .annotations()
                            .get(PLAN_CONTENT_DIGEST_ANNOTATION)
                            .cloned()
                            .unwrap_or_default();
                        let schema = job
                            .labels()
                            .get(SCHEMA_LABEL)
                            .or_else(|| job.labels().get(MIGRATION_LABEL))
                            .cloned()
                            .unwrap_or_default();
                        seen.insert(job.name_any(), (schema, digest));
                    }
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        });
        Scenario {
            name,
            engine,
            started: Instant::now(),
            client: client.clone(),
            ns: ns.to_owned(),
            applies,
        }
    }

    /// The Apply Jobs seen so far, per plan name (by the plans' content digests).
    pub async fn apply_jobs(&self) -> BTreeMap<String, usize> {
        let plans: Api<PtahSchemaPlan> = Api::namespaced(self.client.clone(), &self.ns);
        let names: BTreeMap<(String, String), String> = plans
            .list(&ListParams::default())
            .await
            .expect("list the plans")
            .items
            .into_iter()
            .map(|p| {
                let key = (
                    p.spec.schema_ref.name.clone(),
                    p.spec.content_digest.as_str().to_owned(),
                );
                (key, p.name_any())
            })
            .collect();
        let mut out = BTreeMap::new();
        for key in self.applies.lock().expect("applies seen").values() {
            // A migration's Apply Job carries no plan digest: it is named by its PtahMigration.
            let plan = names.get(key).cloned().unwrap_or_else(|| {
                if key.1.is_empty() {
                    key.0.clone()
                } else {
                    key.1.clone()
                }
            });
            *out.entry(plan).or_insert(0) += 1;
        }
        out
    }

    /// Scans every Pod log, Event, PtahSchema status, plan, plan chunk and ConfigMap of the
    /// namespace, plus `extra` (the manager's log), for the services' passwords.
    pub async fn leak_scan(&self, services: &TestServices, extra: &str) -> Result<(), String> {
        let mut places: Vec<(String, String)> = vec![("the manager's log".into(), extra.to_owned())];
        let schemas: Api<PtahSchema> = Api::namespaced(self.client.clone(), &self.ns);
        let listed = schemas
            .list(&ListParams::default())
            .await
            .expect("list schemas")
            .items;
        for (i, schema) in listed.iter().enumerate() {
            // Pod logs and Events are read once, with the first schema.
            let said = if i == 0 {
                everything_said(&self.client, &self.ns, schema).await
            } else {
                serde_json::to_string(&schema.status).unwrap_or_default()
            };
            places.push((
                format!("Pod logs, Events and the status of {}", schema.name_any()),
                said,
            ));
        }
        let plans: Api<PtahSchemaPlan> = Api::namespaced(self.client.clone(), &self.ns);
        for plan in plans
            .list(&ListParams::default())
            .await
            .expect("list plans")
            .items
        {
            places.push((format!("plan {}", plan.name_any()), to_json(&plan)));
        }
        let chunks: Api<PtahSchemaPlanChunk> = Api::namespaced(self.client.clone(), &self.ns);
        for chunk in chunks
            .list(&ListParams::default())
            .await
            .expect("list chunks")
            .items
        {
            places.push((format!("plan chunk {}", chunk.name_any()), to_json(&chunk)));
        }
        let cms: Api<ConfigMap> = Api::namespaced(self.client.clone(), &self.ns);
        for cm in cms
            .list(&ListParams::default())
            .await
            .expect("list ConfigMaps")
            .items
        {
            places.push((format!("ConfigMap {}", cm.name_any()), to_json(&cm)));
        }
        let read: usize = places.iter().map(|(_, text)| text.len()).sum();
        assert!(
            read > 1000,
            "the leak scan read only {read} bytes: nothing to judge"
        );
        let leaked: Vec<String> = passwords(services)
            .iter()
            .flat_map(|(secret, value)| {
                places
                    .iter()
                    .filter(move |(_, text)| text.contains(value.as_str()))
                    .map(move |(place, _)| format!("the {secret} in {place}"))
            })
            .collect();
        if leaked.is_empty() {
            Ok(())
        } else {
            Err(leaked.join("; "))
        }
    }

    /// Appends the scenario's JSON line to `$PTAH_E2E_SCENARIOS_FILE` (when set), then asserts
    /// the Apply Jobs per plan, the database, the leak scan and the time bound.
    pub async fn finish(
        self,
        expected_jobs: &[usize],
        database: Result<(), String>,
        leak_scan: Result<(), String>,
        bound: Duration,
    ) {
        let verdict = Verdict {
            apply_jobs: self.apply_jobs().await,
            database,
            leak_scan,
            seconds: self.started.elapsed().as_secs_f64(),
        };
        self.record(&verdict);
        let mut counts: Vec<usize> = verdict.apply_jobs.values().copied().collect();
        counts.sort_unstable();
        let mut expected = expected_jobs.to_vec();
        expected.sort_unstable();
        assert_eq!(
            counts, expected,
            "{}: Apply Jobs per plan {:?}",
            self.name, verdict.apply_jobs
        );
        if let Err(why) = &verdict.database {
            panic!("{}: the database: {why}", self.name);
        }
        if let Err(leak) = &verdict.leak_scan {
            panic!("{}: a password leaked: {leak}", self.name);
        }
        assert!(
            verdict.seconds <= bound.as_secs_f64(),
            "{}: took {:.1} s, more than its bound {bound:?}",
            self.name,
            verdict.seconds
        );
    }

    fn record(&self, v: &Verdict) {
        let record = Record {
            scenario: self.name.to_owned(),
            engine: match self.engine {
                Engine::Postgres => report::Engine::Postgresql,
                Engine::Mariadb => report::Engine::Mysql,
            },
            apply_jobs: v
                .apply_jobs
                .iter()
                .map(|(plan, n)| (plan.clone(), u32::try_from(*n).unwrap_or(u32::MAX)))
                .collect(),
            database: match &v.database {
                Ok(()) => Database::Ok,
                Err(why) => Database::Failed(why.clone()),
            },
            leak_scan: match &v.leak_scan {
                Ok(()) => LeakScan::Clean,
                Err(at) => LeakScan::Leaked(at.clone()),
            },
            seconds: v.seconds,
        };
        eprintln!("scenario: {}", record.to_line().unwrap_or_default());
        record
            .append()
            .unwrap_or_else(|e| panic!("append to ${FILE_ENV}: {e}"));
    }
}

/// Deletes a passed scenario's namespace. The manager is gone by then, so nothing would run the
/// operator's finalizers and the namespace would stay Terminating: they are removed first (the
/// scenario is over, its databases are the test's own).
pub async fn delete_namespace(client: &Client, ns: &str) {
    use k8s_openapi::api::core::v1::Namespace;
    use kube::api::{DeleteParams, Patch, PatchParams};
    use ptah_api::PtahMigration;
    let unfinalize = Patch::Merge(serde_json::json!({"metadata": {"finalizers": null}}));
    let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), ns);
    for s in schemas
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
    {
        let _ = schemas
            .patch(&s.name_any(), &PatchParams::default(), &unfinalize)
            .await;
    }
    let migrations: Api<PtahMigration> = Api::namespaced(client.clone(), ns);
    for m in migrations
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
    {
        let _ = migrations
            .patch(&m.name_any(), &PatchParams::default(), &unfinalize)
            .await;
    }
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let _ = namespaces.delete(ns, &DeleteParams::default()).await;
}

fn to_json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Every password of `target/services.env`, named: both databases' app and admin accounts, and
/// the TLS registry's.
fn passwords(services: &TestServices) -> Vec<(&'static str, String)> {
    use crate::lifecycle::app::password_of;
    let mut out = vec![
        (
            "PostgreSQL app password",
            password_of(services.postgres.url.expose()),
        ),
        (
            "PostgreSQL admin password",
            password_of(services.postgres.admin_url.expose()),
        ),
        ("MariaDB app password", password_of(services.mysql.url.expose())),
        (
            "MariaDB admin password",
            password_of(services.mysql.admin_url.expose()),
        ),
        (
            "registry password",
            services.registry.password.expose().to_owned(),
        ),
    ];
    out.retain(|(_, p)| !p.is_empty());
    assert!(
        out.iter().all(|(_, p)| p.len() >= 8),
        "the scan needs real passwords, not short strings that occur by chance"
    );
    out
}
