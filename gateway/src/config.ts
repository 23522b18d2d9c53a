// Settings come from one JSON document named by ENTRYWAY_CONFIG (keys as below; the chart and the
// Pulumi component write it into a ConfigMap) and from environment variables
// (ENTRYWAY_<UPPER_SNAKE_KEY>), which win: secrets (webhookUrl) and the downward API's namespace
// come that way. Every setting is documented in README.md.
import { readFileSync } from "node:fs";
import { BlockList, isIP } from "node:net";
import { isLoopbackHost } from "./net.js";

export interface GatewayConfig {
  host: string;
  port: number;
  /** /metrics and /readyz (and /healthz) listen here, apart from the public port. */
  metricsHost: string;
  metricsPort: number;
  /** Path of the WebSocket endpoint. */
  path: string;
  backend: "kubernetes" | "docker";
  /** Docker Engine API: unix:///path/docker.sock or tcp://host:port. */
  dockerHost: string;
  /** Kubeconfig file; empty means in-cluster service account, else the default loading rules. */
  kubeconfig: string;
  /**
   * The namespace the gateway itself runs in (the downward API's metadata.namespace). Targets there
   * are refused: its pods hold the gateway's service-account token.
   */
  gatewayNamespace: string;
  /**
   * Namespaces the gateway never enters either, also when RBAC would let it (clusterWide): the
   * stack's other namespaces (the CONNECT gateway's, whose pods' service account reads its TLS key).
   */
  refusedNamespaces: string[];
  authorizer: "webhook" | "kubernetes" | "oidc";
  /** https, or http only to a loopback address; redirects are refused. */
  webhookUrl: string;
  webhookTimeoutMs: number;
  oidcIssuer: string;
  oidcAudience: string;
  /** JWKS URL; empty means discover it from the issuer's /.well-known/openid-configuration. */
  oidcJwksUri: string;
  oidcUsernameClaim: string;
  /** Claim listing the namespaces the user may enter ("*" for all; "docker" for Docker containers). */
  oidcNamespacesClaim: string;
  /** Claim listing the user's groups (an array or a space/comma list), matched against reviewerGroups. */
  oidcGroupsClaim: string;
  /** Accepted JWS algorithms: asymmetric only (never "none" or HS*). */
  oidcAlgorithms: string[];
  /** Tokens issued (iat) longer ago than this are refused, whatever their exp says. */
  oidcMaxTokenAgeSeconds: number;
  /** The kubernetes authorizer's TokenReview spec.audiences: tokens made for the API server itself are refused. */
  tokenAudiences: string[];
  /** Command run when the client names none; the default prefers bash and falls back to sh. */
  shell: string[];
  /** Allow the client to choose the command (query parameter `command`, repeated). */
  allowCommand: boolean;
  pingIntervalMs: number;
  wsPingIntervalMs: number;
  idleTimeoutMs: number;
  /**
   * How long a browser may take to send its AUTH message when no token came with the upgrade. The
   * web page sends it as soon as the socket opens; meanwhile the connection holds a pending slot.
   */
  authTimeoutMs: number;
  maxSessions: number;
  maxSessionsPerUser: number;
  /** A session ends after this long whatever it does (0: no limit); it also ends when its token expires. */
  maxSessionSeconds: number;
  /**
   * How often a running session's grant is asked again (the kubernetes authorizer's TokenReview and
   * SubjectAccessReview, the webhook's call); a no ends the session (0: never).
   */
  reauthorizeIntervalMs: number;
  /** Connections not yet authorized, in all and per client address; more are answered 503 / 429 before the upgrade. */
  maxPendingConnections: number;
  maxPendingPerSource: number;
  /** Upgrades (each can cost one authorizer call) per client address per minute; more are answered 429. */
  authAttemptsPerMinute: number;
  /** Peers (CIDRs) whose X-Forwarded-For is believed for the client address: the ingress gateway's pods. */
  trustedProxies: string[];
  /**
   * Proxies in front of the gateway that each append the address they saw to X-Forwarded-For (an
   * Istio ingress gateway or ingress-nginx: 1); the client is that many addresses from the right.
   * Believed from every peer unless trustedProxies names them. 0: X-Forwarded-For counts only
   * from trustedProxies.
   */
  trustedProxyHops: number;
  /** Origins a browser may open a session from; empty: only the gateway's own origin (the Host header), when that is an IP address or localhost. */
  allowedOrigins: string[];
  maxFrameBytes: number;
  outputFrameBytes: number;
  bufferHighBytes: number;
  bufferLowBytes: number;
  drainTimeoutMs: number;
  /** Seconds between SIGHUP and SIGKILL when ending an abandoned shell. */
  reapGraceSeconds: number;
  /**
   * The longest the reaper of an abandoned shell may take (its grace included); then it is given up
   * (audit `reap.failed`). A container's user controls what the reaper runs on, so it may never end.
   */
  reapTimeoutMs: number;
  auditFile: string;
  /** The directory sink: one asciicast file per session here (recordings/volume.ts); empty: see recordS3Bucket. */
  recordDir: string;
  /** Recordings older than this many days are deleted (checked at start and hourly; 0: kept forever). The directory sink only. */
  recordRetentionDays: number;
  /** The S3 sink: the bucket every replica records to and serves from (recordings/s3/); empty: off. Not with recordDir. */
  recordS3Bucket: string;
  /** A custom endpoint for S3-compatible servers (https, or http only to a loopback address); empty: AWS's for the region. */
  recordS3Endpoint: string;
  /** The bucket's region; empty: AWS_REGION, else us-east-1. */
  recordS3Region: string;
  /** Prepended to every object key (e.g. "recordings/"). */
  recordS3Prefix: string;
  /** Path-style addressing (endpoint/bucket/key) instead of bucket.endpoint/key, as many S3-compatible servers want. */
  recordS3ForcePathStyle: boolean;
  /** The S3 sink checkpoints what is not in a part yet this often: a gateway that dies loses at most about this much output. */
  recordFlushSeconds: number;
  /** The S3 sink uploads a multipart part once this much output is held (>= 5 MiB, S3's smallest part). */
  recordPartBytes: number;
  /** A recording write (file append, or S3 request with its retries) that takes longer fails the recording, and so ends its session. */
  recordWriteTimeoutMs: number;
  /** Groups (from the authorizer) whose members may list and download recordings; empty: nobody. */
  reviewerGroups: string[];
  /**
   * Debug containers (Kubernetes backend): the images a client may ask for, matched exactly; empty
   * (the default) turns the feature off.
   */
  debugImages: string[];
  /** The image for `debug=true` and `debug=auto`; empty: the first of debugImages. */
  debugDefaultImage: string;
  /** How long a new debug container may take to run (image pull included) before the session gives up. */
  debugStartTimeoutMs: number;
  logLevel: "debug" | "info" | "warn" | "error";
}

/**
 * S3's smallest multipart part but the last, and its largest ("Part size: 5 MiB to 5 GiB",
 * docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html).
 */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
const MAX_PART_BYTES = 5 * 1024 * 1024 * 1024;

export const defaultConfig: GatewayConfig = {
  host: "0.0.0.0",
  port: 8080,
  metricsHost: "0.0.0.0",
  metricsPort: 9090,
  path: "/v1/enter",
  backend: "kubernetes",
  dockerHost: "unix:///var/run/docker.sock",
  kubeconfig: "",
  gatewayNamespace: "",
  refusedNamespaces: [],
  authorizer: "kubernetes",
  webhookUrl: "",
  webhookTimeoutMs: 3000,
  oidcIssuer: "",
  oidcAudience: "",
  oidcJwksUri: "",
  oidcUsernameClaim: "sub",
  oidcNamespacesClaim: "namespaces",
  oidcGroupsClaim: "groups",
  oidcAlgorithms: ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"],
  oidcMaxTokenAgeSeconds: 24 * 3600,
  tokenAudiences: ["entryway"],
  shell: [],
  allowCommand: true,
  pingIntervalMs: 10_000,
  wsPingIntervalMs: 30_000,
  idleTimeoutMs: 30 * 60_000,
  authTimeoutMs: 3000,
  maxSessions: 500,
  maxSessionsPerUser: 10,
  maxSessionSeconds: 12 * 3600,
  reauthorizeIntervalMs: 5 * 60_000,
  maxPendingConnections: 256,
  maxPendingPerSource: 64,
  authAttemptsPerMinute: 600,
  trustedProxies: [],
  trustedProxyHops: 0,
  allowedOrigins: [],
  maxFrameBytes: 64 * 1024,
  outputFrameBytes: 32 * 1024,
  bufferHighBytes: 1024 * 1024,
  bufferLowBytes: 256 * 1024,
  drainTimeoutMs: 10_000,
  reapGraceSeconds: 2,
  reapTimeoutMs: 15_000,
  auditFile: "",
  recordDir: "",
  recordRetentionDays: 0,
  recordS3Bucket: "",
  recordS3Endpoint: "",
  recordS3Region: "",
  recordS3Prefix: "",
  recordS3ForcePathStyle: false,
  recordFlushSeconds: 10,
  recordPartBytes: MIN_PART_BYTES,
  recordWriteTimeoutMs: 30_000,
  reviewerGroups: [],
  debugImages: [],
  debugDefaultImage: "",
  debugStartTimeoutMs: 60_000,
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
    if (!Number.isFinite(value) || value < 0)
      throw new Error(`${key}: expected a non-negative number, got ${String(raw)}`);
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
    if (!Array.isArray(value) || !value.every((v) => typeof v === "string"))
      throw new Error(`${key}: expected an array of strings`);
    return value;
  }
  const value = String(raw);
  const allowed = choices[key];
  if (allowed && !allowed.includes(value))
    throw new Error(`${key}: expected one of ${allowed.join(", ")}, got ${value}`);
  return value;
}

/** A value's JSON type, as a setting's default has it ("array" apart from "object"). */
function jsonType(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}

/**
 * The settings document: a JSON object whose keys are settings, each value of its default's JSON
 * type (a number, a boolean, a string, an array). The file may come from anyone who can write the
 * ConfigMap, so everything else is refused, every problem named by its key, before a value is used;
 * an own-key check, since "constructor" or "__proto__" are `in` every object.
 */
export function readConfigFile(file: string): Partial<Record<keyof GatewayConfig, unknown>> {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${file}: cannot read the settings document: ${(error as Error).message}`, { cause: error });
  }
  if (jsonType(document) !== "object")
    throw new Error(`${file}: the settings document must be a JSON object of settings, got ${jsonType(document)}`);
  const problems: string[] = [];
  for (const [key, value] of Object.entries(document as Record<string, unknown>)) {
    if (!Object.hasOwn(defaultConfig, key)) problems.push(`unknown setting ${key}`);
    else if (jsonType(value) !== jsonType(defaultConfig[key as keyof GatewayConfig])) {
      problems.push(
        `${key}: expected ${jsonType(defaultConfig[key as keyof GatewayConfig])}, got ${jsonType(value)} ${JSON.stringify(value).slice(0, 60)}`,
      );
    }
  }
  if (problems.length > 0) throw new Error(`${file}: ${problems.join("; ")}`);
  return document as Partial<Record<keyof GatewayConfig, unknown>>;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const file = env.ENTRYWAY_CONFIG ? readConfigFile(env.ENTRYWAY_CONFIG) : {};
  const config: Record<string, unknown> = { ...defaultConfig };
  for (const key of Object.keys(defaultConfig) as (keyof GatewayConfig)[]) {
    const raw = env[envName(key)] ?? file[key];
    if (raw !== undefined && raw !== "") config[key] = coerce(key, raw);
  }
  const result = config as unknown as GatewayConfig;
  if (result.bufferLowBytes > result.bufferHighBytes) throw new Error("bufferLowBytes must not exceed bufferHighBytes");
  if (result.outputFrameBytes < 4) throw new Error("outputFrameBytes must be at least 4");
  if (result.reapTimeoutMs <= result.reapGraceSeconds * 1000)
    throw new Error("reapTimeoutMs must be longer than reapGraceSeconds (the reaper waits that long before SIGKILL)");
  const symmetric = result.oidcAlgorithms.filter((alg) => alg === "none" || /^HS/i.test(alg));
  if (symmetric.length > 0)
    throw new Error(
      `oidcAlgorithms: ${symmetric.join(", ")} not allowed (an issuer's public key must never verify an HMAC or unsigned token)`,
    );
  if (result.oidcAlgorithms.length === 0) throw new Error("oidcAlgorithms must name at least one algorithm");
  for (const cidr of result.trustedProxies) parseCidr(cidr);
  if (!Number.isInteger(result.trustedProxyHops))
    throw new Error(`trustedProxyHops: expected a whole number, got ${result.trustedProxyHops}`);
  for (const origin of result.allowedOrigins) {
    if (new URL(origin).origin !== origin)
      throw new Error(`allowedOrigins: ${origin} is not an origin (scheme://host[:port], no path)`);
  }
  checkDebugSettings(result);
  checkRecordingSettings(result);
  return result;
}

/**
 * Bucket names as S3 allows them for new buckets: 3 to 63 lower-case letters, digits, dots and
 * hyphens, starting and ending with a letter or digit
 * (docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html).
 */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** Key prefix characters S3 calls safe ("Object key naming guidelines"), no leading slash, no dot segments. */
const KEY_PREFIX = /^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|$))[A-Za-z0-9!_.*'()/-]{0,512}$/;

/** One sink at a time; the S3 settings only with a bucket; values S3 accepts. */
function checkRecordingSettings(config: GatewayConfig): void {
  const s3Settings = (["recordS3Endpoint", "recordS3Region", "recordS3Prefix"] as const).filter((key) => config[key]);
  const named: string[] = [...s3Settings, ...(config.recordS3ForcePathStyle ? ["recordS3ForcePathStyle"] : [])];
  if (!config.recordS3Bucket) {
    if (named.length > 0) throw new Error(`${named.join(", ")} set but recordS3Bucket is empty (the S3 sink is off)`);
  } else {
    if (config.recordDir)
      throw new Error(
        "recordDir and recordS3Bucket are both set: recordings go to one sink, the directory or the bucket",
      );
    if (config.recordRetentionDays > 0)
      throw new Error(
        "recordRetentionDays is for the directory sink; with recordS3Bucket a bucket lifecycle rule expires recordings (docs/exec-gateway.md)",
      );
    if (!BUCKET_NAME.test(config.recordS3Bucket))
      throw new Error(`recordS3Bucket: ${JSON.stringify(config.recordS3Bucket)} is not a bucket name`);
    if (!KEY_PREFIX.test(config.recordS3Prefix))
      throw new Error(
        `recordS3Prefix: ${JSON.stringify(config.recordS3Prefix)} is not a key prefix (letters, digits, !_.*'()/-; no leading / and no . or .. segment)`,
      );
    if (config.recordS3Endpoint) {
      let url: URL;
      try {
        url = new URL(config.recordS3Endpoint);
      } catch {
        throw new Error(`recordS3Endpoint: ${JSON.stringify(config.recordS3Endpoint)} is not a URL`);
      }
      // Recordings hold whatever the sessions showed: they cross the network encrypted.
      if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname)))
        throw new Error(
          "recordS3Endpoint must be https (plain http only to a loopback address): recordings hold what sessions showed",
        );
      if (url.username || url.password)
        throw new Error(
          "recordS3Endpoint must not carry credentials: they come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the pod's identity",
        );
    }
  }
  if (config.recordPartBytes < MIN_PART_BYTES || config.recordPartBytes > MAX_PART_BYTES)
    throw new Error(
      `recordPartBytes must be between ${MIN_PART_BYTES} (5 MiB) and ${MAX_PART_BYTES} (5 GiB), S3's part sizes`,
    );
  if (config.recordFlushSeconds <= 0 || config.recordFlushSeconds > 3600)
    throw new Error("recordFlushSeconds must be more than 0 and at most 3600");
  if (config.recordWriteTimeoutMs < 100) throw new Error("recordWriteTimeoutMs must be at least 100");
}

/**
 * Debug containers need the Kubernetes backend and authorizer (the second SubjectAccessReview), a
 * default image from the allow-list, and a session time limit: a debug container's main process
 * sleeps that long (an ephemeral container cannot be removed, so it ends by itself).
 */
function checkDebugSettings(config: GatewayConfig): void {
  const images = config.debugImages;
  if (images.length === 0) {
    if (config.debugDefaultImage)
      throw new Error("debugDefaultImage is set but debugImages is empty (debug containers are off)");
    return;
  }
  for (const image of images)
    if (!IMAGE_REFERENCE.test(image))
      throw new Error(`debugImages: ${JSON.stringify(image)} is not an image reference`);
  if (config.debugDefaultImage && !images.includes(config.debugDefaultImage))
    throw new Error(`debugDefaultImage ${config.debugDefaultImage} is not one of debugImages`);
  if (config.backend !== "kubernetes") throw new Error("debugImages: debug containers need the kubernetes backend");
  if (config.authorizer !== "kubernetes")
    throw new Error(
      "debugImages: debug containers need the kubernetes authorizer (a SubjectAccessReview for patch pods/ephemeralcontainers)",
    );
  if (config.maxSessionSeconds === 0)
    throw new Error("debugImages: debug containers need maxSessionSeconds > 0 (a debug container lives that long)");
}

/**
 * An image reference, [registry[:port]/]path[:tag][@sha256:digest]: the lower-case subset of the grammar
 * kubectl debug checks its --image against (distribution/reference regexp.go, ReferenceRegexp).
 */
const IMAGE_REFERENCE =
  /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::\d{1,5})?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;

/** "10.0.0.0/8", "fd00::/8" or a single address; throws on anything else. */
export function parseCidr(cidr: string): { address: string; prefix: number; family: "ipv4" | "ipv6" } {
  const [address = "", prefixText] = cidr.split("/");
  const version = isIP(address);
  const bits = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (!version || !Number.isInteger(prefix) || prefix < 0 || prefix > bits)
    throw new Error(`trustedProxies: ${cidr} is not an address or CIDR`);
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/** A BlockList of the CIDRs, for matching peer addresses. */
export function cidrList(cidrs: string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const { address, prefix, family } = parseCidr(cidr);
    list.addSubnet(address, prefix, family);
  }
  return list;
}
