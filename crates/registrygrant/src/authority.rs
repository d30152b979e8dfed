//! Registry authorities compared as the client reaches them: case-insensitive host, the scheme's
//! default port implied, Docker Hub's three names one registry. A trailing dot, another port or
//! another address family is another authority.

/// The names Docker Hub answers under; the client maps each of them to the same endpoint.
const DOCKER_HUB: &[&str] = &["docker.io", "index.docker.io", "registry-1.docker.io"];

/// `authority` as the client reaches it over plain HTTP (`plain_http`) or TLS: lowercase, the
/// scheme's default port dropped, Docker Hub as `docker.io`.
pub fn normalize_authority(authority: &str, plain_http: bool) -> String {
    let lower = authority.trim().to_ascii_lowercase();
    let default_port = if plain_http { ":80" } else { ":443" };
    let (host, port) = split_port(&lower);
    let host = if DOCKER_HUB.contains(&host) {
        "docker.io"
    } else {
        host
    };
    match port {
        Some(p) if format!(":{p}") != default_port => format!("{host}:{p}"),
        _ => host.to_owned(),
    }
}

/// Whether the granted authority and the requested one are the same registry.
pub fn authorities_match(granted: &str, requested: &str, plain_http: bool) -> bool {
    !granted.trim().is_empty()
        && normalize_authority(granted, plain_http) == normalize_authority(requested, plain_http)
}

/// `host` and its port, for `host`, `host:port`, `[v6]` and `[v6]:port`.
fn split_port(authority: &str) -> (&str, Option<&str>) {
    if authority.starts_with('[') {
        return match authority.rsplit_once("]:") {
            Some((host, port)) => (&authority[..host.len() + 1], Some(port)),
            None => (authority, None),
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => (host, Some(port)),
        _ => (authority, None),
    }
}
