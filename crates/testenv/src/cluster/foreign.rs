//! Another workspace's cluster on this host. Its kubelets share the host's network names with
//! ours (the `ptah-isolation` namespace and its veth, the `ptahcni0` bridge, the hosts line,
//! kube-proxy's rules), so while one runs this workspace must not clean them: an API tier started
//! from a second checkout once removed a running matrix cluster's network this way (2026-12-07).

use std::path::{Path, PathBuf};

/// The certificate directory of a running kubelet that belongs to no cluster under `root`.
pub(super) fn kubelet_elsewhere(root: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir("/proc").ok()?;
    entries.flatten().find_map(|entry| {
        let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
        cert_dir_elsewhere(&cmdline, root)
    })
}

/// The kubelet `--cert-dir` of a process command line (NUL-separated), when it is not under `root`.
fn cert_dir_elsewhere(cmdline: &[u8], root: &Path) -> Option<PathBuf> {
    let mut args = cmdline
        .split(|&b| b == 0)
        .filter_map(|a| std::str::from_utf8(a).ok());
    if !args.next()?.ends_with("/kubelet") {
        return None;
    }
    let dir = PathBuf::from(args.find_map(|a| a.strip_prefix("--cert-dir="))?);
    (!dir.starts_with(root)).then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_kubelet_of_another_cluster_directory_counts() {
        let root = Path::new("/work/main/target/cluster");
        let ours = b"/cache/kubelet\0--cert-dir=/work/main/target/cluster/isolation/kubelet\0--v=2";
        let theirs = b"/cache/kubelet\0--cert-dir=/work/matrix/target/cluster/kubelet\0";
        let apiserver = b"/cache/kube-apiserver\0--cert-dir=/work/matrix/target/cluster/kube-apiserver";
        assert_eq!(cert_dir_elsewhere(ours, root), None);
        assert_eq!(
            cert_dir_elsewhere(theirs, root),
            Some(PathBuf::from("/work/matrix/target/cluster/kubelet"))
        );
        assert_eq!(cert_dir_elsewhere(apiserver, root), None);
        assert_eq!(cert_dir_elsewhere(b"", root), None);
    }
}
