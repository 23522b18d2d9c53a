/**
 * Self time of a Node CPU profile (`node --cpu-prof`, V8's .cpuprofile: nodes with their call
 * frames, and samples with the microseconds between them), by module and by function. Used by
 * bench:scale --cpu-prof.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Where a function lives: the repository's own files by path, a package by name (the
 * @pulumi/pulumi runtime by its file, where serialization and the RPC layer are told apart),
 * Node's internals, or V8's pseudo-frames ("(garbage collector)", "(program)", "(idle)").
 */
export function moduleOf(url: string, functionName: string, repoRoot: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return "node internals";
  const file = url.startsWith("file://") ? decodeURIComponent(new URL(url).pathname) : url;
  const at = file.lastIndexOf("/node_modules/");
  if (at >= 0) {
    const parts = file.slice(at + "/node_modules/".length).split("/");
    const name = parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
    if (name === "@pulumi/pulumi") return `${name}/${parts.slice(2).join("/")}`;
    return name;
  }
  if (file.startsWith(`${repoRoot}/`)) return `ours: ${path.relative(repoRoot, file)}`;
  return file;
}

/**
 * The part of the process a module belongs to: the repository's own code, the Pulumi runtime,
 * serialization (google-protobuf and @pulumi/pulumi's generated protobuf code), gRPC, the
 * Automation API, or the module itself (tsx, Node's internals, V8's pseudo-frames, ...).
 */
export function partOf(module: string): string {
  if (module.startsWith("ours: ")) return "ours (program, components, engine runner)";
  if (module === "google-protobuf" || module.startsWith("@pulumi/pulumi/proto/")) return "protobuf serialization";
  if (module.startsWith("@pulumi/pulumi/automation/")) return "@pulumi/pulumi Automation API";
  if (module.startsWith("@pulumi/pulumi/")) return "@pulumi/pulumi runtime";
  return module;
}

/** Self time (ms) per module and per function of one profile. */
export function selfTimes(
  profile: Profile,
  repoRoot: string,
): {
  totalMs: number;
  byModule: Map<string, number>;
  byFunction: Map<string, number>;
  /** Node's internals' and native self time by the nearest calling module. */
  internalsByCaller: Map<string, number>;
} {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const moduleOfNode = (id: number) => {
    const frame = nodes.get(id)!.callFrame;
    return moduleOf(frame.url, frame.functionName, repoRoot);
  };
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const internalsByCaller = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const frame = nodes.get(id)!.callFrame;
    const module = moduleOfNode(id);
    const fn = `${frame.functionName || "(anonymous)"} ${module}:${frame.lineNumber + 1}`;
    total += ms;
    byModule.set(module, (byModule.get(module) ?? 0) + ms);
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
    if (module === "node internals" || module === "(native)") {
      // Node's own code on behalf of whom: the nearest caller in another module.
      let caller = parents.get(id);
      while (caller !== undefined && ["node internals", "(native)"].includes(moduleOfNode(caller)))
        caller = parents.get(caller);
      const key = caller === undefined ? "(none)" : moduleOfNode(caller);
      internalsByCaller.set(key, (internalsByCaller.get(key) ?? 0) + ms);
    }
  });
  return { totalMs: total, byModule, byFunction, internalsByCaller };
}

/**
 * The largest profile in `dir` (tsx runs the program in a child of its own CLI process, which
 * writes an all but empty profile of its own), summarized: total sampled time, the top modules and
 * the top functions by self time.
 */
export function profileSummary(dir: string, repoRoot: string, top = 15): string {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .map((f) => path.join(dir, f));
  if (files.length === 0) return `no .cpuprofile in ${dir}`;
  const largest = files.sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
  const { totalMs, byModule, byFunction, internalsByCaller } = selfTimes(
    JSON.parse(readFileSync(largest, "utf8")) as Profile,
    repoRoot,
  );
  const byPart = new Map<string, number>();
  for (const [module, ms] of byModule) byPart.set(partOf(module), (byPart.get(partOf(module)) ?? 0) + ms);
  const rank = (map: Map<string, number>, count = top) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(
        ([name, ms]) =>
          `  ${(ms / 1000).toFixed(2).padStart(7)} s  ${((100 * ms) / totalMs).toFixed(1).padStart(5)}%  ${name}`,
      )
      .join("\n");
  return [
    `CPU profile ${largest}: ${(totalMs / 1000).toFixed(1)} s sampled`,
    "self time by part:",
    rank(byPart),
    "self time by module:",
    rank(byModule),
    "Node's internals and native code, by the module that called them:",
    rank(internalsByCaller, 6),
    "self time by function:",
    rank(byFunction),
  ].join("\n");
}
