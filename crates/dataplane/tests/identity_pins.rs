//! Pinned target-identity digests. Every realm's Lease, every claim and every runner check is
//! bound to these values: a change to the identity document (its fields, their normalisation, the
//! hash) would silently re-bind every schema to a "new" database. Changing one of them must be a
//! deliberate act, with `IDENTITY_VERSION` raised and the upgrade path written down.

use ptah_dataplane::TargetIdentity;

/// (URL, the digest computed by the identity code as of the commit that introduced this test).
const PINS: &[(&str, &str)] = &[
    (
        "postgres://app:pw@db.example.com/app",
        "sha256:4fd391ecfde33ccbeae562053136e131755989fae02b08c778170d1f4992d1d6",
    ),
    (
        "mariadb://shop:s3cret@10.0.0.7/shop",
        "sha256:428622c0f97a09b2bf38b33c2ce8f8e9ba36095439dae38d9712c49e906bcf42",
    ),
    (
        "postgres://app:pw@DB.Example.COM/app?sslmode=require",
        "sha256:e1818aa06d88768bc6c1acad8afb4520ea8ab2c3c29966e00d5a1c41ea5718a5",
    ),
    (
        "mysql://u:p@[::1]:3307/shop?ssl-mode=VERIFY_IDENTITY",
        "sha256:b4d98c144a84944d772162d32766e4362ea2bd9ed6e85902e933a91e64688a5c",
    ),
];

#[test]
fn known_urls_keep_their_pinned_digests() {
    for (url, pinned) in PINS {
        let digest = TargetIdentity::from_url(url)
            .unwrap_or_else(|e| panic!("{url}: {e}"))
            .digest()
            .expect("digest")
            .to_string();
        assert_eq!(&digest, pinned, "the target identity of {url} changed");
    }
}
