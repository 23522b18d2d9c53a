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

/** Which output stream a chunk came from. With a TTY there is only stdout. */
export type OutputStream = "stdout" | "stderr";

export interface ExecHandlers {
  /** `chunk` is only valid during the call: a backend may read every stream into one reused buffer. */
  onOutput(chunk: Buffer, stream: OutputStream): void;
  /** Called exactly once, when the exec stream ends. exitCode is null when the backend did not report one. */
  onEnd(result: { exitCode: number | null; error?: string }): void;
}

export interface ExecControl {
  /** `written` is called once the backend took the data (input backpressure). */
  write(data: Buffer, written?: () => void): void;
  /** Ends the command's stdin (pipe mode); the output keeps flowing until the command ends. */
  closeStdin(): void;
  /** Resolves once the backend applied the size (never rejects: a failed resize is not fatal). */
  resize(cols: number, rows: number): Promise<void>;
  /** Stop reading the exec's output (backpressure), and start again. */
  pause(): void;
  resume(): void;
  /** Drop the stream. This does NOT end the process in the container: that is what reaping is for. */
  close(): void;
}

/** A target a listing names: a running pod (with its containers' names) or a running Docker container. */
export interface ListedTarget {
  target: Target;
  containers: string[];
}

export interface Backend {
  readonly name: "kubernetes" | "docker";
  /** Throws NotFoundError when the target does not exist or is not running. */
  resolve(target: Target): Promise<ResolvedTarget>;
  /**
   * Starts `command` with stdin attached: on a TTY of the given size, or, with `tty: false` (pipe
   * mode), on plain pipes with stdout and stderr apart.
   */
  exec(
    target: ResolvedTarget,
    command: string[],
    size: { cols: number; rows: number },
    handlers: ExecHandlers,
    options?: { tty: boolean },
  ): Promise<ExecControl>;
  /**
   * Runs a short command without a TTY and returns its exit code (null if unknown). When `signal`
   * aborts, the exec stream is dropped and the promise rejects (the command itself may go on).
   */
  run(target: ResolvedTarget, command: string[], options?: { signal?: AbortSignal }): Promise<number | null>;
  /**
   * The running pods of `namespace` (every namespace without one), or the running containers
   * (Docker; no namespaces): candidates only, which the authorizer filters (targets.ts).
   */
  list?(scope: { namespace?: string }): Promise<ListedTarget[]>;
  /** Throws when the backend cannot be reached (readiness). */
  check(): Promise<void>;
  /** Debug containers (Kubernetes only); see debug.ts. */
  readonly debugContainers?: DebugContainers;
}

export interface DebugContainers {
  /**
   * Adds an ephemeral container running `image` to the target's pod, in the target container's
   * process namespace, whose main process ends after `lifetimeSeconds`. Returns it as a target.
   */
  create(target: ResolvedTarget, image: string, lifetimeSeconds: number): Promise<ResolvedTarget>;
  /**
   * Resolves once the container runs, or as soon as `signal` aborts (nobody waits any more); throws
   * DebugContainerError when it ended or did not start within `timeoutMs`.
   */
  waitUntilRunning(debugTarget: ResolvedTarget, timeoutMs: number, signal: AbortSignal): Promise<void>;
}

/** A debug container that will not run; the message is for the client (no API response bodies). */
export class DebugContainerError extends Error {}

export class NotFoundError extends Error {}
/** The target exists, but the gateway never enters it (its own container). */
export class DeniedError extends Error {}
