import { decodeJwt } from "jose";
import type { Target } from "../target.js";

export interface AuthRequest {
  token: string;
  target: Target;
  clientAddress: string;
}

/**
 * `expiresAt` (ms since the epoch): when the token stops being valid; the session ends then.
 * `detail`: why an authorizer could not decide (a backend's error text): logged, never sent to the client.
 * `recheck`: asks again, for a running session (every reauthorizeIntervalMs), so a grant that ends
 * (a token deleted, a RoleBinding removed, the console's no) ends the session too.
 */
export type Decision =
  | { allow: true; user: string; expiresAt?: number; mayDebug?: DebugAccess; recheck?: () => Promise<Recheck> }
  | { allow: false; reason: string; user?: string; detail?: string };

/**
 * A running session's grant asked again: still there; gone (the session ends with `closeCode`:
 * `expired` when the token no longer authenticates, `denied` when the user may no longer enter);
 * or the authorizer could not say (the session goes on and is asked again next time). Never thrown.
 */
export type Recheck =
  | { outcome: "allowed" }
  | { outcome: "revoked"; closeCode: "expired" | "denied"; reason: string }
  | { outcome: "unavailable"; detail: string };

/** Wraps a recheck so that a failure is "unavailable", never a throw. */
export function recheckFailSoft(recheck: () => Promise<Recheck>): () => Promise<Recheck> {
  return async () => {
    try {
      return await recheck();
    } catch (error) {
      return { outcome: "unavailable", detail: error instanceof Error ? error.message : String(error) };
    }
  };
}

/**
 * When a JWT says it expires (its exp claim, in ms since the epoch), read without checking the
 * signature: only for a token an authority (TokenReview, the webhook) has just accepted, and only to
 * end a session sooner. Undefined for a token that is not a JWT or has no exp.
 */
export function jwtExpiry(token: string): number | undefined {
  try {
    const { exp } = decodeJwt(token);
    return typeof exp === "number" && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The second question for a debug container, asked of the user the first decision allowed, once the
 * pod is known and before anything is created. Never throws: errors deny. Authorizers without it
 * allow no debug containers.
 */
export type DebugAccess = (pod: {
  namespace: string;
  pod: string;
}) => Promise<{ allow: true } | { allow: false; reason: string; detail?: string }>;

/** Who holds a token and the groups the authorizer knows them by (reviewer access to recordings). */
export type Identity =
  { known: true; user: string; groups: string[] } | { known: false; reason: string; detail?: string };

export interface IdentifyRequest {
  token: string;
  clientAddress: string;
}

/** Decides, before any exec exists, whether the token's owner may enter the target. Never throws: errors deny. */
export interface Authorizer {
  authorize(request: AuthRequest): Promise<Decision>;
  /** Who holds the token and their groups; never throws (errors are an unknown identity). Without it nobody is a reviewer. */
  identify?(request: IdentifyRequest): Promise<Identity>;
}

/** `call`, with any failure answered by `closed` with why: the authorizer unavailable, and the error's message. */
function closedOnFailure<Request, Answer>(
  name: string,
  call: (request: Request) => Promise<Answer>,
  closed: (failure: { reason: string; detail: string }) => Answer,
): (request: Request) => Promise<Answer> {
  return async (request) => {
    try {
      return await call(request);
    } catch (error) {
      return closed({
        reason: `${name} authorizer unavailable`,
        detail: error instanceof Error ? error.message : String(error),
      });
    }
  };
}

/** Wraps an identity lookup so that any failure leaves the token's owner unknown. */
export function identifyFailClosed(
  name: string,
  lookup: (request: IdentifyRequest) => Promise<Identity>,
): (request: IdentifyRequest) => Promise<Identity> {
  return closedOnFailure(name, lookup, (failure) => ({ known: false, ...failure }));
}

/** Wraps an authorizer so that any failure is a denial (fail closed) that tells the client nothing of the failure. */
export function failClosed(name: string, decide: (request: AuthRequest) => Promise<Decision>): Authorizer {
  return { authorize: closedOnFailure(name, decide, (failure) => ({ allow: false, ...failure })) };
}
