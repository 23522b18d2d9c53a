/**
 * A child process run without blocking this one: the tests' gateway models and stand-ins live in
 * the test process, so its event loop must keep running while the client talks to them
 * (spawnSync would stall them and the client would time out).
 */
import { spawn } from "node:child_process";

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
}

/** Runs `command` to its end; stdout as bytes (for binary or exact output), stderr as text. */
export function runBytes(command: string, args: string[], options: ProcessOptions = {}): Promise<ProcessResult<Buffer>> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString() }));
    child.stdin.on("error", () => undefined); // a command may end without reading its input (EPIPE)
    child.stdin.end(options.input ?? "");
  });
}

/** Runs `command` to its end, with stdout as text. */
export async function run(command: string, args: string[], options: ProcessOptions = {}): Promise<ProcessResult> {
  const result = await runBytes(command, args, options);
  return { ...result, stdout: result.stdout.toString() };
}
