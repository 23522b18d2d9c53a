// The recordings directory (recordDir): what is in it, and the cleanup of recordings older than
// recordRetentionDays. Ids are file names checked against one strict pattern before any file
// system call, so no id can name a path outside the directory.
import { createReadStream } from "node:fs";
import { open, readdir, stat, unlink } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import type { AuditSink, RecordingMeta } from "./audit.js";
import type { Authorizer } from "./auth/authorizer.js";
import type { GatewayConfig } from "./config.js";
import { recordingStart } from "./asciicast.js";
import type { PreAuthLimits } from "./limits.js";
import { errorMessage, type Logger } from "./log.js";
import type { RouteHandler } from "./server.js";

const DAY_MS = 24 * 3600 * 1000;
/** The header line is read up to this much; a longer one is not a recording this gateway wrote. */
const MAX_HEADER_BYTES = 64 * 1024;

export interface RecordingSummary {
  id: string;
  user: string;
  target: string;
  /** ISO time the session's recording started. */
  start: string;
  /** Seconds from the start to the last write. */
  duration: number;
  /** Bytes. */
  size: number;
}

/** The file of a valid id; null for anything else (path separators, dots, other names). */
export function recordingFile(dir: string, id: string): string | null {
  return recordingStart(id) ? join(dir, `${id}.cast`) : null;
}

async function readHeader(file: string): Promise<Partial<RecordingMeta>> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(MAX_HEADER_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, MAX_HEADER_BYTES, 0);
    const text = buffer.subarray(0, bytesRead).toString("utf8");
    const newline = text.indexOf("\n");
    if (newline < 0) return {};
    const header = JSON.parse(text.slice(0, newline)) as { title?: unknown; entryway?: Partial<RecordingMeta> };
    return { target: typeof header.title === "string" ? header.title : undefined, ...header.entryway };
  } catch {
    return {};
  } finally {
    await handle.close();
  }
}

/** The ids of the recordings in `dir` (other files are ignored); a missing directory has none. */
async function recordingIds(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((name) => name.endsWith(".cast") && recordingStart(name.slice(0, -5))).map((name) => name.slice(0, -5));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/** Every recording in `dir`, newest first. */
export async function listRecordings(dir: string): Promise<RecordingSummary[]> {
  const summaries: RecordingSummary[] = [];
  for (const id of await recordingIds(dir)) {
    const start = recordingStart(id)!;
    const file = join(dir, `${id}.cast`);
    try {
      const info = await stat(file);
      if (!info.isFile()) continue;
      const meta = await readHeader(file);
      summaries.push({
        id,
        user: typeof meta.user === "string" ? meta.user : "",
        target: typeof meta.target === "string" ? meta.target : "",
        start: start.toISOString(),
        duration: Math.max(0, (info.mtimeMs - start.getTime()) / 1000),
        size: info.size,
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error; // removed meanwhile (cleanup on another replica)
    }
  }
  return summaries.sort((a, b) => b.start.localeCompare(a.start));
}

/**
 * Deletes the recordings last written more than `retentionDays` before `now` (a session still being
 * recorded writes on every output, so only idle sessions older than the retention could lose their
 * file early). Returns how many went. Other files in the directory are left alone.
 */
export async function pruneRecordings(dir: string, retentionDays: number, now = Date.now()): Promise<number> {
  const cutoff = now - retentionDays * DAY_MS;
  let removed = 0;
  for (const id of await recordingIds(dir)) {
    const file = join(dir, `${id}.cast`);
    try {
      if ((await stat(file)).mtimeMs >= cutoff) continue;
      await unlink(file);
      removed++;
    } catch (error) {
      // Another replica sharing the volume may have removed it first.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  return removed;
}

/** Prunes now and then every `intervalMs` (hourly) until stopped; failures are logged, never fatal. */
export function startRecordingCleanup(dir: string, retentionDays: number, logger: Logger, intervalMs = 3600_000): () => void {
  const run = () =>
    void pruneRecordings(dir, retentionDays).then(
      (removed) => removed > 0 && logger.log("info", "old recordings removed", { removed, retentionDays }),
      (error: unknown) => logger.log("warn", "recording cleanup failed", { error: errorMessage(error) }),
    );
  run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

export interface RecordingsRouteOptions {
  config: GatewayConfig;
  authorizer: Authorizer;
  audit: AuditSink;
  logger: Logger;
  preAuth: PreAuthLimits;
  /** The client's address (the peer's, or X-Forwarded-For's behind a trusted proxy). */
  clientOf(request: IncomingMessage): string;
  /** The token the request carries, as for the WebSocket endpoint (server.ts tokenFromRequest). */
  tokenOf(request: IncomingMessage): string | null;
}

export const RECORDINGS_PATH = "/v1/recordings";

/**
 * GET /v1/recordings (JSON list) and GET /v1/recordings/<id> (the .cast file), for reviewers only:
 * the token (Authorization: Bearer, or Entry's access-token header) must name a user the authorizer
 * knows in one of reviewerGroups. No token: 401; anyone else: 403; every answer is audited. Lookups
 * count against the same per-address limits as upgrades (each costs an authorizer call).
 */
export function recordingsRoute(options: RecordingsRouteOptions): RouteHandler {
  const { config, authorizer, audit, logger, preAuth } = options;
  const reviewers = new Set(config.reviewerGroups);
  return async (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? "/", "http://gateway").pathname;
    if (path !== RECORDINGS_PATH && !path.startsWith(`${RECORDINGS_PATH}/`)) return false;
    // Not percent-decoded: a valid id has no character that needs it.
    const id = path === RECORDINGS_PATH ? undefined : path.slice(RECORDINGS_PATH.length + 1);
    const client = options.clientOf(request);
    const record = (status: number, extra: { user?: string; reason?: string } = {}) =>
      audit.write({ event: id === undefined ? "recordings.list" : "recordings.get", ...(id !== undefined && recordingStart(id) ? { recording: id } : {}), client, status, ...extra });
    const answer = (status: number, body: string, headers: Record<string, string> = {}) =>
      void response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", "x-content-type-options": "nosniff", ...headers }).end(body);
    const refuse = (status: number, reason: string, extra: { user?: string; headers?: Record<string, string> } = {}) => {
      record(status, { reason, ...(extra.user ? { user: extra.user } : {}) });
      answer(status, JSON.stringify({ error: reason }) + "\n", extra.headers);
      return true;
    };

    if (request.method !== "GET" && request.method !== "HEAD") return refuse(405, "method not allowed", { headers: { allow: "GET, HEAD" } });
    const token = options.tokenOf(request);
    if (!token) return refuse(401, "no token: send Authorization: Bearer <token>", { headers: { "www-authenticate": 'Bearer realm="entryway"' } });
    const admission = preAuth.admit(client);
    if (admission) return refuse(admission.status, admission.reason);
    let identity;
    try {
      identity = authorizer.identify ? await authorizer.identify({ token, clientAddress: client }) : { known: false as const, reason: `the ${config.authorizer} authorizer names no groups` };
    } finally {
      preAuth.release(client);
    }
    if (!identity.known) {
      if (identity.detail) logger.log("warn", "authorizer failed", { path, error: identity.detail });
      return refuse(403, `permission denied: ${identity.reason}`);
    }
    const { user, groups } = identity;
    if (!groups.some((group) => reviewers.has(group))) return refuse(403, `permission denied: ${user} is not in a reviewer group`, { user });

    if (id === undefined) {
      record(200, { user });
      answer(200, JSON.stringify({ recordings: await listRecordings(config.recordDir) }) + "\n");
      return true;
    }
    const file = recordingFile(config.recordDir, id);
    const info = file ? await stat(file).catch(() => null) : null;
    if (!file || !info?.isFile()) return refuse(404, "no such recording", { user });
    record(200, { user });
    response.writeHead(200, {
      "content-type": "application/x-asciicast",
      "content-length": String(info.size),
      "content-disposition": `attachment; filename="${id}.cast"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    });
    if (request.method === "HEAD") {
      response.end();
      return true;
    }
    await pipeline(createReadStream(file), response);
    return true;
  };
}
