/**
 * The manifest-level diff of two renderings: what `npm run diff` prints and what the packaged
 * `entryway-diff` command (bin/entryway-diff.ts) prints for any two folders or files of Kubernetes
 * manifests.
 *
 * Objects are matched by their identity on the API server (API group, kind, namespace, name), not
 * by file name, and compared by content: a map's key order is not a change (both sides are printed
 * with sorted keys), a list's order is. Of a rendering by `npm run render`, the two files that are
 * not objects are compared too: `_resources.txt` (the Pulumi resources, one a line) as a set,
 * since the order in which a program registers them is no change the engine acts on, and
 * `_outputs.yaml` (the stack outputs) by content.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments, stringify } from "yaml";

const RESOURCES_FILE = "_resources.txt";
const OUTPUTS_FILE = "_outputs.yaml";

/** One Kubernetes object of a rendering. */
interface RenderedObject {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** Where it was read from, relative to the rendering. */
  readonly file: string;
  /** The object as YAML with sorted keys: what is compared and printed. */
  readonly text: string;
}

/** A rendering read from disk: its objects by identity, and the renderer's own two files if present. */
export interface Rendering {
  readonly objects: Map<string, RenderedObject>;
  readonly resources?: string[];
  readonly outputs?: string;
}

export type Change = "added" | "changed" | "removed";

export interface ObjectChange {
  readonly change: Change;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** Its file in the rendering after (added, changed) or before (removed). */
  readonly file: string;
  /** The unified diff of the object's YAML. */
  readonly diff: string;
}

export interface ManifestDiff {
  readonly before: string;
  readonly after: string;
  /** True when anything differs: an object, the Pulumi resources or the stack outputs. */
  readonly changed: boolean;
  /** Objects added, changed and removed, by kind (kinds sorted). */
  readonly summary: Record<string, Record<Change, number>>;
  readonly objects: ObjectChange[];
  /** Pulumi resources added and removed (`_resources.txt`), when both renderings have that file. */
  readonly resources: { readonly added: string[]; readonly removed: string[] };
  /** The unified diff of the stack outputs (`_outputs.yaml`), "" when they are the same or absent. */
  readonly outputs: string;
}

export class ManifestDiffError extends Error {}

const canonical = (value: unknown): string => stringify(value, { sortMapEntries: true, lineWidth: 0 });

interface ObjectLike {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown };
}

function addObjects(objects: Map<string, RenderedObject>, file: string, source: string): void {
  for (const document of parseAllDocuments(source)) {
    if (document.errors.length > 0) {
      throw new ManifestDiffError(`${file} is not valid YAML: ${document.errors[0].message.split("\n")[0]}`);
    }
    const value = document.toJS() as ObjectLike | null;
    if (value === null || typeof value !== "object") continue;
    const { apiVersion, kind, metadata } = value;
    if (typeof kind !== "string" || typeof apiVersion !== "string" || typeof metadata?.name !== "string") {
      throw new ManifestDiffError(
        `${file} holds a document that is no Kubernetes object (apiVersion, kind, metadata.name)`,
      );
    }
    const namespace = typeof metadata.namespace === "string" ? metadata.namespace : "";
    // The identity of an object on the API server: its group (not its version), kind, namespace and name.
    const group = apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
    const key = `${group}/${kind}/${namespace}/${metadata.name}`;
    if (objects.has(key)) throw new ManifestDiffError(`${file}: ${kind} ${namespace}/${metadata.name} appears twice`);
    objects.set(key, { kind, namespace, name: metadata.name, file, text: canonical(value) });
  }
}

/**
 * Reads a rendering: a folder (its .yaml and .yml files, in subfolders too: one object a file as
 * `npm run render` writes them, or several documents a file) or one file of YAML documents (as
 * `helm template` prints them).
 */
export function readRendering(location: string): Rendering {
  let stat;
  try {
    stat = statSync(location);
  } catch {
    throw new ManifestDiffError(`${location} does not exist`);
  }
  const objects = new Map<string, RenderedObject>();
  if (!stat.isDirectory()) {
    addObjects(objects, path.basename(location), readFileSync(location, "utf8"));
    return { objects };
  }
  const files = readdirSync(location, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(location, path.join(entry.parentPath, entry.name)))
    .sort();
  for (const file of files) {
    if (/\.ya?ml$/.test(file) && !path.basename(file).startsWith("_")) {
      addObjects(objects, file, readFileSync(path.join(location, file), "utf8"));
    }
  }
  const read = (file: string) => (files.includes(file) ? readFileSync(path.join(location, file), "utf8") : undefined);
  const resources = read(RESOURCES_FILE)
    ?.split("\n")
    .filter((line) => line.trim() !== "");
  const outputsText = read(OUTPUTS_FILE);
  const outputs = outputsText === undefined ? undefined : canonical(parseAllDocuments(outputsText)[0]?.toJS() ?? {});
  return { objects, resources, outputs };
}

type Edit = { op: " " | "-" | "+"; line: string };

/** The shortest edit script from a to b (E. Myers, "An O(ND) Difference Algorithm and Its Variations", 1986). */
function editScript(a: string[], b: string[]): Edit[] {
  const max = a.length + b.length;
  const offset = max + 1;
  // v[offset + k]: the furthest x reached on diagonal k (y = x - k); trace[d]: v before step d.
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  const fromAbove = (state: Int32Array, k: number, d: number) =>
    k === -d || (k !== d && state[offset + k - 1] < state[offset + k + 1]);
  search: for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = fromAbove(v, k, d) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < a.length && y < b.length && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= a.length && y >= b.length) break search;
    }
  }
  const edits: Edit[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d > 0; d--) {
    const k = x - y;
    const prevK = fromAbove(trace[d], k, d) ? k + 1 : k - 1;
    const prevX = trace[d][offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      y--;
      edits.push({ op: " ", line: a[--x] });
    }
    if (prevK === k + 1) edits.push({ op: "+", line: b[--y] });
    else edits.push({ op: "-", line: a[--x] });
  }
  while (x > 0 && y > 0) {
    y--;
    edits.push({ op: " ", line: a[--x] });
  }
  return edits.reverse();
}

const CONTEXT = 3;

/** A unified diff (`---`/`+++` headers, `@@` hunks with three lines of context); "" when equal. */
export function unifiedDiff(before: string, after: string, fromLabel: string, toLabel: string): string {
  if (before === after) return "";
  const lines = (text: string) => (text === "" ? [] : text.replace(/\n$/, "").split("\n"));
  const edits = editScript(lines(before), lines(after));
  const out = [`--- ${fromLabel}`, `+++ ${toLabel}`];
  let i = 0;
  let aLine = 0;
  let bLine = 0;
  while (i < edits.length) {
    if (edits[i].op === " ") {
      i++;
      aLine++;
      bLine++;
      continue;
    }
    // A hunk: from CONTEXT lines before this change to CONTEXT after the last change within reach.
    const start = Math.max(0, i - CONTEXT);
    let end = i;
    let last = i;
    while (end < edits.length && end - last <= 2 * CONTEXT) {
      if (edits[end].op !== " ") last = end;
      end++;
    }
    end = Math.min(edits.length, last + CONTEXT + 1);
    const lead = i - start;
    const hunk = edits.slice(start, end);
    const aCount = hunk.filter((e) => e.op !== "+").length;
    const bCount = hunk.filter((e) => e.op !== "-").length;
    const range = (line: number, count: number) => `${count === 0 ? line - lead : line - lead + 1},${count}`;
    out.push(`@@ -${range(aLine, aCount)} +${range(bLine, bCount)} @@`);
    for (const edit of hunk) out.push(`${edit.op}${edit.line}`);
    for (const edit of edits.slice(i, end)) {
      if (edit.op !== "+") aLine++;
      if (edit.op !== "-") bLine++;
    }
    i = end;
  }
  return `${out.join("\n")}\n`;
}

/** Compares two renderings; `before` and `after` label them in the diff's headers (a git ref, a folder). */
export function diffRenderings(a: Rendering, b: Rendering, before: string, after: string): ManifestDiff {
  const objects: ObjectChange[] = [];
  // By kind, namespace and name, as the summary lists them.
  const order = (key: string) => {
    const { kind, namespace, name } = (b.objects.get(key) ?? a.objects.get(key))!;
    return `${kind}\0${namespace}\0${name}\0${key}`;
  };
  const keys = [...new Set([...a.objects.keys(), ...b.objects.keys()])].sort((x, y) => (order(x) < order(y) ? -1 : 1));
  for (const key of keys) {
    const old = a.objects.get(key);
    const now = b.objects.get(key);
    if (old && now && old.text === now.text) continue;
    const object = (now ?? old)!;
    const change: Change = !old ? "added" : !now ? "removed" : "changed";
    const diff = unifiedDiff(
      old?.text ?? "",
      now?.text ?? "",
      old ? `${before}/${old.file}` : "/dev/null",
      now ? `${after}/${now.file}` : "/dev/null",
    );
    objects.push({
      change,
      kind: object.kind,
      namespace: object.namespace,
      name: object.name,
      file: object.file,
      diff,
    });
  }
  const summary: Record<string, Record<Change, number>> = {};
  for (const object of [...objects].sort((x, y) => x.kind.localeCompare(y.kind))) {
    summary[object.kind] ??= { added: 0, changed: 0, removed: 0 };
    summary[object.kind][object.change]++;
  }
  const oldResources = new Set(a.resources ?? []);
  const newResources = new Set(b.resources ?? []);
  const bothHaveResources = a.resources !== undefined && b.resources !== undefined;
  const resources = {
    added: bothHaveResources ? [...newResources].filter((r) => !oldResources.has(r)).sort() : [],
    removed: bothHaveResources ? [...oldResources].filter((r) => !newResources.has(r)).sort() : [],
  };
  const outputs =
    a.outputs !== undefined && b.outputs !== undefined
      ? unifiedDiff(a.outputs, b.outputs, `${before}/${OUTPUTS_FILE}`, `${after}/${OUTPUTS_FILE}`)
      : "";
  const changed = objects.length > 0 || resources.added.length + resources.removed.length > 0 || outputs !== "";
  return { before, after, changed, summary, objects, resources, outputs };
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`;

/** The summary: one line of totals, then one line per kind. */
export function formatSummary(diff: ManifestDiff): string {
  if (!diff.changed) return `no manifest changes from ${diff.before} to ${diff.after}\n`;
  const count = (change: Change) => diff.objects.filter((o) => o.change === change).length;
  const lines = [
    `${plural(diff.objects.length, "object")} ${diff.objects.length === 1 ? "differs" : "differ"} from ${diff.before} to ${diff.after}: ` +
      `${count("added")} added, ${count("changed")} changed, ${count("removed")} removed`,
  ];
  for (const [kind, counts] of Object.entries(diff.summary)) {
    const parts = (["added", "changed", "removed"] as const)
      .filter((c) => counts[c] > 0)
      .map((c) => `${counts[c]} ${c}`);
    lines.push(`  ${kind}: ${parts.join(", ")}`);
  }
  const { added, removed } = diff.resources;
  if (added.length + removed.length > 0) {
    lines.push(`Pulumi resources: ${added.length} added, ${removed.length} removed`);
  }
  if (diff.outputs !== "") lines.push("stack outputs changed");
  return `${lines.join("\n")}\n`;
}

/** The whole text report: the summary, then each change's diff. */
export function formatText(diff: ManifestDiff): string {
  const parts = [formatSummary(diff)];
  for (const object of diff.objects) parts.push(object.diff);
  const { added, removed } = diff.resources;
  if (added.length + removed.length > 0) {
    parts.push(
      [
        `--- ${diff.before}/${RESOURCES_FILE}`,
        `+++ ${diff.after}/${RESOURCES_FILE}`,
        ...removed.map((r) => `-${r}`),
        ...added.map((r) => `+${r}`),
      ].join("\n") + "\n",
    );
  }
  if (diff.outputs !== "") parts.push(diff.outputs);
  return parts.join("\n");
}

/** The exit status `--exit-code` asks for: 1 when anything differs, as `git diff --exit-code` and diff(1). */
export const exitStatus = (diff: ManifestDiff, exitCode: boolean): number => (exitCode && diff.changed ? 1 : 0);

export interface DiffOptions {
  /** Exit 1 when anything differs. */
  readonly exitCode: boolean;
  /** Print the diff as one JSON document (ManifestDiff) instead of text. */
  readonly json: boolean;
  /** Print the summary only, not each object's diff. */
  readonly summary: boolean;
  /** The arguments that are not options. */
  readonly positional: string[];
}

export const OPTIONS_USAGE = "[--exit-code] [--json | --summary]";

/** Splits the options every diff command takes from its other arguments; throws on an unknown option. */
export function parseDiffOptions(args: string[]): DiffOptions {
  const flags = new Set(args.filter((arg) => arg.startsWith("-")));
  for (const flag of flags) {
    if (!["--exit-code", "--json", "--summary"].includes(flag)) throw new ManifestDiffError(`unknown option ${flag}`);
  }
  if (flags.has("--json") && flags.has("--summary"))
    throw new ManifestDiffError("--json and --summary exclude each other");
  return {
    exitCode: flags.has("--exit-code"),
    json: flags.has("--json"),
    summary: flags.has("--summary"),
    positional: args.filter((arg) => !arg.startsWith("-")),
  };
}

/** Prints the diff as the options ask and returns the exit status. */
export function report(
  diff: ManifestDiff,
  options: DiffOptions,
  write = (text: string) => process.stdout.write(text),
): number {
  if (options.json) write(`${JSON.stringify(diff, null, 2)}\n`);
  else write(options.summary ? formatSummary(diff) : formatText(diff));
  return exitStatus(diff, options.exitCode);
}

/**
 * Reads two renderings (folders or files of YAML documents), prints their diff as the options ask,
 * labelled `before` and `after`, and returns the exit status: what entryway-diff and npm run diff do.
 */
export function reportRenderings(
  locations: { before: string; after: string },
  labels: { before: string; after: string },
  options: DiffOptions,
): number {
  const diff = diffRenderings(
    readRendering(locations.before),
    readRendering(locations.after),
    labels.before,
    labels.after,
  );
  return report(diff, options);
}
