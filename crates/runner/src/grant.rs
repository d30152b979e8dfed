//! The registry grant, checked before the first child of a Resolve or Verify starts: the Secret
//! the credentials came from names the registry, the transport and the CA they may be sent to
//! (`ptah_registrygrant`), and an author's reference cannot widen that. A Docker config is handed
//! to the child reduced to its one entry for that registry.

use std::path::Path;

use ptah_dataplane::{Operation, env};
use ptah_registrygrant::{Grant, Mode, only_entry_for, reference_authority};

use crate::{error::RunnerError, inputs::Env};

/// The largest CA bundle or Docker config read (the workload's volumes hold far less).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// Checks the grant of a registry operation and returns the child's environment when it differs
/// from `env` (a reduced Docker config in `work`). Without a grant mode, or without credentials,
/// there is nothing to check.
pub(crate) fn check(op: Operation, env: &Env, work: &Path) -> Result<Option<Env>, RunnerError> {
    if !op.uses_registry() {
        return Ok(None);
    }
    let Some(grant) = Grant::from_env(&|name| env.get(name).map(str::to_owned))? else {
        return Ok(None);
    };
    let docker_config = env
        .get(env::DOCKER_CONFIG)
        .filter(|_| grant.mode() == Mode::DockerConfig);
    let has_credentials = [
        env::REGISTRY_USERNAME,
        env::REGISTRY_PASSWORD,
        env::REGISTRY_TOKEN,
    ]
    .iter()
    .any(|name| env.get(name).is_some())
        || docker_config.is_some();
    if !has_credentials {
        return Ok(None);
    }
    let reference = env
        .get(env::REQUESTED_REFERENCE)
        .ok_or_else(|| RunnerError::input(env::REQUESTED_REFERENCE, "is not set"))?;
    let plain_http = env.get(env::PLAIN_HTTP) == Some("true");
    let ca = match env.get(env::OCI_CA_FILE) {
        Some(path) => Some(read_bounded(Path::new(path), env::OCI_CA_FILE)?),
        None => None,
    };
    grant.check_reference(reference, plain_http, ca.as_deref())?;
    let Some(dir) = docker_config else {
        return Ok(None);
    };
    let authority = reference_authority(reference)?;
    let config = read_docker_config(Path::new(dir))?;
    let reduced = only_entry_for(&config, &authority, plain_http)?;
    let child_dir = work.join("docker-config");
    std::fs::create_dir(&child_dir)
        .and_then(|()| std::fs::write(child_dir.join("config.json"), reduced))
        .map_err(|e| {
            RunnerError::Internal(format!("cannot write the reduced Docker config: {}", e.kind()))
        })?;
    let mut child = env.clone();
    child
        .0
        .insert(env::DOCKER_CONFIG.to_owned(), child_dir.display().to_string());
    Ok(Some(child))
}

/// The mounted config: `config.json`, else the Secret key's own file name.
fn read_docker_config(dir: &Path) -> Result<Vec<u8>, RunnerError> {
    for name in ["config.json", ".dockerconfigjson"] {
        let path = dir.join(name);
        if path.exists() {
            return read_bounded(&path, env::DOCKER_CONFIG);
        }
    }
    Err(RunnerError::input(
        env::DOCKER_CONFIG,
        "names a directory without config.json",
    ))
}

fn read_bounded(path: &Path, name: &'static str) -> Result<Vec<u8>, RunnerError> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| RunnerError::input(name, format!("cannot be read ({})", e.kind())))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(RunnerError::input(
            name,
            format!("is larger than {MAX_FILE_BYTES} bytes"),
        ));
    }
    Ok(bytes)
}
