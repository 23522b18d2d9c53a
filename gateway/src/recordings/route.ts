// The reviewers' endpoint GET /v1/recordings[/<id>], which lists and serves whatever the sink holds
// (so with the S3 sink any replica serves any recording). Ids are checked against one strict
// pattern before any sink call.
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { answerJson, API_HEADERS, type AuthenticatedRouteOptions, type RouteHandler } from "../http-route.js";
import { errorMessage, jsonLine } from "../log.js";
import { recordingStart } from "./cast.js";
import type { RecordingSink } from "./sink.js";

export interface RecordingsRouteOptions extends AuthenticatedRouteOptions {
  /** Where the recordings are: the listing and downloads read them there. */
  sink: RecordingSink;
}

export const RECORDINGS_PATH = "/v1/recordings";

/**
 * GET /v1/recordings (JSON list) and GET /v1/recordings/<id> (the .cast file), for reviewers only:
 * the token (Authorization: Bearer, or Entry's access-token header) must name a user the authorizer
 * knows in one of reviewerGroups. No token: 401; anyone else: 403; every answer is audited. Lookups
 * count against the same per-address limits as upgrades (each costs an authorizer call).
 */
export function recordingsRoute(options: RecordingsRouteOptions): RouteHandler {
  const { config, sink, authorizer, audit, logger, preAuth } = options;
  const reviewers = new Set(config.reviewerGroups);
  return async (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? "/", "http://gateway").pathname;
    if (path !== RECORDINGS_PATH && !path.startsWith(`${RECORDINGS_PATH}/`)) return false;
    // Not percent-decoded: a valid id has no character that needs it.
    const id = path === RECORDINGS_PATH ? undefined : path.slice(RECORDINGS_PATH.length + 1);
    const client = options.clientOf(request);
    const record = (status: number, extra: { user?: string; reason?: string } = {}) =>
      audit.write({
        event: id === undefined ? "recordings.list" : "recordings.get",
        ...(id !== undefined && recordingStart(id) ? { recording: id } : {}),
        client,
        status,
        ...extra,
      });
    const answer = (status: number, body: string, headers: Record<string, string> = {}) =>
      answerJson(response, status, body, headers);
    const refuse = (
      status: number,
      reason: string,
      extra: { user?: string; headers?: Record<string, string> } = {},
    ) => {
      record(status, { reason, ...(extra.user ? { user: extra.user } : {}) });
      answer(status, jsonLine({ error: reason }), extra.headers);
      return true;
    };

    if (request.method !== "GET" && request.method !== "HEAD")
      return refuse(405, "method not allowed", { headers: { allow: "GET, HEAD" } });
    const token = options.tokenOf(request);
    if (!token)
      return refuse(401, "no token: send Authorization: Bearer <token>", {
        headers: { "www-authenticate": 'Bearer realm="entryway"' },
      });
    const admission = preAuth.admit(client);
    if (admission) return refuse(admission.status, admission.reason);
    let identity;
    try {
      identity = authorizer.identify
        ? await authorizer.identify({ token, clientAddress: client })
        : { known: false as const, reason: `the ${config.authorizer} authorizer names no groups` };
    } finally {
      preAuth.release(client);
    }
    if (!identity.known) {
      if (identity.detail) logger.log("warn", "authorizer failed", { path, error: identity.detail });
      return refuse(403, `permission denied: ${identity.reason}`);
    }
    const { user, groups } = identity;
    if (!groups.some((group) => reviewers.has(group)))
      return refuse(403, `permission denied: ${user} is not in a reviewer group`, { user });

    // The sink's own error text (a bucket's answer) goes to the log only.
    const unavailable = (error: unknown) => {
      logger.log("error", "recordings unavailable", { sink: sink.kind, path, error: errorMessage(error) });
      return refuse(503, "the recordings cannot be read now (the gateway's log has the cause)", { user });
    };
    if (id === undefined) {
      let recordings;
      try {
        recordings = await sink.list();
      } catch (error) {
        return unavailable(error);
      }
      record(200, { user });
      answer(200, jsonLine({ recordings }));
      return true;
    }
    if (!recordingStart(id)) return refuse(404, "no such recording", { user });
    let stored;
    try {
      stored = await sink.get(id);
    } catch (error) {
      return unavailable(error);
    }
    if (!stored) return refuse(404, "no such recording", { user });
    record(200, { user });
    response.writeHead(200, {
      "content-type": "application/x-asciicast",
      "content-length": String(stored.size),
      "content-disposition": `attachment; filename="${id}.cast"`,
      ...API_HEADERS,
    });
    if (request.method === "HEAD") {
      stored.body.destroy();
      response.end();
      return true;
    }
    await pipeline(stored.body, response);
    return true;
  };
}
