//! The krew manifest template (`docs/krew/ptah.yaml`): once its placeholders are filled it is a
//! krew `Plugin` whose every platform installs this crate's binary from the archive for its own
//! OS and architecture, for the four platforms released.

use serde_json::Value;

#[test]
fn the_krew_manifest_installs_kubectl_ptah_on_every_released_platform() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/krew/ptah.yaml");
    let template = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut filled = template
        .replace("${VERSION}", "v0.1.0")
        .replace("${BASE_URL}", "https://releases.example.com/ptah");
    for platform in ["LINUX_AMD64", "LINUX_ARM64", "DARWIN_AMD64", "DARWIN_ARM64"] {
        filled = filled.replace(&format!("${{SHA256_{platform}}}"), &"a".repeat(64));
    }
    assert!(!filled.contains("${"), "a placeholder is left:\n{filled}");
    let manifest: Value = serde_saphyr::from_str(&filled).expect("YAML");
    assert_eq!(
        manifest["apiVersion"],
        "krew.googlecontainertools.github.com/v1alpha2"
    );
    assert_eq!(manifest["kind"], "Plugin");
    // krew runs `kubectl-<name>`: the name must match the binary this crate builds.
    assert_eq!(manifest["metadata"]["name"], "ptah");
    let binary = std::path::Path::new(env!("CARGO_BIN_EXE_kubectl-ptah"))
        .file_name()
        .and_then(|n| n.to_str())
        .expect("binary name");
    let platforms = manifest["spec"]["platforms"].as_array().expect("platforms");
    let mut seen = Vec::new();
    for p in platforms {
        let os = p["selector"]["matchLabels"]["os"].as_str().expect("os");
        let arch = p["selector"]["matchLabels"]["arch"].as_str().expect("arch");
        assert_eq!(p["bin"], binary);
        let uri = p["uri"].as_str().expect("uri");
        assert!(
            uri.ends_with(&format!("/kubectl-ptah-{os}-{arch}.tar.gz")),
            "{uri}"
        );
        assert_eq!(p["sha256"].as_str().map(str::len), Some(64));
        seen.push(format!("{os}/{arch}"));
    }
    seen.sort();
    assert_eq!(
        seen,
        ["darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64"]
    );
}
