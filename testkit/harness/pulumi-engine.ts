/**
 * A Pulumi stack driven by the REAL engine: the Pulumi CLI v3.276.0, the Kubernetes provider and
 * the random provider's stand-in, all built from Go modules (scripts/realcp), against a real API
 * server, with a local file backend and passphrase secrets. Nothing may download: automatic plugin
 * acquisition and the update check are off, and the providers are the ones on PATH ("ambient"
 * plugins, which the engine prefers to its plugin cache: pulumi/pulumi
 * sdk/go/common/workspace/plugins.go, getPluginInfoAndPath).
 *
 * Each operation runs in a process of its own (pulumi-engine-run.ts), as an Automation API inline
 * program of the repository's index.ts unless another program is given.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { run } from "./process";
import { realTool } from "./realcp-tool";
import { repoRoot } from "./helm";

export type EngineOperation = "up" | "preview" | "refresh" | "destroy";

export interface EngineStep {
  /** same, create, update, replace, delete, create-replacement, delete-replaced, refresh, ... */
  readonly op: string;
  readonly urn: string;
  readonly type: string;
  readonly diffs: string[];
  /** Per property: what changed (Pulumi's PropertyDiff: add, update, delete, ...-replace). */
  readonly detailedDiff?: Record<string, unknown>;
}

export interface EngineResult {
  readonly ok: boolean;
  readonly error?: string;
  readonly stdout: string;
  /** Resource changes by kind (create, update, same, delete, ...). */
  readonly summary: Record<string, number>;
  readonly steps: EngineStep[];
  readonly diagnostics: string[];
  readonly outputs: Record<string, { value: unknown; secret: boolean }>;
  /**
   * Per resource type, the seconds each step took: from its resource-pre event to its outputs event,
   * as the runner received them (the Automation API tails the engine's event log), so for a create
   * of a Kubernetes object the request and the provider's await of it.
   */
  readonly stepSeconds?: Record<string, number[]>;
}

export interface EngineRequest {
  readonly op: EngineOperation;
  readonly projectName: string;
  readonly stackName: string;
  readonly program: string;
  readonly workDir: string;
  readonly stateDir: string;
  readonly pulumiRoot: string;
  readonly env: Record<string, string>;
  readonly resultFile: string;
  /**
   * The engine's `--parallel`: how many resource operations run at once. Unset, the CLI's default:
   * PULUMI_PARALLEL, else GOMAXPROCS x 4 (pulumi/pulumi pkg/cmd/pulumi/operations/up.go,
   * defaultParallel, v3.276.0), 8 on a 2-core machine.
   */
  readonly parallel?: number;
}

const PASSPHRASE = "entryway-test-passphrase";

/**
 * The environment an engine operation runs in: the built CLI and providers first on PATH, its own
 * PULUMI_HOME, a passphrase for the secrets provider, and nothing that may download or prompt.
 */
export function engineEnv(
  tools: { pulumiRoot: string; providerDirs: string[] },
  dir: string,
  kubeconfig: string,
  passphrase = PASSPHRASE,
): Record<string, string> {
  return {
    PATH: [
      ...tools.providerDirs,
      path.join(tools.pulumiRoot, "bin"),
      path.dirname(process.execPath),
      process.env.PATH ?? "",
    ].join(path.delimiter),
    HOME: process.env.HOME ?? dir,
    PULUMI_HOME: path.join(dir, "home"),
    PULUMI_CONFIG_PASSPHRASE: passphrase,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_SKIP_CONFIRMATIONS: "true",
    KUBECONFIG: kubeconfig,
  };
}

/** The engine and the providers it runs, built first when the cache has none. */
export function engineTools(): { pulumiRoot: string; providerDirs: string[] } {
  return {
    pulumiRoot: path.dirname(realTool("pulumi")),
    providerDirs: [realTool("pulumi-resource-kubernetes"), realTool("random-standin")],
  };
}

export interface PulumiStackOptions {
  readonly stackName: string;
  /** The stack's configuration: the `config:` map of a Pulumi.<stack>.yaml. */
  readonly config: Record<string, unknown>;
  /** The cluster the Kubernetes provider deploys to. */
  readonly kubeconfig: string;
  /** The program (a module whose exports are the stack outputs); the repository's index.ts by default. */
  readonly program?: string;
  /**
   * A project folder of its own (a platform repo with its own node_modules): the engine runner is
   * run from there, so the program and the Automation API share that project's @pulumi/pulumi, as
   * the one runtime they must be.
   */
  readonly projectDir?: string;
  readonly projectName?: string;
}

export class PulumiStack {
  readonly dir: string;
  readonly workDir: string;
  readonly stateDir: string;
  private readonly tools = engineTools();

  constructor(private readonly options: PulumiStackOptions) {
    this.dir = mkdtempSync(path.join(os.tmpdir(), `entryway-pulumi-${options.stackName}-`));
    this.workDir = path.join(this.dir, "project");
    this.stateDir = path.join(this.dir, "state");
    mkdirSync(this.workDir);
    mkdirSync(this.stateDir);
    mkdirSync(path.join(this.dir, "home"));
    this.setConfig(options.config);
  }

  get projectName(): string {
    return this.options.projectName ?? "entryway";
  }

  /** Rewrites the stack's Pulumi.<stack>.yaml, as a user edits it between two `pulumi up`s. */
  setConfig(config: Record<string, unknown>): void {
    writeFileSync(path.join(this.workDir, `Pulumi.${this.options.stackName}.yaml`), stringify({ config }));
  }

  /** The state file the file backend keeps (where secrets must appear only encrypted). */
  stateFile(): string {
    return path.join(this.stateDir, ".pulumi", "stacks", this.projectName, `${this.options.stackName}.json`);
  }

  async run(op: EngineOperation): Promise<EngineResult> {
    const resultFile = path.join(this.dir, `${op}-${Date.now()}.json`);
    const env = engineEnv(this.tools, this.dir, this.options.kubeconfig);
    const request: EngineRequest = {
      op,
      projectName: this.projectName,
      stackName: this.options.stackName,
      program: this.options.program ?? path.join(repoRoot, "index.ts"),
      workDir: this.workDir,
      stateDir: this.stateDir,
      pulumiRoot: this.tools.pulumiRoot,
      env,
      resultFile,
    };
    const requestFile = `${resultFile}.request`;
    writeFileSync(requestFile, JSON.stringify(request));
    let runner = path.join(repoRoot, "testkit", "harness", "pulumi-engine-run.ts");
    if (this.options.projectDir) {
      const copy = path.join(this.options.projectDir, ".entryway-engine-run.ts");
      copyFileSync(runner, copy);
      runner = copy;
    }
    const child = await run(path.join(repoRoot, "node_modules", ".bin", "tsx"), [runner, requestFile], {
      cwd: this.options.projectDir ?? repoRoot,
      env: { ...env, NODE_OPTIONS: "" },
    });
    let result: EngineResult;
    try {
      result = JSON.parse(readFileSync(resultFile, "utf8")) as EngineResult;
    } catch {
      throw new Error(
        `pulumi ${op} of ${this.options.stackName} wrote no result (exit ${child.status}):\n${child.stderr.slice(-4000)}`,
      );
    }
    return result;
  }

  /** Runs the operation and fails with the engine's own messages when it did not succeed. */
  async expect(op: EngineOperation): Promise<EngineResult> {
    const result = await this.run(op);
    if (!result.ok) {
      throw new Error(
        `pulumi ${op} of stack ${this.options.stackName} failed: ${result.error}\n${result.diagnostics.join("\n")}`,
      );
    }
    return result;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
