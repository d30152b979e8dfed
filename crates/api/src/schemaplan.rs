//! `PtahSchemaPlan` and `PtahSchemaPlanChunk`: an immutable published plan and its byte chunks.

use k8s_openapi::ByteString;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::shared::{ImmutableObjectReference, PlanExecutionBinding, PlanSeverity, Sha256Digest};

/// The plan contract version this API carries.
pub const SCHEMA_PLAN_CONTRACT_VERSION: i32 = 3;
/// The largest plan document in bytes (8 MiB).
pub const MAX_PLAN_BYTES: i64 = 8 * 1024 * 1024;
/// The largest chunk in bytes (512 KiB).
pub const MAX_CHUNK_BYTES: i64 = 512 * 1024;
/// The most chunks a plan has.
pub const MAX_CHUNKS: usize = 16;
/// The longest base64 text of one chunk (`4 * ceil(512 KiB / 3)`).
pub const MAX_CHUNK_BASE64_LEN: usize = 699_052;

/// A kind of privilege change a plan makes; any of them requires an approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub enum PrivilegeChangeKind {
    /// `GRANT` statements.
    Grant,
    /// `REVOKE` statements.
    Revoke,
    /// Role membership changes.
    RoleMembership,
    /// Role creation, change or removal.
    Role,
    /// Ownership changes.
    Ownership,
    /// Row-level security policies.
    RowSecurityPolicy,
    /// `SECURITY DEFINER` functions.
    SecurityDefiner,
    /// MySQL `DEFINER` clauses.
    Definer,
    /// Replacing an existing function.
    FunctionReplacement,
}

/// One chunk of the plan document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlanChunkRef {
    /// The PtahSchemaPlanChunk object's name.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// The key the bytes are projected under.
    #[schemars(length(min = 1, max = 253))]
    pub key: String,
    /// Position in the document (0–15).
    #[schemars(range(min = 0, max = 15))]
    pub index: i32,
    /// Digest of the chunk bytes.
    pub digest: Sha256Digest,
    /// Size of the chunk in bytes (1–524288).
    #[schemars(range(min = 1, max = 524288))]
    pub size: i64,
}

/// An immutable schema plan, bound by fingerprint to its full evidence chain.
#[derive(CustomResource, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[kube(
    group = "operator.ptah.run",
    version = "v1alpha1",
    kind = "PtahSchemaPlan",
    plural = "ptahschemaplans",
    namespaced,
    status = "PtahSchemaPlanStatus",
    shortname = "ptahplan",
    category = "ptah",
    derive = "PartialEq",
    printcolumn(name = "Schema", type_ = "string", json_path = ".spec.schemaRef.name"),
    printcolumn(name = "Fingerprint", type_ = "string", json_path = ".spec.fingerprint"),
    printcolumn(name = "Statements", type_ = "integer", json_path = ".spec.statementCount"),
    printcolumn(name = "Destructive", type_ = "boolean", json_path = ".spec.destructive"),
    printcolumn(name = "Severity", type_ = "string", json_path = ".spec.severity"),
    printcolumn(name = "Privileges", type_ = "string", json_path = ".spec.privilegeChanges"),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self == oldSelf").message("a published plan is immutable"))]
pub struct PtahSchemaPlanSpec {
    /// The plan contract version (only 3).
    #[schemars(extend("enum" = [3]))]
    pub contract_version: i32,
    /// The PtahSchema the plan belongs to.
    pub schema_ref: ImmutableObjectReference,
    /// The plan fingerprint approvals name.
    pub fingerprint: Sha256Digest,
    /// Digest of the whole plan document.
    pub content_digest: Sha256Digest,
    /// Size of the plan document in bytes (1–8388608).
    #[schemars(range(min = 1, max = 8388608))]
    pub size: i64,
    /// Fingerprint of the observed database state.
    pub actual_state_fingerprint: Sha256Digest,
    /// Fingerprint of the desired state.
    pub desired_state_fingerprint: Sha256Digest,
    /// The execution and target bindings.
    #[serde(flatten)]
    pub binding: PlanExecutionBinding,
    /// The SQL dialect of the statements.
    #[schemars(length(min = 1, max = 63))]
    pub dialect: String,
    /// Whether the plan is destructive.
    pub destructive: bool,
    /// Privilege changes in the plan (at most 16).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub privilege_changes: Vec<PrivilegeChangeKind>,
    /// The highest statement severity the operator read (absent in plans of earlier managers,
    /// which `BySeverity` treats as needing an approval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<PlanSeverity>,
    /// Number of statements.
    #[schemars(range(min = 0))]
    pub statement_count: i32,
    /// The chunks, in order (1–16).
    #[schemars(length(min = 1, max = 16))]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["index".into()]))]
    pub chunks: Vec<PlanChunkRef>,
}

/// A chunk object the publisher created and read back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PublishedChunk {
    /// The chunk object's name.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Its UID.
    #[schemars(length(min = 1, max = 128))]
    pub uid: String,
    /// Its position.
    #[schemars(range(min = 0, max = 15))]
    pub index: i32,
}

/// Publication state of a plan: `Ready=True` (reason `Published`) once every chunk is read back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct PtahSchemaPlanStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The chunks as published (at most 16).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["index".into()]))]
    pub published_chunks: Vec<PublishedChunk>,
    /// Conditions, one per type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
}

/// One immutable chunk of a plan document (no status).
#[derive(CustomResource, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[kube(
    group = "operator.ptah.run",
    version = "v1alpha1",
    kind = "PtahSchemaPlanChunk",
    plural = "ptahschemaplanchunks",
    namespaced,
    shortname = "ptahchunk",
    category = "ptah",
    derive = "PartialEq"
)]
#[x_kube(validation = Rule::new("self == oldSelf").message("a plan chunk is immutable"))]
pub struct PtahSchemaPlanChunkSpec {
    /// The chunk bytes (base64 on the wire, at most 512 KiB).
    #[schemars(length(min = 1, max = 699052))]
    pub data: ChunkData,
}

/// Chunk bytes, base64-encoded on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ChunkData(pub ByteString);

impl JsonSchema for ChunkData {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ChunkData".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "format": "byte" })
    }
}
