//! `matrix/kubernetes.json`: the Kubernetes minors, their exact versions and the tool versions.

use std::{fs, path::Path};

use anyhow::{Context, bail};
use serde_json::Value;

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
    /// `helm.sh/helm/v3` version.
    pub helm: String,
    /// `oras.land/oras` version.
    pub oras: String,
    /// `sigs.k8s.io/kind` version.
    pub kind: String,
    /// `lastVerified`: the date (YYYY-MM-DD) a matrix run last passed the gate.
    pub last_verified: String,
}

impl Matrix {
    /// Reads `matrix/kubernetes.json` under `root`.
    pub fn load(root: &Path) -> anyhow::Result<Self> {
        let path = root.join("matrix").join("kubernetes.json");
        let text = fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("in {}", path.display()))
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
            helm: str_at(&components["helm"], "version").context("components.helm")?,
            oras: str_at(&components["oras"], "version").context("components.oras")?,
            kind: str_at(&components["kind"], "version").context("components.kind")?,
            last_verified: str_at(&json, "lastVerified")?,
        })
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
    }

    #[test]
    fn selects_by_minor_or_exact_version_and_refuses_unknown() {
        let text = r#"{"minors":[
            {"minor":"1.1","version":"v1.1.3","etcd":"v3.0.0","kindNodeImage":"k:v1.1.3","k8sOpenapiFeature":"v1_1"},
            {"minor":"1.2","version":"v1.2.0","etcd":"v3.0.1","kindNodeImage":"k:v1.2.0","k8sOpenapiFeature":"v1_2","default":true}],
            "lastVerified":"2026-01-01",
            "components":{"helm":{"version":"h"},"oras":{"version":"o"},"kind":{"version":"k"}}}"#;
        let matrix = Matrix::parse(text).expect("parse");
        assert_eq!(matrix.select(None).expect("default").minor, "1.2");
        assert_eq!(matrix.select(Some("1.1")).expect("1.1").version, "v1.1.3");
        assert_eq!(matrix.select(Some("v1.1.3")).expect("exact").minor, "1.1");
        assert_eq!(matrix.select(Some("1.1.3")).expect("no v").minor, "1.1");
        let err = matrix.select(Some("1.9")).expect_err("unknown").to_string();
        assert!(err.contains("known: 1.1, 1.2"), "{err}");
    }

    #[test]
    fn refuses_a_version_of_another_minor_and_two_defaults() {
        let wrong = r#"{"minors":[{"minor":"1.1","version":"v1.2.0","etcd":"e","kindNodeImage":"k","k8sOpenapiFeature":"f","default":true}],
            "components":{"helm":{"version":"h"},"oras":{"version":"o"},"kind":{"version":"k"}}}"#;
        assert!(format!("{:#}", Matrix::parse(wrong).expect_err("wrong")).contains("not a 1.1.x"));
        let two = r#"{"minors":[
            {"minor":"1.1","version":"v1.1.0","etcd":"e","kindNodeImage":"k","k8sOpenapiFeature":"f","default":true},
            {"minor":"1.2","version":"v1.2.0","etcd":"e","kindNodeImage":"k","k8sOpenapiFeature":"f","default":true}],
            "lastVerified":"2026-01-01",
            "components":{"helm":{"version":"h"},"oras":{"version":"o"},"kind":{"version":"k"}}}"#;
        assert!(format!("{:#}", Matrix::parse(two).expect_err("two")).contains("found 2"));
    }
}
