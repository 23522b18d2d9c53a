// What every phase of a session is given (the gateway's parts, the client's request), and the two
// ways a phase stops early: the session ended (its signal aborted, with SessionEnded as the reason),
// or the phase refuses the session on purpose (Refusal: a close code and a reason for the client).
import type { AuditSink } from "../audit.js";
import type { Authorizer } from "../auth/authorizer.js";
import type { Backend } from "../backends/backend.js";
import type { GatewayConfig } from "../config.js";
import type { DebugRequest } from "../debug.js";
import type { SessionLimits } from "../limits.js";
import type { Logger } from "../log.js";
import type { Metrics } from "../metrics.js";
import type { CloseCode } from "../protocol.js";
import type { RecordingSink } from "../recordings/sink.js";
import type { Target } from "../target.js";

export interface SessionContext {
  config: GatewayConfig;
  backend: Backend;
  authorizer: Authorizer;
  metrics: Metrics;
  audit: AuditSink;
  logger: Logger;
  limits: SessionLimits;
  /** Where sessions are recorded; null: they are not. */
  recordings: RecordingSink | null;
}

export interface SessionRequest {
  target: Target;
  /** Null when the client will send it as its first message (AUTH). */
  token: string | null;
  command: string[];
  clientAddress: string;
  /** False for pipe mode (query tty=false): no TTY, stdout and stderr apart, binary-safe, and an end of stdin (EOF). */
  tty: boolean;
  /** Enter a debug container (query debug, already checked against the allow-list); null: the target itself. */
  debug: DebugRequest | null;
}

/** The session a phase works for, as its logs and audit records name it. */
export interface SessionRef {
  readonly id: string;
  /** The target as the client named it (target.ts). */
  readonly label: string;
}

export interface Size {
  cols: number;
  rows: number;
}

/**
 * The reason the session's AbortSignal carries: the session ended, with this close code. A phase
 * that finds its signal aborted after an await throws it (signal.throwIfAborted()); the session
 * takes it as "nothing more to do", not as an error.
 */
export class SessionEnded extends Error {
  constructor(readonly closeCode: CloseCode) {
    super(`the session ended (${closeCode})`);
    this.name = "AbortError";
  }
}

/** Why the session behind `signal` ended (it did). */
export function endedWith(signal: AbortSignal): CloseCode {
  return signal.reason instanceof SessionEnded ? signal.reason.closeCode : "client-gone";
}

/** A phase refuses the session on purpose: it ends with this close code, the message as the reason. */
export class Refusal extends Error {
  constructor(
    readonly closeCode: CloseCode,
    reason: string,
  ) {
    super(reason);
  }
}
