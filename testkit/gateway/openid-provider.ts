// A REAL OpenID provider for the CLI's sign-in tests: panva's certified `oidc-provider`, in process,
// on 127.0.0.1. One public native client (no secret, PKCE, the loopback redirect
// http://127.0.0.1/callback on any port, RFC 8252 7.3), the device flow, refresh tokens
// (offline_access) and revocation. Users sign in through its development interactions (any login
// and password; the login is the subject), driven by `userAgent`, which plays the browser: it
// follows redirects with cookies, fills the provider's forms and lands on the CLI's loopback.
import http from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

export interface OpenIdProvider {
  issuer: string;
  clientId: string;
  /** The token endpoint's answer to a refresh with this refresh token (HTTP status and error code). */
  refresh(refreshToken: string): Promise<{ status: number; error?: string }>;
  stop(): Promise<void>;
}

/** `namespaces`: each subject's namespaces claim, as the gateway's OIDC authorizer reads it. */
export async function startOpenIdProvider(options: {
  clientId: string;
  namespaces: Record<string, string[]>;
}): Promise<OpenIdProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: options.clientId,
        application_type: "native",
        token_endpoint_auth_method: "none",
        redirect_uris: ["http://127.0.0.1/callback"],
        grant_types: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
        response_types: ["code"],
      },
    ],
    features: {
      devInteractions: { enabled: true },
      deviceFlow: { enabled: true },
      revocation: { enabled: true },
    },
    claims: { openid: ["sub", "namespaces"] },
    // The namespaces claim in the ID token, which is what the CLI sends to the gateway.
    conformIdTokenClaims: false,
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => ({ sub, namespaces: options.namespaces[sub] ?? [] }),
    }),
    cookies: { keys: ["entryway-test-cookie-key"] },
  });
  server.on("request", provider.callback());
  return {
    issuer,
    clientId: options.clientId,
    async refresh(refreshToken) {
      const response = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "refresh_token",
          client_id: options.clientId,
          refresh_token: refreshToken,
        }),
      });
      const body = (await response.json()) as { error?: string };
      return { status: response.status, ...(body.error ? { error: body.error } : {}) };
    },
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The fields of the page's first POST form (hidden ones included) and where it goes. */
function firstForm(html: string, base: string): { action: URL; fields: Record<string, string> } | undefined {
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return undefined;
  const attribute = (tag: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`, "i").exec(tag)?.[1];
  const fields: Record<string, string> = {};
  for (const input of form[2]!.match(/<input\b[^>]*>/gi) ?? []) {
    const name = attribute(input, "name");
    if (name) fields[name] = attribute(input, "value") ?? "";
  }
  return { action: new URL(attribute(form[1]!, "action") ?? base, base), fields };
}

export interface UserAgentResult {
  /** The last answer: the CLI's loopback page, or the provider's own (device flow's success). */
  status: number;
  url: string;
  body: string;
}

/**
 * Plays the browser from `start`: follows redirects (keeping the provider's cookies), signs in as
 * `user`, consents, and types `userCode` on the device page; with `deny`, aborts at the consent
 * (the "Cancel" link of the provider's consent page, or "Abort" on the device confirmation).
 */
export async function userAgent(
  start: string,
  options: { user: string; userCode?: string; deny?: boolean },
): Promise<UserAgentResult> {
  const cookies = new Map<string, string>();
  let url = start;
  let method = "GET";
  let body: URLSearchParams | undefined;
  for (let step = 0; step < 30; step++) {
    const response = await fetch(url, {
      method,
      redirect: "manual",
      headers: {
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; "),
        ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      ...(body ? { body: body.toString() } : {}),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      url = new URL(location, url).href;
      method = "GET";
      body = undefined;
      continue;
    }
    const html = await response.text();
    const form = firstForm(html, url);
    const fields = form?.fields ?? {};
    if (!form || response.status >= 400) return { status: response.status, url, body: html };
    if ("login" in fields) Object.assign(fields, { login: options.user, password: "any" });
    else if (fields.prompt === "consent" && options.deny) {
      const abort = /href="([^"]*\/abort)"/.exec(html)?.[1];
      if (!abort) throw new Error("the consent page has no abort link");
      url = new URL(abort, url).href;
      method = "GET";
      body = undefined;
      continue;
    } else if ("user_code" in fields && !("confirm" in fields)) fields.user_code = options.userCode ?? "";
    else if ("confirm" in fields || "abort" in fields) {
      delete fields.confirm;
      delete fields.abort;
      fields[options.deny ? "abort" : "confirm"] = "yes";
    } else if (fields.prompt !== "consent") return { status: response.status, url, body: html };
    url = form.action.href;
    method = "POST";
    body = new URLSearchParams(fields);
  }
  throw new Error("the sign-in took more than 30 steps");
}
