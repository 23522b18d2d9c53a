// What the HTTP server hands a request to before its own endpoints (server.ts GatewayOptions.routes):
// the web terminal's assets (web-assets.ts) and the recordings' endpoint (recordings/route.ts).
import type { IncomingMessage, ServerResponse } from "node:http";

/** Returns true when it handled the request. */
export type RouteHandler = (request: IncomingMessage, response: ServerResponse) => boolean | Promise<boolean>;
