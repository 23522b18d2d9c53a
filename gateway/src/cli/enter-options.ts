// `entryway enter`: the parts that need no terminal or network, so they can be tested alone:
// target syntax, settings from flags / environment / config file, the endpoint URL, exit codes.
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { isLoopbackHost } from "../net.js";

/** Exit codes of the CLI's own failures (gateway/README.md "CLI"). Anything else is the remote exit code. */
export const ExitCode = {
  usage: 64,
  badRequest: 65,
  notFound: 66,
  limit: 67,
  network: 69,
  backend: 70,
  tls: 71,
  ended: 75,
  denied: 77,
} as const;

/** A failure that becomes one line on stderr and an exit code. */
export class EnterError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}

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
 * The gateway checks the names; here only the shape is checked.
 */
export function parseEnterTarget(text: string, container?: string): EnterTarget {
  const bad = (why: string) =>
    new EnterError(ExitCode.usage, `bad target ${JSON.stringify(text)}: ${why} (see entryway enter --help)`);
  if (!text) throw bad("empty");
  const hash = text.indexOf("#");
  if (hash >= 0) {
    const left = text.slice(0, hash).split("/");
    const right = text.slice(hash + 1).split("/");
    if (left.length < 2 || left.length > 3 || left.some((part) => !part))
      throw bad("expected <namespace>/[<kind>/]<workload>#<instance>");
    const [instanceText, inner, ...rest] = right;
    if (!/^\d{1,6}$/.test(instanceText ?? "")) throw bad("the instance after # must be a number");
    if (rest.length > 0 || inner === "") throw bad("too many parts after the instance");
    const named = container ?? inner;
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
  if (parts.length === 1) {
    if (container) throw bad("--container is for Kubernetes targets; a Docker target is the container itself");
    return { kind: "docker", container: parts[0]! };
  }
  if (parts.length > 3) throw bad("expected <namespace>/<pod>[/<container>]");
  const named = container ?? parts[2];
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
}

interface Layer {
  gateway?: string;
  token?: string;
  tokenFile?: string;
  caFile?: string;
  connectTimeout?: string | number;
  keepalive?: string | number;
}

const CONFIG_KEYS = ["gateway", "token", "tokenFile", "caFile", "connectTimeout", "keepalive"];

export function defaultConfigPath(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config"), "entryway", "client.json");
}

function readConfigFile(path: string, explicit: boolean): Layer {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (!explicit && (error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new EnterError(ExitCode.usage, `cannot read the config file ${path}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new EnterError(ExitCode.usage, `config file ${path} is not JSON: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
    throw new EnterError(ExitCode.usage, `config file ${path}: expected a JSON object`);
  for (const [key, value] of Object.entries(parsed)) {
    if (!CONFIG_KEYS.includes(key))
      throw new EnterError(
        ExitCode.usage,
        `config file ${path}: unknown key ${key} (known: ${CONFIG_KEYS.join(", ")})`,
      );
    if (typeof value !== "string" && !((key === "connectTimeout" || key === "keepalive") && typeof value === "number"))
      throw new EnterError(ExitCode.usage, `config file ${path}: ${key} must be a string`);
  }
  return parsed as Layer;
}

function readTokenFile(path: string): string {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (error) {
    throw new EnterError(ExitCode.usage, `cannot read the token file ${path}: ${(error as Error).message}`);
  }
}

/**
 * Settings, highest precedence first: flags, then the environment (ENTRYWAY_GATEWAY, ENTRYWAY_TOKEN,
 * ENTRYWAY_TOKEN_FILE, ENTRYWAY_CA_FILE, ENTRYWAY_CONNECT_TIMEOUT, ENTRYWAY_KEEPALIVE), then the config file (--config, else ENTRYWAY_CLIENT_CONFIG,
 * else $XDG_CONFIG_HOME/entryway/client.json). Within one layer a token beats a token file.
 */
export function resolveSettings(flags: Layer & { config?: string }, env: NodeJS.ProcessEnv): ClientSettings {
  const explicitConfig = flags.config ?? env.ENTRYWAY_CLIENT_CONFIG;
  const file = readConfigFile(explicitConfig || defaultConfigPath(env), Boolean(explicitConfig));
  const fromEnv: Layer = {
    gateway: env.ENTRYWAY_GATEWAY || undefined,
    token: env.ENTRYWAY_TOKEN || undefined,
    tokenFile: env.ENTRYWAY_TOKEN_FILE || undefined,
    caFile: env.ENTRYWAY_CA_FILE || undefined,
    connectTimeout: env.ENTRYWAY_CONNECT_TIMEOUT || undefined,
    keepalive: env.ENTRYWAY_KEEPALIVE || undefined,
  };
  const layers = [flags, fromEnv, file];
  const first = <K extends keyof Layer>(key: K) =>
    layers.map((layer) => layer[key]).find((value) => value !== undefined && value !== "");

  const gateway = first("gateway");
  if (!gateway)
    throw new EnterError(
      ExitCode.usage,
      'no gateway URL: give --gateway, set ENTRYWAY_GATEWAY, or put "gateway" in the config file',
    );
  let token: string | undefined;
  for (const layer of layers) {
    if (layer.token) token = layer.token;
    else if (layer.tokenFile) token = readTokenFile(layer.tokenFile);
    if (token !== undefined) break;
  }
  if (!token)
    throw new EnterError(
      ExitCode.denied,
      "no access token: give --token or --token-file, set ENTRYWAY_TOKEN or ENTRYWAY_TOKEN_FILE, or put it in the config file",
    );
  const timeout = Number(first("connectTimeout") ?? 10);
  if (!Number.isFinite(timeout) || timeout <= 0)
    throw new EnterError(ExitCode.usage, "connect timeout must be a positive number of seconds");
  const keepalive = Number(first("keepalive") ?? 15);
  if (!Number.isFinite(keepalive) || keepalive < 0)
    throw new EnterError(ExitCode.usage, "keepalive must be a number of seconds (0 turns it off)");
  const caFile = first("caFile");
  return { gateway, token, connectTimeoutSeconds: timeout, keepaliveSeconds: keepalive, ...(caFile ? { caFile } : {}) };
}

/** Sorts a connection failure into TLS, denied or network, with one line that says what happened. */
export function classifyConnectError(error: Error & { code?: string }, url: URL): EnterError {
  const code = error.code ?? "";
  const where = `${url.protocol}//${url.host}`;
  if (/^ERR_(TLS|SSL)_|CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|^EPROTO$/.test(code)) {
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
