//! Plan directories laid out the way kubelet's projected volume writes them, and every refusal.

use std::os::unix::fs::symlink;

use ptah_dataplane::ErrorCode;
use tempfile::TempDir;

use super::*;

const STAMP: &str = "..2026_11_29_10_00_00.123456789";

/// A directory as kubelet's AtomicWriter lays out a projected volume of `chunks`.
fn projected(chunks: &[&[u8]]) -> TempDir {
    let dir = tempfile::tempdir().expect("dir");
    let payload = dir.path().join(STAMP);
    std::fs::create_dir(&payload).expect("payload dir");
    for (i, chunk) in chunks.iter().enumerate() {
        let name = plan_chunk_name(i);
        std::fs::write(payload.join(&name), chunk).expect("chunk");
        symlink(format!("{DATA_LINK}/{name}"), dir.path().join(&name)).expect("chunk link");
    }
    symlink(STAMP, dir.path().join(DATA_LINK)).expect("..data");
    dir
}

/// A plain directory of regular chunk files.
fn plain(chunks: &[(usize, &[u8])]) -> TempDir {
    let dir = tempfile::tempdir().expect("dir");
    for (i, chunk) in chunks {
        std::fs::write(dir.path().join(plan_chunk_name(*i)), chunk).expect("chunk");
    }
    dir
}

fn env(pairs: &[(&str, &str)]) -> Env {
    Env(pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect())
}

#[test]
fn a_projected_volume_is_read_in_chunk_order() {
    let dir = projected(&[b"{\"a\":", b"[1,2", b"]}\n"]);
    assert_eq!(read_source(dir.path(), 1024).expect("read"), b"{\"a\":[1,2]}\n");
    let files = chunk_files(dir.path()).expect("layout");
    assert!(
        files.iter().all(|f| f.starts_with(dir.path().join(STAMP))),
        "{files:?}"
    );
}

#[test]
fn a_plain_directory_and_a_single_file_are_accepted() {
    let dir = plain(&[(1, b"b"), (0, b"a")]);
    assert_eq!(read_source(dir.path(), 2).expect("read"), b"ab");
    let file = dir.path().join(plan_chunk_name(0));
    assert_eq!(read_source(&file, 1).expect("read"), b"a");
}

#[test]
fn a_gap_in_the_numbering_is_refused() {
    let dir = plain(&[(0, b"a"), (2, b"c")]);
    assert_eq!(
        read_source(dir.path(), 64),
        Err(PlanSourceError::Gap { missing: 1 })
    );
    let dir = plain(&[(1, b"b")]);
    assert_eq!(
        read_source(dir.path(), 64),
        Err(PlanSourceError::Gap { missing: 0 })
    );
    let empty = tempfile::tempdir().expect("dir");
    assert_eq!(read_source(empty.path(), 64), Err(PlanSourceError::Empty));
}

#[test]
fn more_than_sixteen_chunks_are_refused() {
    let chunks: Vec<(usize, &[u8])> = (0..=MAX_PLAN_CHUNKS).map(|i| (i, &b"x"[..])).collect();
    let dir = plain(&chunks);
    assert_eq!(read_source(dir.path(), 1024), Err(PlanSourceError::TooManyChunks));
    let full: Vec<(usize, &[u8])> = (0..MAX_PLAN_CHUNKS).map(|i| (i, &b"x"[..])).collect();
    assert_eq!(
        read_source(plain(&full).path(), 1024).expect("16 chunks").len(),
        16
    );
}

#[test]
fn extra_entries_are_refused_wherever_they_are() {
    for extra in ["notes.txt", "0.plan", "0000.plan", "016", "..data_tmp"] {
        let dir = projected(&[b"a"]);
        std::fs::write(dir.path().join(extra), b"x").expect("extra");
        assert_eq!(
            read_source(dir.path(), 64),
            Err(PlanSourceError::Extra(extra.to_owned())),
            "{extra}"
        );
    }
    let dir = projected(&[b"a"]);
    std::fs::write(dir.path().join(STAMP).join("001.plan"), b"unlinked").expect("extra");
    assert_eq!(
        read_source(dir.path(), 64),
        Err(PlanSourceError::Extra("001.plan".to_owned()))
    );
    let dir = projected(&[b"a"]);
    std::fs::create_dir(dir.path().join("..2020_01_01_00_00_00.1")).expect("old payload");
    assert!(matches!(
        read_source(dir.path(), 64),
        Err(PlanSourceError::Extra(_))
    ));
}

#[test]
fn non_regular_chunks_and_foreign_links_are_refused() {
    let dir = plain(&[(0, b"a")]);
    std::fs::create_dir(dir.path().join("001.plan")).expect("dir chunk");
    assert_eq!(
        read_source(dir.path(), 64),
        Err(PlanSourceError::NotRegular("001.plan".to_owned()))
    );

    let outside = tempfile::NamedTempFile::new().expect("outside");
    let dir = plain(&[(0, b"a")]);
    symlink(outside.path(), dir.path().join("001.plan")).expect("foreign link");
    assert_eq!(
        read_source(dir.path(), 64),
        Err(PlanSourceError::NotRegular("001.plan".to_owned()))
    );

    // A link through `..data` without `..data`.
    let dir = plain(&[]);
    symlink("..data/000.plan", dir.path().join("000.plan")).expect("link");
    assert!(matches!(
        read_source(dir.path(), 64),
        Err(PlanSourceError::NotRegular(_))
    ));

    // `..data` pointing out of the volume.
    let dir = plain(&[(0, b"a")]);
    symlink("/etc", dir.path().join(DATA_LINK)).expect("..data");
    assert!(matches!(
        read_source(dir.path(), 64),
        Err(PlanSourceError::NotRegular(_))
    ));

    // The payload file itself replaced by a symlink.
    let dir = projected(&[b"a"]);
    let chunk = dir.path().join(STAMP).join("000.plan");
    std::fs::remove_file(&chunk).expect("rm");
    symlink(outside.path(), &chunk).expect("link");
    assert!(matches!(
        read_source(dir.path(), 64),
        Err(PlanSourceError::NotRegular(_))
    ));
}

#[test]
fn an_oversize_total_is_refused_even_when_every_chunk_fits() {
    let dir = projected(&[b"aaaa", b"bbbb", b"cc"]);
    assert_eq!(read_source(dir.path(), 10).expect("exactly the bound").len(), 10);
    assert_eq!(
        read_source(dir.path(), 9),
        Err(PlanSourceError::TooLarge { max: 9 })
    );
}

#[test]
fn the_approved_digest_is_checked_over_the_concatenation() {
    let dir = projected(&[b"{}", b"\n"]);
    let path = dir.path().display().to_string();
    let good = Digest::of(b"{}\n").to_string();
    let e = env(&[
        (env::PLAN_FILE, &path),
        (env::EXPECTED_PLAN_CONTENT_DIGEST, &good),
    ]);
    assert_eq!(read_approved(&e, 1024).expect("approved"), b"{}\n");
    let err = read_approved(&e, 2).expect_err("too large");
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(err.to_string().contains(env::PLAN_FILE), "{err}");

    let first_only = Digest::of(b"{}").to_string();
    let e = env(&[
        (env::PLAN_FILE, &path),
        (env::EXPECTED_PLAN_CONTENT_DIGEST, &first_only),
    ]);
    assert_eq!(
        read_approved(&e, 1024).expect_err("mismatch").code(),
        ErrorCode::PlanContentMismatch
    );

    let work = tempfile::tempdir().expect("work");
    let copy = write_copy(work.path(), b"{}\n").expect("copy");
    assert_eq!(std::fs::read(copy).expect("read"), b"{}\n");
}
