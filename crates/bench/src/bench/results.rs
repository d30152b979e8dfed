//! `cargo xtask bench results`: the cost of durable result delivery's encoding against the log
//! frame it replaces (the baseline), for an exactly 8 MiB plan, interleaved round by round.
//!
//! The log path is `encode_frame` in the runner and `parse_last_frame` in the manager. The durable
//! path is the canonical body in the runner, its decoding with the canonical check in the
//! receiver, the cut into records, and putting them back together and decoding again where the
//! manager consumes them. Both must give back exactly the payload they started from.

use std::{path::PathBuf, time::Instant};

use anyhow::{Context, bail, ensure};
use ptah_dataplane::{
    MAX_PLAN_BYTES, Operation, OperationId, PlanOutcome, PlanResult, ResultPayload, encode_frame,
    parse_last_frame,
};
use ptah_fingerprint::{Digest, Fingerprint};
use ptah_resultdelivery::{
    ClaimRef, ObjectRef, ResourceKind, ResourceRef, ResultBinding, ResultBody, reassemble, split,
};
use serde_json::{Value, json};

use super::samples::{Samples, round};

/// Arguments of `cargo xtask bench results`.
#[derive(clap::Args)]
pub struct Args {
    /// Timed rounds (after one untimed warm-up round).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Where to write the JSON report (default: target/bench/results.json).
    #[arg(long)]
    output: Option<PathBuf>,
}

/// A plan of exactly `bytes` made of `line` repeated, padded with a comment line.
fn plan_of(line: &str, bytes: usize) -> String {
    let mut plan = line.repeat(bytes / line.len());
    let pad = bytes - plan.len();
    if pad > 0 {
        plan.push_str(&"-".repeat(pad - 1));
        plan.push('\n');
    }
    plan
}

fn fingerprint(n: u32) -> anyhow::Result<Fingerprint> {
    Ok(Fingerprint::of(&n)?)
}

fn payload(plan: &str) -> anyhow::Result<ResultPayload> {
    let id = OperationId::new("op-bench").map_err(anyhow::Error::msg)?;
    let mut p = ResultPayload::new(Operation::Plan, Some(id));
    p.child_exit_code = 1;
    p.coordination_digest = Some(fingerprint(1)?);
    p.target_identity_digest = Some(fingerprint(2)?);
    p.stdout = Some(plan.to_owned());
    p.plan = Some(PlanResult {
        plan_content_digest: Digest::of(plan.as_bytes()),
        plan_outcome: PlanOutcome::Changes,
        statement_count: 1,
        destructive: false,
        from_fingerprint: fingerprint(3)?,
        to_fingerprint: fingerprint(4)?,
    });
    Ok(p)
}

fn binding() -> anyhow::Result<ResultBinding> {
    let object = |name: &str, uid: &str| ObjectRef {
        name: name.to_owned(),
        uid: uid.to_owned(),
    };
    Ok(ResultBinding {
        resource: ResourceRef {
            namespace: "bench".to_owned(),
            kind: ResourceKind::PtahSchema,
            name: "orders".to_owned(),
            uid: "0b6f1c0e-2f0e-4c54-9d0b-8f3c2a1d7e01".to_owned(),
            generation: 1,
        },
        claim: ClaimRef {
            execution_binding_id: "eb-1".to_owned(),
            input_fingerprint: fingerprint(5)?,
            operation: Operation::Plan,
            operation_id: OperationId::new("op-bench").map_err(anyhow::Error::msg)?,
        },
        job: object("orders-plan", "5c2e0c1a-0000-4000-8000-000000000001"),
        pod: object("orders-plan-x7k2p", "5c2e0c1a-0000-4000-8000-000000000002"),
    })
}

/// The log path; returns the frame's size.
fn log_frame(payload: &ResultPayload) -> anyhow::Result<usize> {
    let (frame, _) = encode_frame(payload)?;
    let parsed = parse_last_frame(&frame).map_err(|e| anyhow::anyhow!("{e}"))?;
    ensure!(&parsed.payload == payload, "the frame gave back another payload");
    Ok(frame.len())
}

/// The durable path; returns the body's size and its record count.
fn durable(body: &ResultBody) -> anyhow::Result<(usize, u32)> {
    let encoded = body.encode()?;
    let digest = encoded.digest.to_string();
    let received = ResultBody::decode(&encoded.bytes, &digest)?;
    let (intent, chunks) = split(&encoded);
    let numbered: Vec<(u32, &[u8])> = (0..).zip(chunks).collect();
    let stored = reassemble(&intent, &numbered)?;
    let consumed = ResultBody::decode(&stored, &digest)?;
    ensure!(
        received == *body && consumed == *body,
        "the records gave back another body"
    );
    Ok((encoded.bytes.len(), intent.chunks))
}

/// Runs the benchmark, prints the table and writes the JSON report.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    let build = super::output::build();
    eprintln!(
        "bench results: {build} build, 8 MiB plans, {} rounds",
        args.rounds
    );
    let inputs = [
        (
            "ordinary SQL",
            plan_of(
                "CREATE INDEX orders_by_customer ON shop.orders (customer_id, placed_at);\n",
                MAX_PLAN_BYTES,
            ),
        ),
        (
            "quotes and tabs",
            plan_of(
                "\tINSERT INTO t VALUES ('a\"b', '\\\\', \"c\");\n",
                MAX_PLAN_BYTES,
            ),
        ),
    ];
    let mut rows = Vec::new();
    for (name, plan) in &inputs {
        let payload = payload(plan).with_context(|| format!("the {name} payload"))?;
        let body = ResultBody {
            binding: binding()?,
            payload: payload.clone(),
        };
        let (mut frame_s, mut body_s) = (Samples::default(), Samples::default());
        let (mut frame_bytes, mut body_bytes, mut records) = (0, 0, 0);
        for round_no in 0..=args.rounds {
            // The order alternates so neither path always runs on a warm allocator.
            for first in [round_no % 2 == 0, round_no % 2 == 1] {
                let start = Instant::now();
                if first {
                    frame_bytes = log_frame(&payload)?;
                } else {
                    (body_bytes, records) = durable(&body)?;
                }
                let secs = start.elapsed().as_secs_f64();
                if round_no > 0 {
                    if first {
                        frame_s.0.push(secs)
                    } else {
                        body_s.0.push(secs)
                    }
                }
            }
        }
        rows.push(json!({
            "plan": name,
            "plan_bytes": plan.len(),
            "frame_bytes": frame_bytes,
            "body_bytes": body_bytes,
            "records": records,
            "log_frame_seconds": frame_s.to_json(),
            "durable_seconds": body_s.to_json(),
            "durable_over_log_frame": round(body_s.median() / frame_s.median()),
        }));
    }
    print_table(&rows, build);
    let report = json!({
        "benchmark": "results",
        "build": build,
        "rounds": args.rounds,
        "baseline": "log frame (encode_frame, parse_last_frame)",
        "results": rows,
    });
    let path = super::output::path(args.output, "results");
    super::output::write(&path, &report)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

fn print_table(rows: &[Value], build: &str) {
    println!(
        "\nresult delivery of an 8 MiB plan ({build}; median of the rounds; ratio against the log frame)\n"
    );
    println!("| plan | frame bytes | body bytes | records | log frame s | durable s | durable / log frame |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.2}× |",
            r["plan"].as_str().unwrap_or("?"),
            r["frame_bytes"],
            r["body_bytes"],
            r["records"],
            r["log_frame_seconds"]["median"],
            r["durable_seconds"]["median"],
            r["durable_over_log_frame"].as_f64().unwrap_or(f64::NAN)
        );
    }
}
