// `entryway enter`: the parts that need no terminal or network, so they can be tested alone:
// target syntax, settings from flags / environment / config file, the endpoint URL, exit codes.
import { readFileSync } from "node:fs";
import { isLoopbackHost } from "../net.js";
import { configPath, contextToken, readClientConfig, selectContext } from "./contexts.js";
import { signedInToken } from "./credentials.js";
import { CliError as EnterError, ExitCode } from "./exit-codes.js";

export { ExitCode, CliError as EnterError } from "./exit-codes.js";

/** The gateway's machine-readable close codes (protocol.ts CloseCode) mapped to exit codes. */
export function exitCodeForClose(closeCode: string): number {
  switch (closeCode) {
    case "denied":
    case "unauthenticated":
      return ExitCode.denied;
    case "not-found":
      return ExitCode.notFound;
    case "bad-request":
    case "frame-too-large":
      return ExitCode.badRequest;
    case "limit":
      return ExitCode.limit;
    case "backend-error":
      return ExitCode.backend;
    default: // shutdown, idle-timeout, and codes newer than this client
      return ExitCode.ended;
  }
}

export type EnterTarget =
  | { kind: "docker"; container: string }
  | { kind: "pod"; namespace: string; pod: string; container?: string }
  | { kind: "workload"; namespace: string; workload: string; instance: number; container?: string };

/**
 * Target syntax:
 *   <container>                                   a Docker container (name or full id)
 *   <namespace>/<pod>[/<container>]               a Kubernetes pod
 *   <namespace>/[<kind>/]<workload>#<n>[/<container>]  instance n of a StatefulSet or Deployment
 * The gateway checks the names; here only the shape is checked. With a context's default
 * `namespace`, <pod> and <workload>#<n> name one in it (kubectl's convention); its default
 * `container` is used when neither the target nor --container names one.
 */
export function parseEnterTarget(
  text: string,
  container?: string,
  defaults: { namespace?: string; container?: string } = {},
): EnterTarget {
  const bad = (why: string) =>
    new EnterError(ExitCode.usage, `bad target ${JSON.stringify(text)}: ${why} (see entryway enter --help)`);
  if (!text) throw bad("empty");
  const hash = text.indexOf("#");
  if (hash >= 0) {
    const left = text.slice(0, hash).split("/");
    if (left.length === 1 && defaults.namespace) left.unshift(defaults.namespace);
    const right = text.slice(hash + 1).split("/");
    if (left.length < 2 || left.length > 3 || left.some((part) => !part))
      throw bad("expected <namespace>/[<kind>/]<workload>#<instance>");
    const [instanceText, inner, ...rest] = right;
    if (!/^\d{1,6}$/.test(instanceText ?? "")) throw bad("the instance after # must be a number");
    if (rest.length > 0 || inner === "") throw bad("too many parts after the instance");
    const named = container ?? inner ?? defaults.container;
    return {
      kind: "workload",
      namespace: left[0]!,
      workload: left.slice(1).join("/"),
      instance: Number(instanceText),
      ...(named ? { container: named } : {}),
    };
  }
  const parts = text.split("/");
  if (parts.some((part) => !part)) throw bad("empty part");
  if (parts.length === 1 && defaults.namespace) parts.unshift(defaults.namespace);
  if (parts.length === 1) {
    if (container) throw bad("--container is for Kubernetes targets; a Docker target is the container itself");
    return { kind: "docker", container: parts[0]! };
  }
  if (parts.length > 3) throw bad("expected <namespace>/<pod>[/<container>]");
  const named = container ?? parts[2] ?? defaults.container;
  return { kind: "pod", namespace: parts[0]!, pod: parts[1]!, ...(named ? { container: named } : {}) };
}

export function targetQuery(target: EnterTarget): URLSearchParams {
  const query = new URLSearchParams();
  if (target.kind === "docker") {
    query.set("container", target.container);
    return query;
  }
  query.set("namespace", target.namespace);
  if (target.kind === "pod") query.set("pod", target.pod);
  else {
    query.set("workload", target.workload);
    query.set("instance", String(target.instance));
  }
  if (target.container) query.set("container", target.container);
  return query;
}

/**
 * http(s)://host[/path] or ws(s)://host[/path]; a bare host (or "/") gets the gateway's default path.
 * Plain ws:// (http://) carries the token unencrypted: only to a loopback address, unless `insecure`.
 */
export function endpointUrl(gateway: string, target: EnterTarget, command: string[], insecure = false): URL {
  let url: URL;
  try {
    url = new URL(gateway);
  } catch {
    throw new EnterError(
      ExitCode.usage,
      `bad gateway URL ${JSON.stringify(gateway)}: expected https://host or wss://host/v1/enter`,
    );
  }
  const schemes: Record<string, string> = { "http:": "ws:", "https:": "wss:", "ws:": "ws:", "wss:": "wss:" };
  const scheme = schemes[url.protocol];
  if (!scheme)
    throw new EnterError(
      ExitCode.usage,
      `bad gateway URL ${JSON.stringify(gateway)}: the scheme must be https, http, wss or ws`,
    );
  url.protocol = scheme;
  if (scheme === "ws:" && !insecure && !isLoopbackHost(url.hostname)) {
    throw new EnterError(
      ExitCode.usage,
      `refusing plain ${url.host}: the token would cross the network unencrypted; use https:// (wss://), or --insecure if you must`,
    );
  }
  if (url.pathname === "/" || url.pathname === "") url.pathname = "/v1/enter";
  url.search = "";
  url.hash = "";
  for (const [key, value] of targetQuery(target)) url.searchParams.append(key, value);
  for (const part of command) url.searchParams.append("command", part);
  return url;
}

export interface ClientSettings {
  gateway: string;
  token: string;
  /** Extra CA certificates (PEM) to trust for a wss:// gateway. */
  caFile?: string;
  connectTimeoutSeconds: number;
  /** Seconds between WebSocket pings to the gateway; a ping unanswered by the next one ends the session. 0: off. */
  keepaliveSeconds: number;
  /** The context's default namespace and container for targets that name none. */
  namespace?: string;
  container?: string;
}

interface Layer {
  gateway?: string;
  token?: string;
  tokenFile?: string;
  caFile?: string;
  connectTimeout?: string | number;
  keepalive?: string | number;
}

/**
 * Settings, highest precedence first: flags, then the environment (ENTRYWAY_GATEWAY, ENTRYWAY_TOKEN,
 * ENTRYWAY_TOKEN_FILE, ENTRYWAY_CA_FILE, ENTRYWAY_CONNECT_TIMEOUT, ENTRYWAY_KEEPALIVE), then the context
 * (--context, else ENTRYWAY_CONTEXT, else the current one) of the config file (contexts.ts). Within
 * one layer a token beats a token file.
 */
export async function resolveSettings(
  flags: Layer & { config?: string; context?: string },
  env: NodeJS.ProcessEnv,
  needToken = true,
): Promise<ClientSettings> {
  const { path, explicit } = configPath(flags.config, env);
  const selected = selectContext(readClientConfig(path, explicit).config, flags.context, env, path);
  const context = selected?.context ?? {};
  const fromEnv: Layer = {
    gateway: env.ENTRYWAY_GATEWAY || undefined,
    token: env.ENTRYWAY_TOKEN || undefined,
    tokenFile: env.ENTRYWAY_TOKEN_FILE || undefined,
    caFile: env.ENTRYWAY_CA_FILE || undefined,
    connectTimeout: env.ENTRYWAY_CONNECT_TIMEOUT || undefined,
    keepalive: env.ENTRYWAY_KEEPALIVE || undefined,
  };
  const layers: Layer[] = [flags, fromEnv, context];
  const first = <K extends keyof Layer>(key: K) =>
    layers.map((layer) => layer[key]).find((value) => value !== undefined && value !== "");

  const gateway = first("gateway");
  if (!gateway)
    throw new EnterError(
      ExitCode.usage,
      "no gateway URL: give --gateway or --context, set ENTRYWAY_GATEWAY, or add a context (entryway config set-context)",
    );
  let token: string | undefined = needToken ? undefined : "";
  for (const layer of needToken ? [flags, fromEnv] : []) {
    if (layer.token) token = layer.token;
    else if (layer.tokenFile) token = await contextToken("", { tokenFile: layer.tokenFile }, env);
    if (token !== undefined) break;
  }
  if (token === undefined && selected?.context.auth)
    token = await contextToken(selected.name, selected.context.auth, env);
  // Else the current sign-in (entryway login), if any.
  if (needToken) token ??= await signedInToken(env);
  if (token === undefined || (needToken && !token))
    throw new EnterError(
      ExitCode.denied,
      "no access token: run entryway login, give --token or --token-file, set ENTRYWAY_TOKEN or ENTRYWAY_TOKEN_FILE, or give the context an auth (entryway config set-context)",
    );
  const timeout = Number(first("connectTimeout") ?? 10);
  if (!Number.isFinite(timeout) || timeout <= 0)
    throw new EnterError(ExitCode.usage, "connect timeout must be a positive number of seconds");
  const keepalive = Number(first("keepalive") ?? 15);
  if (!Number.isFinite(keepalive) || keepalive < 0)
    throw new EnterError(ExitCode.usage, "keepalive must be a number of seconds (0 turns it off)");
  const caFile = first("caFile");
  return {
    gateway,
    token,
    connectTimeoutSeconds: timeout,
    keepaliveSeconds: keepalive,
    ...(caFile ? { caFile } : {}),
    ...(context.namespace ? { namespace: context.namespace } : {}),
    ...(context.container ? { container: context.container } : {}),
  };
}

/** The settings' CA file (PEM) as text, or undefined without one; unreadable is a usage error. */
export function readCaFile(settings: { caFile?: string }): string | undefined {
  if (!settings.caFile) return undefined;
  try {
    return readFileSync(settings.caFile, "utf8");
  } catch (error) {
    throw new EnterError(ExitCode.usage, `cannot read the CA file ${settings.caFile}: ${(error as Error).message}`);
  }
}

/** A TLS failure by Node's error code: a certificate refused, a handshake that failed. */
export function isTlsError(error: { code?: string }): boolean {
  return /^ERR_(TLS|SSL)_|CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|^EPROTO$/.test(error.code ?? "");
}

/** Sorts a connection failure into TLS, denied or network, with one line that says what happened. */
export function classifyConnectError(error: Error & { code?: string }, url: URL): EnterError {
  const code = error.code ?? "";
  const where = `${url.protocol}//${url.host}`;
  if (isTlsError(error)) {
    const text = error.message.split("\n")[0]!.trim();
    if (/wrong version number|packet length too long/i.test(text))
      return new EnterError(
        ExitCode.tls,
        `TLS error with ${where}: the server does not speak TLS (${code || "wrong version number"}); for a plain-HTTP gateway use http:// or ws://`,
      );
    return new EnterError(
      ExitCode.tls,
      `TLS error with ${where}: ${text}${code && !text.includes(code) ? ` (${code})` : ""}; give --ca-file if the gateway's CA is private`,
    );
  }
  const known: Record<string, string> = {
    ECONNREFUSED: "connection refused",
    ENOTFOUND: "host not found",
    EAI_AGAIN: "name lookup failed",
    ETIMEDOUT: "timed out",
    EHOSTUNREACH: "host unreachable",
    ENETUNREACH: "network unreachable",
    ECONNRESET: "connection reset",
  };
  return new EnterError(ExitCode.network, `cannot reach the gateway at ${where}: ${known[code] ?? error.message}`);
}

/** An HTTP answer instead of a WebSocket upgrade. */
export function classifyHttpStatus(status: number, url: URL): EnterError {
  const where = `${url.protocol}//${url.host}${url.pathname}`;
  if (status === 401 || status === 403)
    return new EnterError(ExitCode.denied, `permission denied: the gateway answered HTTP ${status} at ${where}`);
  if (status === 404)
    return new EnterError(ExitCode.network, `no gateway endpoint at ${where} (HTTP 404): check the URL's path`);
  return new EnterError(
    ExitCode.network,
    `the gateway answered HTTP ${status} at ${where} instead of opening a session`,
  );
}

/** An EnterError or a bad option as one line on stderr and its exit code; anything else is rethrown. */
export function reportFailure(error: unknown, command: string): number {
  if (error instanceof EnterError) {
    process.stderr.write(`entryway: ${error.message}\n`);
    return error.exitCode;
  }
  if ((error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    process.stderr.write(`entryway: ${(error as Error).message} (entryway ${command} --help)\n`);
    return ExitCode.usage;
  }
  throw error;
}
