/**
 * Images of a cluster's own parts for the real node (testkit/harness/node.ts), made from the binaries
 * scripts/realcp builds (no podman, no registry): each a one-layer OCI archive (node-images.ts
 * ociArchive) that node.importImages loads into containerd.
 *
 * - coreDnsImage: CoreDNS (tool `coredns`) at /coredns, user 65532 (distroless's `nonroot`), as
 *   coredns/coredns's Dockerfile lays it out (ENTRYPOINT ["/coredns"], USER nonroot:nonroot). That
 *   image's binary carries cap_net_bind_service as a file capability; this one does not, so its pod
 *   opens port 53 through the pod sysctl net.ipv4.ip_unprivileged_port_start (cluster-services.ts).
 * - networkPolicyImage: kube-network-policies (tool `kube-network-policies`) at /bin/netpol, as its
 *   Dockerfile does (a static binary on distroless static): it programs nftables and reads its
 *   NFQUEUE over netlink itself, so the image has no iptables or nft binary.
 * - istiodImage: pilot-discovery at /usr/local/bin/pilot-discovery, USER 1337:1337 and that
 *   ENTRYPOINT, as istio's pilot/docker/Dockerfile.pilot.
 * - proxyImage: istio's proxyv2 as pilot/docker/Dockerfile.proxyv2 lays it out: Envoy's bootstrap
 *   template at /var/lib/istio/envoy/envoy_bootstrap_tmpl.json, /usr/local/bin/envoy (tool `envoy`)
 *   and /usr/local/bin/pilot-agent (tool `istio`), ENTRYPOINT ["/usr/local/bin/pilot-agent"]. Named
 *   <hub>/proxyv2:<tag> as istio names it (hub localhost/entryway-node, tag 1). Envoy is linked
 *   against glibc: the libraries `ldd` lists are copied from this machine (Debian bookworm). The
 *   user istio-proxy (1337) is in /etc/passwd, this machine's CA bundle in /etc/ssl/certs. The
 *   folders pilot-agent writes are the injected pod's volumes (istio-discovery's
 *   files/gateway-injection-template.yaml: emptyDirs istio-envoy at /etc/istio/proxy and
 *   istio-data at /var/lib/istio/data, the istio-token and istiod-ca-cert volumes under
 *   /var/run/secrets), so the image's own root may stay read-only.
 *
 * Each archive is kept in the image cache (testkit/harness/image-bases.ts CACHE_DIR) under a name made of a
 * hash of its binaries and of how it is made (this file, node-images.ts): a warm run only imports it.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { CACHE_DIR } from "./image-bases";
import { repoRoot } from "./helm";
import { ociArchive, type ImageConfig } from "./node-images";
import { realBinary, realTool } from "./realcp-tool";

export interface ClusterImage {
  /** The image's name in containerd. */
  readonly name: string;
  /** The OCI archive to import (node.importImages). */
  readonly archive: string;
}

/** The hub of these images (istio's `global.hub`), and their one tag (`global.tag`). */
export const IMAGE_HUB = "localhost/entryway-node";
export const IMAGE_TAG = "1";

interface Recipe {
  readonly id: string;
  /** Files of the image: path in the image -> file on this machine (copied, symlinks followed). */
  readonly files: Record<string, string>;
  /** Empty folders of the image (mode 0755, or 01777 for tmp). */
  readonly dirs?: string[];
  /** Files written as given: path in the image -> content. */
  readonly texts?: Record<string, string>;
  readonly config: ImageConfig;
}

/** The shared libraries a dynamic executable needs, as `ldd` resolves them here (none for a static one). */
function sharedLibraries(binary: string): string[] {
  let out: string;
  try {
    out = execFileSync("ldd", [binary], { encoding: "utf8" });
  } catch {
    return []; // "not a dynamic executable"
  }
  return out
    .split("\n")
    .map((line) => /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line)?.[1])
    .filter((file): file is string => !!file);
}

async function build(recipe: Recipe): Promise<ClusterImage> {
  // The recipe, how an image is made (this file and ociArchive's), and the binaries.
  const hash = createHash("sha256").update(JSON.stringify(recipe));
  for (const file of ["testkit/harness/cluster-images.ts", "testkit/harness/node-images.ts"])
    hash.update(readFileSync(path.join(repoRoot, file)));
  for (const source of Object.values(recipe.files).sort()) hash.update(readFileSync(source));
  const key = hash.digest("hex").slice(0, 16);
  const image = {
    name: `${IMAGE_HUB}/${recipe.id}:${IMAGE_TAG}`,
    archive: path.join(CACHE_DIR, `cluster-${recipe.id}-${key}.oci.tar`),
  };
  if (existsSync(image.archive)) return image;
  mkdirSync(CACHE_DIR, { recursive: true });
  const rootfs = mkdtempSync(path.join(CACHE_DIR, `cluster-${recipe.id}-rootfs-`));
  // Into place only when complete: a run stopped half-way leaves no archive that looks whole.
  const partial = `${image.archive}.partial-${process.pid}`;
  try {
    chmodSync(rootfs, 0o755); // the image's `/` (mkdtemp makes it 0700)
    for (const dir of recipe.dirs ?? []) {
      mkdirSync(path.join(rootfs, dir), { recursive: true });
      if (path.basename(dir) === "tmp") chmodSync(path.join(rootfs, dir), 0o1777);
    }
    for (const [inImage, source] of Object.entries(recipe.files)) {
      mkdirSync(path.join(rootfs, path.dirname(inImage)), { recursive: true });
      copyFileSync(source, path.join(rootfs, inImage));
      chmodSync(path.join(rootfs, inImage), statSync(source).mode & 0o755);
    }
    for (const [inImage, content] of Object.entries(recipe.texts ?? {})) {
      mkdirSync(path.join(rootfs, path.dirname(inImage)), { recursive: true });
      writeFileSync(path.join(rootfs, inImage), content, { mode: 0o644 });
    }
    await ociArchive(rootfs, image.name, recipe.config, partial);
    renameSync(partial, image.archive);
    // The archives of older binaries go: the cache keeps one per image.
    for (const file of readdirSync(CACHE_DIR))
      if (
        file.startsWith(`cluster-${recipe.id}-`) &&
        file.endsWith(".oci.tar") &&
        path.join(CACHE_DIR, file) !== image.archive
      )
        rmSync(path.join(CACHE_DIR, file), { force: true });
    return image;
  } finally {
    rmSync(rootfs, { recursive: true, force: true });
    rmSync(partial, { force: true });
  }
}

/** CoreDNS (tool `coredns`), the cluster DNS of startClusterDns. */
export function coreDnsImage(): Promise<ClusterImage> {
  return build({
    id: "coredns",
    files: { coredns: realBinary("coredns", "coredns") },
    config: { entrypoint: ["/coredns"], user: "65532:65532", workingDir: "/" },
  });
}

/** kube-network-policies (tool `kube-network-policies`, with its NFQUEUE patch), of startNetworkPolicies. */
export function networkPolicyImage(): Promise<ClusterImage> {
  return build({
    id: "kube-network-policies",
    files: { "bin/netpol": realBinary("kube-network-policies") },
    config: { cmd: ["/bin/netpol"] },
  });
}

/** istiod: pilot-discovery (tool `istio`), named <hub>/pilot:<tag> as istio names it. */
export function istiodImage(): Promise<ClusterImage> {
  return build({
    id: "pilot",
    files: { "usr/local/bin/pilot-discovery": realBinary("istio", "pilot-discovery") },
    dirs: ["tmp"],
    config: { entrypoint: ["/usr/local/bin/pilot-discovery"], user: "1337:1337" },
  });
}

/** istio's proxy: pilot-agent and upstream Envoy, named <hub>/proxyv2:<tag>. */
export function proxyImage(): Promise<ClusterImage> {
  const envoy = realBinary("envoy");
  const libraries = Object.fromEntries(sharedLibraries(envoy).map((file) => [file.slice(1), file]));
  return build({
    id: "proxyv2",
    files: {
      "usr/local/bin/pilot-agent": realBinary("istio", "pilot-agent"),
      "usr/local/bin/envoy": envoy,
      "var/lib/istio/envoy/envoy_bootstrap_tmpl.json": path.join(
        path.dirname(realTool("istio")),
        "share",
        "envoy_bootstrap_tmpl.json",
      ),
      // istio's base image has Debian's ca-certificates; pilot-agent warns without a bundle ("OS CA
      // Cert could not be found for agent"). This machine's.
      "etc/ssl/certs/ca-certificates.crt": "/etc/ssl/certs/ca-certificates.crt",
      ...libraries,
    },
    dirs: ["tmp", "etc/istio/proxy", "var/lib/istio/data", "var/run/secrets"],
    texts: {
      "etc/passwd":
        "root:x:0:0:root:/root:/sbin/nologin\nistio-proxy:x:1337:1337:istio-proxy:/home/istio-proxy:/sbin/nologin\n",
      "etc/group": "root:x:0:\nistio-proxy:x:1337:\n",
    },
    config: { entrypoint: ["/usr/local/bin/pilot-agent"] },
  });
}
