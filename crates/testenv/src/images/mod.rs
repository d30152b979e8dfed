//! Container images built without Docker, as OCI image layouts (see [`oci`]).
//!
//! * the pause image of the local node (busybox-static in a shell loop that exits on SIGTERM);
//! * `cargo xtask images`: the images of this workspace's binaries (see [`IMAGES`]): the
//!   data-plane image (`ptah` + `ptah-runner`), the manager (`/manager`) and the cert-rotator
//!   (`/ptah-cert-rotator`) and the release-lifecycle hooks (`/ptah-crd-manager`), each built only
//!   when the workspace has that binary (an older revision may lack it). Each holds its
//!   binaries, the shared libraries `ldd` names, CA certificates, `/etc/passwd` with the non-root
//!   user 65532 and `/tmp` ([`rootfs`]); it is imported into the local cluster's containerd and
//!   pushed to the TLS registry of `cargo xtask services` through it, and its pinned reference
//!   (`<registry>/<repository>:dev@sha256:…`) is written to `target/images/<name>/reference`.
//!   The binaries are release builds (stripped; [`build`]) and the one
//!   layer is gzip-compressed ([`oci`]): 9–14 MB per image as pushed, where the dev profile's
//!   uncompressed layers were 72–130 MB;
//! * then the kubectl image ([`KUBECTL_IMAGE`]): the static `kubectl` of `cargo xtask k8s-bin` at
//!   the running cluster's Kubernetes version (built when missing), with the same passwd, CA
//!   certificates and `/tmp`, for Pods that run kubectl themselves (the wait-for-schema pattern,
//!   docs/wait-for-schema.md).

mod build;
pub mod oci;
mod revision;
pub mod rootfs;

use std::{
    fs,
    os::unix::fs::symlink,
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context, bail};
pub use build::{Profile, build_command, build_commands, wanted, workspace_bins};
use ptah_testservices::TestServices;
use serde_json::Value;

use crate::{
    k8s::{Binaries, Component, Matrix},
    step::{output, run, step, workspace_root},
};

/// The data-plane image's repository in the services registry.
pub const DATA_PLANE_REPOSITORY: &str = "ptah/data-plane";
/// The manager image's repository.
pub const MANAGER_REPOSITORY: &str = "ptah/manager";
/// The cert-rotator image's repository.
pub const CERT_ROTATOR_REPOSITORY: &str = "ptah/cert-rotator";
/// The release-lifecycle hook image's repository.
pub const CRD_MANAGER_REPOSITORY: &str = "ptah/crd-manager";
/// The kubectl image's repository.
pub const KUBECTL_REPOSITORY: &str = "ptah/kubectl";
/// Their tag.
pub const TAG: &str = "dev";

/// One image of workspace binaries.
pub struct Image {
    /// Directory under `target/images/` (which holds `reference`).
    pub name: &'static str,
    /// Repository in the services registry.
    pub repository: &'static str,
    /// `(cargo package, binary, path in the image)`; the first is the entrypoint.
    pub binaries: &'static [(&'static str, &'static str, &'static str)],
    /// Skipped with a message (instead of failing) while the workspace has no such binary.
    pub optional: bool,
}

/// The images `cargo xtask images` builds, in order.
pub const IMAGES: &[Image] = &[
    Image {
        name: "data-plane",
        repository: DATA_PLANE_REPOSITORY,
        binaries: &[
            ("ptah-cli", "ptah", "/usr/local/bin/ptah"),
            ("ptah-runner", "ptah-runner", "/usr/local/bin/ptah-runner"),
        ],
        optional: false,
    },
    Image {
        name: "manager",
        repository: MANAGER_REPOSITORY,
        binaries: &[("ptah-manager", "manager", "/manager")],
        optional: false,
    },
    Image {
        name: "cert-rotator",
        repository: CERT_ROTATOR_REPOSITORY,
        binaries: &[("ptah-certrotation", "ptah-cert-rotator", "/ptah-cert-rotator")],
        optional: true,
    },
    Image {
        name: "crd-manager",
        repository: CRD_MANAGER_REPOSITORY,
        binaries: &[("ptah-crdupgrade", "ptah-crd-manager", "/ptah-crd-manager")],
        optional: true,
    },
];

/// An image of one program `cargo xtask k8s-bin` builds (a static Go binary, so no shared
/// library), at the Kubernetes version of the running cluster.
pub struct ProgramImage {
    /// Directory under `target/images/` (which holds `reference`).
    pub name: &'static str,
    /// Repository in the services registry.
    pub repository: &'static str,
    /// The program, its entrypoint.
    pub component: Component,
    /// Its path in the image.
    pub at: &'static str,
}

/// `kubectl` alone, run as 65532 like the other images; built after [`IMAGES`] (never for
/// `--rev`: no release ships it).
pub const KUBECTL_IMAGE: ProgramImage = ProgramImage {
    name: "kubectl",
    repository: KUBECTL_REPOSITORY,
    component: Component::Kubectl,
    at: "/usr/local/bin/kubectl",
};

/// Arguments of `cargo xtask images`.
#[derive(clap::Args)]
pub struct Args {
    /// Build the binaries with the dev profile instead of the release profile (quicker after
    /// the tests built them; images about five times larger).
    #[arg(long)]
    dev: bool,
    /// Build the images of another commit (a previous release, for the upgrade suite) from a
    /// worktree under `target/rev/<commit>/`, in a target directory of its own outside the clone,
    /// always with the dev profile; references go to `target/rev/<commit>/target/images/`.
    #[arg(long)]
    rev: Option<String>,
}

/// Runs `cargo xtask images`.
pub fn run_task(args: Args) -> anyhow::Result<()> {
    let root = workspace_root();
    let profile = match (&args.rev, args.dev) {
        (None, false) => Profile::Release,
        _ => Profile::Dev,
    };
    let (out, tag, wanted) = match &args.rev {
        None => {
            let wanted = wanted(IMAGES, &workspace_bins(&root)?)?;
            for mut build in build_commands(&root, &wanted, profile) {
                step(&crate::step::describe(&build), || run(&mut build))?;
            }
            (root.clone(), TAG.to_owned(), wanted)
        }
        Some(rev) => {
            let built = revision::build(&root, rev)?;
            (built.out, format!("rev-{}", &built.commit[..12]), built.images)
        }
    };

    let services = TestServices::load().map_err(|e| anyhow::anyhow!("{e}"))?;
    let cluster = Cluster::require(&root)?;
    for image in wanted {
        let pinned = build_and_push(&out, profile, image, &tag, &services, &cluster)?;
        println!("{pinned}");
    }
    if args.rev.is_none() {
        let program = cluster.program(&root, KUBECTL_IMAGE.component)?;
        let reference = format!("{}/{}:{TAG}", services.registry.host, KUBECTL_IMAGE.repository);
        let built = program_layout(&root, &KUBECTL_IMAGE, &program, &reference)?;
        let pinned = import_and_push(&root, KUBECTL_IMAGE.name, &reference, &built, &services, &cluster)?;
        println!("{pinned}");
    }
    Ok(())
}

/// `<registry host>/<repository>:dev`.
pub fn image_name(registry_host: &str, image: &Image) -> String {
    tagged_name(registry_host, image, TAG)
}

/// `<registry host>/<repository>:<tag>`.
pub fn tagged_name(registry_host: &str, image: &Image, tag: &str) -> String {
    format!("{registry_host}/{}:{tag}", image.repository)
}

/// Builds `image`'s OCI layout named `reference` from the binaries of `profile`, under
/// `target/images/<name>/`.
pub fn layout(root: &Path, profile: Profile, image: &Image, reference: &str) -> anyhow::Result<oci::Built> {
    let work = root.join("target").join("images").join(image.name);
    layout_in(&work, &root.join("target").join(profile.dir()), image, reference)
}

/// Builds `image`'s OCI layout named `reference` from the binaries in `bins`, under `work`.
pub fn layout_in(work: &Path, bins: &Path, image: &Image, reference: &str) -> anyhow::Result<oci::Built> {
    let files: Vec<(PathBuf, &str)> = image
        .binaries
        .iter()
        .map(|(_, bin, at)| (bins.join(bin), *at))
        .collect();
    files_layout(work, &files, reference)
}

/// Builds the OCI layout of a [`ProgramImage`] holding `program`, under
/// `target/images/<name>/`.
pub fn program_layout(
    root: &Path,
    image: &ProgramImage,
    program: &Path,
    reference: &str,
) -> anyhow::Result<oci::Built> {
    let work = root.join("target").join("images").join(image.name);
    files_layout(&work, &[(program.to_path_buf(), image.at)], reference)
}

/// The layout of `files` (`(path on the host, path in the image)`, the first the entrypoint)
/// under `work`.
fn files_layout(work: &Path, files: &[(PathBuf, &str)], reference: &str) -> anyhow::Result<oci::Built> {
    step(&format!("OCI layout {reference}"), || {
        let rootfs = work.join("rootfs");
        rootfs::build(&rootfs, files)?;
        let entrypoint = files.first().map_or("/", |(_, at)| *at);
        oci::build(
            &rootfs,
            &work.join("oci"),
            &oci::ImageConfig {
                name: reference,
                entrypoint: vec![entrypoint.to_owned()],
                user: "65532:65532",
                env: vec![
                    "PATH=/usr/local/bin:/".to_owned(),
                    "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt".to_owned(),
                ],
            },
        )
    })
}

/// Writes `pinned` (`<reference>@sha256:…`) to `target/images/<name>/reference`, where tests,
/// the e2e driver and chart installs read it (the manager needs digests).
pub fn write_reference(root: &Path, name: &str, pinned: &str) -> anyhow::Result<()> {
    let path = root.join("target").join("images").join(name).join("reference");
    fs::write(&path, format!("{pinned}\n")).with_context(|| format!("cannot write {}", path.display()))
}

/// The local cluster's containerd, which imports and pushes the images, and the Kubernetes
/// version it runs.
struct Cluster {
    socket: PathBuf,
    hosts_dir: PathBuf,
    /// `version` of `target/cluster/cluster.json` (`v1.35.4`).
    version: String,
}

impl Cluster {
    fn require(root: &Path) -> anyhow::Result<Self> {
        let dir = root.join("target").join("cluster").join("containerd");
        let socket = dir.join("containerd.sock");
        if !socket.exists() {
            bail!(
                "{} does not exist: start the full tier with `cargo xtask cluster up` first (its \
                 containerd imports and pushes the images)",
                socket.display()
            );
        }
        let state = root.join("target").join("cluster").join("cluster.json");
        let text = fs::read_to_string(&state).with_context(|| format!("cannot read {}", state.display()))?;
        let json: Value =
            serde_json::from_str(&text).with_context(|| format!("{} is not JSON", state.display()))?;
        let version = json["version"]
            .as_str()
            .with_context(|| format!("{} names no `version`", state.display()))?
            .to_owned();
        Ok(Self {
            socket,
            hosts_dir: dir.join("certs.d"),
            version,
        })
    }

    /// `component` at the cluster's Kubernetes version, built by `k8s-bin` when not cached.
    fn program(&self, root: &Path, component: Component) -> anyhow::Result<PathBuf> {
        let matrix = Matrix::load(root)?;
        let bins = Binaries::new(matrix.select(Some(&self.version))?, &matrix)?;
        step(&format!("{component} {}", self.version), || {
            bins.ensure(&[component])
        })?;
        Ok(bins.path(component))
    }

    fn ctr(&self) -> Command {
        let mut cmd = Command::new("ctr");
        cmd.arg("--address").arg(&self.socket).args(["-n", "k8s.io"]);
        cmd
    }
}

/// Builds the layout of `image`, imports it, pushes it and writes its pinned reference.
fn build_and_push(
    root: &Path,
    profile: Profile,
    image: &Image,
    tag: &str,
    services: &TestServices,
    cluster: &Cluster,
) -> anyhow::Result<String> {
    let reference = tagged_name(&services.registry.host, image, tag);
    let built = layout(root, profile, image, &reference)?;
    import_and_push(root, image.name, &reference, &built, services, cluster)
}

/// Imports the layout `built` of image `name`, pushes it as `reference` and writes its pinned
/// reference.
fn import_and_push(
    root: &Path,
    name: &str,
    reference: &str,
    built: &oci::Built,
    services: &TestServices,
    cluster: &Cluster,
) -> anyhow::Result<String> {
    let registry = &services.registry;
    step(&format!("import {name} into the cluster's containerd"), || {
        run(cluster.ctr().args(["images", "import"]).arg(&built.tarball))
    })?;
    step(&format!("push {reference}"), || {
        // The password goes through ctr's argv: a throw-away test registry credential.
        let user = format!("{}:{}", registry.username, registry.password.expose());
        output(
            cluster
                .ctr()
                .args(["images", "push", "--hosts-dir"])
                .arg(&cluster.hosts_dir)
                .args(["--user", &user, reference]),
        )
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("{}", e.to_string().replace(registry.password.expose(), "***")))
    })?;
    let pinned = format!("{reference}@{}", built.manifest_digest);
    write_reference(root, name, &pinned)?;
    Ok(pinned)
}

/// The pause image's name in containerd (registry.k8s.io is unreachable here).
pub const PAUSE_IMAGE: &str = "localhost/ptah/pause:v1";

/// Writes the pause image's root filesystem (`/bin/busybox`, `/bin/sh`) into `rootfs` and
/// builds its layout in `work`.
pub fn pause(rootfs: &Path, work: &Path) -> anyhow::Result<oci::Built> {
    let busybox = Path::new("/bin/busybox");
    if !busybox.is_file() {
        anyhow::bail!("{} is missing: install busybox-static", busybox.display());
    }
    if rootfs.exists() {
        fs::remove_dir_all(rootfs).with_context(|| format!("cannot wipe {}", rootfs.display()))?;
    }
    let bin = rootfs.join("bin");
    fs::create_dir_all(&bin).with_context(|| format!("cannot create {}", bin.display()))?;
    fs::copy(busybox, bin.join("busybox")).context("cannot copy busybox")?;
    for applet in ["sh", "sleep"] {
        symlink("busybox", bin.join(applet)).with_context(|| format!("cannot link {applet}"))?;
    }
    oci::build(
        rootfs,
        work,
        &oci::ImageConfig {
            name: PAUSE_IMAGE,
            entrypoint: vec![
                "/bin/sh".to_owned(),
                "-c".to_owned(),
                "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done".to_owned(),
            ],
            user: "65532:65532",
            env: vec!["PATH=/bin".to_owned()],
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_run_their_first_binary_and_only_the_later_programs_are_optional() {
        let names: Vec<&str> = IMAGES.iter().map(|i| i.name).collect();
        assert_eq!(names, ["data-plane", "manager", "cert-rotator", "crd-manager"]);
        assert!(
            IMAGES
                .iter()
                .all(|i| i.binaries.iter().all(|(_, _, at)| at.starts_with('/')))
        );
        let optional: Vec<&str> = IMAGES.iter().filter(|i| i.optional).map(|i| i.name).collect();
        assert_eq!(optional, ["cert-rotator", "crd-manager"]);
    }

    #[test]
    fn the_kubectl_image_runs_the_k8s_bin_kubectl_under_its_own_name() {
        assert_eq!(KUBECTL_IMAGE.component, Component::Kubectl);
        assert_eq!(KUBECTL_IMAGE.repository, "ptah/kubectl");
        assert!(KUBECTL_IMAGE.at.starts_with('/') && KUBECTL_IMAGE.at.ends_with("/kubectl"));
        // Its reference file sits beside the others and must not overwrite one of them.
        assert!(IMAGES.iter().all(|i| i.name != KUBECTL_IMAGE.name));
    }
}
