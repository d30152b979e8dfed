//! `ptah oci resolve|inspect|verify|pull|push`: Ptah OCI artifacts on a registry.
//!
//! Credentials come from the environment (`PTAH_REGISTRY_TOKEN`, or `PTAH_REGISTRY_USERNAME` and
//! `PTAH_REGISTRY_PASSWORD`) or a Docker config (`DOCKER_CONFIG`); extra CAs from
//! `PTAH_OCI_CA_FILE`; provenance from `PTAH_OCI_SOURCE`/`PTAH_OCI_REVISION`/`PTAH_OCI_BUILD_RUN`.
//! There is no password flag. Exit codes: 0 success; 1 the artifact is bad (digest mismatch,
//! unsafe path, limit, wrong type) or a policy finding; 2 usage, access or input errors.

use std::{fmt::Write as _, future::Future, path::PathBuf, time::Duration};

use clap::Subcommand;
use ptah_artifact::{Error, Kind, Limits, Policy, Provenance, Reference, Registry, RegistryOptions};

use crate::common::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE, Format, Output, parse_duration};

/// `ptah oci …`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The OCI command.
    #[command(subcommand)]
    pub command: Sub,
}

/// The OCI commands.
#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Resolve a reference to its manifest digest.
    Resolve(RefArgs),
    /// Describe an artifact: types, sizes, annotations, layers.
    Inspect(RefArgs),
    /// Check an artifact against a verification policy (version 1).
    Verify(VerifyArgs),
    /// Pull an artifact into memory, optionally writing it to a new directory.
    Pull(PullArgs),
    /// Push a schema (`--file schema.hcl`) or migration directory (`--dir`).
    Push(PushArgs),
}

/// What every OCI command takes.
#[derive(Debug, Clone, clap::Args)]
pub struct Common {
    /// `oci://host[:port]/repository[:tag][@sha256:…]`.
    pub reference: String,
    /// Talk plain HTTP to this registry (never the default).
    #[arg(long)]
    pub plain_http: bool,
    /// How long the whole operation may take (e.g. 2m).
    #[arg(long, default_value = "2m", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Report format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Bytes all of the artifact's files may take (default 512 MiB). An operation Job sets it
    /// below the volume it pulls into, so an oversized artifact is refused, never evicted.
    #[arg(long, value_name = "BYTES")]
    pub max_total_bytes: Option<u64>,
    /// Bytes one file of the artifact may take (default 64 MiB).
    #[arg(long, value_name = "BYTES")]
    pub max_file_bytes: Option<u64>,
    /// Bytes a manifest may take (default 4 MiB).
    #[arg(long, value_name = "BYTES")]
    pub max_manifest_bytes: Option<u64>,
}

impl Common {
    /// The limits of this invocation: the defaults, lowered or raised by the flags.
    pub(crate) fn limits(&self) -> Limits {
        let d = Limits::default();
        Limits {
            max_total_size: self.max_total_bytes.unwrap_or(d.max_total_size),
            max_file_size: self.max_file_bytes.unwrap_or(d.max_file_size),
            max_manifest_size: self.max_manifest_bytes.unwrap_or(d.max_manifest_size),
            ..d
        }
    }
}

/// Arguments of `resolve` and `inspect`.
#[derive(Debug, clap::Args)]
pub struct RefArgs {
    #[command(flatten)]
    common: Common,
}

/// Arguments of `verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    common: Common,
    /// The policy file (YAML or JSON).
    #[arg(long)]
    policy: PathBuf,
    /// The reference as its author wrote it, when the one verified is its pinned form:
    /// `require_digest_pin` is judged on this one (a tag the resolver pinned is still a tag).
    #[arg(long, value_name = "REFERENCE")]
    requested_reference: Option<String>,
}

/// Arguments of `pull`.
#[derive(Debug, clap::Args)]
pub struct PullArgs {
    #[command(flatten)]
    pub(crate) common: Common,
    /// Refuse any other kind.
    #[arg(long)]
    pub(crate) kind: Option<Kind>,
    /// Write the files to this new directory (it must not exist).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
}

/// Arguments of `push`.
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    #[command(flatten)]
    pub(crate) common: Common,
    /// The artifact kind.
    #[arg(long)]
    pub(crate) kind: Kind,
    /// The canonical `schema.hcl` (schema artifacts).
    #[arg(long, conflicts_with = "dir")]
    pub(crate) file: Option<PathBuf>,
    /// The migration directory with a current `ptah.sum` (migration artifacts).
    #[arg(long)]
    pub(crate) dir: Option<PathBuf>,
}

/// Runs one `ptah oci` command and returns its exit code.
pub async fn run(args: Args) -> u8 {
    match args.command {
        Sub::Resolve(a) => resolve(a.common).await,
        Sub::Inspect(a) => inspect(a.common).await,
        Sub::Verify(a) => verify(a).await,
        Sub::Pull(a) => pull(a, "oci pull").await,
        Sub::Push(a) => push(a, "oci push").await,
    }
}

/// The parsed reference and a registry connection, or the exit code of the failure.
fn connect(common: &Common, out: &Output) -> Result<(Reference, Registry), u8> {
    let reference: Reference = common
        .reference
        .parse()
        .map_err(|e| fail(out, &Error::Reference(e)))?;
    let mut options = RegistryOptions::from_process_env().map_err(|e| fail(out, &e))?;
    options.plain_http = common.plain_http;
    let registry = Registry::connect(&reference, &options).map_err(|e| fail(out, &e))?;
    Ok((reference, registry))
}

/// Reports `err`: integrity failures exit 1, everything else 2.
fn fail(out: &Output, err: &Error) -> u8 {
    let exit = if err.is_integrity() {
        EXIT_FAILURE
    } else {
        EXIT_USAGE
    };
    out.error(err.code(), &err.to_string(), exit)
}

/// Runs `fut` within `timeout`.
async fn bounded<T>(
    timeout: Duration,
    registry: &Registry,
    fut: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    tokio::time::timeout(timeout, fut).await.unwrap_or_else(|_| {
        Err(Error::Timeout {
            registry: registry.host().to_owned(),
        })
    })
}

async fn resolve(common: Common) -> u8 {
    let out = Output {
        format: common.format,
        command: "oci resolve",
    };
    let (reference, registry) = match connect(&common, &out) {
        Ok(pair) => pair,
        Err(code) => return code,
    };
    match bounded(
        common.timeout,
        &registry,
        registry.resolve(&reference, &common.limits()),
    )
    .await
    {
        Ok(resolved) => {
            let report = serde_json::json!({
                "reference": reference.to_string(),
                "digest": resolved.digest,
                "pinned_reference": resolved.pinned.to_string(),
                "artifact_type": resolved.manifest.artifact_type,
            });
            out.report(&report, || resolved.pinned.to_string(), EXIT_OK)
        }
        Err(err) => fail(&out, &err),
    }
}

async fn inspect(common: Common) -> u8 {
    let out = Output {
        format: common.format,
        command: "oci inspect",
    };
    let (reference, registry) = match connect(&common, &out) {
        Ok(pair) => pair,
        Err(code) => return code,
    };
    match bounded(
        common.timeout,
        &registry,
        registry.inspect(&reference, &common.limits()),
    )
    .await
    {
        Ok(inspection) => out.report(
            &inspection,
            || {
                let mut text = format!(
                    "{}\nartifact type: {}\nsize: {} bytes in {} layer(s)\n",
                    inspection.pinned_reference,
                    inspection.artifact_type.as_deref().unwrap_or("-"),
                    inspection.total_size,
                    inspection.layers.len()
                );
                for (key, value) in &inspection.annotations {
                    let _ = writeln!(text, "  {key}: {value}");
                }
                for layer in &inspection.layers {
                    let path = layer.path.as_deref().unwrap_or("-");
                    let _ = writeln!(text, "  {path}  {}  {} bytes", layer.media_type, layer.size);
                }
                if let Some(problem) = &inspection.problem {
                    let _ = writeln!(text, "not a valid Ptah artifact: {problem}");
                }
                text
            },
            EXIT_OK,
        ),
        Err(err) => fail(&out, &err),
    }
}

async fn verify(args: VerifyArgs) -> u8 {
    let out = Output {
        format: args.common.format,
        command: "oci verify",
    };
    let policy = match std::fs::read_to_string(&args.policy) {
        Ok(text) => match Policy::parse(&text) {
            Ok(policy) => policy,
            Err(err) => return fail(&out, &err),
        },
        Err(err) => return out.error("io", &format!("{}: {err}", args.policy.display()), EXIT_USAGE),
    };
    let requested: Option<Reference> = match args.requested_reference.as_deref().map(str::parse).transpose() {
        Ok(requested) => requested,
        Err(err) => return fail(&out, &Error::Reference(err)),
    };
    let (reference, registry) = match connect(&args.common, &out) {
        Ok(pair) => pair,
        Err(code) => return code,
    };
    match bounded(
        args.common.timeout,
        &registry,
        registry.verify(&reference, requested.as_ref(), &policy, &args.common.limits()),
    )
    .await
    {
        Ok(report) => {
            let exit = if report.passed() { EXIT_OK } else { EXIT_FAILURE };
            out.report(
                &report,
                || {
                    let mut text = format!("{} {}\n", report.reference, report.digest);
                    for name in &report.satisfied {
                        let _ = writeln!(text, "  ok    {name}");
                    }
                    for finding in &report.findings {
                        let _ = writeln!(text, "  FAIL  {}: {}", finding.requirement, finding.detail);
                    }
                    text
                },
                exit,
            )
        }
        Err(err) => fail(&out, &err),
    }
}

/// Pulls an artifact; `command` names the report (`oci pull`, `migrations pull`).
pub(crate) async fn pull(args: PullArgs, command: &'static str) -> u8 {
    let out = Output {
        format: args.common.format,
        command,
    };
    let (reference, registry) = match connect(&args.common, &out) {
        Ok(pair) => pair,
        Err(code) => return code,
    };
    let limits = args.common.limits();
    let result = match &args.out {
        Some(dest) => {
            bounded(
                args.common.timeout,
                &registry,
                registry.pull_to(&reference, args.kind, dest, &limits),
            )
            .await
        }
        None => {
            bounded(
                args.common.timeout,
                &registry,
                registry.pull(&reference, args.kind, &limits),
            )
            .await
        }
    };
    match result {
        Ok(artifact) => {
            let listing = artifact.listing();
            let mut report = serde_json::to_value(&listing).unwrap_or_default();
            if let (Some(dest), Some(map)) = (&args.out, report.as_object_mut()) {
                map.insert("out".to_owned(), dest.display().to_string().into());
            }
            out.report(
                &report,
                || {
                    let mut text = format!("{} ({})\n", listing.reference, listing.kind);
                    for file in &listing.files {
                        let _ = writeln!(text, "  {}  {} bytes", file.path, file.size);
                    }
                    text
                },
                EXIT_OK,
            )
        }
        Err(Error::InvalidContent { reason }) => out.error("invalid_content", &reason, EXIT_FAILURE),
        Err(err) => fail(&out, &err),
    }
}

/// Pushes an artifact; `command` names the report (`oci push`, `migrations push`, `schema push`).
pub(crate) async fn push(args: PushArgs, command: &'static str) -> u8 {
    let out = Output {
        format: args.common.format,
        command,
    };
    match read_push_input(&args) {
        Ok(files) => push_files(&args.common, args.kind, files, out).await,
        Err((code, message)) => out.error(code, &message, EXIT_USAGE),
    }
}

/// Pushes files already checked for their kind and reports the pushed reference.
pub(crate) async fn push_files(common: &Common, kind: Kind, files: Files, out: Output) -> u8 {
    let (reference, registry) = match connect(common, &out) {
        Ok(pair) => pair,
        Err(code) => return code,
    };
    let provenance = Provenance::from_process_env();
    let limits = Limits::default();
    let pushing = registry.push(&reference, kind, files, &provenance, &limits);
    match bounded(common.timeout, &registry, pushing).await {
        Ok(pushed) => out.report(&pushed, || pushed.reference.clone(), EXIT_OK),
        Err(err) => fail(&out, &err),
    }
}

/// Files to push as `(relative path, bytes)`.
pub(crate) type Files = Vec<(String, Vec<u8>)>;

/// The files to push; a migration directory must carry a current `ptah.sum`. Errors are
/// `(code, message)`.
fn read_push_input(args: &PushArgs) -> Result<Files, (&'static str, String)> {
    match (args.kind, &args.file, &args.dir) {
        (Kind::Schema, Some(file), None) => {
            let bytes = std::fs::read(file).map_err(|e| ("io", format!("{}: {e}", file.display())))?;
            Ok(vec![(ptah_artifact::media::SCHEMA_FILE.to_owned(), bytes)])
        }
        (Kind::Migrations, None, Some(dir)) => {
            let files = ptah_artifact::read_migration_dir(dir, &Limits::default())
                .map_err(|e| (e.code(), e.to_string()))?;
            let directory = ptah_migrate::Directory::read(dir).map_err(|e| ("migrations", e.to_string()))?;
            ptah_migrate::verify_directory(&directory, true).map_err(|e| ("sum", e.to_string()))?;
            Ok(files)
        }
        (Kind::Schema, _, _) => Err(("usage", "a schema push takes --file schema.hcl".to_owned())),
        (Kind::Migrations, _, _) => Err(("usage", "a migrations push takes --dir DIR".to_owned())),
    }
}
