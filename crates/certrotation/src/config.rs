//! What the rotator manages and for how long certificates live.

use std::{collections::BTreeSet, fmt, net::IpAddr, str::FromStr, time::Duration};

use crate::CertRotationError;

/// Default name of the Secret holding the serving certificate and the CA.
pub const DEFAULT_SECRET_NAME: &str = "ptah-operator-webhook-tls";
/// Default name of the webhook Service the certificate is issued for.
pub const DEFAULT_SERVICE_NAME: &str = "ptah-operator-webhook";
/// Default name of both webhook configurations.
pub const DEFAULT_WEBHOOK_CONFIGURATION: &str = "ptah-operator";

const DAY: u64 = 24 * 60 * 60;
/// Default CA lifetime: one year.
pub const DEFAULT_CA_VALIDITY: Duration = Duration::from_secs(365 * DAY);
/// Default serving certificate lifetime: 90 days.
pub const DEFAULT_CERT_VALIDITY: Duration = Duration::from_secs(90 * DAY);
/// Serving certificates are renewed at most this long before expiry (or at a third of their life).
pub const MAX_CERT_RENEW_BEFORE: Duration = Duration::from_secs(30 * DAY);
/// Default wait between publishing a CA and relying on it (kubelet Secret sync plus cache TTL).
pub const DEFAULT_CA_SWITCH_DELAY: Duration = Duration::from_secs(120);
/// Default interval between passes.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60 * 60);

/// One subject alternative name: a DNS name or an IP address.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum San {
    /// A DNS name, lower-case.
    Dns(String),
    /// An IPv4 or IPv6 address.
    Ip(IpAddr),
}

impl FromStr for San {
    type Err = CertRotationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Ok(ip) = s.parse::<IpAddr>() {
            return Ok(San::Ip(ip));
        }
        let valid = !s.is_empty()
            && s.len() <= 253
            && s.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'*')
            });
        if valid {
            Ok(San::Dns(s.to_ascii_lowercase()))
        } else {
            Err(CertRotationError::Config(format!(
                "{s:?} is neither an IP address nor a DNS name"
            )))
        }
    }
}

impl fmt::Display for San {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            San::Dns(name) => f.write_str(name),
            San::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// Everything one rotator manages: the Secret, the names to certify, the webhooks to inject, lifetimes.
#[derive(Clone, Debug)]
pub struct RotationConfig {
    /// Namespace of the Secret and the Service.
    pub namespace: String,
    /// Name of the `kubernetes.io/tls` Secret.
    pub secret_name: String,
    /// Name of the webhook Service; its four in-cluster DNS names become SANs.
    pub service_name: String,
    /// MutatingWebhookConfigurations whose every webhook gets the CA bundle.
    pub mutating_webhooks: Vec<String>,
    /// ValidatingWebhookConfigurations whose every webhook gets the CA bundle.
    pub validating_webhooks: Vec<String>,
    /// SANs beyond the Service's DNS names.
    pub extra_sans: Vec<San>,
    /// Lifetime of a new CA.
    pub ca_validity: Duration,
    /// Lifetime of a new serving certificate (never beyond its CA's).
    pub cert_validity: Duration,
    /// Rotate the CA this long before it expires; `None` means a third of `ca_validity`.
    pub ca_renew_before: Option<Duration>,
    /// Re-issue the serving certificate this long before it expires; `None` means
    /// `min(30 days, cert_validity / 3)`.
    pub cert_renew_before: Option<Duration>,
    /// How long a newly published CA (or serving certificate) must be out before the next step relies on it.
    pub ca_switch_delay: Duration,
    /// Time between passes when nothing is pending.
    pub interval: Duration,
}

impl RotationConfig {
    /// The defaults for `namespace`: names, lifetimes and interval of the chart.
    pub fn new(namespace: impl Into<String>) -> Self {
        RotationConfig {
            namespace: namespace.into(),
            secret_name: DEFAULT_SECRET_NAME.to_owned(),
            service_name: DEFAULT_SERVICE_NAME.to_owned(),
            mutating_webhooks: vec![DEFAULT_WEBHOOK_CONFIGURATION.to_owned()],
            validating_webhooks: vec![DEFAULT_WEBHOOK_CONFIGURATION.to_owned()],
            extra_sans: Vec::new(),
            ca_validity: DEFAULT_CA_VALIDITY,
            cert_validity: DEFAULT_CERT_VALIDITY,
            ca_renew_before: None,
            cert_renew_before: None,
            ca_switch_delay: DEFAULT_CA_SWITCH_DELAY,
            interval: DEFAULT_INTERVAL,
        }
    }

    /// `<svc>`, `<svc>.<ns>`, `<svc>.<ns>.svc`, `<svc>.<ns>.svc.cluster.local`.
    pub fn service_dns_names(&self) -> Vec<String> {
        let (svc, ns) = (&self.service_name, &self.namespace);
        vec![
            svc.clone(),
            format!("{svc}.{ns}"),
            format!("{svc}.{ns}.svc"),
            format!("{svc}.{ns}.svc.cluster.local"),
        ]
    }

    /// The SANs a serving certificate must carry, exactly.
    pub fn expected_sans(&self) -> BTreeSet<San> {
        let mut sans: BTreeSet<San> = self
            .service_dns_names()
            .into_iter()
            .map(|n| San::Dns(n.to_ascii_lowercase()))
            .collect();
        sans.extend(self.extra_sans.iter().cloned());
        sans
    }

    /// How long before expiry the serving certificate is re-issued.
    pub fn cert_threshold(&self) -> Duration {
        self.cert_renew_before
            .unwrap_or_else(|| MAX_CERT_RENEW_BEFORE.min(self.cert_validity / 3))
    }

    /// How long before expiry the CA is rotated.
    pub fn ca_threshold(&self) -> Duration {
        self.ca_renew_before.unwrap_or(self.ca_validity / 3)
    }

    /// Refuses names and lifetimes that would make every pass rotate again, or that cannot be certified.
    pub fn validate(&self) -> Result<(), CertRotationError> {
        let bad = |m: String| Err(CertRotationError::Config(m));
        for (what, name) in [
            ("namespace", &self.namespace),
            ("secret name", &self.secret_name),
            ("service name", &self.service_name),
        ] {
            if name.is_empty() {
                return bad(format!("the {what} is empty"));
            }
        }
        for name in self.service_dns_names() {
            name.parse::<San>()?;
        }
        if self.cert_threshold() >= self.cert_validity {
            return bad(format!(
                "the serving certificate would be renewed {:?} before expiry but lives only {:?}",
                self.cert_threshold(),
                self.cert_validity
            ));
        }
        if self.ca_threshold() >= self.ca_validity {
            return bad(format!(
                "the CA would be rotated {:?} before expiry but lives only {:?}",
                self.ca_threshold(),
                self.ca_validity
            ));
        }
        if self.interval.is_zero() {
            return bad("the interval is zero".to_owned());
        }
        Ok(())
    }
}

/// Parses `90d`, `6h`, `1h30m`, `45s` (units d, h, m, s; at least one).
pub fn parse_duration(s: &str) -> Result<Duration, CertRotationError> {
    let bad = || CertRotationError::Config(format!("{s:?} is not a duration like 90d, 6h, 1h30m or 45s"));
    let mut total: u64 = 0;
    let mut digits = String::new();
    let mut any = false;
    for c in s.trim().chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            'd' => DAY,
            'h' => 60 * 60,
            'm' => 60,
            's' => 1,
            _ => return Err(bad()),
        };
        let n: u64 = digits.parse().map_err(|_| bad())?;
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(bad)?;
        digits.clear();
        any = true;
    }
    if !any || !digits.is_empty() {
        return Err(bad());
    }
    Ok(Duration::from_secs(total))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90d").unwrap(), Duration::from_secs(90 * DAY));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("45s").unwrap(), Duration::from_secs(45));
        for bad in ["", "10", "h", "5w", "-1h", "99999999999999999999d"] {
            let r = parse_duration(bad);
            assert!(
                matches!(&r, Err(CertRotationError::Config(m))
                    if *m == format!("{bad:?} is not a duration like 90d, 6h, 1h30m or 45s")),
                "{bad}: {r:?}"
            );
        }
    }

    #[test]
    fn sans_and_thresholds() {
        assert_eq!("10.0.0.1".parse::<San>().unwrap(), San::Ip([10, 0, 0, 1].into()));
        assert_eq!(
            "Foo.Example".parse::<San>().unwrap(),
            San::Dns("foo.example".into())
        );
        let r = "a..b".parse::<San>();
        assert!(
            matches!(&r, Err(CertRotationError::Config(m))
                if m == "\"a..b\" is neither an IP address nor a DNS name"),
            "{r:?}"
        );
        let c = RotationConfig::new("ns");
        assert_eq!(c.cert_threshold(), Duration::from_secs(30 * DAY));
        assert!(
            c.expected_sans()
                .contains(&San::Dns("ptah-operator-webhook.ns.svc".into()))
        );
        c.validate().unwrap();
        let short = RotationConfig {
            cert_validity: Duration::from_secs(DAY),
            ..c
        };
        assert_eq!(short.cert_threshold(), Duration::from_secs(DAY / 3));
    }
}
