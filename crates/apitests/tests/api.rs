//! T3: the generated CRDs and the documented examples against a real kube-apiserver + etcd
//! (`cargo xtask cluster up --tier api`), with the CRDs applied by the test. The checks live in
//! `contract/`, which the `data-plane` suite's `assert` phase runs against a live release too.

mod common;
mod contract;

use common::{admin, ensure_crds};

#[tokio::test]
async fn the_generated_crds_are_established_with_every_kind_served() {
    let client = admin().await;
    let crds = ensure_crds(&client).await;
    contract::the_generated_crds_are_established_with_every_kind_served(&crds);
}

#[tokio::test]
async fn every_valid_example_is_accepted_and_read_back() {
    let client = admin().await;
    ensure_crds(&client).await;
    contract::every_valid_example_is_accepted_and_read_back(&client).await;
}

#[tokio::test]
async fn every_invalid_example_is_refused_at_its_field_with_its_message() {
    let client = admin().await;
    ensure_crds(&client).await;
    contract::every_invalid_example_is_refused_at_its_field_with_its_message(&client).await;
}

#[tokio::test]
async fn plans_chunks_approvals_and_acknowledgments_refuse_spec_updates_by_put_and_merge_patch() {
    let client = admin().await;
    ensure_crds(&client).await;
    contract::plans_chunks_approvals_and_acknowledgments_refuse_spec_updates_by_put_and_merge_patch(&client)
        .await;
}

#[tokio::test]
async fn the_unprivileged_user_is_refused_where_rbac_says_so() {
    let client = admin().await;
    ensure_crds(&client).await;
    contract::the_unprivileged_user_is_refused_where_rbac_says_so(&client).await;
}
