/**
 * A child process run without blocking this one: the tests' gateway models and stand-ins live in
 * the test process, so its event loop must keep running while the client talks to them
 * (spawnSync would stall them and the client would time out).
 */
import { spawn, type ChildProcess } from "node:child_process";

export interface ProcessResult<Out = string> {
  readonly status: number | null;
  readonly stdout: Out;
  readonly stderr: string;
}

export interface ProcessOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Written to stdin, which is then closed (closed at once when absent). */
  readonly input?: Buffer | string;
  /** Called with the child once spawned (bench:scale polls its process tree). */
  readonly onSpawn?: (child: ChildProcess) => void;
}

/** Runs `command` to its end; stdout as bytes (for binary or exact output), stderr as text. */
export function runBytes(
  command: string,
  args: string[],
  options: ProcessOptions = {},
): Promise<ProcessResult<Buffer>> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    options.onSpawn?.(child);
    child.on("error", reject);
    child.on("close", (status) =>
      resolve({ status, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString() }),
    );
    child.stdin.on("error", () => undefined); // a command may end without reading its input (EPIPE)
    child.stdin.end(options.input ?? "");
  });
}

/** Runs `command` to its end, with stdout as text. */
export async function run(command: string, args: string[], options: ProcessOptions = {}): Promise<ProcessResult> {
  const result = await runBytes(command, args, options);
  return { ...result, stdout: result.stdout.toString() };
}

/** Runs `command` to its end: its stdout, or an error with its status and stderr when it fails. */
export async function must(command: string, args: string[]): Promise<string> {
  const result = await run(command, args);
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(" ")} exited ${result.status}: ${result.stderr.trim()}`);
  return result.stdout;
}

/** Makes an unencrypted ed25519 key pair at `file` (and `file`.pub), as a user's ssh key. */
export async function sshKeyPair(file: string, comment: string): Promise<void> {
  await must("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", file]);
}
