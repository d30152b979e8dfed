//! T3: realm Leases against the real kube-apiserver (`cargo xtask cluster up --tier api`).

use std::{sync::Arc, time::Duration};

use k8s_openapi::{
    api::coordination::v1::{Lease, LeaseSpec},
    apimachinery::pkg::apis::meta::v1::MicroTime,
};
use kube::{
    Api, Client,
    api::{DeleteParams, ObjectMeta, PostParams},
};
use ptah_api::shared::{Epoch, Sha256Digest};
use ptah_apitests::client::{admin_client, namespace, unique};
use ptah_targetlock::{
    Acquired, COORDINATION_LABEL, EPOCH_ANNOTATION, LockError, MANAGED_BY_LABEL, ManualClock, RealmLeases,
    Released, census::coordination_digest, holder_identity, lease_name, new_epoch,
};

const SECS: i64 = 5;

struct Fixture {
    client: Client,
    ns: String,
    digest: Sha256Digest,
}

async fn fixture() -> Fixture {
    let client = admin_client().await;
    let ns = namespace(&client, "targetlock").await;
    let digest = coordination_digest("postgresql", &ns, &unique("db"));
    Fixture { client, ns, digest }
}

impl Fixture {
    /// A separate "node": its own first-sighting table and its own clock.
    fn node(&self) -> (RealmLeases, ManualClock) {
        let clock = ManualClock::new();
        let leases = RealmLeases::with_clock(self.client.clone(), self.ns.clone(), Arc::new(clock.clone()));
        (leases, clock)
    }

    fn api(&self) -> Api<Lease> {
        Api::namespaced(self.client.clone(), &self.ns)
    }

    async fn live(&self) -> Lease {
        self.api()
            .get(&lease_name(&self.digest))
            .await
            .expect("get Lease")
    }

    /// Writes the Lease as another node would, bypassing this crate.
    async fn write_foreign(
        &self,
        holder: &str,
        epoch: Option<&Epoch>,
        duration: Option<i32>,
        renew: MicroTime,
    ) {
        let name = lease_name(&self.digest);
        let mut lease = self
            .api()
            .get_opt(&name)
            .await
            .expect("get")
            .unwrap_or_else(|| Lease {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    ..ObjectMeta::default()
                },
                spec: None,
            });
        lease.metadata.annotations = epoch.map(|e| [(EPOCH_ANNOTATION.to_owned(), e.to_string())].into());
        lease.spec = Some(LeaseSpec {
            holder_identity: Some(holder.to_owned()),
            lease_duration_seconds: duration,
            renew_time: Some(renew),
            ..LeaseSpec::default()
        });
        if lease.metadata.resource_version.is_some() {
            self.api()
                .replace(&name, &PostParams::default(), &lease)
                .await
                .expect("replace");
        } else {
            self.api()
                .create(&PostParams::default(), &lease)
                .await
                .expect("create");
        }
    }
}

fn held(outcome: Acquired) -> (Epoch, bool) {
    match outcome {
        Acquired::Held { epoch, fresh } => (epoch, fresh),
        other => panic!("want Held, got {other:?}"),
    }
}

fn long_ago() -> MicroTime {
    MicroTime(jiff::Timestamp::UNIX_EPOCH)
}

#[tokio::test]
async fn acquire_fresh_then_renew_keeps_the_epoch() {
    let f = fixture().await;
    let (leases, _) = f.node();
    let me = holder_identity("uid-a", "op-1");
    let (epoch, fresh) = held(leases.acquire(&f.digest, &me, SECS, None).await.expect("acquire"));
    assert!(fresh);
    let first = f.live().await;
    let labels = first.metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels.get(MANAGED_BY_LABEL).map(String::as_str),
        Some("ptah-operator")
    );
    assert_eq!(
        labels.get(COORDINATION_LABEL).map(String::as_str),
        Some("database-target")
    );
    let annotations = first.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(annotations.get(EPOCH_ANNOTATION), Some(&epoch.to_string()));
    let spec = first.spec.clone().expect("spec");
    assert_eq!(spec.holder_identity.as_deref(), Some(me.as_str()));
    assert_eq!(spec.lease_duration_seconds, Some(5));

    let (renewed, fresh) = held(
        leases
            .acquire(&f.digest, &me, 7, Some(&epoch))
            .await
            .expect("renew"),
    );
    assert_eq!((renewed, fresh), (epoch.clone(), false));
    let second = f.live().await.spec.expect("spec");
    assert_eq!(second.lease_duration_seconds, Some(7));
    assert!(second.renew_time >= spec.renew_time);
    // Acquiring without an expectation adopts the caller's own holding.
    let (adopted, fresh) = held(leases.acquire(&f.digest, &me, SECS, None).await.expect("adopt"));
    assert_eq!((adopted, fresh), (epoch, false));
    assert!(matches!(
        leases.acquire(&f.digest, &me, 4, None).await,
        Err(LockError::InvalidDuration)
    ));
}

#[tokio::test]
async fn second_holder_is_busy() {
    let f = fixture().await;
    let (a, _) = f.node();
    let (b, _) = f.node();
    let (ha, hb) = (holder_identity("uid-a", "op"), holder_identity("uid-b", "op"));
    held(a.acquire(&f.digest, &ha, SECS, None).await.expect("a"));
    match b.acquire(&f.digest, &hb, SECS, None).await.expect("b") {
        Acquired::Busy { holder, retry_after } => {
            assert_eq!(holder, ha);
            assert!(retry_after <= Duration::from_secs(5) && retry_after > Duration::from_secs(4));
        }
        other => panic!("want Busy, got {other:?}"),
    }
    // The same node's table is shared by its clones.
    assert!(matches!(
        a.clone()
            .acquire(&f.digest, &hb, SECS, None)
            .await
            .expect("b via a"),
        Acquired::Busy { .. }
    ));
}

#[tokio::test]
async fn takeover_waits_for_the_local_clock_and_rotates_the_epoch() {
    let f = fixture().await;
    let (a, _) = f.node();
    let (b, b_clock) = f.node();
    let (ha, hb) = (holder_identity("uid-a", "op"), holder_identity("uid-b", "op"));
    let (epoch_a, _) = held(a.acquire(&f.digest, &ha, SECS, None).await.expect("a"));
    assert!(matches!(
        b.acquire(&f.digest, &hb, SECS, None).await.expect("b"),
        Acquired::Busy { .. }
    ));
    b_clock.advance(Duration::from_secs(4));
    assert!(matches!(
        b.acquire(&f.digest, &hb, SECS, None).await.expect("b"),
        Acquired::Busy { .. }
    ));
    b_clock.advance(Duration::from_millis(1100));
    let (epoch_b, fresh) = held(b.acquire(&f.digest, &hb, SECS, None).await.expect("takeover"));
    assert!(fresh);
    assert_ne!(epoch_a, epoch_b);
    assert_eq!(f.live().await.spec.expect("spec").lease_transitions, Some(1));
    assert_eq!(
        a.acquire(&f.digest, &ha, SECS, Some(&epoch_a))
            .await
            .expect("old holder renews"),
        Acquired::ContinuityLost {
            current: Some(epoch_b.clone())
        }
    );
    // Adopting silently (no expectation) now sees a live foreign holder.
    assert!(matches!(
        a.acquire(&f.digest, &ha, SECS, None).await.expect("a"),
        Acquired::Busy { .. }
    ));
    // Releasing under the superseded epoch does nothing.
    assert_eq!(
        a.release(&f.digest, &ha, &epoch_a).await.expect("release"),
        Released::AlreadyReleased
    );
    assert_eq!(
        b.acquire(&f.digest, &hb, SECS, Some(&epoch_b))
            .await
            .expect("b renews"),
        Acquired::Held {
            epoch: epoch_b,
            fresh: false
        }
    );
}

#[tokio::test]
async fn foreign_timestamps_never_shorten_the_local_clock() {
    let f = fixture().await;
    let (b, clock) = f.node();
    let hb = holder_identity("uid-b", "op");
    let foreign = new_epoch();
    // Another node wrote a renewTime from 1970: by its timestamps the Lease expired long ago.
    f.write_foreign("ptah-h-other", Some(&foreign), Some(5), long_ago())
        .await;
    assert!(matches!(
        b.acquire(&f.digest, &hb, SECS, None).await.expect("b"),
        Acquired::Busy { .. }
    ));
    clock.advance(Duration::from_secs(3));
    assert!(matches!(
        b.acquire(&f.digest, &hb, SECS, None).await.expect("b"),
        Acquired::Busy { .. }
    ));
    // The other node renews (still with an ancient renewTime): the record changed, the clock restarts.
    f.write_foreign(
        "ptah-h-other",
        Some(&foreign),
        Some(5),
        MicroTime(jiff::Timestamp::UNIX_EPOCH + jiff::SignedDuration::from_secs(1)),
    )
    .await;
    clock.advance(Duration::from_secs(3));
    match b.acquire(&f.digest, &hb, SECS, None).await.expect("b") {
        Acquired::Busy { retry_after, .. } => {
            assert!(retry_after > Duration::from_secs(4), "{retry_after:?}")
        }
        other => panic!("the changed record must restart the local clock, got {other:?}"),
    }
    clock.advance(Duration::from_secs(3));
    assert!(matches!(
        b.acquire(&f.digest, &hb, SECS, None).await.expect("b"),
        Acquired::Busy { .. }
    ));
    clock.advance(Duration::from_secs(2));
    let (epoch, fresh) = held(b.acquire(&f.digest, &hb, SECS, None).await.expect("takeover"));
    assert!(fresh);
    assert_ne!(epoch, foreign);
    // Our renewTime never moves backwards, and it is ours now.
    assert!(f.live().await.spec.expect("spec").renew_time > Some(long_ago()));
}

#[tokio::test]
async fn release_needs_the_exact_holder_and_epoch() {
    let f = fixture().await;
    let (a, _) = f.node();
    let (b, _) = f.node();
    let (ha, hb) = (holder_identity("uid-a", "op"), holder_identity("uid-b", "op"));
    let (epoch, _) = held(a.acquire(&f.digest, &ha, SECS, None).await.expect("a"));
    assert_eq!(
        a.release(&f.digest, &ha, &new_epoch())
            .await
            .expect("wrong epoch"),
        Released::AlreadyReleased
    );
    assert_eq!(
        a.release(&f.digest, &hb, &epoch).await.expect("wrong holder"),
        Released::AlreadyReleased
    );
    assert_eq!(
        f.live().await.spec.expect("spec").holder_identity.as_deref(),
        Some(ha.as_str())
    );
    assert!(matches!(
        b.acquire(&f.digest, &hb, SECS, None).await.expect("b"),
        Acquired::Busy { .. }
    ));

    let before = f.live().await.spec.expect("spec").renew_time;
    assert_eq!(
        a.release(&f.digest, &ha, &epoch).await.expect("release"),
        Released::Released
    );
    let after = f.live().await.spec.expect("spec");
    assert_eq!(after.holder_identity.unwrap_or_default(), "");
    assert!(after.renew_time >= before);
    assert_eq!(
        a.release(&f.digest, &ha, &epoch).await.expect("again"),
        Released::AlreadyReleased
    );
    assert_eq!(
        a.acquire(&f.digest, &ha, SECS, Some(&epoch))
            .await
            .expect("renew after release"),
        Acquired::ContinuityLost { current: None }
    );
    // A free Lease is taken at once, under a new epoch.
    let (next, fresh) = held(b.acquire(&f.digest, &hb, SECS, None).await.expect("b"));
    assert!(fresh);
    assert_ne!(next, epoch);
}

#[tokio::test]
async fn malformed_foreign_lease_fails_closed() {
    let f = fixture().await;
    let (b, clock) = f.node();
    let hb = holder_identity("uid-b", "op");
    f.write_foreign("ptah-h-other", Some(&new_epoch()), None, long_ago())
        .await;
    for _ in 0..2 {
        match b.acquire(&f.digest, &hb, SECS, None).await {
            Err(LockError::Malformed { lease, why }) => {
                assert_eq!(lease, lease_name(&f.digest));
                assert!(why.contains("leaseDurationSeconds"), "{why}");
            }
            other => panic!("want Malformed, got {other:?}"),
        }
        clock.advance(Duration::from_secs(3600));
    }
    f.write_foreign("ptah-h-other", None, Some(5), long_ago()).await;
    match b.acquire(&f.digest, &hb, SECS, None).await {
        Err(err @ LockError::Malformed { .. }) => {
            assert!(err.to_string().contains(EPOCH_ANNOTATION), "{err}");
            assert!(!err.is_transient());
        }
        other => panic!("want Malformed, got {other:?}"),
    }
    assert_eq!(
        f.live().await.spec.expect("spec").holder_identity.as_deref(),
        Some("ptah-h-other")
    );
}

#[tokio::test]
async fn recreation_rotates_the_epoch() {
    let f = fixture().await;
    let (a, _) = f.node();
    let ha = holder_identity("uid-a", "op");
    let (epoch, _) = held(a.acquire(&f.digest, &ha, SECS, None).await.expect("a"));
    f.api()
        .delete(&lease_name(&f.digest), &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(
        a.acquire(&f.digest, &ha, SECS, Some(&epoch))
            .await
            .expect("renew"),
        Acquired::ContinuityLost { current: None }
    );
    let (again, fresh) = held(a.acquire(&f.digest, &ha, SECS, None).await.expect("adopt"));
    assert!(fresh);
    assert_ne!(again, epoch);
}

#[tokio::test]
async fn concurrent_acquire_yields_exactly_one_holder() {
    let f = fixture().await;
    for round in 0..4 {
        let digest = coordination_digest("mysql", &f.ns, &format!("race-{round}"));
        let (a, _) = f.node();
        let (b, _) = f.node();
        let (ha, hb) = (holder_identity("uid-a", "op"), holder_identity("uid-b", "op"));
        let (ra, rb) = tokio::join!(
            a.acquire(&digest, &ha, SECS, None),
            b.acquire(&digest, &hb, SECS, None)
        );
        let outcomes = [ra.expect("a"), rb.expect("b")];
        let holders = outcomes
            .iter()
            .filter(|o| matches!(o, Acquired::Held { .. }))
            .count();
        let busy = outcomes
            .iter()
            .filter(|o| matches!(o, Acquired::Busy { .. }))
            .count();
        assert_eq!((holders, busy), (1, 1), "round {round}: {outcomes:?}");
    }
}
