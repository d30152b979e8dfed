//! Where the desired state comes from: an OCI artifact, its registry credentials and transport.

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ConfigMapKeySelector, SecretKeySelector};

/// An OCI artifact, its verification policy, and how to reach the registry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OCIArtifactSourceSpec {
    /// `oci://host/repo[:tag][@sha256:…]`; a tag is resolved to a digest once per cycle.
    #[schemars(length(min = 7, max = 1024), regex(pattern = r"^oci://[^\t\n\v\f\r ?#]+$"))]
    pub oci_ref: String,
    /// Registry credentials, if the registry needs any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_auth_from: Option<RegistryAuthSpec>,
    /// An immutable ConfigMap key holding the verification policy.
    pub verification_policy_from: ConfigMapKeySelector,
    /// Transport settings (plain HTTP or a custom CA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<TransportSpec>,
}

/// How registry credentials are laid out in their Secret.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum RegistryAuthMode {
    /// Username/password or token keys, passed as environment variables.
    #[default]
    Environment,
    /// A Docker `config.json` document.
    DockerConfigJSON,
}

fn default_username_key() -> String {
    "username".to_owned()
}

fn default_password_key() -> String {
    "password".to_owned()
}

fn default_token_key() -> String {
    "token".to_owned()
}

/// A Secret with registry credentials. It must also hold key `registry` naming the authority.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.mode) || self.mode != 'DockerConfigJSON' || (has(self.dockerConfigJSONKey) && self.dockerConfigJSONKey != '')").message("dockerConfigJSONKey is required when mode is DockerConfigJSON"))]
pub struct RegistryAuthSpec {
    /// The Secret's name.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// How the Secret is laid out.
    #[serde(default)]
    pub mode: RegistryAuthMode,
    /// The key holding the username (Environment mode).
    #[serde(default = "default_username_key")]
    #[schemars(length(min = 1, max = 253))]
    pub username_key: String,
    /// The key holding the password (Environment mode).
    #[serde(default = "default_password_key")]
    #[schemars(length(min = 1, max = 253))]
    pub password_key: String,
    /// The key holding a bearer token (Environment mode).
    #[serde(default = "default_token_key")]
    #[schemars(length(min = 1, max = 253))]
    pub token_key: String,
    /// The key holding the Docker config document; required in DockerConfigJSON mode
    /// (conventionally `.dockerconfigjson`).
    #[serde(
        default,
        rename = "dockerConfigJSONKey",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(max = 253))]
    pub docker_config_json_key: Option<String>,
    /// Legacy: the key naming the registry authority; only `registry` is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^registry$"))]
    pub registry_key: Option<String>,
}

/// How the registry is reached.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!(has(self.plainHTTP) && self.plainHTTP && has(self.caFrom))").message("plainHTTP cannot be combined with caFrom"))]
#[x_kube(validation = Rule::new("!has(self.clientCertificateFrom)").message("clientCertificateFrom is reserved and not supported"))]
pub struct TransportSpec {
    /// Talk to the registry over plain HTTP.
    #[serde(default, rename = "plainHTTP")]
    pub plain_http: bool,
    /// A ConfigMap key with the CA bundle that signs the registry's certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_from: Option<ConfigMapKeySelector>,
    /// Reserved for client certificates; the API refuses any value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_certificate_from: Option<SecretKeySelector>,
}
