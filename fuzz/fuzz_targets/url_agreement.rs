//! Differential: the manager's target identity (`ptah_dataplane::TargetIdentity`) and the
//! executor's connection URL (`ptah_engine::DatabaseUrl`), both over `ptah_dburl`, read every
//! input alike. Invariants: both accept or both refuse, and an accepted URL has the same host,
//! port, database, user and TLS mode on both sides. A disagreement would let the runner's identity
//! check pass for a database the executor then connects to differently.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_dataplane::TargetIdentity;
use ptah_engine::DatabaseUrl;

type Reading = (String, u16, String, String, String);

fn identity(url: &str) -> Option<Reading> {
    let id = TargetIdentity::from_url(url).ok()?;
    let doc = serde_json::to_value(&id).expect("an identity serializes");
    let text = |key: &str| doc[key].as_str().unwrap_or_else(|| panic!("identity without {key}")).to_owned();
    let port = doc["port"].as_u64().and_then(|p| u16::try_from(p).ok()).expect("identity port");
    Some((text("host"), port, text("database"), text("user"), text("tls")))
}

fn engine(url: &str) -> Option<Reading> {
    let parsed = DatabaseUrl::parse(url).ok()?;
    Some((
        parsed.host().to_owned(),
        parsed.port(),
        parsed.database().to_owned(),
        parsed.user().to_owned(),
        parsed.tls().as_str().to_owned(),
    ))
}

fuzz_target!(|data: &[u8]| {
    let Some(text) = ptah_fuzz::text(data) else { return };
    let (id, en) = (identity(text), engine(text));
    assert_eq!(id, en, "the identity and the executor read {text:?} differently");
});
