// Session limits per replica and per user (a session takes a slot once authorized and gives it back
// when it ends), and the limits before authentication.
import { limitKey } from "./net.js";
export class SessionLimits {
  private total = 0;
  private readonly perUser = new Map<string, number>();

  constructor(
    private readonly maxSessions: number,
    private readonly maxPerUser: number,
  ) {}

  /** Takes a slot, or returns why not. */
  admit(user: string): string | null {
    const mine = this.perUser.get(user) ?? 0;
    if (this.total >= this.maxSessions) return `this gateway replica is at its limit of ${this.maxSessions} sessions`;
    if (mine >= this.maxPerUser) return `${user} already has ${mine} sessions (limit ${this.maxPerUser})`;
    this.total++;
    this.perUser.set(user, mine + 1);
    return null;
  }

  release(user: string): void {
    this.total--;
    const left = (this.perUser.get(user) ?? 1) - 1;
    if (left > 0) this.perUser.set(user, left);
    else this.perUser.delete(user);
  }
}

/**
 * Limits before authentication, per replica: connections not yet authorized (in all, and per client
 * address), and upgrades per client address per minute (each can cost one authorizer call). An
 * upgrade over a limit is answered with an HTTP status before any WebSocket exists. An IPv6
 * client is counted by its /64 (limitKey).
 */
export class PreAuthLimits {
  private pending = 0;
  private readonly pendingBySource = new Map<string, number>();
  /** Token buckets: tokens left and when they were counted. */
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly settings: {
      maxPendingConnections: number;
      maxPendingPerSource: number;
      authAttemptsPerMinute: number;
    },
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes a pending slot and an attempt for the client at `address`, or says why not. */
  admit(address: string): { status: 429 | 503; reason: string } | null {
    const { maxPendingConnections, maxPendingPerSource, authAttemptsPerMinute } = this.settings;
    const source = limitKey(address);
    if (this.pending >= maxPendingConnections)
      return {
        status: 503,
        reason: `${this.pending} connections are waiting for authorization (limit ${maxPendingConnections})`,
      };
    const mine = this.pendingBySource.get(source) ?? 0;
    if (mine >= maxPendingPerSource)
      return {
        status: 429,
        reason: `${mine} connections from this address are waiting for authorization (limit ${maxPendingPerSource})`,
      };
    if (!this.takeAttempt(source, authAttemptsPerMinute))
      return { status: 429, reason: `more than ${authAttemptsPerMinute} attempts a minute from this address` };
    this.pending++;
    this.pendingBySource.set(source, mine + 1);
    return null;
  }

  /** Gives the pending slot back (authorized, refused, or gone). */
  release(address: string): void {
    const source = limitKey(address);
    this.pending--;
    const left = (this.pendingBySource.get(source) ?? 1) - 1;
    if (left > 0) this.pendingBySource.set(source, left);
    else this.pendingBySource.delete(source);
  }

  private takeAttempt(source: string, perMinute: number): boolean {
    const now = this.now();
    const refill = (bucket: { tokens: number; at: number }) =>
      Math.min(perMinute, bucket.tokens + ((now - bucket.at) * perMinute) / 60_000);
    // Full buckets carry no information: forget them, so a flood from many addresses leaves nothing behind.
    if (this.buckets.size > 10_000)
      for (const [key, bucket] of this.buckets) if (refill(bucket) >= perMinute) this.buckets.delete(key);
    const bucket = this.buckets.get(source);
    const tokens = bucket ? refill(bucket) : perMinute;
    if (tokens < 1) return false;
    this.buckets.set(source, { tokens: tokens - 1, at: now });
    return true;
  }
}
