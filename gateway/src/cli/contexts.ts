// The client's one config file and its contexts, after kubeconfig's: named contexts, each saying
// which gateway and how to sign in to it (and the default namespace and container), a current one
// (`entryway config use-context`), another for one command (`--context`, or ENTRYWAY_CONTEXT).
// The file ($XDG_CONFIG_HOME/entryway/client.json) is:
//
//   { "currentContext": "prod",
//     "contexts": { "prod": { "gateway": "https://entry.example.com", "auth": { "tokenFile": "..." },
//                             "namespace": "shop", "container": "app" } } }
//
// The earlier shape, one flat object ({"gateway", "token", "tokenFile", "caFile", "connectTimeout",
// "keepalive"}), is still read, as a context named "default" that is current; the first write
// (`entryway config set-context` / `use-context`) turns it into this shape and keeps the old file
// beside it as client.json.old.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { signedInToken } from "./credentials.js";
import { CliError, ExitCode } from "./exit-codes.js";

/** OIDC sign-in (`entryway login`): the issuer and the client it signs in as; the tokens live in login's own file. */
export interface OidcAuth {
  issuer: string;
  clientId: string;
  /** Scopes besides openid. */
  scopes?: string[];
}

/** How a context gets its access token: exactly one of these keys. */
export type ContextAuth =
  | { token: string } // the token itself (the old file's "token"; prefer a file)
  | { tokenFile: string } // read from this file, e.g. one `kubectl create token` wrote
  | { tokenEnv: string } // read from this environment variable
  | { oidc: OidcAuth }; // signed in with `entryway login`

export const AUTH_KINDS = ["token", "tokenFile", "tokenEnv", "oidc"] as const;
export type AuthKind = (typeof AUTH_KINDS)[number];

export interface Context {
  /** https://host, or wss://host/v1/enter. */
  gateway?: string;
  auth?: ContextAuth;
  /** The namespace of a target given without one (Kubernetes gateways). */
  namespace?: string;
  /** The container when a Kubernetes target names none. */
  container?: string;
  /** Extra CA (PEM) to trust for the gateway. */
  caFile?: string;
  /** Seconds for the whole connection: TCP, TLS, upgrade and authorization. */
  connectTimeout?: number;
  /** Seconds between pings; 0 turns them off. */
  keepalive?: number;
}

export interface ClientConfig {
  currentContext?: string;
  contexts: Record<string, Context>;
}

/** The name the old flat file's settings get. */
export const LEGACY_CONTEXT = "default";

const CONTEXT_KEYS = ["gateway", "auth", "namespace", "container", "caFile", "connectTimeout", "keepalive"] as const;
const LEGACY_KEYS = ["gateway", "token", "tokenFile", "caFile", "connectTimeout", "keepalive"] as const;

/** --config, else ENTRYWAY_CLIENT_CONFIG, else $XDG_CONFIG_HOME/entryway/client.json; `explicit` when named. */
export function configPath(flag: string | undefined, env: NodeJS.ProcessEnv): { path: string; explicit: boolean } {
  const named = flag || env.ENTRYWAY_CLIENT_CONFIG;
  if (named) return { path: named, explicit: true };
  return {
    path: join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config"), "entryway", "client.json"),
    explicit: false,
  };
}

const bad = (path: string, why: string) => new CliError(ExitCode.usage, `config file ${path}: ${why}`);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkKeys(path: string, where: string, object: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(object))
    if (!known.includes(key)) throw bad(path, `${where}unknown key ${key} (known: ${known.join(", ")})`);
}

function checkString(path: string, where: string, value: unknown): string {
  if (typeof value !== "string" || value === "") throw bad(path, `${where} must be a non-empty string`);
  return value;
}

function checkSeconds(path: string, where: string, value: unknown): number {
  const seconds = typeof value === "string" ? Number(value) : value;
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0)
    throw bad(path, `${where} must be a number of seconds`);
  return seconds;
}

/** Checks one auth value: one key of AUTH_KINDS. */
export function parseAuth(path: string, where: string, value: unknown): ContextAuth {
  if (!isObject(value) || Object.keys(value).length !== 1)
    throw bad(path, `${where} must be an object with one of ${AUTH_KINDS.join(", ")}`);
  const [kind, inner] = Object.entries(value)[0]!;
  switch (kind) {
    case "token":
      return { token: checkString(path, `${where}.token`, inner) };
    case "tokenFile":
      return { tokenFile: checkString(path, `${where}.tokenFile`, inner) };
    case "tokenEnv":
      return { tokenEnv: checkString(path, `${where}.tokenEnv`, inner) };
    case "oidc": {
      if (!isObject(inner)) throw bad(path, `${where}.oidc must be an object with issuer and clientId`);
      checkKeys(path, `${where}.oidc: `, inner, ["issuer", "clientId", "scopes"]);
      const scopes = inner.scopes;
      if (scopes !== undefined && !(Array.isArray(scopes) && scopes.every((s) => typeof s === "string")))
        throw bad(path, `${where}.oidc.scopes must be a list of strings`);
      return {
        oidc: {
          issuer: checkString(path, `${where}.oidc.issuer`, inner.issuer),
          clientId: checkString(path, `${where}.oidc.clientId`, inner.clientId),
          ...(scopes ? { scopes: scopes as string[] } : {}),
        },
      };
    }
    default:
      throw bad(path, `${where} must be an object with one of ${AUTH_KINDS.join(", ")}, not ${kind}`);
  }
}

function parseContext(path: string, name: string, value: unknown): Context {
  const where = `context ${name}`;
  if (!isObject(value)) throw bad(path, `${where} must be an object`);
  checkKeys(path, `${where}: `, value, CONTEXT_KEYS);
  const context: Context = {};
  for (const key of ["gateway", "namespace", "container", "caFile"] as const)
    if (value[key] !== undefined) context[key] = checkString(path, `${where}: ${key}`, value[key]);
  for (const key of ["connectTimeout", "keepalive"] as const)
    if (value[key] !== undefined) context[key] = checkSeconds(path, `${where}: ${key}`, value[key]);
  if (value.auth !== undefined) context.auth = parseAuth(path, `${where}: auth`, value.auth);
  return context;
}

/** The old flat object as the "default" context; a token beats a token file, as it did. */
function fromLegacy(path: string, value: Record<string, unknown>): ClientConfig {
  checkKeys(path, "", value, [...LEGACY_KEYS, "currentContext", "contexts"]);
  const context: Context = {};
  for (const key of ["gateway", "caFile"] as const)
    if (value[key] !== undefined) context[key] = checkString(path, key, value[key]);
  for (const key of ["connectTimeout", "keepalive"] as const)
    if (value[key] !== undefined) context[key] = checkSeconds(path, key, value[key]);
  if (value.token !== undefined) context.auth = { token: checkString(path, "token", value.token) };
  else if (value.tokenFile !== undefined) context.auth = { tokenFile: checkString(path, "tokenFile", value.tokenFile) };
  return { currentContext: LEGACY_CONTEXT, contexts: { [LEGACY_CONTEXT]: context } };
}

/** Reads the config file (either shape). A missing file is an empty config unless it was named. */
export function readClientConfig(path: string, explicit: boolean): { config: ClientConfig; legacy: boolean } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (!explicit && (error as NodeJS.ErrnoException).code === "ENOENT")
      return { config: { contexts: {} }, legacy: false };
    throw new CliError(ExitCode.usage, `cannot read the config file ${path}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw bad(path, `not JSON: ${(error as Error).message}`);
  }
  if (!isObject(parsed)) throw bad(path, "expected a JSON object");
  if (parsed.contexts === undefined && parsed.currentContext === undefined)
    return { config: fromLegacy(path, parsed), legacy: true };
  checkKeys(path, "", parsed, ["currentContext", "contexts"]);
  const contexts: Record<string, Context> = {};
  if (parsed.contexts !== undefined) {
    if (!isObject(parsed.contexts)) throw bad(path, "contexts must be an object of named contexts");
    for (const [name, value] of Object.entries(parsed.contexts)) contexts[name] = parseContext(path, name, value);
  }
  const config: ClientConfig = { contexts };
  if (parsed.currentContext !== undefined)
    config.currentContext = checkString(path, "currentContext", parsed.currentContext);
  return { config, legacy: false };
}

/**
 * Writes the config file: to a temporary file first, then renamed over it, readable by the user
 * only (a context may hold a token). An old-shape file is kept as <path>.old first.
 */
export function writeClientConfig(path: string, config: ClientConfig, legacy: boolean): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (legacy && existsSync(path)) {
    copyFileSync(path, `${path}.old`);
    chmodSync(`${path}.old`, 0o600);
  }
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(config, null, 2) + "\n", { mode: 0o600 });
  renameSync(temporary, path);
}

/** A context name: kubeconfig's are free text; here no spaces or control characters, for tables and shells. */
export function checkContextName(name: string): string {
  if (!/^[\w.@:/-]{1,253}$/.test(name))
    throw new CliError(
      ExitCode.usage,
      `bad context name ${JSON.stringify(name)}: letters, digits and . _ - @ : / only`,
    );
  return name;
}

/**
 * The context to use: `flag` (--context), else ENTRYWAY_CONTEXT, else the current one. A named
 * context that does not exist is an error; no context at all is undefined (flags and environment alone).
 */
export function selectContext(
  config: ClientConfig,
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  path: string,
): { name: string; context: Context } | undefined {
  const named = flag || env.ENTRYWAY_CONTEXT;
  const name = named || config.currentContext;
  if (!name) return undefined;
  const context = config.contexts[name];
  if (!context) {
    const known = Object.keys(config.contexts);
    throw new CliError(
      ExitCode.usage,
      `no context ${JSON.stringify(name)} in ${path}${named ? "" : " (its currentContext)"}; ${
        known.length ? `known: ${known.join(", ")}` : "none yet: entryway config set-context <name> --gateway <url>"
      }`,
    );
  }
  return { name, context };
}

/** The auth kind of a context, for `get-contexts`. */
export function authKind(auth: ContextAuth | undefined): AuthKind | undefined {
  return auth ? (Object.keys(auth)[0] as AuthKind) : undefined;
}

function readTokenFile(path: string): string {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (error) {
    throw new CliError(ExitCode.usage, `cannot read the token file ${path}: ${(error as Error).message}`);
  }
}

/**
 * The access token a context's auth gives. The oidc variant is `entryway login`'s: the tokens login
 * stored for the context's issuer and client id (refreshed when near expiry); without them it asks for login.
 */
export async function contextToken(name: string, auth: ContextAuth, env: NodeJS.ProcessEnv): Promise<string> {
  if ("token" in auth) return auth.token;
  if ("tokenFile" in auth) return readTokenFile(auth.tokenFile);
  if ("tokenEnv" in auth) {
    const token = env[auth.tokenEnv];
    if (!token)
      throw new CliError(ExitCode.denied, `context ${name} takes its token from $${auth.tokenEnv}, which is not set`);
    return token;
  }
  const signedIn = await signedInToken(env, auth.oidc);
  if (signedIn) return signedIn;
  throw new CliError(
    ExitCode.denied,
    `context ${name} signs in with OIDC (${auth.oidc.issuer}): run entryway login --context ${name}`,
  );
}
