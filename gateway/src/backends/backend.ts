import type { Target } from "../target.js";

/** A target resolved to one concrete container. */
export interface ResolvedTarget {
  /** Docker container id, or the container name inside the pod. */
  container: string;
  namespace?: string;
  pod?: string;
  /** Human-readable, for logs and audit. */
  label: string;
}

export interface ExecHandlers {
  onOutput(chunk: Buffer): void;
  /** Called exactly once, when the exec stream ends. exitCode is null when the backend did not report one. */
  onEnd(result: { exitCode: number | null; error?: string }): void;
}

export interface ExecControl {
  write(data: Buffer): void;
  /** Resolves once the backend applied the size (never rejects: a failed resize is not fatal). */
  resize(cols: number, rows: number): Promise<void>;
  /** Stop reading the exec's output (backpressure), and start again. */
  pause(): void;
  resume(): void;
  /** Drop the stream. This does NOT end the process in the container: that is what reaping is for. */
  close(): void;
}

export interface Backend {
  readonly name: "kubernetes" | "docker";
  /** Throws NotFoundError when the target does not exist or is not running. */
  resolve(target: Target): Promise<ResolvedTarget>;
  /** Starts `command` with a TTY of the given size and stdin attached. */
  exec(target: ResolvedTarget, command: string[], size: { cols: number; rows: number }, handlers: ExecHandlers): Promise<ExecControl>;
  /** Runs a short command without a TTY and returns its exit code (null if unknown). */
  run(target: ResolvedTarget, command: string[]): Promise<number | null>;
  /** Throws when the backend cannot be reached (readiness). */
  check(): Promise<void>;
}

export class NotFoundError extends Error {}
