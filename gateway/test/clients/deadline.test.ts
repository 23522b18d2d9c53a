// --connect-timeout (enter) and --timeout (connect-proxy) mean what they say, end to end: one
// deadline for every stage. Each stage gets a server that stalls at it (a listener whose accept
// queue is full, so SYNs go unanswered; a socket that never answers TLS, or HTTP, or CONNECT; a
// gateway whose authorizer never decides), and the CLI, run as a process with a 1 s timeout, must
// name that stage, exit 69, not before the timeout, and well before two of them.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { PassThrough, Readable } from "node:stream";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Authorizer } from "../../src/auth/authorizer.js";
import { openTunnel } from "../../src/cli/connect-proxy.js";
import { runSession } from "../../src/cli/enter.js";
import { ExitCode } from "../../src/cli/exit-codes.js";
import { fakeBackend } from "../../../testkit/gateway/fake-backend.js";
import { startGateway, type TestGateway } from "../../../testkit/gateway/gateway.js";
import { cleanEnv, runCli, type CliResult } from "../../../testkit/gateway/cli-harness.js";

const TIMEOUT_MS = 1000;

/**
 * A port whose TCP connect never completes: a listener with a backlog of 1 in a process whose event
 * loop is blocked (so it never accepts), its queue filled by two connections; Linux then drops the SYNs.
 */
async function stalledListener(): Promise<{ port: number; stop(): void }> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      "-e",
      `const server = require("node:net").createServer();
       server.listen({ port: 0, host: "127.0.0.1", backlog: 1 }, () => {
         process.stdout.write(server.address().port + "\\n");
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
       });`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const port = await new Promise<number>((resolve) => child.stdout!.once("data", (d) => resolve(Number(String(d)))));
  const fillers: net.Socket[] = [];
  for (let connected = 0; connected < 2;) {
    const socket = net.connect(port, "127.0.0.1");
    socket.on("error", () => {});
    fillers.push(socket);
    await new Promise<void>((resolve) => {
      socket.once("connect", () => {
        connected++;
        resolve();
      });
      setTimeout(resolve, 500); // a SYN dropped already: the queue is full
    });
    if (fillers.length > 4) break;
  }
  return {
    port,
    stop() {
      for (const socket of fillers) socket.destroy();
      child.kill("SIGKILL");
    },
  };
}

/** A server that accepts and never says a byte; `contact` is when it first accepted. */
async function silentServer(): Promise<{ port: number; contact(): number | undefined; stop(): void }> {
  let first: number | undefined;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    first ??= performance.now();
    sockets.add(socket);
    socket.on("error", () => {});
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)),
  );
  return {
    port,
    contact: () => first,
    stop() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/** Runs the CLI; returns its result and when it started and ended (performance.now()). */
async function timed(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult & { started: number; ended: number }> {
  const started = performance.now();
  const result = await runCli(args, { env, timeoutMs: 60_000 });
  return { ...result, started, ended: performance.now() };
}

let home: string;
let env: NodeJS.ProcessEnv;
let stalled: Awaited<ReturnType<typeof stalledListener>>;
let silent: Record<"tls" | "upgrade" | "proxyTls" | "proxyAnswer", Awaited<ReturnType<typeof silentServer>>>;
let gateway: TestGateway;
let authorizeCalled: number | undefined;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "entryway-deadline-"));
  env = cleanEnv(home, { ENTRYWAY_TOKEN: "user:alice" });
  delete env.ENTRYWAY_CONNECT_TIMEOUT;
  stalled = await stalledListener();
  // One each, so that a server's first contact is its case's.
  silent = {
    tls: await silentServer(),
    upgrade: await silentServer(),
    proxyTls: await silentServer(),
    proxyAnswer: await silentServer(),
  };
  const never: Authorizer = {
    authorize: () => {
      authorizeCalled ??= performance.now();
      return new Promise(() => {});
    },
  };
  gateway = await startGateway(fakeBackend(), never, { authTimeoutMs: 120_000 });
});
afterAll(async () => {
  stalled?.stop();
  for (const server of Object.values(silent ?? {})) server.stop();
  await gateway?.stop();
  rmSync(home, { recursive: true, force: true });
});

/** Ended by the deadline: exit 69 with one line naming the stage, not before the timeout. */
function expectDeadline(result: CliResult & { started: number; ended: number }, line: RegExp): void {
  expect(result.stderr).toMatch(line);
  expect(result.stderr).toMatch(/^[^\n]+\n$/);
  expect(result.code).toBe(ExitCode.network);
  expect(result.ended - result.started).toBeGreaterThanOrEqual(TIMEOUT_MS);
}

describe("one connect deadline across the stages", () => {
  it("entryway enter: TCP connect, TLS handshake, WebSocket upgrade and authorization", async () => {
    const timeout = ["--connect-timeout", String(TIMEOUT_MS / 1000)];
    const [tcp, tls, upgrade, auth] = await Promise.all([
      timed(["enter", "-g", `ws://127.0.0.1:${stalled.port}`, ...timeout, "web-1"], env),
      timed(["enter", "-g", `wss://127.0.0.1:${silent.tls.port}`, ...timeout, "web-1"], env),
      timed(["enter", "-g", `ws://127.0.0.1:${silent.upgrade.port}`, ...timeout, "web-1"], env),
      timed(["enter", "-g", gateway.base, ...timeout, "web-1"], env),
    ]);
    const where = (port: number | string) => `cannot reach the gateway at wss?://127\\.0\\.0\\.1:${port}`;
    expectDeadline(tcp, new RegExp(`^entryway: ${where(stalled.port)}: timed out after 1 s in the TCP connect\\n`));
    expectDeadline(
      tls,
      new RegExp(`^entryway: ${where(silent.tls.port)}: timed out after 1 s in the TLS handshake\\n`),
    );
    expectDeadline(
      upgrade,
      new RegExp(`^entryway: ${where(silent.upgrade.port)}: timed out after 1 s in the WebSocket upgrade\\n`),
    );
    expectDeadline(
      auth,
      new RegExp(`^entryway: ${where(new URL(gateway.base).port)}: timed out after 1 s in the authorization\\n`),
    );
    // Well before two timeouts, from the first byte a server saw (the deadline started before it).
    expect(tls.ended - silent.tls.contact()!).toBeLessThan(2 * TIMEOUT_MS);
    expect(upgrade.ended - silent.upgrade.contact()!).toBeLessThan(2 * TIMEOUT_MS);
    expect(auth.ended - authorizeCalled!).toBeLessThan(2 * TIMEOUT_MS);
  });

  // No server sees a connect that never completes, and a process's start-up on a loaded machine
  // varies by seconds: the TCP stage's upper bound is measured on runSession and openTunnel in this process.
  it("the TCP stage ends at the deadline, in-process: runSession and openTunnel", async () => {
    const started = performance.now();
    const code = await runSession(
      {
        url: new URL(`ws://127.0.0.1:${stalled.port}/v1/enter?container=web-1`),
        token: "user:alice",
        connectTimeoutMs: TIMEOUT_MS,
        keepaliveMs: 0,
      },
      true,
      { input: Readable.from([]), output: new PassThrough() },
    );
    const sessionMs = performance.now() - started;
    expect(code).toBe(ExitCode.network);
    const tunnelStarted = performance.now();
    await expect(
      openTunnel({ gateway: `127.0.0.1:${stalled.port}`, host: "ws", port: 22, timeoutMs: TIMEOUT_MS }),
    ).rejects.toThrow(/timed out after 1 s waiting for TCP connect/);
    const tunnelMs = performance.now() - tunnelStarted;
    for (const elapsed of [sessionMs, tunnelMs]) {
      expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 5); // timers may fire a hair early by performance.now()
      expect(elapsed).toBeLessThan(2 * TIMEOUT_MS);
    }
  });

  it("entryway connect-proxy: TCP connect, TLS handshake and the answer to CONNECT", async () => {
    const target = ["ws.dev.svc.cluster.local", "22"];
    const timeout = ["--timeout", String(TIMEOUT_MS / 1000)];
    const [tcp, tls, answer] = await Promise.all([
      timed(["connect-proxy", ...timeout, `127.0.0.1:${stalled.port}`, ...target], env),
      timed(["connect-proxy", ...timeout, "--tls", `127.0.0.1:${silent.proxyTls.port}`, ...target], env),
      timed(["connect-proxy", ...timeout, `127.0.0.1:${silent.proxyAnswer.port}`, ...target], env),
    ]);
    const prefix = "^entryway connect-proxy: ";
    expectDeadline(
      tcp,
      new RegExp(
        `${prefix}timed out after 1 s waiting for TCP connect to the gateway 127\\.0\\.0\\.1:${stalled.port}\\n`,
      ),
    );
    expectDeadline(
      tls,
      new RegExp(
        `${prefix}timed out after 1 s waiting for TLS handshake with the gateway 127\\.0\\.0\\.1:${silent.proxyTls.port}\\n`,
      ),
    );
    expectDeadline(
      answer,
      new RegExp(
        `${prefix}the gateway 127\\.0\\.0\\.1:${silent.proxyAnswer.port} did not answer CONNECT ws\\.dev\\.svc\\.cluster\\.local:22 within 1 s\\n`,
      ),
    );
    expect(tls.ended - silent.proxyTls.contact()!).toBeLessThan(2 * TIMEOUT_MS);
    expect(answer.ended - silent.proxyAnswer.contact()!).toBeLessThan(2 * TIMEOUT_MS);
  });
});
