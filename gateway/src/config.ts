// Settings come from a JSON file named by ENTRYWAY_CONFIG (keys as below) and from environment
// variables (ENTRYWAY_<UPPER_SNAKE_KEY>), which win. Every setting is documented in README.md.
import { readFileSync } from "node:fs";

export interface GatewayConfig {
  host: string;
  port: number;
  /** Path of the WebSocket endpoint. */
  path: string;
  backend: "kubernetes" | "docker";
  /** Docker Engine API: unix:///path/docker.sock or tcp://host:port. */
  dockerHost: string;
  /** Kubeconfig file; empty means in-cluster service account, else the default loading rules. */
  kubeconfig: string;
  authorizer: "webhook" | "kubernetes" | "oidc";
  webhookUrl: string;
  webhookTimeoutMs: number;
  oidcIssuer: string;
  oidcAudience: string;
  /** JWKS URL; empty means discover it from the issuer's /.well-known/openid-configuration. */
  oidcJwksUri: string;
  oidcUsernameClaim: string;
  /** Claim listing the namespaces the user may enter ("*" for all; "docker" for Docker containers). */
  oidcNamespacesClaim: string;
  /** Command run when the client names none; the default prefers bash and falls back to sh. */
  shell: string[];
  /** Allow the client to choose the command (query parameter `command`, repeated). */
  allowCommand: boolean;
  pingIntervalMs: number;
  wsPingIntervalMs: number;
  idleTimeoutMs: number;
  /** How long a browser may take to send its AUTH message when no token came with the upgrade. */
  authTimeoutMs: number;
  maxSessions: number;
  maxSessionsPerUser: number;
  maxFrameBytes: number;
  outputFrameBytes: number;
  bufferHighBytes: number;
  bufferLowBytes: number;
  drainTimeoutMs: number;
  /** Seconds between SIGHUP and SIGKILL when ending an abandoned shell. */
  reapGraceSeconds: number;
  auditFile: string;
  recordDir: string;
  logLevel: "debug" | "info" | "warn" | "error";
}

export const defaultConfig: GatewayConfig = {
  host: "0.0.0.0",
  port: 8080,
  path: "/v1/enter",
  backend: "kubernetes",
  dockerHost: "unix:///var/run/docker.sock",
  kubeconfig: "",
  authorizer: "kubernetes",
  webhookUrl: "",
  webhookTimeoutMs: 3000,
  oidcIssuer: "",
  oidcAudience: "",
  oidcJwksUri: "",
  oidcUsernameClaim: "sub",
  oidcNamespacesClaim: "namespaces",
  shell: [],
  allowCommand: true,
  pingIntervalMs: 10_000,
  wsPingIntervalMs: 30_000,
  idleTimeoutMs: 30 * 60_000,
  authTimeoutMs: 10_000,
  maxSessions: 500,
  maxSessionsPerUser: 10,
  maxFrameBytes: 64 * 1024,
  outputFrameBytes: 32 * 1024,
  bufferHighBytes: 1024 * 1024,
  bufferLowBytes: 256 * 1024,
  drainTimeoutMs: 10_000,
  reapGraceSeconds: 2,
  auditFile: "",
  recordDir: "",
  logLevel: "info",
};

const choices: Partial<Record<keyof GatewayConfig, readonly string[]>> = {
  backend: ["kubernetes", "docker"],
  authorizer: ["webhook", "kubernetes", "oidc"],
  logLevel: ["debug", "info", "warn", "error"],
};

export function envName(key: string): string {
  return "ENTRYWAY_" + key.replace(/[A-Z]/g, (c) => "_" + c).toUpperCase();
}

function coerce(key: keyof GatewayConfig, raw: unknown): unknown {
  const fallback = defaultConfig[key];
  if (typeof fallback === "number") {
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${key}: expected a non-negative number, got ${String(raw)}`);
    return value;
  }
  if (typeof fallback === "boolean") {
    if (typeof raw === "boolean") return raw;
    if (raw === "true" || raw === "1") return true;
    if (raw === "false" || raw === "0") return false;
    throw new Error(`${key}: expected true or false, got ${String(raw)}`);
  }
  if (Array.isArray(fallback)) {
    // In the environment a command is a JSON array of strings.
    const value = typeof raw === "string" ? JSON.parse(raw) : raw;
    if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) throw new Error(`${key}: expected an array of strings`);
    return value;
  }
  const value = String(raw);
  const allowed = choices[key];
  if (allowed && !allowed.includes(value)) throw new Error(`${key}: expected one of ${allowed.join(", ")}, got ${value}`);
  return value;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const file: Record<string, unknown> = env.ENTRYWAY_CONFIG ? JSON.parse(readFileSync(env.ENTRYWAY_CONFIG, "utf8")) : {};
  for (const key of Object.keys(file)) {
    if (!(key in defaultConfig)) throw new Error(`${env.ENTRYWAY_CONFIG}: unknown setting ${key}`);
  }
  const config: Record<string, unknown> = { ...defaultConfig };
  for (const key of Object.keys(defaultConfig) as (keyof GatewayConfig)[]) {
    const raw = env[envName(key)] ?? file[key];
    if (raw !== undefined && raw !== "") config[key] = coerce(key, raw);
  }
  const result = config as unknown as GatewayConfig;
  if (result.bufferLowBytes > result.bufferHighBytes) throw new Error("bufferLowBytes must not exceed bufferHighBytes");
  if (result.outputFrameBytes < 4) throw new Error("outputFrameBytes must be at least 4");
  return result;
}
