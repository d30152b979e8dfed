//! Issue and rotate the admission webhook's serving certificate: the `ptah-cert-rotator` process.
//!
//! The manager has no Secret permission at all (DESIGN §1, reference §7), so this small process
//! alone owns one `kubernetes.io/tls` Secret. The manager Pod mounts it as a volume (kubelet
//! delivers updates) and hot-reloads `tls.crt`/`tls.key`; the rotator injects the CA bundle
//! (`ca.crt`) into every webhook of the named webhook configurations.
//!
//! # Shape
//!
//! [`decide`] is a pure function over the Secret's files (or their absence), the time and the
//! [`RotationConfig`], returning one [`Action`]; [`execute`] turns it into new files (this is where
//! keys are generated); [`reconcile`] is the thin shell doing one pass against the API server and
//! [`run`] repeats it (every `interval`, when a staged step falls due, and on watch events).
//!
//! # Decision table (first matching row wins)
//!
//! | Secret | action |
//! |---|---|
//! | absent | `Create`: new CA + serving certificate |
//! | a file missing/unparseable, `tls.key` not the key of `tls.crt`, `tls.crt` signed by no CA in `ca.crt` | `Recover(defect)`: fresh CA + serving certificate, bundle = new CA only |
//! | serving certificate already expired | `Recover(ServingExpired)` |
//! | `ca.key` missing, unparseable or matching no CA in the bundle | `StageCa(KeyUnusable)` |
//! | signing CA not yet valid / within the CA threshold of expiry | `StageCa(NotYetValid / Expiring)`: bundle = new CA + the CA of the served certificate; serving pair kept |
//! | serving certificate signed by an older CA of the bundle | `Wait(SwitchServing)` until the signing CA is `ca_switch_delay` old, then `ReissueServing` |
//! | serving certificate within its threshold, not yet valid, or SANs differ | `ReissueServing(reason)` under the signing CA; bundle kept |
//! | bundle holds more than the signing CA | `Wait(WithdrawOldCa)` until the serving certificate is `ca_switch_delay` old, then `WithdrawOldCa` |
//! | otherwise | `Keep { recheck_at }` |
//!
//! A CA rotation therefore takes three passes (stage, switch, withdraw) and the API server trusts the
//! served certificate at every moment: the new CA is in the bundle before anything is signed by it,
//! and the old CA leaves only after the serving certificate under the new one has been out for
//! `ca_switch_delay` (kubelet's Secret volume sync). Each pass injects the bundle in force before it
//! writes, so a failed injection is repaired before the next step relies on it.
//!
//! # RBAC the rotator needs (the chart renders it; nothing else)
//!
//! Role in the release namespace:
//! - `secrets`, `resourceNames: [<secret-name>]`: `get`, `create`, `update`, `patch`, plus `list`,
//!   `watch` for the event-driven passes (the watch uses a `metadata.name` field selector, which
//!   RBAC authorizes against `resourceNames`). `create` cannot be restricted by name in RBAC; the
//!   chart's certificate-write guard (ValidatingAdmissionPolicy) limits it to this name.
//!
//! ClusterRole:
//! - `admissionregistration.k8s.io` `mutatingwebhookconfigurations` and
//!   `validatingwebhookconfigurations`, `resourceNames: [<mutating>, <validating>]`: `get`,
//!   `update`, `patch`, plus `list`, `watch` (same field-selector watch).
//!
//! Without `list`/`watch` the rotator still works, driven by its interval alone.

mod args;
mod config;
mod decide;
mod error;
mod inspect;
mod issue;
mod material;
mod reconcile;
mod secret;
mod webhooks;

pub use args::Args;
pub use config::{
    DEFAULT_CA_SWITCH_DELAY, DEFAULT_CA_VALIDITY, DEFAULT_CERT_VALIDITY, DEFAULT_INTERVAL,
    DEFAULT_SECRET_NAME, DEFAULT_SERVICE_NAME, DEFAULT_WEBHOOK_CONFIGURATION, MAX_CERT_RENEW_BEFORE,
    RotationConfig, San, parse_duration,
};
pub use decide::{Action, BACKDATE, CaReason, ServingReason, Step, decide};
pub use error::CertRotationError;
pub use inspect::{Defect, Field};
pub use issue::{KeyedCert, execute, issue_ca, issue_serving};
pub use material::{CA_CRT, CA_KEY, SECRET_TYPE, TLS_CRT, TLS_KEY, TlsFiles, certificates_pem};
pub use reconcile::{PassOutcome, reconcile, run, termination};
pub use webhooks::{Injection, inject_bundle};

/// The field manager (and `managed-by` label value) of every write the rotator makes.
pub const FIELD_MANAGER: &str = "ptah-cert-rotator";
