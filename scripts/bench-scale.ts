/**
 * npm run bench:scale -- [--workspaces 100,1000] [--helm 4|3] [--skip-checkpoints] [--parallel N]
 *   [--cpu-prof DIR]
 *
 * Benchmark (not a test, never run by `npm test`): the dev stack grown to N workspaces (its first
 * workspace copied as user0..userN-1, as bench:render grows it) on the REAL control plane and the
 * REAL engine (scripts/realcp: Kubernetes v1.37.2 with kwok's fake node, the Pulumi CLI v3.276.0,
 * the Kubernetes provider, the random provider's stand-in), started once for the whole run. For
 * each N, one after another:
 *   - `pulumi preview` and `pulumi up` of a fresh stack (testkit/harness/pulumi-engine.ts: an
 *     Automation API inline program of index.ts, a local file backend);
 *   - `helm template` and `helm install` of the chart with the same workspaces (values as
 *     bench:render gives them, plus the NodePort the control plane without a load balancer needs),
 *     into a namespace of its own;
 *   - one more workspace: `pulumi preview` of N+1, whose steps must touch only the new workspace's
 *     objects (printed: its creates, and every other object the preview would change);
 *   - cleanup: `helm uninstall`, `pulumi destroy`, the stack's folder removed; the control plane is
 *     stopped at the end (also on failure).
 * Then one table: wall time, CPU time and peak RSS of each, with the ratios beside it.
 *
 * How it measures: every measured command is a process tree (the engine runner with its inline
 * program, the `pulumi` CLI it starts and the providers the CLI starts; or `helm`), run under GNU
 * time, and a poller reads /proc every 200 ms: the tree's RSS is the sum of VmRSS over the root
 * and all its descendants (found through /proc/<pid>/task/<every thread>/children: `pulumi` starts
 * its providers from any of its threads), and the peak is the largest sum seen, or, when larger,
 * the largest RSS of any one process of the tree (GNU time's %M: a command that ends before the
 * first poll still has a figure). A peak shorter than the interval can be missed; shared pages count
 * once per process. CPU time is user plus system time of the whole reaped tree (GNU time's rusage). Wall
 * time is the command's.
 *
 * On this repository's CI machine (2 shared cores) `pulumi up` of 1,000 workspaces (6,000
 * objects) took 37 minutes and its cleanup 40 more (docs/testing.md, Scale on the real control
 * plane); give the sizes to run with --workspaces.
 *
 * --skip-checkpoints runs the engine with PULUMI_SKIP_CHECKPOINTS=true: by default the engine saves
 * the whole state after every step (a cost that grows with steps x resources), with it only the
 * final deployment ("Skip saving state checkpoints and only save the final deployment",
 * sdk/go/common/env/env.go; honoured by pkg/backend/snapshot.go and journal.go in v3.276.0). A
 * crash mid-update then loses what the update did, so it is a choice for large stacks, printed
 * with every row it applies to.
 *
 * --parallel N measures `pulumi up` twice, side by side: with the CLI's default parallelism
 * (PULUMI_PARALLEL, which the engine's environment here never has, else GOMAXPROCS x 4: pulumi/pulumi
 * pkg/cmd/pulumi/operations/up.go, defaultParallel, v3.276.0; 8 on 2 cores), then, after a `pulumi destroy` of it (not measured),
 * with `--parallel N`. The second `up` runs on a control plane that has just created and deleted
 * the same objects once.
 *
 * Beside `helm install` (which returns once the objects are created), `helm install --wait` of the
 * same chart and values, as a release of its own in namespaces of its own: it returns once every
 * workload is ready, as `pulumi up` does.
 *
 * --cpu-prof DIR runs the one-more-workspace preview once more (not measured) with Node's
 * --cpu-prof, writes the profiles to DIR and prints the program process's self time by module.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse, stringify } from "yaml";
import { installUpstreamCrds, startControlPlane, type ControlPlane } from "../testkit/harness/control-plane";
import { helmBinaries, helmEnv, type Helm } from "../testkit/harness/helm";
import { engineEnv, engineTools, type EngineRequest, type EngineResult } from "../testkit/harness/pulumi-engine";
import { stackConfig, withoutAddressWaits, type StackDocument } from "../testkit/harness/stack-config";
import { growWorkspaces } from "./bench-stack";
import { profileSummary } from "./cpu-profile";
import { measuredTree, POLL_MS, type Measurement } from "./bench/process-tree";
import { stepTimes, table, type Row } from "./bench/scale-report";

const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const PASSPHRASE = "entryway-bench-passphrase";
/**
 * The CLI's --parallel when none is given and PULUMI_PARALLEL is unset (engineEnv passes none):
 * GOMAXPROCS x 4, GOMAXPROCS being the CPUs this process may use (Go's default).
 */
const DEFAULT_PARALLEL = os.availableParallelism() * 4;

interface Options {
  workspaces: number[];
  helmMajor: 3 | 4;
  skipCheckpoints: boolean;
  /** Also `pulumi up` with this --parallel, beside the CLI's default. */
  parallel?: number;
  /** Profile the one-more-workspace preview's Node process into this folder. */
  cpuProfDir?: string;
}

function parseOptions(argv: string[]): Options {
  const options: Options = { workspaces: [100, 1000], helmMajor: 4, skipCheckpoints: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--workspaces") {
      options.workspaces = (argv[++i] ?? "").split(",").map(Number);
      if (options.workspaces.length === 0 || options.workspaces.some((n) => !Number.isInteger(n) || n < 1))
        throw new Error("--workspaces takes whole numbers, e.g. 100,1000");
    } else if (arg === "--helm") {
      const major = Number(argv[++i]);
      if (major !== 3 && major !== 4) throw new Error("--helm takes 3 or 4");
      options.helmMajor = major;
    } else if (arg === "--skip-checkpoints") {
      options.skipCheckpoints = true;
    } else if (arg === "--parallel") {
      options.parallel = Number(argv[++i]);
      if (!Number.isInteger(options.parallel) || options.parallel < 1)
        throw new Error("--parallel takes a whole number");
    } else if (arg === "--cpu-prof") {
      options.cpuProfDir = path.resolve(argv[++i] ?? "");
    } else {
      throw new Error(
        "usage: npm run bench:scale -- [--workspaces 100,1000] [--helm 4|3] [--skip-checkpoints] [--parallel N] [--cpu-prof DIR]",
      );
    }
  }
  return options;
}

/** The dev stack with its workspaces replaced by `count` copies of the first (as bench:render makes them). */
function grownStack(count: number): StackDocument {
  const document = parse(readFileSync(path.join(repoRoot, "Pulumi.dev.yaml"), "utf8")) as {
    config: Record<string, StackDocument>;
  };
  const stack = structuredClone(document.config["entryway:stack"]);
  growWorkspaces(stack, count, "Pulumi.dev.yaml");
  return withoutAddressWaits(stack);
}

/** A stack the engine runs (one process tree per operation, measured), as testkit/harness/pulumi-engine.ts runs it. */
/** A failed engine run, with what it cost until it failed (printed as a row of its own). */
class EngineFailure extends Error {
  constructor(
    message: string,
    readonly measurement: Measurement,
  ) {
    super(message);
  }
}

class MeasuredStack {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), "entryway-bench-scale-"));
  private readonly workDir = path.join(this.dir, "project");
  private readonly stateDir = path.join(this.dir, "state");
  private readonly tools = engineTools();

  constructor(
    private readonly stackName: string,
    private readonly kubeconfig: string,
    private readonly skipCheckpoints: boolean,
  ) {
    for (const dir of [this.workDir, this.stateDir, path.join(this.dir, "home")]) mkdirSync(dir, { recursive: true });
  }

  setStack(stack: StackDocument): void {
    writeFileSync(
      path.join(this.workDir, `Pulumi.${this.stackName}.yaml`),
      stringify({ config: stackConfig(stack) }, { aliasDuplicateObjects: false }),
    );
  }

  async run(
    op: EngineRequest["op"],
    how: { parallel?: number; nodeOptions?: string } = {},
  ): Promise<{ measurement: Measurement; result: EngineResult }> {
    const resultFile = path.join(this.dir, `${op}-${Date.now()}.json`);
    const env = {
      ...engineEnv(this.tools, this.dir, this.kubeconfig, PASSPHRASE),
      ...(this.skipCheckpoints ? { PULUMI_SKIP_CHECKPOINTS: "true" } : {}),
    };
    const request: EngineRequest = {
      op,
      projectName: "entryway",
      stackName: this.stackName,
      program: path.join(repoRoot, "index.ts"),
      workDir: this.workDir,
      stateDir: this.stateDir,
      pulumiRoot: this.tools.pulumiRoot,
      env,
      resultFile,
      parallel: how.parallel,
    };
    writeFileSync(`${resultFile}.request`, JSON.stringify(request));
    const runner = path.join(repoRoot, "testkit", "harness", "pulumi-engine-run.ts");
    const measurement = await measuredTree(
      path.join(repoRoot, "node_modules", ".bin", "tsx"),
      [runner, `${resultFile}.request`],
      {
        cwd: repoRoot,
        env: { ...env, NODE_OPTIONS: how.nodeOptions ?? "" },
      },
    );
    let result: EngineResult;
    try {
      result = JSON.parse(readFileSync(resultFile, "utf8")) as EngineResult;
    } catch {
      throw new Error(`pulumi ${op} wrote no result:\n${measurement.stderr.slice(-4000)}`);
    }
    if (!result.ok)
      throw new EngineFailure(
        `pulumi ${op} failed: ${result.error}\n${result.diagnostics.slice(0, 20).join("\n")}`,
        measurement,
      );
    return { measurement: { ...measurement, ok: result.ok }, result };
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The chart's values for the same workspaces: the CONNECT gateway and the workspaces, a NodePort (no load balancer here). */
function helmValues(stack: StackDocument, file: string): void {
  const values = {
    connectGateway: { enabled: true, hostname: stack.connectGateway?.hostname, serviceType: "NodePort" },
    workspaces: stack.workspaces,
  };
  writeFileSync(file, stringify(values, { aliasDuplicateObjects: false }));
}

async function createNamespaces(controlPlane: ControlPlane, names: string[]): Promise<void> {
  for (const name of names) {
    const made = await controlPlane.request("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name },
    });
    if (made.status !== 201 && made.status !== 409) throw new Error(`namespace ${name}: ${made.status} ${made.body}`);
  }
}

const K8S = "kubernetes:";
/** What a preview of one more workspace touches: the new workspace's objects, and anything else it would change. */
function oneMore(result: EngineResult, name: string): { own: number; ownCreates: number; others: string[] } {
  const changed = result.steps.filter((step) => step.op !== "same");
  const own = changed.filter((step) => step.urn.includes(name));
  const others = changed
    .filter((step) => !step.urn.includes(name))
    .map((step) => `${step.op} ${step.type} ${step.urn.split("::").pop()}`);
  return {
    own: own.length,
    ownCreates: own.filter((step) => step.op === "create" && step.type.startsWith(K8S)).length,
    others,
  };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const helm: Helm = helmBinaries().find((h) => h.major === options.helmMajor)!;
  console.log(
    `bench:scale: the dev stack with ${options.workspaces.join(", ")} workspaces on the real control plane; ` +
      `pulumi (engine runner + CLI + providers) vs helm ${helm.version}; ${os.cpus().length} CPUs, load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`,
  );
  console.log(
    `pulumi state: ${options.skipCheckpoints ? "the final deployment only (PULUMI_SKIP_CHECKPOINTS=true)" : "a checkpoint after every step (the engine's default)"}`,
  );
  console.log(
    `pulumi --parallel: the CLI's default (GOMAXPROCS x 4 = ${DEFAULT_PARALLEL} here; the engine's environment has no PULUMI_PARALLEL)` +
      (options.parallel ? `, then ${options.parallel}` : ""),
  );
  console.log(
    `peak RSS: the process tree's summed VmRSS, polled every ${POLL_MS} ms from /proc; CPU: user+system of the reaped tree (GNU time)`,
  );
  // Room for every pod at once: the largest size's workspaces from pulumi and again from helm (both
  // stay up until the size's cleanup), and the stack's other pods. With the default 1,000 the
  // scheduler left the last workspaces of a 1,000-workspace `pulumi up` Pending (node full), and
  // the provider's await timed out on them.
  // A third set for `helm install --wait`.
  const podCapacity = 3 * Math.max(...options.workspaces) + 100;
  console.log(`the fake node holds ${podCapacity} pods`);
  const controlPlane = await startControlPlane({ podCapacity });
  const rows: Row[] = [];
  const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-bench-scale-helm-"));
  try {
    await installUpstreamCrds(controlPlane);
    for (const count of options.workspaces) {
      const stack = grownStack(count);
      // Its own namespaces per size, so nothing of one size meets the next.
      stack.namespace = `scale${count}`;
      stack.connectGateway = { ...stack.connectGateway, namespace: `scale${count}-connect` };
      stack.execGateway = stack.execGateway
        ? {
            ...stack.execGateway,
            targetNamespaces: (stack.execGateway.targetNamespaces ?? []).map((ns) => `${ns}-${count}`),
          }
        : undefined;
      if (stack.ansibleForms?.expose)
        stack.ansibleForms = {
          ...stack.ansibleForms,
          expose: { ...stack.ansibleForms.expose, host: `forms-${count}.example.test` },
        };
      await createNamespaces(controlPlane, stack.execGateway?.targetNamespaces ?? []);
      const pulumi = new MeasuredStack(`scale${count}`, controlPlane.kubeconfig, options.skipCheckpoints);
      const label = (what: string) => `${what} (${count})`;
      let step = "pulumi preview";
      try {
        pulumi.setStack(stack);
        console.log(`[${count}] pulumi preview ...`);
        const preview = await pulumi.run("preview");
        const objects = preview.result.steps.filter((s) => s.type.startsWith(K8S) && s.op === "create").length;
        rows.push({ label: label("pulumi preview"), m: preview.measurement, objects });
        console.log(`[${count}] pulumi up ...`);
        step = "pulumi up";
        const up = await pulumi.run("up");
        const created = (result: EngineResult) =>
          result.steps.filter((s) => s.type.startsWith(K8S) && s.op === "create").length;
        rows.push({
          label: label("pulumi up"),
          m: up.measurement,
          objects: created(up.result),
          note: `--parallel default (${DEFAULT_PARALLEL})`,
        });
        console.log(`[${count}] pulumi up, step times by type:\n${stepTimes(up.result, DEFAULT_PARALLEL)}`);
        if (options.parallel) {
          console.log(`[${count}] pulumi destroy, then pulumi up --parallel ${options.parallel} ...`);
          await pulumi.run("destroy", { parallel: options.parallel });
          step = `pulumi up --parallel ${options.parallel}`;
          const wide = await pulumi.run("up", { parallel: options.parallel });
          rows.push({
            label: label(`pulumi up --parallel ${options.parallel}`),
            m: wide.measurement,
            objects: created(wide.result),
          });
          console.log(
            `[${count}] pulumi up --parallel ${options.parallel}, step times by type:\n${stepTimes(wide.result, options.parallel)}`,
          );
        }

        const valuesFile = path.join(scratch, `values-${count}.yaml`);
        helmValues(stack, valuesFile);
        const helmNamespace = `helm${count}`;
        console.log(`[${count}] helm template ...`);
        const template = await measuredTree(
          helm.path,
          [
            "template",
            "entryway",
            path.join(repoRoot, "charts", "entryway"),
            "--namespace",
            helmNamespace,
            "-f",
            valuesFile,
          ],
          { env: helmEnv(controlPlane.kubeconfig) },
        );
        if (!template.ok) throw new Error(`helm template failed: ${template.stderr}`);
        rows.push({
          label: label(`helm ${helm.major} template`),
          m: template,
          objects: (template.stdout.match(/^kind: /gm) ?? []).length,
        });
        console.log(`[${count}] helm install ...`);
        const install = await measuredTree(
          helm.path,
          [
            "install",
            `scale${count}`,
            path.join(repoRoot, "charts", "entryway"),
            "--namespace",
            helmNamespace,
            "--create-namespace",
            "-f",
            valuesFile,
            "--timeout",
            "30m",
          ],
          { env: helmEnv(controlPlane.kubeconfig) },
        );
        if (!install.ok) throw new Error(`helm install failed: ${install.stderr}${install.stdout}`);
        rows.push({
          label: label(`helm ${helm.major} install`),
          m: install,
          objects: rows.at(-1)!.objects,
          note: "no --wait (pulumi up waits for rollouts)",
        });
        console.log(`[${count}] helm install --wait ...`);
        const waited = await measuredTree(
          helm.path,
          [
            "install",
            `scale${count}w`,
            path.join(repoRoot, "charts", "entryway"),
            "--namespace",
            `${helmNamespace}w`,
            "--create-namespace",
            "-f",
            valuesFile,
            "--wait",
            "--timeout",
            "30m",
          ],
          { env: helmEnv(controlPlane.kubeconfig) },
        );
        if (!waited.ok) throw new Error(`helm install --wait failed: ${waited.stderr}${waited.stdout}`);
        rows.push({
          label: label(`helm ${helm.major} install --wait`),
          m: waited,
          objects: rows.at(-1)!.objects,
          note: "a release of its own; returns when every workload is ready",
        });

        const extra = `user${count}`;
        pulumi.setStack(grownWith(stack, extra));
        console.log(`[${count}] pulumi preview of one more workspace ...`);
        step = "pulumi preview +1";
        const more = await pulumi.run("preview");
        const touched = oneMore(more.result, extra);
        rows.push({
          label: label("pulumi preview +1"),
          m: more.measurement,
          objects: touched.ownCreates,
          note: `${touched.own} steps of ${extra}, ${touched.others.length} other${touched.others.length === 1 ? "" : "s"}${touched.others.length ? `: ${touched.others.slice(0, 5).join("; ")}` : ""}`,
        });
        if (options.cpuProfDir) {
          const dir = path.join(options.cpuProfDir, `preview-plus-one-${count}`);
          mkdirSync(dir, { recursive: true });
          console.log(`[${count}] pulumi preview of one more workspace again, under node --cpu-prof (${dir}) ...`);
          await pulumi.run("preview", { nodeOptions: `--cpu-prof --cpu-prof-dir=${dir}` });
          console.log(profileSummary(dir, repoRoot));
        }

        console.log(`[${count}] cleanup: helm uninstall, pulumi destroy ...`);
        for (const [release, namespace] of [
          [`scale${count}`, helmNamespace],
          [`scale${count}w`, `${helmNamespace}w`],
        ]) {
          const uninstall = await measuredTree(
            helm.path,
            ["uninstall", release!, "--namespace", namespace!, "--timeout", "30m"],
            { env: helmEnv(controlPlane.kubeconfig) },
          );
          if (!uninstall.ok) console.log(`  helm uninstall ${release} failed: ${uninstall.stderr}`);
        }
        pulumi.setStack(stack);
        await pulumi.run("destroy", { parallel: options.parallel });
      } catch (error) {
        // What was measured before the failure is printed, the failed run as a row of its own.
        if (error instanceof EngineFailure)
          rows.push({ label: label(step), m: error.measurement, note: "FAILED (see the error below)" });
        throw error;
      } finally {
        pulumi.remove();
        console.log(`\n${count} workspaces; ratios against pulumi up (${count}):`);
        console.log(
          table(
            rows.filter((r) => r.label.endsWith(`(${count})`)),
            () => rows.find((r) => r.label === label("pulumi up")),
          ),
        );
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    await controlPlane.stop();
  }
  console.log("\nall sizes; ratios against the first size's row of the same command, and pulumi vs helm:");
  const first = options.workspaces[0];
  const sameCommand = (row: Row) => rows.find((r) => r.label === row.label.replace(/\(\d+\)$/, `(${first})`));
  console.log(table(rows, sameCommand));
  for (const count of options.workspaces) {
    const find = (what: string) => rows.find((r) => r.label === `${what} (${count})`);
    const [preview, up, template, install, waited, wide] = [
      find("pulumi preview"),
      find("pulumi up"),
      find(`helm ${helm.major} template`),
      find(`helm ${helm.major} install`),
      find(`helm ${helm.major} install --wait`),
      find(`pulumi up --parallel ${options.parallel}`),
    ];
    if (preview && up && template && install) {
      const r = (a: Row, b: Row, key: "wallSeconds" | "cpuSeconds" | "peakRssBytes") =>
        `${(a.m[key] / b.m[key]).toFixed(1)}x`;
      console.log(
        `${count} workspaces: preview/template ${r(preview, template, "wallSeconds")} wall, ${r(preview, template, "cpuSeconds")} CPU, ${r(preview, template, "peakRssBytes")} RSS; ` +
          `up/install ${r(up, install, "wallSeconds")} wall, ${r(up, install, "cpuSeconds")} CPU, ${r(up, install, "peakRssBytes")} RSS` +
          (waited ? `; up/install --wait ${r(up, waited, "wallSeconds")} wall` : "") +
          (waited && wide
            ? `, up --parallel ${options.parallel}/install --wait ${r(wide, waited, "wallSeconds")} wall`
            : "") +
          (wide
            ? `; up --parallel ${options.parallel}/up ${r(wide, up, "wallSeconds")} wall (${r(up, wide, "wallSeconds")} faster)`
            : ""),
      );
    }
  }
}

/** The stack with one more workspace, a copy of the first. */
function grownWith(stack: StackDocument, name: string): StackDocument {
  const template = stack.workspaces![0]!;
  const keys = template.authorizedKeys as string[];
  return {
    ...stack,
    workspaces: [
      ...stack.workspaces!,
      { ...template, name, authorizedKeys: keys.map((key) => key.replace(/\S+$/, `${name}@laptop`)) },
    ],
  };
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench:scale: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
