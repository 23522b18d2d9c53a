// The watch over a running session: what ends it from outside its data (the deadline, the token's
// expiry or maxSessionSeconds; a grant the authorizer revoked; a peer that stopped answering
// WebSocket pings; idleness), and Entry's application PINGs. watch() returns what stops its timers
// (the session calls it as it ends).
import type { WebSocket } from "ws";
import type { CloseCode } from "../protocol.js";
import type { Grant } from "./admission.js";
import type { SessionContext, SessionRef } from "./context.js";
import type { Pump } from "./pump.js";

/** The session as the watch needs it. */
export interface WatchedSession extends SessionRef {
  readonly ws: WebSocket;
  readonly pump: Pump;
  readonly startedAt: Date;
  /** Sends Entry's PING. */
  ping(): void;
  end(closeCode: CloseCode, reason: string): Promise<void>;
}

export function watch(ctx: SessionContext, session: WatchedSession, grant: Grant, signal: AbortSignal): () => void {
  const { pingIntervalMs, wsPingIntervalMs, idleTimeoutMs, maxSessionSeconds, reauthorizeIntervalMs } = ctx.config;
  const { ws, pump } = session;
  const timers: NodeJS.Timeout[] = [];
  const stop = () => {
    for (const timer of timers) clearInterval(timer);
  };
  // An absolute end: the token's expiry, or maxSessionSeconds after the start, whichever comes first.
  const limits = [
    grant.expiresAt,
    maxSessionSeconds > 0 ? session.startedAt.getTime() + maxSessionSeconds * 1000 : undefined,
  ].filter((t): t is number => t !== undefined);
  if (limits.length > 0) {
    const deadline = Math.min(...limits);
    const why =
      deadline === grant.expiresAt
        ? "the access token expired"
        : `the session reached its limit of ${maxSessionSeconds} s`;
    // setTimeout takes at most 2^31-1 ms; a later deadline is checked again when that fires.
    const arm = (): void => {
      const left = deadline - Date.now();
      if (left <= 0) return void session.end("expired", why);
      timers.push(setTimeout(arm, Math.min(left, 2 ** 31 - 1)));
    };
    arm();
    if (signal.aborted) return stop; // past its deadline already: nothing more to watch
  }
  const { recheck } = grant;
  if (recheck && reauthorizeIntervalMs > 0) {
    let rechecking = false;
    // Asks the authorizer whether the grant still holds; ends the session when it no longer does. An
    // authorizer that cannot answer leaves the session running until the next time (logged): a
    // webhook's bad minute must not end every session. One question at a time.
    const reauthorize = async (): Promise<void> => {
      if (rechecking || signal.aborted) return;
      rechecking = true;
      try {
        const answer = await recheck();
        if (signal.aborted) return;
        if (answer.outcome === "revoked") {
          ctx.metrics.denials.inc({ reason: "revoked" });
          await session.end(answer.closeCode, answer.reason);
        } else if (answer.outcome === "unavailable") {
          ctx.logger.log("warn", "could not authorize the session again; it goes on until the next check", {
            session: session.id,
            target: session.label,
            error: answer.detail,
          });
        }
      } finally {
        rechecking = false;
      }
    };
    timers.push(setInterval(() => void reauthorize(), reauthorizeIntervalMs));
  }
  if (pingIntervalMs > 0) timers.push(setInterval(() => session.ping(), pingIntervalMs));
  if (wsPingIntervalMs > 0) {
    timers.push(
      setInterval(() => {
        // While input backpressure pauses the socket, its pongs are not read either: no verdict then.
        if (pump.readingPaused) return;
        if (!pump.peerAlive) {
          ws.terminate(); // dead peer: no pong since the last ping
          return;
        }
        pump.peerAlive = false;
        ws.ping();
      }, wsPingIntervalMs),
    );
  }
  if (idleTimeoutMs > 0) {
    const check = Math.max(50, Math.min(idleTimeoutMs / 4, 5000));
    timers.push(
      setInterval(() => {
        if (Date.now() - pump.lastActivity >= idleTimeoutMs)
          void session.end("idle-timeout", `idle for ${Math.round(idleTimeoutMs / 1000)} s`);
      }, check),
    );
  }
  return stop;
}
