// Running the real `entryway enter` process: spawned with pipes, or inside a private tmux server
// (its own socket) where it gets a real terminal that the test types into, resizes and reads.
import { execFile, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import net from "node:net";
import tls from "node:tls";
import { expect } from "vitest";
import { selfSignedCertificate } from "./tls.js";

const run = promisify(execFile);
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const MAIN = join(REPO, "gateway/src/cli/main.ts");

/** The command line that runs the CLI from source (tsx), with this Node. */
export function cliCommand(...args: string[]): string[] {
  return [process.execPath, "--import", "tsx", MAIN, ...args];
}

/**
 * Puts an `entryway` command into the folder `bin` (made when missing) that runs this checkout's
 * CLI after `prefix` (e.g. `nsenter --net=<netns> -- `), for a PATH that tools such as ssh's
 * ProxyCommand search.
 */
export function writeCliShim(bin: string, prefix = ""): void {
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "entryway"), `#!/bin/sh\nexec ${prefix}${cliCommand().join(" ")} "$@"\n`, { mode: 0o755 });
}

/** An environment without the caller's ENTRYWAY_* settings and with an empty config home. */
export function cleanEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith("ENTRYWAY_")) env[key] = value;
  // A generous connect timeout: CI runs every suite at once on two cores.
  return { ...env, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), ENTRYWAY_CONNECT_TIMEOUT: "60", ...extra };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout as bytes. */
  output: Buffer;
}

export function runCli(
  args: string[],
  options: { env: NodeJS.ProcessEnv; input?: string | Buffer; timeoutMs?: number },
): Promise<CliResult> {
  const [command, ...rest] = cliCommand(...args);
  const child = spawn(command!, rest, { cwd: REPO, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
  const chunks: Buffer[] = [];
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    chunks.push(d);
    stdout += d.toString("utf8");
  });
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  child.stdin.on("error", () => {}); // a CLI that ends early (an error) reads no more input
  child.stdin.end(options.input ?? "");
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(
          `CLI did not end in time; stdout ${JSON.stringify(stdout.slice(-400))} stderr ${JSON.stringify(stderr)}`,
        ),
      );
    }, options.timeoutMs ?? 90_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      const result = () => resolve({ code, stdout, stderr, output: Buffer.concat(chunks) });
      child.stdout.once("end", result);
      if (child.stdout.readableEnded) result();
    });
  });
}

/** Runs `entryway <command> --help`, which must exit 0 and print every one of `texts`; returns what it printed. */
export async function expectHelp(command: string[], env: NodeJS.ProcessEnv, texts: string[]): Promise<string> {
  const help = await runCli([...command, "--help"], { env });
  expect(help.code).toBe(0);
  for (const text of texts) expect(help.stdout).toContain(text);
  return help.stdout;
}

export function tmuxAvailable(): boolean {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export interface Tmux {
  /** Runs a tmux command against this private server. */
  tmux(...args: string[]): Promise<string>;
  type(text: string): Promise<void>;
  enter(): Promise<void>;
  screen(): Promise<string>;
  /** Waits until the visible screen matches; returns the match. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  resize(cols: number, rows: number): Promise<void>;
  /** PID of the process the pane's shell is running in the foreground (the CLI). */
  foregroundPid(): Promise<number>;
  /**
   * Types `keys` (as bytes) the moment the pane prints `trigger`, and resolves once they are sent.
   * A control-mode client (tmux -C) reports the pane's output as it comes, and takes the keys on the
   * same connection: no polling of the screen, no new tmux process between seeing and typing.
   */
  typeOnOutput(trigger: string, keys: string): Promise<void>;
  stop(): Promise<void>;
}

/** A tmux server of our own with one detached 100x30 window running a plain POSIX shell (prompt "local$ "). */
export async function startTmux(env: NodeJS.ProcessEnv, cols = 100, rows = 30): Promise<Tmux> {
  const dir = mkdtempSync(join(tmpdir(), "entryway-tmux-"));
  const socket = join(dir, "tmux.sock");
  const tmux = async (...args: string[]) =>
    (await run("tmux", ["-S", socket, "-f", "/dev/null", ...args], { env, cwd: REPO })).stdout;
  await tmux(
    "new-session",
    "-d",
    "-s",
    "cli",
    "-x",
    String(cols),
    "-y",
    String(rows),
    "-c",
    REPO,
    "env PS1='local$ ' /bin/sh",
  );
  await tmux("set-option", "-g", "status", "off");
  // With no client attached, tmux sizes the window by default-size (80x24 unless set) whenever it
  // resizes it again: the window's size is kept only when that is the size asked for.
  await tmux("set-option", "-g", "default-size", `${cols}x${rows}`);
  await tmux("resize-window", "-t", "cli", "-x", String(cols), "-y", String(rows));
  const screen = () => tmux("capture-pane", "-p", "-t", "cli");
  const self: Tmux = {
    tmux,
    type: async (text) => void (await tmux("send-keys", "-t", "cli", "-l", text)),
    enter: async () => void (await tmux("send-keys", "-t", "cli", "Enter")),
    screen,
    async waitFor(pattern, timeoutMs = 45_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = await screen();
        const match = text.match(pattern);
        if (match) return match;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern} on the tmux screen:\n${text}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    resize: async (c, r) => void (await tmux("resize-window", "-t", "cli", "-x", String(c), "-y", String(r))),
    async foregroundPid() {
      const shell = Number((await tmux("display-message", "-p", "-t", "cli", "#{pane_pid}")).trim());
      const children = readFileSync(`/proc/${shell}/task/${shell}/children`, "utf8")
        .trim()
        .split(/\s+/)
        .filter(Boolean);
      if (children.length !== 1)
        throw new Error(
          `expected one foreground process under the pane's shell, found ${children.join(",") || "none"}`,
        );
      return Number(children[0]);
    },
    typeOnOutput(trigger, keys) {
      // ignore-size: this client must not change the window's size.
      const control = spawn(
        "tmux",
        ["-S", socket, "-f", "/dev/null", "-C", "attach-session", "-t", "cli", "-f", "ignore-size"],
        { env, stdio: ["pipe", "pipe", "ignore"] },
      );
      let lines = "";
      let seen = "";
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          control.kill();
          reject(
            new Error(
              `timed out waiting for ${JSON.stringify(trigger)}; pane output: ${JSON.stringify(seen.slice(-300))}`,
            ),
          );
        }, 45_000);
        control.on("error", reject);
        control.on("exit", (code) =>
          reject(
            new Error(
              `tmux control client exited (${code}) before ${JSON.stringify(trigger)} was seen; pane output: ${JSON.stringify(seen.slice(-300))}`,
            ),
          ),
        );
        control.stdout.on("data", (data: Buffer) => {
          lines += data.toString("latin1");
          let newline;
          while ((newline = lines.indexOf("\n")) >= 0) {
            const line = lines.slice(0, newline);
            lines = lines.slice(newline + 1);
            // "%output %<pane> <data>": bytes below 32 and the backslash as octal escapes (tmux(1), CONTROL MODE).
            const output = /^%output %\d+ (.*)$/.exec(line);
            if (!output) continue;
            seen += output[1]!.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
            if (!seen.includes(trigger)) continue;
            const hex = [...Buffer.from(keys, "utf8")].map((byte) => byte.toString(16).padStart(2, "0")).join(" ");
            clearTimeout(timer);
            control.removeAllListeners("exit");
            control.stdout.removeAllListeners("data");
            control.stdin.end(`send-keys -t cli -H ${hex}\n`, () => resolve());
            control.stdout.resume();
            return;
          }
        });
      });
    },
    async stop() {
      await tmux("kill-server").catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return self;
}

/** A TLS-terminating TCP proxy in front of the gateway (an ingress, in short), whose connections can be cut. */
export async function startTlsProxy(
  targetPort: number,
  certDir: string,
): Promise<{ port: number; cut(): void; freeze(): void; stop(): Promise<void> }> {
  const { keyPath, certPath } = selfSignedCertificate(certDir);
  const sockets = new Set<net.Socket>();
  const pairs: [net.Socket, net.Socket][] = [];
  const server = tls.createServer({ key: readFileSync(keyPath), cert: readFileSync(certPath) }, (client) => {
    const upstream = net.connect(targetPort, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
    pairs.push([client, upstream]);
  });
  server.on("tlsClientError", () => {});
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const cut = () => {
    for (const s of sockets) s.destroy();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    cut,
    /** Stops forwarding both ways but keeps every connection open: a peer that went silent. */
    freeze() {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    stop: () => {
      cut();
      return new Promise((r) => server.close(() => r()));
    },
  };
}
