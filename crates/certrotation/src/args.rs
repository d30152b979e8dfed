//! The `ptah-cert-rotator` command line.

use std::time::Duration;

use clap::Parser;
use ptah_telemetry::LogFormat;

use crate::{
    CertRotationError, RotationConfig, San,
    config::{DEFAULT_SECRET_NAME, DEFAULT_SERVICE_NAME, DEFAULT_WEBHOOK_CONFIGURATION, parse_duration},
};

fn duration(s: &str) -> Result<Duration, CertRotationError> {
    parse_duration(s)
}

/// Issues and rotates the admission webhook's serving certificate and injects its CA bundle.
#[derive(Debug, Parser)]
#[command(name = "ptah-cert-rotator", version)]
pub struct Args {
    /// Namespace of the TLS Secret and the webhook Service.
    #[arg(long, env = "POD_NAMESPACE")]
    pub namespace: String,
    /// Name of the kubernetes.io/tls Secret the rotator owns.
    #[arg(long, default_value = DEFAULT_SECRET_NAME)]
    pub secret_name: String,
    /// Name of the webhook Service; its in-cluster DNS names become the certificate's SANs.
    #[arg(long, default_value = DEFAULT_SERVICE_NAME)]
    pub service_name: String,
    /// MutatingWebhookConfiguration to inject the CA bundle into (repeatable; "" for none).
    #[arg(long = "mutating-webhook", default_value = DEFAULT_WEBHOOK_CONFIGURATION)]
    pub mutating_webhooks: Vec<String>,
    /// ValidatingWebhookConfiguration to inject the CA bundle into (repeatable; "" for none).
    #[arg(long = "validating-webhook", default_value = DEFAULT_WEBHOOK_CONFIGURATION)]
    pub validating_webhooks: Vec<String>,
    /// An additional SAN, DNS name or IP address (repeatable).
    #[arg(long = "extra-san")]
    pub extra_sans: Vec<San>,
    /// Time between passes when nothing is due (e.g. 1h, 30m).
    #[arg(long, default_value = "1h", value_parser = duration)]
    pub interval: Duration,
    /// Run one pass and exit (for a Helm hook); a failed pass exits non-zero.
    #[arg(long)]
    pub once: bool,
    /// Lifetime of a new CA (e.g. 365d).
    #[arg(long, default_value = "365d", value_parser = duration)]
    pub ca_validity: Duration,
    /// Lifetime of a new serving certificate (e.g. 90d).
    #[arg(long, default_value = "90d", value_parser = duration)]
    pub cert_validity: Duration,
    /// Rotate the CA this long before it expires [default: a third of --ca-validity].
    #[arg(long, value_parser = duration)]
    pub ca_renew_before: Option<Duration>,
    /// Re-issue the serving certificate this long before it expires [default: min(30d, a third of --cert-validity)].
    #[arg(long, value_parser = duration)]
    pub cert_renew_before: Option<Duration>,
    /// How long a new CA is published before serving under it, and before the old one is withdrawn.
    #[arg(long, default_value = "2m", value_parser = duration)]
    pub ca_switch_delay: Duration,
    /// Log format: json (default) or pretty.
    #[arg(long, default_value = "json")]
    pub log_format: LogFormat,
}

impl Args {
    /// The validated rotation configuration these flags describe.
    pub fn config(&self) -> Result<RotationConfig, CertRotationError> {
        let names = |v: &[String]| v.iter().filter(|n| !n.is_empty()).cloned().collect();
        let config = RotationConfig {
            namespace: self.namespace.clone(),
            secret_name: self.secret_name.clone(),
            service_name: self.service_name.clone(),
            mutating_webhooks: names(&self.mutating_webhooks),
            validating_webhooks: names(&self.validating_webhooks),
            extra_sans: self.extra_sans.clone(),
            ca_validity: self.ca_validity,
            cert_validity: self.cert_validity,
            ca_renew_before: self.ca_renew_before,
            cert_renew_before: self.cert_renew_before,
            ca_switch_delay: self.ca_switch_delay,
            interval: self.interval,
        };
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn flags() {
        let args = Args::try_parse_from([
            "ptah-cert-rotator",
            "--namespace=ptah",
            "--extra-san=10.0.0.7",
            "--extra-san=webhook.example",
            "--validating-webhook=",
            "--interval=30m",
        ])
        .unwrap();
        let config = args.config().unwrap();
        assert_eq!(config.mutating_webhooks, ["ptah-operator"]);
        assert!(config.validating_webhooks.is_empty());
        assert_eq!(config.extra_sans.len(), 2);
        assert_eq!(config.interval, Duration::from_secs(1800));
        assert!(!args.once);
        let r = Args::try_parse_from([
            "x",
            "--namespace=n",
            "--cert-validity=1d",
            "--cert-renew-before=2d",
        ])
        .unwrap()
        .config();
        assert!(
            matches!(&r, Err(CertRotationError::Config(m))
                if m.starts_with("the serving certificate would be renewed")),
            "{r:?}"
        );
    }
}
