/**
 * Pulumi plugins as the Pulumi CLI starts them, and gRPC to them: a plugin is @pulumi/pulumi's
 * launcher (cmd/run-plugin for a provider, cmd/run-policy-pack for a policy pack) run by node on
 * the plugin's folder; it compiles the TypeScript with ts-node, serves its gRPC service on a
 * loopback port and prints that port on stdout (provider/server.js `main`,
 * cmd/run-policy-pack). The CLI's nodejs language host runs it that way in `RunPlugin`
 * (pulumi/pulumi sdk/nodejs/cmd/pulumi-language-nodejs/main.go: the launcher, then the plugin's
 * folder and the engine's address for a provider, the other way round for a policy pack).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";

/* eslint-disable @typescript-eslint/no-explicit-any */

/** `require` as @pulumi/pulumi resolves modules: its gRPC, protobuf and generated stubs, exactly the plugin's. */
export const pulumiRequire = createRequire(createRequire(import.meta.url).resolve("@pulumi/pulumi/package.json"));
export const grpc = pulumiRequire("@grpc/grpc-js");
export const { Struct } = pulumiRequire("google-protobuf/google/protobuf/struct_pb");
export const { Empty } = pulumiRequire("google-protobuf/google/protobuf/empty_pb");

export interface RunningPlugin {
  readonly process: ChildProcessWithoutNullStreams;
  /** The loopback address it serves on. */
  readonly address: string;
  /** What it wrote to stderr so far (ts-node's diagnostics, the SDK's errors). */
  stderr(): string;
  stop(): void;
}

/** Starts `node @pulumi/pulumi/cmd/<launcher> ...args` in `cwd` and resolves once it printed its port. */
export async function startPulumiPlugin(
  launcher: "run-plugin" | "run-policy-pack",
  args: readonly string[],
  cwd: string,
  startupTimeoutMs = 150_000,
): Promise<RunningPlugin> {
  const launcherPath = path.join(path.dirname(pulumiRequire.resolve("@pulumi/pulumi/package.json")), "cmd", launcher);
  const child = spawn(process.execPath, [launcherPath, ...args], { cwd });
  let out = "";
  let err = "";
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const stop = () => {
    if (child.pid && child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  };
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${launcher} printed no port within ${startupTimeoutMs / 1000} s: ${out}${err}`)),
      startupTimeoutMs,
    );
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^(\d+)\s*$/m.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${launcher} exited (${code}) before serving: ${out}${err}`));
    });
  }).catch((error: unknown) => {
    stop();
    throw error;
  });
  return { process: child, address: `127.0.0.1:${port}`, stderr: () => err, stop };
}

/** One unary gRPC call on a generated client, as a promise. */
export function unary<T>(client: any, method: string, request: unknown): Promise<T> {
  return new Promise((resolve, reject) =>
    client[method](request, (error: Error | null, response: T) => (error ? reject(error) : resolve(response))),
  );
}
