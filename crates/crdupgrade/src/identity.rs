//! The schema identity of a CRD (version and digest annotations) and the pure decision of what
//! one shipped CRD may do to the live one.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use ptah_api::{CRD_SCHEMA_DIGEST_ANNOTATION, CRD_SCHEMA_VERSION_ANNOTATION};

use crate::error::{Refusal, bounded};

/// A CRD's `crd-schema-version` and `crd-schema-digest`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaIdentity {
    /// The positive schema version (the rollback fence).
    pub version: u64,
    /// `sha256:<hex>` of the canonical spec.
    pub digest: String,
}

impl SchemaIdentity {
    /// The identity annotated on `crd`: `None` when it carries neither annotation (a CRD no
    /// release of this operator stamped), a refusal when either is missing or malformed.
    pub fn of(crd: &CustomResourceDefinition) -> Result<Option<SchemaIdentity>, Refusal> {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let annotations = crd.metadata.annotations.as_ref();
        let get = |key: &str| annotations.and_then(|a| a.get(key));
        let (version, digest) = match (
            get(CRD_SCHEMA_VERSION_ANNOTATION),
            get(CRD_SCHEMA_DIGEST_ANNOTATION),
        ) {
            (None, None) => return Ok(None),
            (version, digest) => (version, digest),
        };
        let malformed = |annotation: &'static str, found: Option<&String>| Refusal::MalformedIdentity {
            crd: name.clone(),
            annotation,
            found: found.map_or_else(|| "missing".to_owned(), |f| bounded(f)),
        };
        let parsed = version
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|v| *v > 0)
            .ok_or_else(|| malformed(CRD_SCHEMA_VERSION_ANNOTATION, version))?;
        let digest = digest
            .filter(|d| is_digest(d))
            .ok_or_else(|| malformed(CRD_SCHEMA_DIGEST_ANNOTATION, digest))?;
        Ok(Some(SchemaIdentity {
            version: parsed,
            digest: digest.clone(),
        }))
    }
}

fn is_digest(text: &str) -> bool {
    text.strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

/// What the hook does with one shipped CRD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CrdChange {
    /// Not in the cluster: create it.
    Create,
    /// Same version and digest: nothing to write.
    Unchanged,
    /// Replace `spec` and the two identity annotations; `from` is the live version (`None` when
    /// the live CRD was not stamped).
    Update {
        /// The live schema version, if stamped.
        from: Option<u64>,
    },
}

impl std::fmt::Display for CrdChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CrdChange::Create => f.write_str("created"),
            CrdChange::Unchanged => f.write_str("unchanged"),
            CrdChange::Update { from: Some(v) } => write!(f, "upgraded from crd-schema-version {v}"),
            CrdChange::Update { from: None } => f.write_str("upgraded (it carried no crd-schema-version)"),
        }
    }
}

/// Decides what `candidate` (shipped, stamped) may do to `live`: never lower the schema version,
/// never two digests under one version, never stop serving a version objects are stored in.
pub fn decide(
    live: Option<&CustomResourceDefinition>,
    candidate: &CustomResourceDefinition,
) -> Result<CrdChange, Refusal> {
    let name = candidate.metadata.name.clone().unwrap_or_default();
    let ours = SchemaIdentity::of(candidate)?.ok_or_else(|| Refusal::MalformedIdentity {
        crd: name.clone(),
        annotation: CRD_SCHEMA_VERSION_ANNOTATION,
        found: "missing on the shipped CRD".to_owned(),
    })?;
    let Some(live) = live else {
        return Ok(CrdChange::Create);
    };
    let stamped = SchemaIdentity::of(live)?;
    if let Some(theirs) = &stamped {
        if theirs.version > ours.version {
            return Err(Refusal::SchemaVersionLowered {
                crd: name,
                live: theirs.version,
                ours: ours.version,
            });
        }
        if theirs.version == ours.version && theirs.digest != ours.digest {
            return Err(Refusal::SameVersionDigestChanged {
                crd: name,
                version: ours.version,
                live: theirs.digest.clone(),
                ours: ours.digest,
            });
        }
    }
    let served: Vec<&str> = candidate
        .spec
        .versions
        .iter()
        .filter(|v| v.served)
        .map(|v| v.name.as_str())
        .collect();
    let stored = live.status.as_ref().and_then(|s| s.stored_versions.as_ref());
    if let Some(gone) = stored
        .into_iter()
        .flatten()
        .find(|v| !served.contains(&v.as_str()))
    {
        return Err(Refusal::StoredVersionRemoved {
            crd: name,
            version: gone.clone(),
        });
    }
    match stamped {
        Some(theirs) if theirs == ours => Ok(CrdChange::Unchanged),
        other => Ok(CrdChange::Update {
            from: other.map(|i| i.version),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
        CustomResourceDefinitionStatus, CustomResourceDefinitionVersion,
    };

    const A: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    fn crd(
        version: Option<&str>,
        digest: Option<&str>,
        served: &[&str],
        stored: &[&str],
    ) -> CustomResourceDefinition {
        let mut crd = CustomResourceDefinition::default();
        crd.metadata.name = Some("things.example.test".into());
        let mut annotations = std::collections::BTreeMap::new();
        if let Some(v) = version {
            annotations.insert(CRD_SCHEMA_VERSION_ANNOTATION.to_owned(), v.to_owned());
        }
        if let Some(d) = digest {
            annotations.insert(CRD_SCHEMA_DIGEST_ANNOTATION.to_owned(), d.to_owned());
        }
        crd.metadata.annotations = Some(annotations);
        crd.spec.versions = served
            .iter()
            .map(|v| CustomResourceDefinitionVersion {
                name: (*v).to_owned(),
                served: true,
                ..Default::default()
            })
            .collect();
        crd.status = Some(CustomResourceDefinitionStatus {
            stored_versions: Some(stored.iter().map(|s| (*s).to_owned()).collect()),
            ..Default::default()
        });
        crd
    }

    #[test]
    fn absent_is_created_and_equal_is_left_alone() {
        let ours = crd(Some("2"), Some(A), &["v1"], &[]);
        assert_eq!(decide(None, &ours), Ok(CrdChange::Create));
        let live = crd(Some("2"), Some(A), &["v1"], &["v1"]);
        assert_eq!(decide(Some(&live), &ours), Ok(CrdChange::Unchanged));
    }

    #[test]
    fn a_higher_version_or_an_unstamped_crd_is_updated() {
        let ours = crd(Some("2"), Some(A), &["v1"], &[]);
        let older = crd(Some("1"), Some(B), &["v1"], &["v1"]);
        assert_eq!(
            decide(Some(&older), &ours),
            Ok(CrdChange::Update { from: Some(1) })
        );
        let bare = crd(None, None, &["v1"], &["v1"]);
        assert_eq!(decide(Some(&bare), &ours), Ok(CrdChange::Update { from: None }));
    }

    #[test]
    fn lowering_the_version_is_refused() {
        let ours = crd(Some("1"), Some(A), &["v1"], &[]);
        let live = crd(Some("2"), Some(B), &["v1"], &["v1"]);
        let refusal = decide(Some(&live), &ours).expect_err("lowered");
        assert_eq!(
            refusal,
            Refusal::SchemaVersionLowered {
                crd: "things.example.test".into(),
                live: 2,
                ours: 1
            }
        );
        assert!(refusal.to_string().contains("would lower it"), "{refusal}");
    }

    #[test]
    fn two_digests_under_one_version_are_refused() {
        let ours = crd(Some("3"), Some(A), &["v1"], &[]);
        let live = crd(Some("3"), Some(B), &["v1"], &["v1"]);
        assert!(matches!(
            decide(Some(&live), &ours),
            Err(Refusal::SameVersionDigestChanged { version: 3, .. })
        ));
    }

    #[test]
    fn a_stored_version_must_stay_served() {
        let ours = crd(Some("2"), Some(A), &["v1beta1"], &[]);
        let live = crd(
            Some("1"),
            Some(B),
            &["v1alpha1", "v1beta1"],
            &["v1alpha1", "v1beta1"],
        );
        assert_eq!(
            decide(Some(&live), &ours),
            Err(Refusal::StoredVersionRemoved {
                crd: "things.example.test".into(),
                version: "v1alpha1".into()
            })
        );
        let mut unserved = crd(Some("2"), Some(A), &["v1alpha1", "v1beta1"], &[]);
        unserved.spec.versions[0].served = false;
        assert_eq!(
            decide(Some(&live), &unserved),
            Err(Refusal::StoredVersionRemoved {
                crd: "things.example.test".into(),
                version: "v1alpha1".into()
            })
        );
    }

    #[test]
    fn malformed_annotations_are_refused_by_name() {
        let ours = crd(Some("2"), Some(A), &["v1"], &[]);
        for (version, digest) in [
            (Some("0"), Some(A)),
            (Some("-1"), Some(A)),
            (Some("two"), Some(A)),
            (Some("2"), None),
            (None, Some(A)),
            (Some("2"), Some("sha256:XYZ")),
        ] {
            let live = crd(version, digest, &["v1"], &["v1"]);
            assert!(
                matches!(decide(Some(&live), &ours), Err(Refusal::MalformedIdentity { .. })),
                "{version:?} {digest:?}"
            );
        }
        let unstamped = crd(None, None, &["v1"], &[]);
        assert_eq!(
            decide(None, &unstamped),
            Err(Refusal::MalformedIdentity {
                crd: "things.example.test".into(),
                annotation: CRD_SCHEMA_VERSION_ANNOTATION,
                found: "missing on the shipped CRD".into()
            }),
            "a shipped CRD must be stamped"
        );
    }
}
