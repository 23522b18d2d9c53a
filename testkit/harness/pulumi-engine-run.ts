/**
 * One operation of the real Pulumi engine on a stack, in a process of its own (run by
 * testkit/harness/pulumi-engine.ts): `tsx pulumi-engine-run.ts <request.json>`.
 *
 * The program runs as an Automation API inline program: the engine (the real `pulumi` CLI) is
 * started with `--client`, and the language host is the one inside @pulumi/pulumi/automation in
 * this process. That is how a TypeScript program runs here, because the nodejs language host
 * (pulumi-language-nodejs) cannot be had (see scripts/realcp/pulumi/recipe.sh). A process per
 * operation, as `pulumi up` itself has: the program's modules are evaluated afresh each time.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { LocalWorkspace, PulumiCommand, type EngineEvent } from "@pulumi/pulumi/automation";
import type { EngineOperation, EngineRequest, EngineResult, EngineStep } from "./pulumi-engine";

const request = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as EngineRequest;

const steps: EngineStep[] = [];
const diagnostics: string[] = [];
const started = new Map<string, number>();
const stepSeconds: Record<string, number[]> = {};
function onEvent(event: EngineEvent): void {
  const pre = event.resourcePreEvent?.metadata;
  const done = event.resOutputsEvent?.metadata;
  if (done && started.has(done.urn)) {
    (stepSeconds[done.type] ??= []).push((performance.now() - started.get(done.urn)!) / 1000);
  }
  if (pre) {
    started.set(pre.urn, performance.now());
    steps.push({
      op: pre.op,
      urn: pre.urn,
      type: pre.type,
      diffs: pre.diffs ?? [],
      detailedDiff: pre.detailedDiff ?? undefined,
    });
  }
  const diagnostic = event.diagnosticEvent;
  if (diagnostic && (diagnostic.severity === "error" || diagnostic.severity === "warning")) {
    diagnostics.push(`${diagnostic.severity}: ${diagnostic.urn ?? ""} ${diagnostic.message.trim()}`);
  }
}

async function main(): Promise<EngineResult> {
  // Unset: the CLI's own default (see EngineRequest.parallel).
  const parallel = request.parallel;
  const pulumiCommand = await PulumiCommand.get({ root: request.pulumiRoot });
  const stack = await LocalWorkspace.createOrSelectStack(
    {
      stackName: request.stackName,
      projectName: request.projectName,
      program: async () => ({ ...(await import(request.program)) }),
    },
    {
      workDir: request.workDir,
      pulumiCommand,
      envVars: request.env,
      secretsProvider: "passphrase",
      projectSettings: { name: request.projectName, runtime: "nodejs", backend: { url: `file://${request.stateDir}` } },
    },
  );
  const operation: Record<EngineOperation, () => Promise<{ stdout: string; summary?: unknown }>> = {
    up: async () => {
      const result = await stack.up({ onEvent, diff: true, parallel });
      return { stdout: result.stdout, summary: result.summary.resourceChanges };
    },
    preview: async () => {
      const result = await stack.preview({ onEvent, diff: true, parallel });
      return { stdout: result.stdout, summary: result.changeSummary };
    },
    refresh: async () => {
      const result = await stack.refresh({ onEvent, parallel });
      return { stdout: result.stdout, summary: result.summary.resourceChanges };
    },
    destroy: async () => {
      const result = await stack.destroy({ onEvent, parallel });
      return { stdout: result.stdout, summary: result.summary.resourceChanges };
    },
  };
  const { stdout, summary } = await operation[request.op]();
  const outputs = Object.fromEntries(
    Object.entries(await stack.outputs()).map(([key, { value, secret }]) => [key, { value, secret }]),
  );
  return {
    ok: true,
    stdout,
    summary: (summary ?? {}) as Record<string, number>,
    steps,
    diagnostics,
    outputs,
    stepSeconds,
  };
}

main()
  .catch((error: unknown): EngineResult => ({
    ok: false,
    stdout: "",
    error: error instanceof Error ? error.message : String(error),
    summary: {},
    steps,
    diagnostics,
    outputs: {},
  }))
  .then((result) => {
    writeFileSync(request.resultFile, JSON.stringify(result));
    process.exit(0);
  });
