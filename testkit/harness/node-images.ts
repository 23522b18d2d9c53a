/**
 * Images for the real node without a registry: small images made here as OCI image layouts (one
 * uncompressed layer from a folder), written as a tar that `ctr images import` reads, and the
 * `pause` image the node's pod sandboxes run.
 *
 * Layout and descriptors as the OCI image spec gives them (image-layout.md: `oci-layout`,
 * `index.json`, `blobs/sha256/<hex>`; manifest.md; config.md: `rootfs.diff_ids` are the digests of
 * the uncompressed layers, equal to the layer blobs' digests here since the layers are not
 * compressed). containerd names an imported image by the annotation `io.containerd.image.name` of
 * its manifest's descriptor in `index.json` (containerd images/annotations.go AnnotationImageName,
 * read by images/archive/importer.go).
 */
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { must } from "./process";

export interface ImageConfig {
  readonly entrypoint?: string[];
  readonly cmd?: string[];
  readonly user?: string;
  readonly workingDir?: string;
}

function blob(layout: string, content: Buffer): { digest: string; size: number } {
  const hex = createHash("sha256").update(content).digest("hex");
  writeFileSync(path.join(layout, "blobs", "sha256", hex), content);
  return { digest: `sha256:${hex}`, size: content.length };
}

/** Writes an OCI image archive of the folder `rootfs` (owned by root in the image) to `archive`. */
export async function ociArchive(rootfs: string, name: string, config: ImageConfig, archive: string): Promise<void> {
  const layout = mkdtempSync(path.join(os.tmpdir(), "entryway-oci-"));
  try {
    mkdirSync(path.join(layout, "blobs", "sha256"), { recursive: true });
    const layerTar = path.join(layout, "layer.tar");
    await must("tar", [
      "--numeric-owner",
      "--owner=0",
      "--group=0",
      "--sort=name",
      "--mtime=@0",
      "-C",
      rootfs,
      "-cf",
      layerTar,
      ".",
    ]);
    const layer = blob(layout, readFileSync(layerTar));
    rmSync(layerTar);
    const imageConfig = blob(
      layout,
      Buffer.from(
        JSON.stringify({
          architecture: "amd64",
          os: "linux",
          config: {
            Entrypoint: config.entrypoint,
            Cmd: config.cmd,
            User: config.user,
            WorkingDir: config.workingDir,
            Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
          },
          rootfs: { type: "layers", diff_ids: [layer.digest] },
        }),
      ),
    );
    const manifest = blob(
      layout,
      Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          config: { mediaType: "application/vnd.oci.image.config.v1+json", ...imageConfig },
          layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", ...layer }],
        }),
      ),
    );
    writeFileSync(path.join(layout, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
    writeFileSync(
      path.join(layout, "index.json"),
      JSON.stringify({
        schemaVersion: 2,
        manifests: [
          {
            mediaType: "application/vnd.oci.image.manifest.v1+json",
            ...manifest,
            annotations: {
              "io.containerd.image.name": name,
              "org.opencontainers.image.ref.name": name.split(":").pop(),
            },
          },
        ],
      }),
    );
    await must("tar", [
      "--numeric-owner",
      "--owner=0",
      "--group=0",
      "-C",
      layout,
      "-cf",
      archive,
      "oci-layout",
      "index.json",
      "blobs",
    ]);
  } finally {
    rmSync(layout, { recursive: true, force: true });
  }
}

/**
 * The sandbox process of every pod, as kubernetes/build/pause/linux/pause.c does it: wait for
 * signals, end on SIGINT and SIGTERM, reap children (it is PID 1 of the pod when the PID namespace
 * is shared). Built static with the machine's C compiler.
 */
const PAUSE_C = `#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void sigdown(int signo) { (void)signo; _exit(0); }
static void sigreap(int signo) { (void)signo; while (waitpid(-1, NULL, WNOHANG) > 0) {} }
int main(void) {
  struct sigaction down = {.sa_handler = sigdown}, reap = {.sa_handler = sigreap, .sa_flags = SA_NOCLDSTOP};
  sigaction(SIGINT, &down, NULL);
  sigaction(SIGTERM, &down, NULL);
  sigaction(SIGCHLD, &reap, NULL);
  for (;;) pause();
  return 42;
}
`;

export const PAUSE_IMAGE = "localhost/entryway-node/pause:1";
/** A target with busybox-static as its shell and tools. */
export const BUSYBOX_IMAGE = "localhost/entryway-node/busybox:1";

/** Writes the pause image's and the busybox target image's archives into `dir`; returns their paths. */
export async function smallImages(dir: string): Promise<string[]> {
  const work = mkdtempSync(path.join(dir, "images-"));
  try {
    const pauseRoot = path.join(work, "pause");
    mkdirSync(pauseRoot);
    writeFileSync(path.join(work, "pause.c"), PAUSE_C);
    await must("gcc", ["-static", "-Os", "-o", path.join(pauseRoot, "pause"), path.join(work, "pause.c")]);
    const pause = path.join(dir, "pause.tar");
    await ociArchive(pauseRoot, PAUSE_IMAGE, { entrypoint: ["/pause"], user: "65535:65535" }, pause);

    const busyboxRoot = path.join(work, "busybox");
    for (const sub of ["bin", "tmp", "etc"]) mkdirSync(path.join(busyboxRoot, sub), { recursive: true });
    chmodSync(path.join(busyboxRoot, "tmp"), 0o1777);
    copyFileSync("/bin/busybox", path.join(busyboxRoot, "bin", "busybox"));
    chmodSync(path.join(busyboxRoot, "bin", "busybox"), 0o755);
    for (const applet of [
      "sh",
      "sleep",
      "cat",
      "echo",
      "ls",
      "stty",
      "id",
      "head",
      "kill",
      "ps",
      "wc",
      "sha256sum",
      "nc",
      "wget",
      "printf",
      "env",
      "true",
      "false",
      "dd",
      "tr",
      "seq",
      "httpd",
      "touch",
      "mkdir",
      "grep",
      "rm",
      "tar",
      "nslookup",
    ]) {
      symlinkSync("busybox", path.join(busyboxRoot, "bin", applet));
    }
    writeFileSync(
      path.join(busyboxRoot, "etc", "passwd"),
      "root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/tmp:/bin/sh\n",
    );
    writeFileSync(path.join(busyboxRoot, "etc", "group"), "root:x:0:\nuser:x:1000:\n");
    const busybox = path.join(dir, "busybox.tar");
    await ociArchive(busyboxRoot, BUSYBOX_IMAGE, { cmd: ["/bin/sleep", "86400"] }, busybox);
    return [pause, busybox];
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
