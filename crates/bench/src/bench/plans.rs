//! `cargo xtask bench plans`: publishing and reloading a plan through `ptah-planstore` against
//! the running cluster's API server, each against moving the same bytes bare in the same round.
//!
//! Per round, a fresh plan document of `--mib` MiB (a different one each round, so every
//! publication creates its objects):
//! * `publish`: [`PlanStore::publish`] (plan object, chunks, their check, `Ready` status);
//! * `reload`: [`PlanStore::load`] of that plan (every check, every byte hashed);
//! * `bare chunk writes` (baseline of publish): the same pieces created as PtahSchemaPlanChunks
//!   through the same client, as concurrently as publish creates them, with no plan, no check and
//!   no status;
//! * `bare chunk reads` (baseline of reload): those chunks read back concurrently;
//! * `ConfigMap writes` / `ConfigMap reads`: the same pieces as ConfigMaps (`binaryData`), for
//!   what a built-in type costs the API server next to a custom resource.
//!
//! The ratios isolate the store's own work (objects, round trips, checks) from what the API
//! server costs to store and return these bytes. The namespace is deleted at the end.

use std::{path::PathBuf, time::Instant};

use anyhow::{Context, bail};
use futures_util::future::try_join_all;
use k8s_openapi::{
    ByteString,
    api::core::v1::{ConfigMap, Namespace},
};
use kube::{
    Api, Client,
    api::{DeleteParams, ObjectMeta, PostParams},
};
use ptah_api::{
    PtahSchema, PtahSchemaPlanChunk, PtahSchemaPlanChunkSpec, schemaplan::ChunkData,
    shared::ImmutableObjectReference,
};
use ptah_apitests::{
    client::{admin_client, install_crds, namespace},
    fixtures,
};
use ptah_planstore::PlanStore;
use serde_json::json;

use super::samples::{Samples, round};

/// The goals of `reference/bench-baseline.md` are stated for 8 MiB.
const GOAL_MIB: usize = 8;

/// Arguments of `cargo xtask bench plans`.
#[derive(clap::Args)]
pub struct Args {
    /// Timed rounds (after one untimed warm-up round).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Size of the plan document in MiB (at most 8, the contract's limit).
    #[arg(long, default_value_t = GOAL_MIB)]
    mib: usize,
    /// Where to write the JSON report (default: target/bench/plans.json).
    #[arg(long)]
    output: Option<PathBuf>,
}

/// What a round times, in table order: each figure is followed by its baseline.
const KINDS: [&str; 6] = [
    "publish",
    "bare chunk writes",
    "reload",
    "bare chunk reads",
    "ConfigMap writes",
    "ConfigMap reads",
];

/// Where a pair's write and read go in [`KINDS`]: pair 0 is publish and reload, pair 1 the bare
/// chunks, pair 2 the ConfigMaps.
fn slots(pair: usize) -> (usize, usize) {
    match pair {
        0 => (0, 2),
        1 => (1, 3),
        _ => (4, 5),
    }
}

/// Runs the benchmark, prints the table and writes the JSON report.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.rounds == 0 || args.mib == 0 || args.mib > GOAL_MIB {
        bail!("--rounds must be at least 1 and --mib in 1..=8");
    }
    let build = super::output::build();
    eprintln!(
        "bench plans: {build} build, {} MiB plans, {} rounds, against the API server of target/cluster",
        args.mib, args.rounds
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    let samples = runtime.block_on(measure(&args))?;
    print_table(&samples, build, args.mib);
    let ratio = |a: usize, b: usize| round(samples[a].median() / samples[b].median());
    let report = json!({
        "benchmark": "plans",
        "build": build,
        "bytes": args.mib * 1024 * 1024,
        "rounds": args.rounds,
        "baselines": "bare chunk writes/reads: the same pieces as PtahSchemaPlanChunks through the same client, concurrently, without plan, checks or status",
        "results": KINDS.iter().zip(&samples).map(|(k, s)| json!({"kind": k, "seconds": s.to_json()})).collect::<Vec<_>>(),
        "publish_over_bare_writes": ratio(0, 1),
        "reload_over_bare_reads": ratio(2, 3),
        "publish_over_configmap_writes": ratio(0, 4),
        "reload_over_configmap_reads": ratio(2, 5),
    });
    let path = super::output::path(args.output, "plans");
    super::output::write(&path, &report)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// The namespace, its PtahSchema and the store.
struct Fixture {
    client: Client,
    ns: String,
    schema: PtahSchema,
    store: PlanStore,
}

async fn measure(args: &Args) -> anyhow::Result<Vec<Samples>> {
    let client = admin_client().await;
    install_crds(&client).await;
    let ns = namespace(&client, "bench-plans").await;
    let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), &ns);
    let schema: PtahSchema = serde_json::from_value(fixtures::schema(&ns, "orders"))?;
    let schema = schemas
        .create(&PostParams::default(), &schema)
        .await
        .context("cannot create the PtahSchema")?;
    let fixture = Fixture {
        store: PlanStore::new(client.clone()),
        client,
        ns,
        schema,
    };
    let result = rounds(&fixture, args).await;
    let namespaces: Api<Namespace> = Api::all(fixture.client.clone());
    let _ = namespaces.delete(&fixture.ns, &DeleteParams::default()).await;
    result
}

async fn rounds(f: &Fixture, args: &Args) -> anyhow::Result<Vec<Samples>> {
    let mut samples: Vec<Samples> = KINDS.iter().map(|_| Samples::default()).collect();
    for round_no in 0..=args.rounds {
        let bytes = document(args.mib * 1024 * 1024, round_no);
        let pieces = ptah_plancontract::split(&bytes)?;
        // Three pairs (a write and its read), in an order that rotates from round to round.
        for k in 0..3 {
            let pair = (k + round_no) % 3;
            let (write, read) = match pair {
                0 => {
                    let start = Instant::now();
                    let plan = f
                        .store
                        .publish(&f.schema, fixtures::schema_plan_spec(1, false), &bytes)
                        .await?;
                    let write = start.elapsed().as_secs_f64();
                    let reference = ImmutableObjectReference {
                        name: plan.metadata.name.clone().unwrap_or_default(),
                        uid: plan.metadata.uid.clone().unwrap_or_default(),
                    };
                    let start = Instant::now();
                    let loaded = f.store.load(&f.ns, &reference).await?;
                    let read = start.elapsed().as_secs_f64();
                    if loaded.bytes != bytes {
                        bail!("the reloaded plan is not the published document");
                    }
                    (write, read)
                }
                1 => bare_chunks(f, round_no, &pieces).await?,
                _ => configmaps(f, round_no, &pieces).await?,
            };
            if round_no > 0 {
                let (w, r) = slots(pair);
                samples[w].0.push(write);
                samples[r].0.push(read);
            }
        }
    }
    Ok(samples)
}

/// A document of `size` bytes unique to `seed`: SQL-like lines, so it is text as plans are.
fn document(size: usize, seed: usize) -> Vec<u8> {
    let line = format!("ALTER TABLE bench_{seed} ADD COLUMN note_{seed} text; -- round {seed}\n");
    line.bytes().cycle().take(size).collect()
}

/// Creates `pieces` as PtahSchemaPlanChunks concurrently, then reads them back concurrently.
async fn bare_chunks(f: &Fixture, round_no: usize, pieces: &[&[u8]]) -> anyhow::Result<(f64, f64)> {
    let api: Api<PtahSchemaPlanChunk> = Api::namespaced(f.client.clone(), &f.ns);
    let names: Vec<String> = (0..pieces.len())
        .map(|i| format!("bare-{round_no}-{i:03}"))
        .collect();
    let start = Instant::now();
    try_join_all(names.iter().zip(pieces).map(|(name, piece)| {
        let chunk = PtahSchemaPlanChunk::new(
            name,
            PtahSchemaPlanChunkSpec {
                data: ChunkData(ByteString(piece.to_vec())),
            },
        );
        let api = api.clone();
        async move { api.create(&PostParams::default(), &chunk).await }
    }))
    .await?;
    let write = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let read = try_join_all(names.iter().map(|name| api.get(name))).await?;
    let read_secs = start.elapsed().as_secs_f64();
    let whole: usize = pieces.iter().map(|p| p.len()).sum();
    if read.iter().map(|c| c.spec.data.0.0.len()).sum::<usize>() != whole {
        bail!("the bare chunks did not come back whole");
    }
    Ok((write, read_secs))
}

/// Creates `pieces` as ConfigMaps concurrently, then reads them back concurrently.
async fn configmaps(f: &Fixture, round_no: usize, pieces: &[&[u8]]) -> anyhow::Result<(f64, f64)> {
    let api: Api<ConfigMap> = Api::namespaced(f.client.clone(), &f.ns);
    let names: Vec<String> = (0..pieces.len())
        .map(|i| format!("bare-cm-{round_no}-{i:03}"))
        .collect();
    let start = Instant::now();
    try_join_all(names.iter().zip(pieces).map(|(name, piece)| {
        let map = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            },
            binary_data: Some([("chunk".to_owned(), ByteString(piece.to_vec()))].into()),
            ..ConfigMap::default()
        };
        let api = api.clone();
        async move { api.create(&PostParams::default(), &map).await }
    }))
    .await?;
    let write = start.elapsed().as_secs_f64();
    let start = Instant::now();
    try_join_all(names.iter().map(|name| api.get(name))).await?;
    Ok((write, start.elapsed().as_secs_f64()))
}

fn print_table(samples: &[Samples], build: &str, mib: usize) {
    println!("\nplans of {mib} MiB ({build}; median of the rounds; each figure against the row below it)\n");
    println!("| kind | median s | min s | max s | over baseline |");
    println!("| --- | --- | --- | --- | --- |");
    for (i, (kind, s)) in KINDS.iter().zip(samples).enumerate() {
        let over = match i {
            0 | 2 => format!("{:.2}×", s.median() / samples[i + 1].median()),
            _ => "(baseline)".to_owned(),
        };
        println!(
            "| {kind} | {:.3} | {:.3} | {:.3} | {over} |",
            s.median(),
            s.min(),
            s.max()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each pair's figures land in the rows that name them (they once landed one row off, so
    /// "reload" showed the bare writes).
    #[test]
    fn each_pair_fills_the_rows_that_name_it() {
        let names = |pair| {
            let (w, r) = slots(pair);
            (KINDS[w], KINDS[r])
        };
        assert_eq!(names(0), ("publish", "reload"));
        assert_eq!(names(1), ("bare chunk writes", "bare chunk reads"));
        assert_eq!(names(2), ("ConfigMap writes", "ConfigMap reads"));
    }
}
