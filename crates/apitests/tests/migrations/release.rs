//! The chart installed by `helm install` for a migration suite: the shared helpers of
//! [`ptah_apitests::release`], with no extra chart values.

use kube::Client;
use ptah_testservices::TestServices;

pub(crate) use ptah_apitests::release::{Release, manager_story, pull_secret, run, uninstall};

/// `helm install` scoped to `app_ns`; returns the release namespace.
pub(crate) async fn install(client: &Client, app_ns: &str, services: &TestServices, image: &str) -> String {
    ptah_apitests::release::install(client, app_ns, services, image, &[]).await
}
