//! The Kubernetes API requests a manager sends, by verb: what `cargo xtask bench manager` divides
//! by the reconciliations to give requests per reconcile, and what shows a request that grows
//! with unrelated objects.

use prometheus_client::{
    encoding::{EncodeLabelSet, EncodeLabelValue},
    metrics::{counter::Counter, family::Family},
};

/// The verb of one API request, as the API server's audit log would name it.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, EncodeLabelValue)]
#[allow(non_camel_case_types)] // the label values are the API server's verbs
pub enum Verb {
    /// A read of one object (or of its subresource, such as a Pod's log).
    get,
    /// A read of a collection.
    list,
    /// A watch of a collection.
    watch,
    /// A POST.
    create,
    /// A PUT.
    update,
    /// A PATCH (server-side apply included).
    patch,
    /// A DELETE.
    delete,
    /// Any other method.
    other,
}

impl Verb {
    /// Every verb, in label order.
    pub const ALL: &'static [Verb] = &[
        Verb::get,
        Verb::list,
        Verb::watch,
        Verb::create,
        Verb::update,
        Verb::patch,
        Verb::delete,
        Verb::other,
    ];

    /// The verb of a request with `method` (upper case) to `path` with `query` (no `?`).
    pub fn of(method: &str, path: &str, query: Option<&str>) -> Verb {
        match method {
            "GET" if query.is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1")) => {
                Verb::watch
            }
            "GET" if names_a_collection(path) => Verb::list,
            "GET" => Verb::get,
            "POST" => Verb::create,
            "PUT" => Verb::update,
            "PATCH" => Verb::patch,
            "DELETE" => Verb::delete,
            _ => Verb::other,
        }
    }
}

/// Whether `path` names a collection (`…/namespaces/ns/jobs`) rather than one object
/// (`…/jobs/name`, `…/pods/name/log`).
fn names_a_collection(path: &str) -> bool {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    // The group/version prefix: `/api/v1` (core) or `/apis/<group>/<version>`.
    let rest = match segments.first() {
        Some(&"api") => segments.get(2..),
        Some(&"apis") => segments.get(3..),
        _ => None,
    };
    let Some(rest) = rest else { return false };
    // `namespaces/<ns>/<resource>…` is a namespaced path; `namespaces` or `namespaces/<ns>` alone
    // are the Namespace collection and one Namespace.
    let rest = match rest {
        ["namespaces", _, tail @ ..] if !tail.is_empty() => tail,
        other => other,
    };
    rest.len() == 1
}

/// Labels of `ptah_kube_api_requests_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct VerbLabels {
    verb: Verb,
}

/// The family behind `ptah_kube_api_requests_total`, every verb at zero from the start.
pub(crate) fn family() -> Family<VerbLabels, Counter> {
    let family = Family::<VerbLabels, Counter>::default();
    for &verb in Verb::ALL {
        let _ = family.get_or_create(&VerbLabels { verb });
    }
    family
}

/// Counts one request of `verb` in `family`.
pub(crate) fn count(family: &Family<VerbLabels, Counter>, verb: Verb) {
    family.get_or_create(&VerbLabels { verb }).inc();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_follow_the_api_servers_naming() {
        let cases = [
            ("GET", "/api/v1/namespaces/a/pods", None, Verb::list),
            ("GET", "/api/v1/namespaces/a/pods/p", None, Verb::get),
            (
                "GET",
                "/api/v1/namespaces/a/pods/p/log",
                Some("container=ptah"),
                Verb::get,
            ),
            (
                "GET",
                "/apis/batch/v1/jobs",
                Some("watch=true&resourceVersion=1"),
                Verb::watch,
            ),
            (
                "GET",
                "/apis/batch/v1/namespaces/a/jobs",
                Some("labelSelector=x"),
                Verb::list,
            ),
            (
                "GET",
                "/apis/operator.ptah.run/v1alpha1/namespaces/a/ptahschemas/s",
                None,
                Verb::get,
            ),
            (
                "GET",
                "/apis/operator.ptah.run/v1alpha1/ptahschemas",
                None,
                Verb::list,
            ),
            ("GET", "/api/v1/namespaces", None, Verb::list),
            ("GET", "/api/v1/namespaces/a", None, Verb::get),
            ("POST", "/apis/batch/v1/namespaces/a/jobs", None, Verb::create),
            (
                "PATCH",
                "/apis/operator.ptah.run/v1alpha1/namespaces/a/ptahschemas/s/status",
                None,
                Verb::patch,
            ),
            (
                "PUT",
                "/apis/coordination.k8s.io/v1/namespaces/a/leases/l",
                None,
                Verb::update,
            ),
            ("DELETE", "/apis/batch/v1/namespaces/a/jobs/j", None, Verb::delete),
            ("OPTIONS", "/", None, Verb::other),
            ("GET", "/version", None, Verb::get),
        ];
        for (method, path, query, want) in cases {
            assert_eq!(Verb::of(method, path, query), want, "{method} {path} {query:?}");
        }
    }
}
