//! Comparing a Job read back from the API server with the Job built from the claim.
//!
//! Every field the builder set must come back equal (quantities by amount). A field only the live
//! Job has is accepted only when the API server is known to add it with exactly that value
//! (defaults, the generated selector and its labels, server metadata, status) or when it is empty;
//! anything else (a sidecar, a new env var, `privileged: true` from a mutating webhook) is a
//! difference. Differences name paths only, never values: a tampered Job may carry a secret.

use std::fmt;

use k8s_openapi::api::batch::v1::Job;
use serde_json::{Value, json};

use crate::quantity;

/// How one field differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DifferenceKind {
    /// The intent sets it; the live Job lacks it.
    Missing,
    /// The live Job has it; the intent does not, and it is no known server default.
    Unexpected,
    /// Both have it, with different values (or lists of different lengths).
    Changed,
}

/// One differing field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The field's path, e.g. `spec.template.spec.containers[2].env[3].value`.
    pub path: String,
    /// How it differs.
    pub kind: DifferenceKind,
}

/// The live Job is not the intended one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct IntentMismatch {
    /// Every difference found, in document order.
    pub differences: Vec<Difference>,
}

impl fmt::Display for IntentMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the live Job differs from its intent at")?;
        // A few paths say enough; the full list is in `differences`.
        for (i, d) in self.differences.iter().take(8).enumerate() {
            let sep = if i == 0 { " " } else { ", " };
            write!(f, "{sep}{} ({:?})", d.path, d.kind)?;
        }
        if self.differences.len() > 8 {
            write!(f, " and {} more", self.differences.len() - 8)?;
        }
        Ok(())
    }
}

/// What the live Job says about itself, for the values the API server derives from it.
struct Live {
    uid: Value,
    name: Value,
    service_account: Value,
}

/// Compares `live` with `intended`; `Ok` when every difference is a known server addition.
pub fn compare(intended: &Job, live: &Job) -> Result<(), IntentMismatch> {
    let (intended, live) = match (serde_json::to_value(intended), serde_json::to_value(live)) {
        (Ok(i), Ok(l)) => (i, l),
        _ => {
            return Err(IntentMismatch {
                differences: vec![Difference {
                    path: String::new(),
                    kind: DifferenceKind::Changed,
                }],
            });
        }
    };
    let ctx = Live {
        uid: live["metadata"]["uid"].clone(),
        name: live["metadata"]["name"].clone(),
        service_account: live["spec"]["template"]["spec"]["serviceAccountName"].clone(),
    };
    let mut out = Vec::new();
    walk("", "", &intended, &live, &ctx, &mut out);
    if out.is_empty() {
        Ok(())
    } else {
        Err(IntentMismatch { differences: out })
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// `path` is for the report; `shape` is the same path with list indices removed (`[]`), for rules.
fn walk(path: &str, shape: &str, intended: &Value, live: &Value, ctx: &Live, out: &mut Vec<Difference>) {
    match (intended, live) {
        (Value::Object(i), Value::Object(l)) => {
            for (key, iv) in i {
                let (p, s) = (join(path, key), join(shape, key));
                match l.get(key) {
                    Some(Value::String(lv))
                        if is_quantity(shape, key)
                            && iv.as_str().is_some_and(|iv| quantity::same(iv, lv)) => {}
                    Some(lv) => walk(&p, &s, iv, lv, ctx, out),
                    None if is_empty(iv) => {}
                    None => out.push(Difference {
                        path: p,
                        kind: DifferenceKind::Missing,
                    }),
                }
            }
            for (key, lv) in l {
                if !i.contains_key(key) && !server_added(shape, key, lv, ctx) {
                    out.push(Difference {
                        path: join(path, key),
                        kind: DifferenceKind::Unexpected,
                    });
                }
            }
        }
        (Value::Array(i), Value::Array(l)) if i.len() == l.len() => {
            for (n, (iv, lv)) in i.iter().zip(l).enumerate() {
                walk(&format!("{path}[{n}]"), &format!("{shape}[]"), iv, lv, ctx, out);
            }
        }
        (i, l) if i == l => {}
        (i, l) if is_empty(i) && is_empty(l) => {}
        _ => out.push(Difference {
            path: path.to_owned(),
            kind: DifferenceKind::Changed,
        }),
    }
}

/// True when field `key` of the object at `parent` is a quantity (resource names contain dots,
/// so the parent is matched, not a joined path).
fn is_quantity(parent: &str, key: &str) -> bool {
    parent.ends_with("resources.limits")
        || parent.ends_with("resources.requests")
        || (parent.ends_with("emptyDir") && key == "sizeLimit")
}

const POD: &str = "spec.template.spec";

/// True when the API server adds field `key` with value `v` to the object at `parent` on its own.
fn server_added(parent: &str, key: &str, v: &Value, ctx: &Live) -> bool {
    if is_empty(v) {
        return true;
    }
    let shape = &join(parent, key);
    let container_field = shape
        .strip_prefix(POD)
        .and_then(|rest| {
            rest.strip_prefix(".containers[].")
                .or_else(|| rest.strip_prefix(".initContainers[]."))
        })
        .unwrap_or("");
    match shape.as_str() {
        "status" => true,
        "metadata.uid"
        | "metadata.resourceVersion"
        | "metadata.generation"
        | "metadata.creationTimestamp"
        | "metadata.managedFields"
        | "metadata.deletionTimestamp"
        | "metadata.deletionGracePeriodSeconds" => true,
        // Deleting a Job in the foreground or orphaning its Pods adds these; no other finalizer.
        "metadata.finalizers" => v
            .as_array()
            .is_some_and(|f| f.iter().all(|x| x == "foregroundDeletion" || x == "orphan")),
        "spec.selector" => *v == json!({"matchLabels": {"batch.kubernetes.io/controller-uid": ctx.uid}}),
        "spec.suspend" | "spec.manualSelector" => *v == json!(false),
        "spec.completionMode" => *v == json!("NonIndexed"),
        _ if *shape == format!("{POD}.dnsPolicy") => *v == json!("ClusterFirst"),
        _ if *shape == format!("{POD}.schedulerName") => *v == json!("default-scheduler"),
        // The deprecated mirror of serviceAccountName.
        _ if *shape == format!("{POD}.serviceAccount") => *v == ctx.service_account,
        _ if parent == "metadata.labels" || parent == "spec.template.metadata.labels" => match key {
            "batch.kubernetes.io/controller-uid" | "controller-uid" => *v == ctx.uid,
            "batch.kubernetes.io/job-name" | "job-name" => *v == ctx.name,
            _ => false,
        },
        _ => match container_field {
            "terminationMessagePath" => *v == json!("/dev/termination-log"),
            "terminationMessagePolicy" => *v == json!("File"),
            "securityContext.procMount" => *v == json!("Default"),
            _ => false,
        },
    }
}
