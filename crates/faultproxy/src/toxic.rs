//! [`Toxic`]: the faults Toxiproxy can put on a proxy's connections, typed.

use std::time::Duration;

use serde_json::{Value, json};

/// Which direction of a connection a toxic acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Client to server (requests).
    Upstream,
    /// Server to client (results); Toxiproxy's default.
    Downstream,
}

impl Stream {
    fn as_str(self) -> &'static str {
        match self {
            Stream::Upstream => "upstream",
            Stream::Downstream => "downstream",
        }
    }
}

/// What a toxic does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToxicKind {
    /// Delays every chunk of data by `latency`, give or take `jitter`.
    Latency {
        /// The added delay.
        latency: Duration,
        /// The random spread around it.
        jitter: Duration,
    },
    /// Stops all data; closes the connection after `close_after`, or never (`None`: a hang
    /// until the toxic is removed, and the data held back is lost).
    Timeout {
        /// When to close, if ever.
        close_after: Option<Duration>,
    },
    /// Resets the connection when data next flows, after `after` (zero: at once).
    ResetPeer {
        /// The delay between the first data and the reset.
        after: Duration,
    },
    /// Closes the connection once `bytes` have passed: a cut in the middle of a stream.
    LimitData {
        /// The bytes let through.
        bytes: u64,
    },
    /// Caps the throughput.
    Bandwidth {
        /// The rate, in KB per second.
        kilobytes_per_second: u64,
    },
}

/// A toxic to add: its kind, direction, name and toxicity.
#[derive(Clone, Debug, PartialEq)]
pub struct Toxic {
    kind: ToxicKind,
    stream: Stream,
    name: Option<String>,
    toxicity: f32,
}

impl Toxic {
    /// A toxic of `kind` on the downstream, on every connection, under Toxiproxy's default name.
    pub fn new(kind: ToxicKind) -> Self {
        Self {
            kind,
            stream: Stream::Downstream,
            name: None,
            toxicity: 1.0,
        }
    }

    /// Adds `latency` (no jitter).
    pub fn latency(latency: Duration) -> Self {
        Self::new(ToxicKind::Latency {
            latency,
            jitter: Duration::ZERO,
        })
    }

    /// Holds every byte back and never closes: the connection hangs.
    pub fn hang() -> Self {
        Self::new(ToxicKind::Timeout { close_after: None })
    }

    /// Holds every byte back and closes the connection after `close_after`.
    pub fn timeout(close_after: Duration) -> Self {
        Self::new(ToxicKind::Timeout {
            close_after: Some(close_after),
        })
    }

    /// Resets the connection as soon as data flows.
    pub fn reset_peer() -> Self {
        Self::new(ToxicKind::ResetPeer {
            after: Duration::ZERO,
        })
    }

    /// Lets `bytes` through, then closes the connection.
    pub fn limit_data(bytes: u64) -> Self {
        Self::new(ToxicKind::LimitData { bytes })
    }

    /// Caps the throughput at `kilobytes_per_second`.
    pub fn bandwidth(kilobytes_per_second: u64) -> Self {
        Self::new(ToxicKind::Bandwidth { kilobytes_per_second })
    }

    /// Acts on the client-to-server direction.
    pub fn upstream(mut self) -> Self {
        self.stream = Stream::Upstream;
        self
    }

    /// Acts on the server-to-client direction (the default).
    pub fn downstream(mut self) -> Self {
        self.stream = Stream::Downstream;
        self
    }

    /// Names the toxic (unique per proxy); the default is Toxiproxy's `<type>_<stream>`.
    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.to_owned());
        self
    }

    /// Acts on this share of the connections (clamped to 0..=1), drawn per connection.
    pub fn toxicity(mut self, toxicity: f32) -> Self {
        self.toxicity = toxicity.clamp(0.0, 1.0);
        self
    }

    /// Its kind.
    pub fn kind(&self) -> &ToxicKind {
        &self.kind
    }

    /// Toxiproxy's type name (`reset_peer`).
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            ToxicKind::Latency { .. } => "latency",
            ToxicKind::Timeout { .. } => "timeout",
            ToxicKind::ResetPeer { .. } => "reset_peer",
            ToxicKind::LimitData { .. } => "limit_data",
            ToxicKind::Bandwidth { .. } => "bandwidth",
        }
    }

    /// Its name: the one given, or `<type>_<stream>` as Toxiproxy names it.
    pub fn name(&self) -> String {
        match &self.name {
            Some(name) => name.clone(),
            None => format!("{}_{}", self.type_name(), self.stream.as_str()),
        }
    }

    /// The body of `POST /proxies/{proxy}/toxics`.
    pub(crate) fn to_json(&self) -> Value {
        let attributes = match &self.kind {
            ToxicKind::Latency { latency, jitter } => {
                json!({"latency": millis(*latency), "jitter": millis(*jitter)})
            }
            // Toxiproxy reads a zero timeout as "never close".
            ToxicKind::Timeout { close_after } => {
                json!({"timeout": close_after.map_or(0, millis)})
            }
            ToxicKind::ResetPeer { after } => json!({"timeout": millis(*after)}),
            ToxicKind::LimitData { bytes } => json!({"bytes": bytes}),
            ToxicKind::Bandwidth { kilobytes_per_second } => json!({"rate": kilobytes_per_second}),
        };
        json!({
            "name": self.name(),
            "type": self.type_name(),
            "stream": self.stream.as_str(),
            "toxicity": self.toxicity,
            "attributes": attributes,
        })
    }
}

/// Toxiproxy's unit; a duration too long for it saturates.
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_renders_toxiproxys_attributes_in_milliseconds() {
        let latency = Toxic::latency(Duration::from_millis(250)).to_json();
        assert_eq!(latency["type"], "latency");
        assert_eq!(latency["name"], "latency_downstream");
        assert_eq!(latency["stream"], "downstream");
        assert_eq!(latency["attributes"], json!({"latency": 250, "jitter": 0}));
        assert_eq!(Toxic::hang().to_json()["attributes"], json!({"timeout": 0}));
        assert_eq!(
            Toxic::timeout(Duration::from_secs(2)).to_json()["attributes"],
            json!({"timeout": 2000})
        );
        let reset = Toxic::reset_peer().upstream().named("cut").to_json();
        assert_eq!(
            (
                reset["type"].as_str(),
                reset["name"].as_str(),
                reset["stream"].as_str()
            ),
            (Some("reset_peer"), Some("cut"), Some("upstream"))
        );
        assert_eq!(reset["attributes"], json!({"timeout": 0}));
        assert_eq!(
            Toxic::limit_data(4096).to_json()["attributes"],
            json!({"bytes": 4096})
        );
        assert_eq!(Toxic::bandwidth(64).to_json()["attributes"], json!({"rate": 64}));
    }

    #[test]
    fn toxicity_is_clamped_to_a_share() {
        assert_eq!(Toxic::reset_peer().toxicity(3.0).to_json()["toxicity"], 1.0);
        assert_eq!(Toxic::reset_peer().toxicity(-1.0).to_json()["toxicity"], 0.0);
        assert_eq!(Toxic::reset_peer().toxicity(0.5).to_json()["toxicity"], 0.5);
    }
}
