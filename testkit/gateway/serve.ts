// `entryway serve` as a process of its own (the gateway as it runs in a pod: settings from ENTRYWAY_*
// variables, JSON logs on stdout), on loopback, and a webhook authorizer on loopback for it that
// allows tokens naming a user ("user:<name>" or "user:<name>:<group>,<group>") and knows their groups.
import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("../../gateway/src/cli/main.ts", import.meta.url));

export interface ServeProcess {
  /** http://127.0.0.1:<port> */
  base: string;
  port: number;
  process: ChildProcess;
  /** Everything it wrote to stdout so far (logs, and audit records without ENTRYWAY_AUDIT_FILE). */
  stdout(): string;
  /** SIGTERM and wait (drains sessions), or SIGKILL when `hard`. */
  stop(hard?: boolean): Promise<void>;
}

export async function startServe(env: Record<string, string>): Promise<ServeProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN, "serve"], {
    // The "listening" line (the port) is logged at info: a level above it would hide it.
    env: {
      PATH: process.env.PATH,
      ENTRYWAY_HOST: "127.0.0.1",
      ENTRYWAY_PORT: "0",
      ...env,
      ENTRYWAY_LOG_LEVEL: env.ENTRYWAY_LOG_LEVEL === "debug" ? "debug" : "info",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let stdout = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  const deadline = Date.now() + 60_000;
  let listening: RegExpExecArray | null;
  while (!(listening = /"msg":"listening".*"port":(\d+)/.exec(stdout))) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`entryway serve did not start: ${stdout}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const port = Number(listening[1]);
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    process: child,
    stdout: () => stdout,
    async stop(hard = false) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill(hard ? "SIGKILL" : "SIGTERM");
      await exited;
    },
  };
}

export interface WebhookAuthorizer {
  url: string;
  stop(): Promise<void>;
}

/** The webhook protocol of gateway/src/auth/webhook.ts: {token, target?, purpose?} in, {allowed, user, groups} out. */
export async function startWebhookAuthorizer(): Promise<WebhookAuthorizer> {
  const server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const { token } = JSON.parse(body || "{}") as { token?: string };
      const match = /^user:([^:\s]+)(?::(\S+))?$/.exec(token ?? "");
      const answer = match
        ? { allowed: true, user: match[1], groups: match[2]?.split(",") ?? [] }
        : { allowed: false, reason: "unknown token" };
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The settings of a serve process on `podman`'s Docker API, asking `webhook` about every token. */
export function dockerWithWebhook(podman: { socketPath: string }, webhook: WebhookAuthorizer): Record<string, string> {
  return {
    ENTRYWAY_BACKEND: "docker",
    ENTRYWAY_DOCKER_HOST: `unix://${podman.socketPath}`,
    ENTRYWAY_AUTHORIZER: "webhook",
    ENTRYWAY_WEBHOOK_URL: webhook.url,
  };
}

/** The enter URL of a Docker container on a serve process, with a command in pipe mode when given. */
export function enterUrl(serve: ServeProcess, container: string, command?: string[]): string {
  const params = new URLSearchParams({ container });
  if (command) {
    params.set("tty", "false");
    for (const part of command) params.append("command", part);
  }
  return `ws://127.0.0.1:${serve.port}/v1/enter?${params}`;
}
