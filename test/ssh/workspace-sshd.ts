/**
 * The ssh-workspace image's sshd on loopback, for the suites that run it (e2e.test.ts,
 * workspace-sshd.test.ts, test/e2e/scripts.test.ts): Debian's real sshd started by the image's own
 * entrypoint.sh and sshd_config, a user key it lets in, the tools those suites need, and the child
 * processes they start (stopped by PID afterwards).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../testkit/harness/helm";

export const isRoot = process.getuid?.() === 0;
export const inCi = process.env.CI === "true";
/**
 * nss_wrapper: its hosts file gives clients a name for the gateway; as root it also gives an
 * unprivileged sshd a passwd entry without touching /etc/passwd (as OpenShift-style arbitrary uids
 * get one).
 */
export const NSS_WRAPPER = "/usr/lib/x86_64-linux-gnu/libnss_wrapper.so";
export const imageSshdConfig = path.join(repoRoot, "images/ssh-workspace/sshd_config");
export const imageEntrypoint = path.join(repoRoot, "images/ssh-workspace/entrypoint.sh");

const onPath = (tool: string) => spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0;

/**
 * Which of `tools` (commands on PATH, or absolute files) this machine lacks. Under CI=true a suite
 * with a missing tool fails (a test named `title` asserts there is none); elsewhere the parts that
 * need them are skipped and `suite` names the missing ones on stderr.
 */
export function missingTools(suite: string, tools: string[], title = "the tools this suite needs (CI)"): string[] {
  const missing = tools.filter((tool) => (tool.startsWith("/") ? !existsSync(tool) : !onPath(tool)));
  if (missing.length > 0 && !inCi) process.stderr.write(`${suite}: skipped, missing: ${missing.join(", ")}\n`);
  describe.runIf(inCi)(title, () => {
    it("are all installed", () => {
      expect(missing).toEqual([]);
    });
  });
  return missing;
}

/** A command run to its end, blocking (for tools that need nothing served by this process). */
export function runSync(
  command: string,
  args: string[],
  options: { input?: Buffer | string; env?: NodeJS.ProcessEnv } = {},
) {
  const result = spawnSync(command, args, {
    input: options.input,
    env: options.env ?? process.env,
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr?.toString() ?? "" };
}

/** The child processes a suite starts, each stopped by its PID in `stop`. */
export class Children {
  private readonly children: ChildProcess[] = [];
  private stopping = false;

  /** Starts `command`; its exit before `stop` is reported on stderr with the end of its own. */
  start(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"], env });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    child.on("exit", (code) => {
      if (code && code !== 0 && !this.stopping) process.stderr.write(`${name} exited ${code}: ${stderr}\n`);
    });
    this.children.push(child);
    return child;
  }

  stop(): void {
    this.stopping = true;
    for (const child of this.children) if (child.exitCode === null && child.pid) process.kill(child.pid, "SIGTERM");
  }
}

/** A user key (`id_ed25519` in `dir`, no passphrase) and `dir/authorized_keys` holding it; the key's path. */
export function userKey(dir: string): string {
  const key = path.join(dir, "id_ed25519");
  expect(runSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "e2e", "-f", key]).status).toBe(0);
  writeFileSync(path.join(dir, "authorized_keys"), readFileSync(`${key}.pub`), { mode: 0o644 });
  return key;
}

/** The image's sshd_config, listening on 127.0.0.1 only, written to `file`. */
export function loopbackSshdConfig(file: string, mode?: number): string {
  const text = readFileSync(imageSshdConfig, "utf8").replace(/^ListenAddress .*$/m, "ListenAddress 127.0.0.1");
  writeFileSync(file, text, mode === undefined ? undefined : { mode });
  return file;
}

export interface EntrypointSshd {
  /** Its port on 127.0.0.1. */
  readonly port: number;
  /** Holds `authorized_keys` (userKey), the sshd_config (`config`) and the PID file (`pidFile`). */
  readonly dir: string;
  readonly config: string;
  /** Where the entrypoint makes (or finds) the host key. */
  readonly hostKeyDir: string;
  readonly pidFile: string;
  /** More sshd -o options. */
  readonly options?: string[];
  /** More environment for the entrypoint (ENTRYWAY_TCP_FORWARDING). */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * The command line and environment that start sshd through the image's entrypoint as this user:
 * a root run (the test's user) is let in and allowed, which the image's non-root sshd never needs.
 */
export function entrypointSshd(sshd: EntrypointSshd): { command: "sh"; args: string[]; env: NodeJS.ProcessEnv } {
  if (isRoot && !existsSync("/run/sshd")) {
    // sshd's privilege separation directory (root only), which the openssh-server package's
    // service makes at boot. It stays: another sshd (another run of a suite) may be using it.
    mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  }
  return {
    command: "sh",
    args: [
      imageEntrypoint,
      "-o",
      `AuthorizedKeysFile=${path.join(sshd.dir, "authorized_keys")}`,
      "-o",
      `PidFile=${sshd.pidFile}`,
      ...(sshd.options ?? []),
      // The image runs sshd as the workspace user; a root test run must be allowed to log in.
      ...(isRoot ? ["-o", "PermitRootLogin=prohibit-password"] : []),
    ],
    env: {
      ...process.env,
      ENTRYWAY_SSHD_PORT: String(sshd.port),
      ENTRYWAY_SSHD_CONFIG: sshd.config,
      ENTRYWAY_HOST_KEY_DIR: sshd.hostKeyDir,
      ...sshd.env,
      ...(isRoot ? { ENTRYWAY_ALLOW_ROOT: "1" } : {}),
    },
  };
}
