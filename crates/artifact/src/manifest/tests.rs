use super::*;

fn schema_manifest() -> OciImageManifest {
    let files = [("schema.hcl".to_owned(), Digest::of(b"x"), 1u64)];
    let annotations = BTreeMap::from([(
        media::ANNOTATION_KIND.to_owned(),
        media::SCHEMA_ARTIFACT_TYPE.to_owned(),
    )]);
    parse(&build(Kind::Schema, &files, &annotations).expect("build")).expect("parse")
}

fn migrations_manifest(paths: &[&str]) -> OciImageManifest {
    let files: Vec<(String, Digest, u64)> = paths
        .iter()
        .map(|p| (p.to_string(), Digest::of(p.as_bytes()), p.len() as u64))
        .collect();
    let annotations = BTreeMap::from([(
        media::ANNOTATION_KIND.to_owned(),
        media::MIGRATIONS_ARTIFACT_TYPE.to_owned(),
    )]);
    parse(&build(Kind::Migrations, &files, &annotations).expect("build")).expect("parse")
}

fn check_default(manifest: &OciImageManifest, kind: Option<Kind>) -> Result<Checked, Error> {
    check(manifest, kind, &Limits::default())
}

#[test]
fn built_manifests_pass_and_are_deterministic() {
    let checked = check_default(&schema_manifest(), Some(Kind::Schema)).expect("schema");
    assert_eq!(checked.entries[0].path, "schema.hcl");
    let a = migrations_manifest(&["b/2.up.sql", "ptah.sum", "a/1.up.sql"]);
    let checked = check_default(&a, None).expect("migrations");
    let paths: Vec<&str> = checked.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, vec!["a/1.up.sql", "b/2.up.sql", "ptah.sum"]);
    let b = migrations_manifest(&["ptah.sum", "a/1.up.sql", "b/2.up.sql"]);
    assert_eq!(
        serde_json::to_vec(&a).expect("json"),
        serde_json::to_vec(&b).expect("json")
    );
}

#[test]
fn the_manifest_media_type_must_be_an_oci_manifest() {
    let err =
        parse(br#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}"#)
            .expect_err("index");
    assert!(matches!(err, Error::WrongMediaType { .. }), "{err}");
    assert!(matches!(parse(b"not json"), Err(Error::InvalidManifest { .. })));
}

#[test]
fn kind_and_artifact_type_must_agree() {
    let manifest = schema_manifest();
    let err = check_default(&manifest, Some(Kind::Migrations)).expect_err("wrong kind");
    assert!(
        matches!(
            err,
            Error::WrongArtifactType {
                field: "artifactType",
                ..
            }
        ),
        "{err}"
    );
    let mut relabelled = manifest.clone();
    relabelled.annotations = Some(BTreeMap::from([(
        media::ANNOTATION_KIND.to_owned(),
        "other".to_owned(),
    )]));
    let err = check_default(&relabelled, None).expect_err("annotation");
    assert!(
        matches!(
            err,
            Error::WrongArtifactType {
                field: media::ANNOTATION_KIND,
                ..
            }
        ),
        "{err}"
    );
    let mut unknown = manifest;
    unknown.artifact_type = Some("application/vnd.example".to_owned());
    assert!(matches!(
        check_default(&unknown, None),
        Err(Error::WrongArtifactType { .. })
    ));
}

#[test]
fn config_layers_and_digests_are_checked() {
    let mut m = schema_manifest();
    m.config.media_type = "application/vnd.oci.image.config.v1+json".to_owned();
    assert!(
        matches!(check_default(&m, None), Err(Error::WrongMediaType { ref what, .. }) if what == "config")
    );

    let mut m = schema_manifest();
    m.layers[0].media_type = media::GENERIC_FILE_MEDIA_TYPE.to_owned();
    assert!(matches!(
        check_default(&m, None),
        Err(Error::WrongMediaType { .. })
    ));

    let mut m = schema_manifest();
    m.layers[0].digest = format!("sha512:{}", "a".repeat(128));
    assert!(matches!(
        check_default(&m, None),
        Err(Error::InvalidManifest { .. })
    ));

    let mut m = schema_manifest();
    m.layers[0].size = 64 * 1024 * 1024 + 1;
    assert!(matches!(
        check_default(&m, None),
        Err(Error::LimitExceeded { .. })
    ));
}

#[test]
fn paths_duplicates_counts_and_content_are_checked() {
    let traversal = migrations_manifest(&["ptah.sum", "../x.sql"]);
    assert!(matches!(
        check_default(&traversal, None),
        Err(Error::UnsafePath { .. })
    ));
    let mut dup = migrations_manifest(&["ptah.sum", "a.sql"]);
    let first = dup.layers[0].clone();
    dup.layers.push(first);
    assert!(matches!(
        check_default(&dup, None),
        Err(Error::UnsafePath {
            reason: "duplicate path",
            ..
        })
    ));
    let many = migrations_manifest(&["ptah.sum", "a.sql", "b.sql"]);
    let limits = Limits {
        max_files: 2,
        ..Limits::default()
    };
    assert!(matches!(
        check(&many, None, &limits),
        Err(Error::LimitExceeded { .. })
    ));
    let foreign = migrations_manifest(&["ptah.sum", "README.md"]);
    assert!(matches!(
        check_default(&foreign, None),
        Err(Error::InvalidContent { .. })
    ));
    let mut untitled = migrations_manifest(&["ptah.sum"]);
    untitled.layers[0].annotations = None;
    assert!(matches!(
        check_default(&untitled, None),
        Err(Error::InvalidManifest { .. })
    ));
}
