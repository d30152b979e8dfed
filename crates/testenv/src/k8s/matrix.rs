//! `matrix/kubernetes.json`: the Kubernetes minors, their exact versions and the tool versions.

use std::{fs, path::Path};

use anyhow::{Context, bail};
use serde_json::Value;

use super::helm::{HELM3_MODULE, HELM4_MODULE};

/// The Go module `toxiproxy-server` is built from.
pub const TOXIPROXY_MODULE: &str = "github.com/Shopify/toxiproxy/v2";

/// One row of `minors`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Minor {
    /// `1.35`
    pub minor: String,
    /// `v1.35.4`: the exact `k8s.io/kubernetes` module version.
    pub version: String,
    /// `v3.6.16`: the `go.etcd.io/etcd/server/v3` module version.
    pub etcd: String,
    /// `kindest/node:v1.35.4`: the node image the kind provider uses.
    pub kind_node_image: String,
    /// Is this the minor used when none is named?
    pub default: bool,
    /// `v1_35`: the k8s-openapi feature generated for this minor.
    pub k8s_openapi_feature: String,
}

/// The parsed matrix.
#[derive(Clone, Debug)]
pub struct Matrix {
    /// Oldest first, as in the file.
    pub minors: Vec<Minor>,
    /// `helm.sh/helm/v3` version (`components.helm`).
    pub helm: String,
    /// `helm.sh/helm/v4` version (`components.helm4`).
    pub helm4: String,
    /// `oras.land/oras` version.
    pub oras: String,
    /// `sigs.k8s.io/kind` version.
    pub kind: String,
    /// `github.com/Shopify/toxiproxy/v2` version (`components.toxiproxy`), the test services'
    /// fault proxy. Optional in [`Matrix::parse`] so that matrices written for other checks need
    /// not name it; [`Matrix::load`] requires it of the repository's file.
    pub toxiproxy: Option<String>,
    /// `lastVerified`: the date (YYYY-MM-DD) a matrix run last passed the gate.
    pub last_verified: String,
}

impl Matrix {
    /// Reads `matrix/kubernetes.json` under `root`.
    pub fn load(root: &Path) -> anyhow::Result<Self> {
        let path = root.join("matrix").join("kubernetes.json");
        let text = fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let matrix = Self::parse(&text).with_context(|| format!("in {}", path.display()))?;
        if matrix.toxiproxy.is_none() {
            bail!(
                "{}: components.toxiproxy is missing (want {{\"module\": \"{TOXIPROXY_MODULE}\", \"version\": …}})",
                path.display()
            );
        }
        Ok(matrix)
    }

    /// Parses the matrix text.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let json: Value = serde_json::from_str(text).context("not JSON")?;
        let str_at = |value: &Value, key: &str| -> anyhow::Result<String> {
            value[key]
                .as_str()
                .map(str::to_owned)
                .with_context(|| format!("`{key}` is missing or not a string"))
        };
        let rows = json["minors"].as_array().context("`minors` is not an array")?;
        let mut minors = Vec::new();
        for row in rows {
            let minor = str_at(row, "minor")?;
            let version = str_at(row, "version")?;
            if !version.starts_with(&format!("v{minor}.")) {
                bail!("minor {minor}: version {version} is not a {minor}.x release");
            }
            minors.push(Minor {
                etcd: str_at(row, "etcd").with_context(|| format!("minor {minor}"))?,
                kind_node_image: str_at(row, "kindNodeImage").with_context(|| format!("minor {minor}"))?,
                default: row["default"].as_bool().unwrap_or(false),
                k8s_openapi_feature: str_at(row, "k8sOpenapiFeature")
                    .with_context(|| format!("minor {minor}"))?,
                minor,
                version,
            });
        }
        let defaults = minors.iter().filter(|m| m.default).count();
        if defaults != 1 {
            bail!("exactly one minor must be marked \"default\": true, found {defaults}");
        }
        let components = &json["components"];
        Ok(Self {
            minors,
            helm: helm_pin(&components["helm"], "helm", HELM3_MODULE, "v3.")?,
            helm4: helm_pin(&components["helm4"], "helm4", HELM4_MODULE, "v4.")?,
            oras: str_at(&components["oras"], "version").context("components.oras")?,
            kind: str_at(&components["kind"], "version").context("components.kind")?,
            toxiproxy: toxiproxy_pin(&components["toxiproxy"])?,
            last_verified: str_at(&json, "lastVerified")?,
        })
    }

    /// The chart's `kubeVersion`: every release from the oldest listed minor up to, not
    /// including, the minor after the newest (`>=1.35.0-0 <1.38.0-0`). The `-0` admits
    /// pre-release and vendor builds such as `v1.35.4+k3s1` or `v1.36.0-rc.1`.
    pub fn chart_kube_version(&self) -> anyhow::Result<String> {
        let mut numbers = Vec::new();
        for row in &self.minors {
            numbers.push(minor_numbers(&row.minor)?);
        }
        let (Some(oldest), Some(newest)) = (numbers.iter().min(), numbers.iter().max()) else {
            bail!("`minors` is empty");
        };
        Ok(format!(
            ">={}.{}.0-0 <{}.{}.0-0",
            oldest.0,
            oldest.1,
            newest.0,
            newest.1 + 1
        ))
    }

    /// The named minor (`1.35`, or an exact `v1.35.4`), or the default one.
    pub fn select(&self, wanted: Option<&str>) -> anyhow::Result<&Minor> {
        let found = match wanted {
            None => self.minors.iter().find(|m| m.default),
            Some(name) => self
                .minors
                .iter()
                .find(|m| m.minor == name || m.version == name || m.version == format!("v{name}")),
        };
        found.with_context(|| {
            let known: Vec<&str> = self.minors.iter().map(|m| m.minor.as_str()).collect();
            format!(
                "Kubernetes {} is not in matrix/kubernetes.json (known: {})",
                wanted.unwrap_or("default"),
                known.join(", ")
            )
        })
    }
}

/// `1.35` → `(1, 35)`.
fn minor_numbers(minor: &str) -> anyhow::Result<(u32, u32)> {
    let parsed = minor
        .split_once('.')
        .and_then(|(major, minor)| Some((major.parse().ok()?, minor.parse().ok()?)));
    parsed.with_context(|| format!("minor {minor:?} is not <major>.<minor>"))
}

/// The version of one helm component, which must name its major's module (the build and the
/// version ldflags depend on that module path).
fn helm_pin(component: &Value, key: &str, module: &str, major: &str) -> anyhow::Result<String> {
    let context = || format!("components.{key}");
    let version = component["version"]
        .as_str()
        .with_context(|| format!("`version` is missing or not a string (want {module} {major}x)"))
        .with_context(context)?;
    if let Some(named) = component["module"].as_str()
        && named != module
    {
        bail!("components.{key}: module {named} is not {module}");
    }
    if !version.starts_with(major) {
        bail!("components.{key}: {version} is not a {module} release ({major}x)");
    }
    Ok(version.to_owned())
}

/// The optional `components.toxiproxy` pin; when present it must name the v2 module (the
/// build's package path and version flag depend on it).
fn toxiproxy_pin(component: &Value) -> anyhow::Result<Option<String>> {
    if component.is_null() {
        return Ok(None);
    }
    if let Some(named) = component["module"].as_str()
        && named != TOXIPROXY_MODULE
    {
        bail!("components.toxiproxy: module {named} is not {TOXIPROXY_MODULE}");
    }
    let version = component["version"]
        .as_str()
        .context("components.toxiproxy: `version` is missing or not a string")?;
    if !version.starts_with("v2.") {
        bail!("components.toxiproxy: {version} is not a {TOXIPROXY_MODULE} release (v2.x)");
    }
    Ok(Some(version.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::workspace_root;

    #[test]
    fn the_repository_matrix_parses_with_one_default() {
        let matrix = Matrix::load(&workspace_root()).expect("matrix");
        assert_eq!(matrix.minors.len(), 3);
        let default = matrix.select(None).expect("default");
        assert!(default.default);
        assert!(default.version.starts_with('v'));
        assert!(matrix.minors.iter().all(|m| m.etcd.starts_with("v3.")));
        assert!(
            matrix
                .minors
                .iter()
                .all(|m| m.kind_node_image == format!("kindest/node:{}", m.version))
        );
        assert!(matrix.toxiproxy.as_deref().is_some_and(|v| v.starts_with("v2.")));
    }

    #[test]
    fn the_toxiproxy_pin_is_optional_but_must_be_v2_of_its_module() {
        let with = |toxiproxy: &str| {
            let text = format!(
                r#"{{"minors":[{{"minor":"1.1","version":"v1.1.0","etcd":"e","kindNodeImage":"k","k8sOpenapiFeature":"f","default":true}}],
                "lastVerified":"2026-01-01",
                "components":{{"helm":{{"version":"v3.0.0"}},"helm4":{{"version":"v4.0.0"}},"oras":{{"version":"o"}},"kind":{{"version":"k"}}{toxiproxy}}}}}"#
            );
            Matrix::parse(&text).map_err(|e| format!("{e:#}"))
        };
        assert_eq!(with("").expect("absent").toxiproxy, None);
        let pinned = with(r#","toxiproxy":{"module":"github.com/Shopify/toxiproxy/v2","version":"v2.12.0"}"#);
        assert_eq!(pinned.expect("pinned").toxiproxy.as_deref(), Some("v2.12.0"));
        let v1 = with(r#","toxiproxy":{"version":"v1.2.1"}"#).expect_err("v1");
        assert!(
            v1.contains("v1.2.1 is not a github.com/Shopify/toxiproxy/v2 release"),
            "{v1}"
        );
        let module = with(r#","toxiproxy":{"module":"github.com/Shopify/toxiproxy","version":"v2.1.0"}"#)
            .expect_err("module");
        assert!(
            module.contains("module github.com/Shopify/toxiproxy is not"),
            "{module}"
        );
    }

    #[test]
    fn selects_by_minor_or_exact_version_and_refuses_unknown() {
        let text = r#"{"minors":[
            {"minor":"1.1","version":"v1.1.3","etcd":"v3.0.0","kindNodeImage":"k:v1.1.3","k8sOpenapiFeature":"v1_1"},
            {"minor":"1.2","version":"v1.2.0","etcd":"v3.0.1","kindNodeImage":"k:v1.2.0","k8sOpenapiFeature":"v1_2","default":true}],
            "lastVerified":"2026-01-01",
            "components":{"helm":{"version":"v3.0.0"},"helm4":{"version":"v4.0.0"},"oras":{"version":"o"},"kind":{"version":"k"}}}"#;
        let matrix = Matrix::parse(text).expect("parse");
        assert_eq!(matrix.select(None).expect("default").minor, "1.2");
        assert_eq!(matrix.select(Some("1.1")).expect("1.1").version, "v1.1.3");
        assert_eq!(matrix.select(Some("v1.1.3")).expect("exact").minor, "1.1");
        assert_eq!(matrix.select(Some("1.1.3")).expect("no v").minor, "1.1");
        let err = matrix.select(Some("1.9")).expect_err("unknown").to_string();
        assert!(err.contains("known: 1.1, 1.2"), "{err}");
        assert_eq!(matrix.chart_kube_version().expect("window"), ">=1.1.0-0 <1.3.0-0");
        assert_eq!(
            (matrix.helm.as_str(), matrix.helm4.as_str()),
            ("v3.0.0", "v4.0.0")
        );
    }

    #[test]
    fn the_chart_window_compares_minors_as_numbers() {
        let row = |minor: &str| Minor {
            minor: minor.to_owned(),
            version: format!("v{minor}.0"),
            etcd: String::new(),
            kind_node_image: String::new(),
            default: false,
            k8s_openapi_feature: String::new(),
        };
        let mut matrix = Matrix::load(&workspace_root()).expect("matrix");
        matrix.minors = vec![row("1.10"), row("1.9"), row("1.11")];
        assert_eq!(
            matrix.chart_kube_version().expect("window"),
            ">=1.9.0-0 <1.12.0-0"
        );
        matrix.minors = vec![row("one.two")];
        assert_eq!(
            matrix.chart_kube_version().err().map(|e| e.to_string()),
            Some("minor \"one.two\" is not <major>.<minor>".to_owned())
        );
        matrix.minors.clear();
        assert_eq!(
            matrix.chart_kube_version().err().map(|e| e.to_string()),
            Some("`minors` is empty".to_owned())
        );
    }

    #[test]
    fn each_helm_pin_must_be_of_its_major_and_module() {
        let with = |helm: &str, helm4: &str| {
            let text = format!(
                r#"{{"minors":[{{"minor":"1.1","version":"v1.1.0","etcd":"e","kindNodeImage":"k","k8sOpenapiFeature":"f","default":true}}],
                "lastVerified":"2026-01-01",
                "components":{{"helm":{helm},"helm4":{helm4},"oras":{{"version":"o"}},"kind":{{"version":"k"}}}}}}"#
            );
            Matrix::parse(&text).map_err(|e| format!("{e:#}"))
        };
        let v3 = r#"{"module":"helm.sh/helm/v3","version":"v3.21.4"}"#;
        let v4 = r#"{"module":"helm.sh/helm/v4","version":"v4.3.2"}"#;
        let both = with(v3, v4).expect("both");
        assert_eq!((both.helm.as_str(), both.helm4.as_str()), ("v3.21.4", "v4.3.2"));
        let swapped = with(v4, v3).expect_err("swapped");
        assert!(
            swapped.contains("components.helm: module helm.sh/helm/v4 is not helm.sh/helm/v3"),
            "{swapped}"
        );
        let wrong_major = with(r#"{"version":"v4.3.2"}"#, v4).expect_err("major");
        assert!(
            wrong_major.contains("v4.3.2 is not a helm.sh/helm/v3 release"),
            "{wrong_major}"
        );
        let missing = with(v3, "null").expect_err("missing");
        assert!(missing.contains("components.helm4"), "{missing}");
    }

    #[test]
    fn refuses_a_version_of_another_minor_and_two_defaults() {
        let wrong = r#"{"minors":[{"minor":"1.1","version":"v1.2.0","etcd":"e","kindNodeImage":"k","k8sOpenapiFeature":"f","default":true}],
            "components":{"helm":{"version":"v3.0.0"},"helm4":{"version":"v4.0.0"},"oras":{"version":"o"},"kind":{"version":"k"}}}"#;
        assert!(format!("{:#}", Matrix::parse(wrong).expect_err("wrong")).contains("not a 1.1.x"));
        let two = r#"{"minors":[
            {"minor":"1.1","version":"v1.1.0","etcd":"e","kindNodeImage":"k","k8sOpenapiFeature":"f","default":true},
            {"minor":"1.2","version":"v1.2.0","etcd":"e","kindNodeImage":"k","k8sOpenapiFeature":"f","default":true}],
            "lastVerified":"2026-01-01",
            "components":{"helm":{"version":"v3.0.0"},"helm4":{"version":"v4.0.0"},"oras":{"version":"o"},"kind":{"version":"k"}}}"#;
        assert!(format!("{:#}", Matrix::parse(two).expect_err("two")).contains("found 2"));
    }
}
