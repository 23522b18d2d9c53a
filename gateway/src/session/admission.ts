// Admission, a session's first phase: the access token (from the upgrade request, or else a first
// AUTH message), the authorizer's decision, and a slot of the limits. Nothing is created before it
// granted the session; the grant is what the later phases go on.
import type { DebugAccess, Recheck } from "../auth/authorizer.js";
import { RequestType, type Request } from "../protocol.js";
import { Refusal, type SessionContext, type SessionRef, type SessionRequest } from "./context.js";

/** What the authorizer granted. */
export interface Grant {
  user: string;
  /** When the token stops being valid (ms since the epoch), if the authorizer knows. */
  expiresAt: number | undefined;
  /** Asks the authorizer again whether the grant still holds (watch.ts). */
  recheck: (() => Promise<Recheck>) | undefined;
  /** Asks whether the user may start a debug container in a pod (opening.ts). */
  mayDebug: DebugAccess | undefined;
}

export class Admission {
  /** The user the authorizer named, once it decided (also when it denied: the refusal's audit record names them). */
  user: string | undefined;
  /** Resolves once the authorizer decided, or the session ended before it could. */
  readonly settled: Promise<void>;
  private settle!: () => void;
  /** Whether the session holds a slot of the limits (release gives it back). */
  private admitted = false;
  /** Set while a first AUTH message is awaited: every message goes here then (offer). */
  private pendingAuth: ((message: Request | null) => void) | undefined;

  constructor(
    private readonly ctx: SessionContext,
    private readonly request: SessionRequest,
    private readonly session: SessionRef,
    private readonly signal: AbortSignal,
  ) {
    this.settled = new Promise((resolve) => (this.settle = resolve));
  }

  /** The session ended (its signal aborted): the decision is settled, and an AUTH message no longer awaited. */
  end(): void {
    this.settle();
    this.pendingAuth?.(null);
  }

  /**
   * Admits the session or throws: a Refusal (no token, denied, over a limit), or the signal's
   * reason when the session ended meanwhile.
   */
  async admit(): Promise<Grant> {
    const { ctx, request, signal } = this;
    const token = request.token ?? (await this.awaitAuthMessage());
    signal.throwIfAborted();
    if (!token)
      throw new Refusal(
        "unauthenticated",
        "no access token: send it in the access-token header, as a bearer token, a subprotocol or a first AUTH message",
      );
    const authorized = ctx.metrics.setupSeconds.startTimer({ step: "authorize" });
    const decision = await ctx.authorizer.authorize({
      token,
      target: request.target,
      clientAddress: request.clientAddress,
    });
    authorized();
    this.settle();
    signal.throwIfAborted();
    this.user = decision.user;
    if (!decision.allow) {
      ctx.metrics.denials.inc({ reason: "denied" });
      if (decision.detail)
        ctx.logger.log("warn", "authorizer failed", {
          session: this.session.id,
          target: this.session.label,
          error: decision.detail,
        });
      throw new Refusal("denied", `permission denied: ${decision.reason}`);
    }
    const refusal = ctx.limits.admit(decision.user);
    if (refusal) {
      ctx.metrics.denials.inc({ reason: "limit" });
      throw new Refusal("limit", refusal);
    }
    this.admitted = true;
    return {
      user: decision.user,
      expiresAt: decision.expiresAt,
      recheck: decision.recheck,
      mayDebug: decision.mayDebug,
    };
  }

  /** Takes a client's message while the AUTH message is awaited; false: the message is not admission's. */
  offer(message: Request): boolean {
    if (!this.pendingAuth) return false;
    this.pendingAuth(message);
    return true;
  }

  /** Gives the limits' slot back, if the session holds one. */
  release(): void {
    if (this.admitted && this.user) this.ctx.limits.release(this.user);
  }

  /** The token of a first AUTH message; null when another message came first, none in time, or the session ended. */
  private awaitAuthMessage(): Promise<string | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pendingAuth = undefined;
        resolve(null);
      }, this.ctx.config.authTimeoutMs);
      this.pendingAuth = (message) => {
        clearTimeout(timer);
        this.pendingAuth = undefined;
        resolve(message?.msgType === RequestType.AUTH ? message.content.toString("utf8").trim() || null : null);
      };
    });
  }
}
