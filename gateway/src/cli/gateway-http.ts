// The CLI's authenticated GETs to the gateway (GET /v1/recordings..., GET /v1/targets): the
// gateway's URL as https (http only to loopback unless --insecure), the settings of flags,
// environment and context (a sign-in's token included) with the token as a bearer header, the CA
// file trusted besides Node's roots, one connect deadline (http-get.ts), and the answer's status as
// one of the exit codes.
import { isLoopbackHost } from "../net.js";
import { EnterError, ExitCode, readCaFile, resolveSettings } from "./enter-options.js";
import { httpGet } from "./http-get.js";

/** `path` on the gateway named by `gateway` (https://host, or its ws(s):// endpoint URL). */
export function gatewayHttpUrl(gateway: string, path: string, insecure = false): URL {
  let url: URL;
  try {
    url = new URL(gateway);
  } catch {
    throw new EnterError(ExitCode.usage, `bad gateway URL ${JSON.stringify(gateway)}: expected https://host`);
  }
  const schemes: Record<string, string> = { "http:": "http:", "https:": "https:", "ws:": "http:", "wss:": "https:" };
  const scheme = schemes[url.protocol];
  if (!scheme)
    throw new EnterError(
      ExitCode.usage,
      `bad gateway URL ${JSON.stringify(gateway)}: the scheme must be https or http`,
    );
  if (scheme === "http:" && !insecure && !isLoopbackHost(url.hostname)) {
    throw new EnterError(
      ExitCode.usage,
      `refusing plain ${url.host}: the token would cross the network unencrypted; use https://, or --insecure if you must`,
    );
  }
  return new URL(`${scheme}//${url.host}${path}`);
}

export interface GatewayRequest {
  url: URL;
  token: string;
  timeoutMs: number;
  ca?: string;
}

/** The connection options every such command takes (a subset of enter's). */
export const HTTP_OPTIONS = {
  gateway: { type: "string", short: "g" },
  token: { type: "string", short: "t" },
  "token-file": { type: "string" },
  "ca-file": { type: "string" },
  config: { type: "string" },
  context: { type: "string" },
  insecure: { type: "boolean" },
} as const;

export const HTTP_OPTIONS_HELP = `  -g, --gateway <url>    the gateway (https://host)
  -t, --token <token>    access token (prefer --token-file, ENTRYWAY_TOKEN, or entryway login)
      --token-file <p>   read the token from a file
      --ca-file <pem>    trust this CA besides Node's roots
      --context <name>   the context of the config file to use (as for entryway enter)
      --config <path>    the client config file
      --insecure         allow plain http:// to a host that is not loopback
`;

/** The request for `path` with the settings of flags, environment and context (a sign-in's token included). */
export async function gatewayRequest(
  values: { [K in keyof typeof HTTP_OPTIONS]?: (typeof HTTP_OPTIONS)[K]["type"] extends "string" ? string : boolean },
  path: string,
): Promise<GatewayRequest> {
  const settings = await resolveSettings(
    {
      gateway: values.gateway,
      token: values.token,
      tokenFile: values["token-file"],
      caFile: values["ca-file"],
      config: values.config,
      context: values.context,
    },
    process.env,
  );
  const ca = readCaFile(settings);
  return {
    url: gatewayHttpUrl(settings.gateway, path, values.insecure),
    token: settings.token,
    timeoutMs: settings.connectTimeoutSeconds * 1000,
    ...(ca ? { ca } : {}),
  };
}

/**
 * GETs the request's URL and resolves with the body of a 200. 401/403 is `denied` (with
 * `deniedHint`), 404 `notFound` (with `notFound`'s text), anything else `network`; no answer as
 * httpGet says (network or TLS).
 */
export async function gatewayGet(
  { url, token, timeoutMs, ca }: GatewayRequest,
  messages: { deniedHint?: string; notFound?: string } = {},
): Promise<string> {
  const { status, body } = await httpGet(url, {
    headers: { authorization: `Bearer ${token}` },
    timeoutMs,
    ...(ca ? { ca } : {}),
  });
  if (status === 200) return body;
  let reason = "";
  try {
    const error = (JSON.parse(body) as { error?: unknown }).error;
    if (typeof error === "string") reason = `: ${error}`;
  } catch {
    // not the gateway's JSON
  }
  if (status === 401 || status === 403)
    throw new EnterError(
      ExitCode.denied,
      `permission denied: the gateway answered HTTP ${status}${reason}${messages.deniedHint ?? ""}`,
    );
  if (status === 404)
    throw new EnterError(ExitCode.notFound, messages.notFound ?? `nothing at ${url.pathname} (HTTP 404)`);
  throw new EnterError(ExitCode.network, `the gateway answered HTTP ${status} for ${url.pathname}${reason}`);
}
