/**
 * npm run bench:render -- [--workspaces N] [--runs N] [--profile] [TREE...]
 *
 * Benchmark (not a test): renders the dev stack grown to N workspaces (default 1,000) offline
 * with `npm run render` of each TREE (a checkout of this repository; default: this one), and
 * `helm template` of the same workspaces with that tree's chart, and prints wall time and max
 * RSS of each side by side, with the ratio. Give two trees (e.g. main's checkout and a branch)
 * to compare before and after in one run; the rendered files of every tree are compared with the
 * first tree's.
 *
 * The stack config is Pulumi.dev.yaml of the tree with its workspaces replaced by N copies of its
 * first workspace (user0..userN-1). Each render runs in a scratch project directory that links
 * the tree's program, so the tree itself is not touched. Wall time and max RSS come from GNU
 * time (Debian package "time"), which reads the child's rusage.
 *
 * --profile also writes a V8 CPU profile of each render and prints where the time went: by phase
 * (the Pulumi runtime running the program, stack config validation, YAML writing, file I/O, module
 * loading, garbage collection), the functions with the most self time and self time by module
 * (package, Node internals, or first-party directory). From the second tree on, each render is
 * also given as a ratio of the first tree's (before and after).
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse, stringify } from "yaml";
import { helmBinaries } from "../testkit/harness/helm";
import { growWorkspaces } from "./bench-stack";

const GNU_TIME = "/usr/bin/time";
/** What a render needs from its tree; index.ts and its imports resolve to the tree itself. */
const PROJECT_FILES = [
  "Pulumi.yaml",
  "index.ts",
  "tsconfig.json",
  "package.json",
  "components",
  "gateway",
  "node_modules",
];
const STACK = "bench";

interface Options {
  workspaces: number;
  runs: number;
  profile: boolean;
  trees: string[];
}

interface Measurement {
  wallSeconds: number;
  /** User plus system CPU time: steadier than wall time on a shared machine. */
  cpuSeconds: number;
  maxRssBytes: number;
  objects: number;
}

function parseOptions(argv: string[]): Options {
  const options: Options = { workspaces: 1000, runs: 1, profile: false, trees: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--workspaces" || arg === "--runs") {
      const value = Number(argv[++i]);
      if (!Number.isInteger(value) || value < 1) throw new Error(`${arg} takes a positive whole number`);
      options[arg === "--runs" ? "runs" : "workspaces"] = value;
    } else if (arg === "--profile") {
      options.profile = true;
    } else if (arg.startsWith("-")) {
      throw new Error("usage: npm run bench:render -- [--workspaces N] [--runs N] [--profile] [TREE...]");
    } else {
      options.trees.push(path.resolve(arg));
    }
  }
  if (options.trees.length === 0)
    options.trees.push(path.resolve(path.dirname(new URL(import.meta.url).pathname), ".."));
  for (const tree of options.trees) {
    if (!existsSync(path.join(tree, "scripts/render.ts")) || !existsSync(path.join(tree, "node_modules"))) {
      throw new Error(`${tree} is not a checkout with scripts/render.ts and node_modules (npm ci)`);
    }
  }
  return options;
}

type StackDocument = {
  config: Record<string, { workspaces?: Record<string, unknown>[]; connectGateway?: { hostname?: string } }>;
};

/** The tree's dev stack with its workspaces replaced by `count` copies of the first. */
function grownStack(tree: string, count: number): { document: StackDocument; workspaces: Record<string, unknown>[] } {
  const document = parse(readFileSync(path.join(tree, "Pulumi.dev.yaml"), "utf8")) as StackDocument;
  const workspaces = growWorkspaces(document.config["entryway:stack"], count, `${tree}/Pulumi.dev.yaml`);
  return { document, workspaces };
}

/** Runs a command under GNU time; returns its wall and CPU time and max RSS (the largest process's). */
function timed(
  command: string,
  args: string[],
  cwd: string,
  stdoutFile?: string,
  env?: NodeJS.ProcessEnv,
): Omit<Measurement, "objects"> {
  const report = path.join(cwd, `time.${process.pid}.txt`);
  const shell = stdoutFile ? ["sh", "-c", `exec "$0" "$@" > '${stdoutFile}'`, command, ...args] : [command, ...args];
  const result = spawnSync(GNU_TIME, ["-f", "%e %U %S %M", "-o", report, ...shell], {
    cwd,
    env,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed (${result.status}):\n${result.stderr}${result.stdout}`);
  }
  const [wall, user, system, rssKiB] = readFileSync(report, "utf8").trim().split("\n").pop()!.split(" ").map(Number);
  rmSync(report);
  return { wallSeconds: wall, cpuSeconds: user + system, maxRssBytes: rssKiB * 1024 };
}

function median<T>(values: T[], key: (value: T) => number): T {
  return [...values].sort((a, b) => key(a) - key(b))[Math.floor(values.length / 2)];
}

/** A scratch project whose program is the tree's, with the grown stack as Pulumi.bench.yaml. */
function scratchProject(tree: string, scratch: string, document: StackDocument): string {
  const project = mkdtempSync(path.join(scratch, "project-"));
  for (const item of PROJECT_FILES) symlinkSync(path.join(tree, item), path.join(project, item));
  writeFileSync(path.join(project, `Pulumi.${STACK}.yaml`), stringify(document, { aliasDuplicateObjects: false }));
  return project;
}

/**
 * The tree's `npm run render`, without the set-up around it: scripts/render.mjs (an executable with
 * its own Node flags, run by the Node that runs this), or in a tree from before it, render.ts under tsx.
 */
function renderOnce(tree: string, project: string, out: string, profileDir?: string): Measurement {
  rmSync(out, { recursive: true, force: true });
  const profile = profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [];
  const launcher = path.join(tree, "scripts/render.mjs");
  const [command, ...args] = existsSync(launcher)
    ? [launcher, STACK, "--out", out]
    : [process.execPath, "--import", "tsx", path.join(tree, "scripts/render.ts"), STACK, "--out", out];
  const env = {
    ...process.env,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
    NODE_OPTIONS: profile.join(" "),
  };
  const measured = timed(command, args, project, undefined, env);
  const objects = readdirSync(out).filter((file) => !file.startsWith("_")).length;
  return { ...measured, objects };
}

function helmOnce(tree: string, scratch: string, values: Record<string, unknown>, namespace: string): Measurement {
  const helm = helmBinaries()[0];
  const valuesFile = path.join(scratch, "values.yaml");
  const manifest = path.join(scratch, "helm-out.yaml");
  writeFileSync(valuesFile, stringify(values, { aliasDuplicateObjects: false }));
  const measured = timed(
    helm.path,
    ["template", "entryway", path.join(tree, "charts/entryway"), "--namespace", namespace, "-f", valuesFile],
    scratch,
    manifest,
  );
  const objects = (readFileSync(manifest, "utf8").match(/^kind: /gm) ?? []).length;
  return { ...measured, objects };
}

/** Files that differ between two rendered directories (missing on either side, or other bytes). */
function outputDifferences(a: string, b: string): string[] {
  const files = new Set([...readdirSync(a), ...readdirSync(b)]);
  return [...files].filter((file) => {
    const [left, right] = [path.join(a, file), path.join(b, file)];
    return !existsSync(left) || !existsSync(right) || !readFileSync(left).equals(readFileSync(right));
  });
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a function lives: an npm package, a Node internal area, a first-party directory, or V8's own. */
function moduleOf(url: string, functionName: string): string {
  if (!url) return functionName; // (garbage collector), (program), (idle), (root)
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?:(?:lib|bin|dist)\/)?([^/]+\/)?/.exec(url);
  if (inPackage)
    return inPackage[2]?.endsWith("/") && inPackage[1].startsWith("@pulumi")
      ? `${inPackage[1]}/${inPackage[2].slice(0, -1)}`
      : inPackage[1];
  const internal = /^node:(?:internal\/)?([^/]+)/.exec(url);
  if (internal) return `node:${internal[1]}`;
  const local = /\/(components|scripts|gateway)\/([^/]+)/.exec(url);
  return local ? `${local[1]}/${local[2]}` : path.basename(url);
}

/**
 * The render's phases, each named by where its code lives; a sample counts for the first of them
 * met walking from the sampled function out to its callers (YAML read by a stringify is writing).
 */
const PHASES: [phase: string, test: (frame: ProfileNode["callFrame"]) => boolean][] = [
  ["stack config validation (ajv)", ({ url }) => url.includes("/node_modules/ajv/")],
  [
    "YAML writing (yaml stringify)",
    ({ url, functionName }) =>
      url.includes("/node_modules/yaml/") && functionName === "stringify" && url.endsWith("public-api.js"),
  ],
  [
    "YAML reading (stack config)",
    ({ url, functionName }) =>
      url.includes("/node_modules/yaml/") && /^parse/.test(functionName) && url.endsWith("public-api.js"),
  ],
  [
    "file writes and reads",
    ({ url, functionName }) =>
      /^(node:fs|)$/.test(url) &&
      /^(writeFile|readFile|writeFileUtf8|readFileUtf8|mkdir|readdir|rm)/.test(functionName),
  ],
  [
    "Pulumi runtime and the program",
    ({ url }) =>
      /\/node_modules\/(@pulumi|google-protobuf|@grpc)\/|\/(components|scripts\/offline)\/|\/index\.ts$/.test(url),
  ],
  ["loading and compiling modules", ({ url }) => /\/node_modules\/(tsx|esbuild)\/|^node:internal\/modules\//.test(url)],
];

/** Sampled time by phase (see PHASES), with garbage collection and V8's own work apart. */
function phasesOf(profile: CpuProfile, selfMicros: Map<number, number>): Map<string, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const phaseOf = (id: number): string => {
    const { functionName, url } = byId.get(id)!.callFrame;
    if (!url && /^\(/.test(functionName) && functionName !== "(anonymous)")
      return functionName === "(garbage collector)" ? "garbage collection" : "V8 and native code";
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const found = PHASES.find(([, test]) => test(byId.get(at!)!.callFrame));
      if (found) return found[0];
    }
    return "other";
  };
  const phases = new Map<string, number>();
  for (const [id, micros] of selfMicros) {
    const phase = phaseOf(id);
    phases.set(phase, (phases.get(phase) ?? 0) + micros);
  }
  return phases;
}

function summariseProfile(file: string, top = 15): string {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMicros = new Map<number, number>();
  profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let total = 0;
  for (const [id, micros] of selfMicros) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const where = url
      ? `${url.replace(/^file:\/\/.*?\/(node_modules|components|scripts|gateway)\//, "$1/")}:${lineNumber + 1}`
      : "";
    const name = `${functionName || "(anonymous)"} ${where}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    const module = moduleOf(url, functionName);
    byModule.set(module, (byModule.get(module) ?? 0) + micros);
    total += micros;
  }
  const table = (title: string, entries: Map<string, number>) =>
    [
      `  ${title}`,
      ...[...entries]
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(
          ([name, micros]) =>
            `    ${(micros / 1e6).toFixed(2).padStart(7)} s ${((100 * micros) / total).toFixed(1).padStart(5)} %  ${name}`,
        ),
    ].join("\n");
  return [
    `  profile ${file}: ${(total / 1e6).toFixed(2)} s sampled`,
    table("time by phase", phasesOf(profile, selfMicros)),
    table("self time by module", byModule),
    table("self time by function", byFunction),
  ].join("\n");
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const describe = (m: Measurement) =>
  `${m.objects} objects, ${m.wallSeconds.toFixed(2)} s wall, ${m.cpuSeconds.toFixed(2)} s CPU, ${mib(m.maxRssBytes)} max RSS`;

function main(): void {
  const options = parseOptions(process.argv.slice(2));
  if (!existsSync(GNU_TIME)) throw new Error(`${GNU_TIME} is missing: install the Debian package "time"`);
  const helm = helmBinaries()[0];
  const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-bench-render-"));
  console.log(
    `render of the dev stack with ${options.workspaces} workspaces vs helm ${helm.version} template of the same workspaces; ` +
      `median of ${options.runs} run(s); ${os.cpus().length} CPUs, load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`,
  );
  const rows: string[] = [];
  let firstOut: string | undefined;
  let firstRender: Measurement | undefined;
  try {
    options.trees.forEach((tree, index) => {
      const { document, workspaces } = grownStack(tree, options.workspaces);
      const stack = document.config["entryway:stack"];
      const project = scratchProject(tree, scratch, document);
      const out = path.join(scratch, `out-${index}`);
      const profileDir = options.profile ? path.join(scratch, `profile-${index}`) : undefined;
      const renders = Array.from({ length: options.runs }, () => renderOnce(tree, project, out, profileDir));
      const values = { connectGateway: { enabled: true, hostname: stack.connectGateway?.hostname }, workspaces };
      const helms = Array.from({ length: options.runs }, () =>
        helmOnce(tree, scratch, values, String((stack as { namespace?: string }).namespace)),
      );
      const render = median(renders, (m) => m.wallSeconds);
      const helmRun = median(helms, (m) => m.wallSeconds);
      const differs = firstOut ? outputDifferences(firstOut, out) : [];
      firstOut ??= out;
      firstRender ??= render;
      const ratio = (key: "wallSeconds" | "cpuSeconds" | "maxRssBytes") =>
        `${(render[key] / firstRender![key]).toFixed(2)}x`;
      rows.push(
        [
          tree,
          `  render: ${describe(render)}`,
          `  helm:   ${describe(helmRun)}`,
          `  render/helm: ${(render.wallSeconds / helmRun.wallSeconds).toFixed(1)}x wall, ${(render.cpuSeconds / helmRun.cpuSeconds).toFixed(1)}x CPU, ` +
            `${(render.maxRssBytes / helmRun.maxRssBytes).toFixed(1)}x memory`,
          ...(index === 0
            ? []
            : [
                `  render/first tree's render: ${ratio("wallSeconds")} wall, ${ratio("cpuSeconds")} CPU, ${ratio("maxRssBytes")} memory`,
              ]),
          ...(index === 0
            ? []
            : [
                `  rendered files ${differs.length === 0 ? "identical to" : `differ (${differs.slice(0, 5).join(", ")}${differs.length > 5 ? ", ..." : ""}) from`} ${options.trees[0]}'s`,
              ]),
          ...(profileDir
            ? readdirSync(profileDir)
                .slice(-1)
                .map((f) => summariseProfile(path.join(profileDir, f)))
            : []),
        ].join("\n"),
      );
      console.log(rows.at(-1));
      if (profileDir) {
        const kept = path.join(os.tmpdir(), `entryway-render-${index}.cpuprofile`);
        mkdirSync(path.dirname(kept), { recursive: true });
        writeFileSync(kept, readFileSync(path.join(profileDir, readdirSync(profileDir).at(-1)!)));
        console.log(`  (profile kept at ${kept}: open it in Chrome DevTools, Performance)`);
      }
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main();
