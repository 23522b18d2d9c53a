/**
 * npm run gateway:local [-- --docker-host unix:///path/to/docker.sock] [--port 8080]
 *
 * The exec gateway on this machine, to try a shell through it against a local Docker or podman:
 * builds gateway/ (service, CLI, web terminal) and runs `entryway serve` with the Docker backend,
 * listening on 127.0.0.1 only. Authorization is the gateway's own webhook authorizer
 * (gateway/src/auth/webhook.ts), answered by a loopback endpoint here that allows exactly one token:
 * 32 random bytes made at start, written to a file only this user can read, never printed, and
 * worthless once this process stops. The service and its production authorizers are unchanged.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";

const root = path.resolve(__dirname, "..");
const cliMain = path.join(root, "gateway/dist/cli/main.js");
const MAX_WEBHOOK_BODY = 64 * 1024;

class UsageError extends Error {}

function parseArgs(argv: string[]): { dockerHost?: string; port: number } {
  const options: { dockerHost?: string; port: number } = { port: 8080 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined)
      throw new UsageError(
        `${flag} needs a value (usage: npm run gateway:local -- [--docker-host unix:///path] [--port N])`,
      );
    if (flag === "--docker-host") options.dockerHost = value;
    else if (flag === "--port" && /^\d{1,5}$/.test(value)) options.port = Number(value);
    else
      throw new UsageError(
        `unknown option ${flag} ${value} (usage: npm run gateway:local -- [--docker-host unix:///path] [--port N])`,
      );
  }
  return options;
}

/** --docker-host, else DOCKER_HOST, else the first socket that exists: Docker's, then rootless and rootful podman's. */
function dockerHost(given: string | undefined): string {
  const candidates = [
    "/var/run/docker.sock",
    ...(process.env.XDG_RUNTIME_DIR ? [path.join(process.env.XDG_RUNTIME_DIR, "podman/podman.sock")] : []),
    "/run/podman/podman.sock",
  ];
  const host = given ?? process.env.DOCKER_HOST ?? candidates.filter(existsSync).map((socket) => `unix://${socket}`)[0];
  if (!host) {
    throw new UsageError(
      `no Docker or podman socket at ${candidates.join(", ")}: start one (podman system service --time=0 unix:///tmp/podman.sock) and pass --docker-host unix:///tmp/podman.sock`,
    );
  }
  if (!/^(unix|tcp):\/\//.test(host))
    throw new UsageError(`Docker host ${host}: expected unix:///path or tcp://host:port`);
  if (host.startsWith("unix://") && !existsSync(host.slice("unix://".length)))
    throw new UsageError(`no socket at ${host}`);
  return host;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      body += chunk;
      if (body.length > MAX_WEBHOOK_BODY) request.destroy(new Error("webhook request too large"));
    });
    request.on("end", () => resolve(body));
    request.on("error", reject);
  });
}

/** Entry's console call, answered for one token: {"allowed": true, "user": "local"} or a denial. */
function startTokenWebhook(token: string) {
  const digest = (text: string) => createHash("sha256").update(text).digest();
  const expected = digest(token);
  const server = createServer(async (request, response) => {
    let allowed: boolean;
    try {
      const { token: offered } = JSON.parse(await readBody(request)) as { token?: unknown };
      allowed = request.method === "POST" && typeof offered === "string" && timingSafeEqual(digest(offered), expected);
    } catch {
      allowed = false; // not JSON, or too large
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify(
        allowed
          ? { allowed: true, user: "local" }
          : { allowed: false, reason: "not the token of this gateway:local run" },
      ),
    );
  });
  return new Promise<{ url: string; close: () => void }>((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => server.close() }),
    ),
  );
}

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  const host = dockerHost(options.dockerHost);

  console.log("gateway:local: building the gateway (npm run build -w gateway)");
  const build = spawnSync("npm", ["run", "build", "--silent", "-w", "gateway"], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) throw new Error("npm run build -w gateway failed (its output is above)");

  const dir = mkdtempSync(path.join(os.tmpdir(), "entryway-gateway-local-"));
  const tokenFile = path.join(dir, "token");
  const token = randomBytes(32).toString("base64url");
  writeFileSync(tokenFile, token + "\n", { mode: 0o600 });
  const webhook = await startTokenWebhook(token);

  const gateway = spawn(process.execPath, [cliMain, "serve"], {
    cwd: root,
    env: {
      ...process.env,
      ENTRYWAY_HOST: "127.0.0.1",
      ENTRYWAY_PORT: String(options.port),
      // Readiness and metrics are served on a port of their own: loopback too, one above the gateway's.
      ENTRYWAY_METRICS_HOST: "127.0.0.1",
      ENTRYWAY_METRICS_PORT: String(options.port === 0 ? 0 : options.port + 1),
      ENTRYWAY_BACKEND: "docker",
      ENTRYWAY_DOCKER_HOST: host,
      ENTRYWAY_AUTHORIZER: "webhook",
      ENTRYWAY_WEBHOOK_URL: webhook.url,
    },
    stdio: ["ignore", "pipe", "inherit"],
    // Its own process group: a Ctrl-C reaches it once, from here, so it drains instead of being killed
    // by a second SIGINT. If this process ends first, the gateway is stopped with it.
    detached: true,
  });
  process.on("exit", () => {
    if (gateway.exitCode === null) gateway.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  let pending = "";
  gateway.stdout.setEncoding("utf8");
  gateway.stdout.on("data", (chunk: string) => {
    process.stdout.write(chunk);
    pending += chunk;
    for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n")) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      const listening = /"msg":"listening".*"port":(\d+),"metricsPort":(\d+)/.exec(line);
      if (listening)
        console.log(
          instructions(`http://127.0.0.1:${listening[1]}`, `http://127.0.0.1:${listening[2]}`, host, tokenFile),
        );
    }
  });
  // One SIGTERM however many signals arrive (npm and tsx relay the terminal's too): the gateway drains
  // open sessions for at most drainTimeoutMs, then exits.
  let stopping = false;
  const stop = () => {
    if (!stopping) gateway.kill("SIGTERM");
    stopping = true;
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, stop);
  const code = await new Promise<number>((resolve) =>
    gateway.on("exit", (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))),
  );
  webhook.close();
  return code;
}

function instructions(url: string, monitoringUrl: string, host: string, tokenFile: string): string {
  const node = path.relative(root, process.execPath).startsWith("..")
    ? process.execPath
    : path.relative(root, process.execPath);
  return [
    `gateway:local: the exec gateway listens on ${url} (127.0.0.1 only), Docker backend ${host}`,
    `gateway:local: its one token is in ${tokenFile} (this user only; it stops working when this process stops)`,
    `  shell in a container:  ${node} gateway/dist/cli/main.js enter -g ${url} --token-file ${tokenFile} <container>`,
    `  web terminal:          ${url}/?container=<container>  (paste the token from that file)`,
    `  readiness, metrics:    ${monitoringUrl}/readyz, ${monitoringUrl}/metrics`,
    "  Ctrl-C stops the gateway.",
  ].join("\n");
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`gateway:local: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
