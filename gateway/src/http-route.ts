// What the HTTP server hands a request to before its own endpoints (server.ts GatewayOptions.routes):
// the web terminal's assets (web-assets.ts), and the API routes that take the endpoint's token: the
// recordings (recordings/route.ts) and the targets (targets.ts).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuditSink } from "./audit.js";
import type { Authorizer } from "./auth/authorizer.js";
import type { GatewayConfig } from "./config.js";
import type { PreAuthLimits } from "./limits.js";
import type { Logger } from "./log.js";

/** Returns true when it handled the request. */
export type RouteHandler = (request: IncomingMessage, response: ServerResponse) => boolean | Promise<boolean>;

/** What an API route that authenticates as the WebSocket endpoint does is given. */
export interface AuthenticatedRouteOptions {
  config: GatewayConfig;
  authorizer: Authorizer;
  audit: AuditSink;
  logger: Logger;
  /** The per-address limits upgrades count against (each lookup costs an authorizer call). */
  preAuth: PreAuthLimits;
  /** The client's address (the peer's, or X-Forwarded-For's behind a trusted proxy). */
  clientOf(request: IncomingMessage): string;
  /** The token the request carries, as for the WebSocket endpoint (server.ts tokenFromRequest). */
  tokenOf(request: IncomingMessage): string | null;
}

/** The headers of every API answer: never cached (it depends on the caller), never sniffed. */
export const API_HEADERS = { "cache-control": "no-store", "x-content-type-options": "nosniff" } as const;

/** Writes a JSON answer with the API headers (and any others given). */
export function answerJson(
  response: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { "content-type": "application/json", ...API_HEADERS, ...headers }).end(body);
}
