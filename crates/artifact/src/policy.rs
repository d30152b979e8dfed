//! The verification policy (`version: 1`) and its evaluation. Every rule is evaluated and
//! reported; the report uses the reference CLI's field names.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Error, media};

/// A parsed verification policy.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Must be 1.
    pub version: u32,
    /// The reference must name a digest.
    #[serde(default)]
    pub require_digest_pin: bool,
    /// The artifact type must be one of these (when not empty).
    #[serde(default)]
    pub artifact_types: Vec<String>,
    /// These manifest annotations must be present and non-empty.
    #[serde(default)]
    pub require_annotations: Vec<String>,
    /// A referrer of a signature type must exist (presence only; no cryptography).
    #[serde(default)]
    pub require_signature: bool,
    /// Signature artifact types; defaults to cosign and Notary.
    #[serde(default)]
    pub signature_artifact_types: Option<Vec<String>>,
}

/// Requirement names as reports show them.
pub mod requirement {
    /// `require_digest_pin`.
    pub const DIGEST_PIN: &str = "require_digest_pin";
    /// `artifact_types`.
    pub const ARTIFACT_TYPES: &str = "artifact_types";
    /// `require_annotations`.
    pub const ANNOTATIONS: &str = "require_annotations";
    /// `require_signature`.
    pub const SIGNATURE: &str = "require_signature";
}

impl Policy {
    /// Parses a policy from YAML (or JSON); unknown fields, another version, an empty policy
    /// and empty list entries are refused.
    pub fn parse(text: &str) -> Result<Policy, Error> {
        let policy: Policy = serde_saphyr::from_str(text).map_err(|e| Error::PolicyInvalid {
            reason: e.to_string(),
        })?;
        let refuse = |reason: String| Err(Error::PolicyInvalid { reason });
        if policy.version != 1 {
            return refuse(format!("version {} is not supported (want 1)", policy.version));
        }
        if !policy.require_digest_pin
            && policy.artifact_types.is_empty()
            && policy.require_annotations.is_empty()
            && !policy.require_signature
        {
            return refuse("the policy has no requirement".to_owned());
        }
        let lists = [
            ("artifact_types", Some(&policy.artifact_types)),
            ("require_annotations", Some(&policy.require_annotations)),
            (
                "signature_artifact_types",
                policy.signature_artifact_types.as_ref(),
            ),
        ];
        for (name, list) in lists {
            if list.is_some_and(|l| l.iter().any(|v| v.trim().is_empty())) {
                return refuse(format!("{name} has an empty entry"));
            }
        }
        if policy
            .signature_artifact_types
            .as_ref()
            .is_some_and(Vec::is_empty)
        {
            return refuse("signature_artifact_types is empty: no signature could ever match".to_owned());
        }
        Ok(policy)
    }

    /// The signature types looked for.
    pub fn signature_types(&self) -> Vec<String> {
        match &self.signature_artifact_types {
            Some(types) => types.clone(),
            None => media::DEFAULT_SIGNATURE_ARTIFACT_TYPES
                .iter()
                .map(|t| t.to_string())
                .collect(),
        }
    }

    /// Evaluates every rule against the facts of one artifact.
    pub fn evaluate(&self, facts: &Facts) -> Report {
        let mut report = Report {
            reference: facts.reference.clone(),
            digest: facts.digest.clone(),
            satisfied: Vec::new(),
            findings: Vec::new(),
        };
        if self.require_digest_pin {
            report.record(
                requirement::DIGEST_PIN,
                facts.pinned,
                "the reference is not pinned to a digest (use oci://…@sha256:…)".to_owned(),
            );
        }
        if !self.artifact_types.is_empty() {
            let actual = facts.artifact_type.as_deref().unwrap_or("");
            let mut detail = format!(
                "artifact type {actual:?} is not one of {}",
                self.artifact_types.join(", ")
            );
            if self
                .artifact_types
                .iter()
                .any(|t| t == media::MISSPELLED_MIGRATIONS_ARTIFACT_TYPE)
            {
                detail.push_str(&format!(
                    " (the policy names {}; migration artifacts are {})",
                    media::MISSPELLED_MIGRATIONS_ARTIFACT_TYPE,
                    media::MIGRATIONS_ARTIFACT_TYPE
                ));
            }
            report.record(
                requirement::ARTIFACT_TYPES,
                self.artifact_types.iter().any(|t| t == actual),
                detail,
            );
        }
        if !self.require_annotations.is_empty() {
            let missing: Vec<&str> = self
                .require_annotations
                .iter()
                .filter(|key| facts.annotations.get(*key).is_none_or(|v| v.trim().is_empty()))
                .map(String::as_str)
                .collect();
            for key in &missing {
                report.findings.push(Finding {
                    requirement: requirement::ANNOTATIONS.to_owned(),
                    detail: format!("annotation {key} is missing or empty"),
                });
            }
            if missing.is_empty() {
                report.satisfied.push(requirement::ANNOTATIONS.to_owned());
            }
        }
        if self.require_signature {
            let types = self.signature_types();
            let found = facts
                .referrer_types
                .iter()
                .any(|t| types.iter().any(|want| want == t));
            report.record(
                requirement::SIGNATURE,
                found,
                format!("no referrer of a signature type ({})", types.join(", ")),
            );
        }
        report
    }
}

/// What a policy is evaluated against.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// The reference as given.
    pub reference: String,
    /// The resolved digest.
    pub digest: String,
    /// Whether the reference as given names a digest.
    pub pinned: bool,
    /// The manifest's `artifactType`.
    pub artifact_type: Option<String>,
    /// Manifest annotations.
    pub annotations: BTreeMap<String, String>,
    /// `artifactType` of every referrer of the digest.
    pub referrer_types: Vec<String>,
}

/// The verification report, with the reference CLI's (Go) field names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// The reference as given.
    #[serde(rename = "Reference")]
    pub reference: String,
    /// The resolved digest.
    #[serde(rename = "Digest")]
    pub digest: String,
    /// Requirements that hold.
    #[serde(rename = "Satisfied")]
    pub satisfied: Vec<String>,
    /// Requirements that do not, with why.
    #[serde(rename = "Findings")]
    pub findings: Vec<Finding>,
}

/// One violated requirement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The requirement's name.
    #[serde(rename = "Requirement")]
    pub requirement: String,
    /// What was found.
    #[serde(rename = "Detail")]
    pub detail: String,
}

impl Report {
    /// Whether every requirement holds.
    pub fn passed(&self) -> bool {
        self.findings.is_empty()
    }

    fn record(&mut self, name: &str, holds: bool, detail: String) {
        if holds {
            self.satisfied.push(name.to_owned());
        } else {
            self.findings.push(Finding {
                requirement: name.to_owned(),
                detail,
            });
        }
    }
}

#[cfg(test)]
mod tests;
