import type { Target } from "../target.js";

export interface AuthRequest {
  token: string;
  target: Target;
  clientAddress: string;
}

export type Decision = { allow: true; user: string } | { allow: false; reason: string; user?: string };

/** Decides, before any exec exists, whether the token's owner may enter the target. Never throws: errors deny. */
export interface Authorizer {
  authorize(request: AuthRequest): Promise<Decision>;
}

/** Wraps an authorizer so that any failure is a denial (fail closed). */
export function failClosed(name: string, decide: (request: AuthRequest) => Promise<Decision>): Authorizer {
  return {
    async authorize(request) {
      try {
        return await decide(request);
      } catch (error) {
        return { allow: false, reason: `${name} authorizer unavailable: ${error instanceof Error ? error.message : String(error)}` };
      }
    },
  };
}
