import type { Target } from "../target.js";

export interface AuthRequest {
  token: string;
  target: Target;
  clientAddress: string;
}

/**
 * `expiresAt` (ms since the epoch): when the token stops being valid; the session ends then.
 * `detail`: why an authorizer could not decide (a backend's error text): logged, never sent to the client.
 */
export type Decision = { allow: true; user: string; expiresAt?: number } | { allow: false; reason: string; user?: string; detail?: string };

/** Decides, before any exec exists, whether the token's owner may enter the target. Never throws: errors deny. */
export interface Authorizer {
  authorize(request: AuthRequest): Promise<Decision>;
}

/** Wraps an authorizer so that any failure is a denial (fail closed) that tells the client nothing of the failure. */
export function failClosed(name: string, decide: (request: AuthRequest) => Promise<Decision>): Authorizer {
  return {
    async authorize(request) {
      try {
        return await decide(request);
      } catch (error) {
        return { allow: false, reason: `${name} authorizer unavailable`, detail: error instanceof Error ? error.message : String(error) };
      }
    },
  };
}
