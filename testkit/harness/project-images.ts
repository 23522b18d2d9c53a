/**
 * The project's own images for the real node (test/real/real-node.test.ts): the exec gateway
 * (gateway/Dockerfile) and the SSH workspace (images/ssh-workspace/Dockerfile), built with podman
 * as test/images builds them (bases from testkit/harness/image-bases.ts, no registry), and saved as OCI
 * archives that `ctr images import` reads.
 *
 * The archives are kept in the image cache (testkit/harness/image-bases.ts CACHE_DIR, ~/.cache/entryway-images)
 * under a name made of a hash of everything the build reads: the Dockerfile, every file of its
 * build context that .dockerignore lets through, the build arguments and the bases' recipe
 * (bases.ts). A change to any of them builds the image again; a warm CI run imports the archive
 * without starting podman. test/images/images.test.ts still builds both from scratch every run.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { startPodman } from "../gateway/podman";
import { CACHE_DIR, DEBIAN_BASE, makeBases, NODE_BASE, NPM_CACHE_DIR } from "./image-bases";
import { repoRoot } from "./helm";

export interface ProjectImage {
  /** The image's name in containerd (registry/repository:tag). */
  readonly name: string;
  readonly registry: string;
  readonly repository: string;
  readonly tag: string;
  /** The OCI archive to import. */
  readonly archive: string;
}

/** Helm arguments that point a chart part's image (`<part>.image`) at a project image (the tag as a string: a digit-only tag is no number). */
export const chartImageArgs = (part: string, image: ProjectImage): string[] => [
  "--set",
  `${part}.image.registry=${image.registry}`,
  "--set",
  `${part}.image.repository=${image.repository}`,
  "--set-string",
  `${part}.image.tag=${image.tag}`,
];

interface Recipe {
  readonly id: "exec-gateway" | "ssh-workspace";
  readonly dockerfile: string;
  readonly context: string;
  /** Folders (relative to the repository) whose files the build context holds, before .dockerignore. */
  readonly inputs: string[];
  readonly buildArgs: string[];
  readonly extra: string[];
}

const VERSION = "0.0.0-node";

const RECIPES: Recipe[] = [
  {
    id: "exec-gateway",
    dockerfile: "gateway/Dockerfile",
    context: ".",
    // What .dockerignore lets through: the root manifests, packages/ssh-config and gateway, without
    // their node_modules, dist, and the gateway's tests and benchmarks.
    inputs: ["package.json", "package-lock.json", "packages/ssh-config", "gateway"],
    buildArgs: ["--build-arg", `BASE=${NODE_BASE}`, "--build-arg", `VERSION=${VERSION}`],
    extra: ["-v", `${NPM_CACHE_DIR}:/root/.npm`],
  },
  {
    id: "ssh-workspace",
    dockerfile: "images/ssh-workspace/Dockerfile",
    context: "images/ssh-workspace",
    inputs: ["images/ssh-workspace"],
    buildArgs: ["--build-arg", `BASE=${DEBIAN_BASE}`, "--build-arg", `VERSION=${VERSION}`],
    extra: [],
  },
];

const IGNORED = [
  /(^|\/)node_modules\//,
  /^packages\/ssh-config\/dist\//,
  /^gateway\/dist\//,
  /^gateway\/test\//,
  /^gateway\/bench\//,
];

/** A hash of the files a build reads (tracked and untracked, not ignored by git or .dockerignore) and of how it is built. */
function recipeKey(recipe: Recipe): string {
  const hash = createHash("sha256");
  const files = execFileSync(
    "git",
    ["ls-files", "--cached", "--others", "--exclude-standard", "--", ...recipe.inputs],
    { cwd: repoRoot, encoding: "utf8" },
  )
    .split("\n")
    .filter((file) => file && !IGNORED.some((pattern) => pattern.test(file)) && existsSync(path.join(repoRoot, file)))
    .sort();
  for (const file of files)
    hash
      .update(`${file}\0`)
      .update(readFileSync(path.join(repoRoot, file)))
      .update("\0");
  hash.update(readFileSync(path.join(repoRoot, ".dockerignore")));
  hash.update(readFileSync(path.join(repoRoot, "testkit/harness/image-bases.ts")));
  hash.update(JSON.stringify([recipe.dockerfile, recipe.buildArgs]));
  return hash.digest("hex").slice(0, 16);
}

function imageOf(recipe: Recipe, key: string): ProjectImage {
  const repository = `entryway-node/${recipe.id}`;
  return {
    name: `localhost/${repository}:${key}`,
    registry: "localhost",
    repository,
    tag: key,
    archive: path.join(CACHE_DIR, `${recipe.id}-${key}.oci.tar`),
  };
}

/**
 * The exec gateway's and the SSH workspace's images as OCI archives, built (in one private podman)
 * only when the cache has no archive for the current sources; returns them and how long it took.
 */
export async function projectImages(): Promise<{
  gateway: ProjectImage;
  workspace: ProjectImage;
  built: string[];
  seconds: number;
}> {
  const started = performance.now();
  const images = RECIPES.map((recipe) => ({ recipe, image: imageOf(recipe, recipeKey(recipe)) }));
  const missing = images.filter(({ image }) => !existsSync(image.archive));
  if (missing.length) {
    mkdirSync(NPM_CACHE_DIR, { recursive: true });
    const podman = await startPodman({ storageDriver: "overlay" });
    try {
      await makeBases(podman);
      for (const { recipe, image } of missing) {
        await podman.podman(
          "build",
          "--network",
          "host",
          ...recipe.buildArgs,
          ...recipe.extra,
          "-f",
          path.join(repoRoot, recipe.dockerfile),
          "-t",
          image.name,
          path.join(repoRoot, recipe.context),
        );
        // Into place only when complete: a run stopped half-way leaves no archive that looks whole.
        const partial = `${image.archive}.partial-${process.pid}`;
        try {
          await podman.podman("save", "--format", "oci-archive", "-o", partial, image.name);
          renameSync(partial, image.archive);
          // The archives of older sources go: the cache keeps one per image.
          for (const file of readdirSync(CACHE_DIR))
            if (
              file.startsWith(`${recipe.id}-`) &&
              file.endsWith(".oci.tar") &&
              path.join(CACHE_DIR, file) !== image.archive
            )
              rmSync(path.join(CACHE_DIR, file), { force: true });
        } finally {
          rmSync(partial, { force: true });
        }
      }
    } finally {
      await podman.stop();
    }
  }
  const [gateway, workspace] = images.map(({ image }) => image) as [ProjectImage, ProjectImage];
  return {
    gateway,
    workspace,
    built: missing.map(({ recipe }) => recipe.id),
    seconds: (performance.now() - started) / 1000,
  };
}
