//! Where a database or registry operation pulls its artifact from, as the Job builder wants it.

use ptah_api::shared::OperationSource;
use ptah_workload::SourceAccess;

/// How a container reaches the registry of `source`.
pub fn access(source: &OperationSource) -> SourceAccess {
    let transport = source.transport.as_ref();
    SourceAccess {
        registry_auth: source.registry_auth_from.clone(),
        plain_http: transport.is_some_and(|t| t.plain_http),
        ca_from: transport.and_then(|t| t.ca_from.clone()),
    }
}

/// `oci://host/repo@sha256:…` from a resolved reference, whatever tag it still carries.
pub fn pinned(source: &OperationSource) -> String {
    let reference = source.resolved_reference.as_str();
    if reference.contains('@') {
        return reference.to_owned();
    }
    let base = match reference.rfind(':') {
        Some(i)
            if reference[i..].find('/').is_none()
                && i > reference.find("//").map_or(0, |j| j + 2)
                && reference[..i].contains('/') =>
        {
            &reference[..i]
        }
        _ => reference,
    };
    format!("{base}@{}", source.digest.as_str())
}
