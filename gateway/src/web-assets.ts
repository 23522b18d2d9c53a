// Serves the web terminal (bundled by web/build.ts into dist/web/) with a strict Content-Security-Policy:
// scripts and styles from this origin only (xterm.js's generated <style> elements carry a per-response
// nonce), no inline style attributes at all (the WebGL renderer paints; the DOM fallback sets styles
// through the CSSOM, see web/build.ts), connections to this origin only (plus the OIDC token endpoint
// when sign-in is configured), no framing. Routes: / (the page; its query string names the target),
// /replay (the recordings page, for reviewers; ?id=<id> opens one), /web/app.js, /web/app.css, /web/replay.js, /web/replay.css,
// /web/favicon.svg (also at /favicon.ico, where browsers look without a <link rel="icon">),
// /web/config.json (what the page needs: endpoint path, backend, OIDC settings).
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { GatewayConfig } from "./config.js";
import type { Logger } from "./log.js";
import { secureUrl } from "./net.js";
import type { RouteHandler } from "./http-route.js";

export const DEFAULT_WEB_DIR = fileURLToPath(new URL("../dist/web/", import.meta.url));

export interface WebAssetsOptions {
  config: GatewayConfig;
  /** The built assets; default gateway/dist/web. */
  dir?: string;
  logger?: Logger;
}

interface OidcPageSettings {
  issuer: string;
  clientId: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  scope: string;
}

/** Path -> the built file and its content type. */
const STATIC: Record<string, { file: string; type: string }> = {
  "/web/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/web/app.css": { file: "app.css", type: "text/css; charset=utf-8" },
  "/web/replay.js": { file: "replay.js", type: "text/javascript; charset=utf-8" },
  "/web/replay.css": { file: "replay.css", type: "text/css; charset=utf-8" },
  "/web/favicon.svg": { file: "favicon.svg", type: "image/svg+xml" },
  "/favicon.ico": { file: "favicon.svg", type: "image/svg+xml" },
};

export function contentSecurityPolicy(nonce: string, connectOrigins: string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    `connect-src ${["'self'", ...connectOrigins].join(" ")}`,
    "img-src 'self' data:",
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const COMMON_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

export function webAssets(options: WebAssetsOptions): RouteHandler {
  const { config } = options;
  const dir = options.dir ?? DEFAULT_WEB_DIR;
  const files = new Map<string, Buffer>();
  let oidc: Promise<OidcPageSettings | null> | undefined;

  async function file(name: string): Promise<Buffer | null> {
    const cached = files.get(name);
    if (cached) return cached;
    try {
      const content = await readFile(join(dir, name));
      files.set(name, content);
      return content;
    } catch {
      return null;
    }
  }

  /** The page signs in with OIDC when the gateway verifies OIDC tokens; endpoints come from discovery. */
  function oidcSettings(): Promise<OidcPageSettings | null> {
    if (config.authorizer !== "oidc" || !config.oidcIssuer || !config.oidcAudience) return Promise.resolve(null);
    oidc ??= (async () => {
      const issuer = config.oidcIssuer.replace(/\/$/, "");
      const response = await fetch(`${issuer}/.well-known/openid-configuration`, {
        signal: AbortSignal.timeout(5000),
        redirect: "error",
      });
      if (!response.ok) throw new Error(`OIDC discovery answered HTTP ${response.status}`);
      const doc = (await response.json()) as { authorization_endpoint?: string; token_endpoint?: string };
      if (!doc.authorization_endpoint || !doc.token_endpoint)
        throw new Error("OIDC discovery has no authorization_endpoint or token_endpoint");
      // The browser sends its code and verifier there and gets the token back.
      for (const [what, url] of [
        ["authorization_endpoint", doc.authorization_endpoint],
        ["token_endpoint", doc.token_endpoint],
      ] as const)
        secureUrl(url, `the ${what} OIDC discovery names`, "sign-in codes and tokens cross it");
      return {
        issuer: config.oidcIssuer,
        clientId: config.oidcAudience,
        authorizationEndpoint: doc.authorization_endpoint,
        tokenEndpoint: doc.token_endpoint,
        scope: "openid profile email",
      };
    })().catch((error: unknown) => {
      oidc = undefined; // try again on the next request
      options.logger?.log("warn", "web terminal: OIDC discovery failed; the page offers pasted tokens only", {
        error: error instanceof Error ? error.message : String(error),
      });
      return null;
    });
    return oidc;
  }

  return async (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? "/", "http://gateway").pathname;
    const pageFile =
      path === "/" || path === "/index.html" ? "index.html" : path === "/replay" ? "replay.html" : undefined;
    const isPage = pageFile !== undefined;
    if (!isPage && !(path in STATIC) && path !== "/web/config.json") return false;
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET, HEAD", ...COMMON_HEADERS }).end();
      return true;
    }
    const send = (status: number, headers: Record<string, string>, body: Buffer | string) => {
      response.writeHead(status, { ...COMMON_HEADERS, ...headers, "content-length": String(Buffer.byteLength(body)) });
      response.end(request.method === "HEAD" ? undefined : body);
    };

    if (path === "/web/config.json") {
      const body = JSON.stringify({ path: config.path, backend: config.backend, oidc: await oidcSettings() });
      send(200, { "content-type": "application/json", "cache-control": "no-store" }, body);
      return true;
    }
    if (isPage) {
      const page = await file(pageFile);
      if (!page) {
        send(
          503,
          { "content-type": "text/plain; charset=utf-8" },
          "the web terminal is not built: run `npm run build:web -w gateway`\n",
        );
        return true;
      }
      const nonce = randomBytes(16).toString("base64");
      const settings = await oidcSettings();
      const connect = settings ? [new URL(settings.tokenEndpoint).origin] : [];
      send(
        200,
        {
          "content-type": "text/html; charset=utf-8",
          "cache-control": "no-store",
          "content-security-policy": contentSecurityPolicy(nonce, connect),
        },
        page.toString("utf8").replace("__STYLE_NONCE__", nonce),
      );
      return true;
    }
    const asset = STATIC[path]!;
    const content = await file(asset.file);
    if (!content) {
      send(404, { "content-type": "text/plain; charset=utf-8" }, "not found\n");
      return true;
    }
    send(200, { "content-type": asset.type, "cache-control": "no-cache" }, content);
    return true;
  };
}
