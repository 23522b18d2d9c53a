// GET /v1/targets[?namespace=<ns>]: the targets the caller may enter (`entryway ls`). The backend
// lists the running candidates (pods, or Docker containers); the SAME authorizer that decides an
// exec is asked about each one, with the same question the WebSocket endpoint asks (the pod as
// target), and only those it allows are answered. The namespaces the gateway never enters (its own,
// refusedNamespaces) are left out before any question, as the endpoint refuses them first. So the
// list names nothing the caller could not open, and an answer says nothing of a namespace the caller
// may not enter: it is empty, as for a namespace with no pods or none at all.
//
// The token as for the endpoint; no token is 401, a token the authorizer does not know (identify)
// 403. Each listing counts against the per-address limits as an upgrade does, and is audited. Every
// candidate is one authorizer question (8 at a time): on a large cluster, name a namespace. No
// candidate is left out for cost: a cut list would be wrong, and saying it was cut would tell how
// many targets there are that the caller may not see.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Backend, ListedTarget } from "./backends/backend.js";
import { errorMessage, jsonLine } from "./log.js";
import { answerJson, type AuthenticatedRouteOptions, type RouteHandler } from "./http-route.js";
import { checkNamespace, TargetError } from "./target.js";

export const TARGETS_PATH = "/v1/targets";
/** Authorizer calls in flight at once for one listing. */
const CONCURRENCY = 8;

export interface TargetsRouteOptions extends AuthenticatedRouteOptions {
  backend: Backend;
}

/** One allowed target as the CLI writes it (entryway enter's syntax) and its parts. */
export type TargetEntry =
  { target: string; namespace: string; pod: string; containers: string[] } | { target: string; container: string };

function entry({ target, containers }: ListedTarget): TargetEntry | undefined {
  if (target.kind === "docker") return { target: target.container, container: target.container };
  if (target.kind === "pod")
    return { target: `${target.namespace}/${target.pod}`, namespace: target.namespace, pod: target.pod, containers };
  return undefined;
}

/** `items` through `check`, at most `limit` at a time, in their order. */
async function filterConcurrently<T>(items: T[], limit: number, check: (item: T) => Promise<boolean>): Promise<T[]> {
  const keep = new Array<boolean>(items.length).fill(false);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      keep[index] = await check(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return items.filter((_, index) => keep[index]);
}

export function targetsRoute(options: TargetsRouteOptions): RouteHandler {
  const { config, backend, authorizer, audit, logger, preAuth } = options;
  const never = new Set([config.gatewayNamespace, ...config.refusedNamespaces].filter(Boolean));
  return async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://gateway");
    if (url.pathname !== TARGETS_PATH) return false;
    const client = options.clientOf(request);
    const answer = (status: number, body: unknown, extra: { user?: string; reason?: string } = {}, headers = {}) => {
      audit.write({ event: "targets.list", client, status, ...extra });
      answerJson(response, status, jsonLine(body), headers);
      return true;
    };
    const refuse = (status: number, reason: string, user?: string, headers = {}) =>
      answer(status, { error: reason }, { reason, ...(user ? { user } : {}) }, headers);

    if (request.method !== "GET") return refuse(405, "method not allowed", undefined, { allow: "GET" });
    const token = options.tokenOf(request);
    if (!token)
      return refuse(401, "no token: send Authorization: Bearer <token>", undefined, {
        "www-authenticate": 'Bearer realm="entryway"',
      });
    let namespace: string | undefined;
    const asked = url.searchParams.get("namespace");
    if (asked !== null) {
      if (backend.name === "docker") return refuse(400, "a Docker gateway has no namespaces");
      try {
        namespace = checkNamespace(asked);
      } catch (error) {
        if (!(error instanceof TargetError)) throw error;
        return refuse(400, error.message);
      }
    }
    if (!backend.list) return refuse(501, `the ${backend.name} backend cannot list targets`);
    const admission = preAuth.admit(client);
    if (admission) return refuse(admission.status, admission.reason);
    try {
      let user: string | undefined;
      if (authorizer.identify) {
        const identity = await authorizer.identify({ token, clientAddress: client });
        if (!identity.known) {
          if (identity.detail) logger.log("warn", "authorizer failed", { path: url.pathname, error: identity.detail });
          return refuse(403, `permission denied: ${identity.reason}`);
        }
        user = identity.user;
      }
      let candidates: ListedTarget[];
      try {
        candidates = await backend.list(namespace ? { namespace } : {});
      } catch (error) {
        logger.log("error", "targets unavailable", { path: url.pathname, error: errorMessage(error) });
        return refuse(503, "the targets cannot be listed now (the gateway's log has the cause)", user);
      }
      candidates = candidates.filter(({ target }) => target.kind === "docker" || !never.has(target.namespace));
      const allowed = await filterConcurrently(candidates, CONCURRENCY, async ({ target }) => {
        const decision = await authorizer.authorize({ token, target, clientAddress: client });
        if (decision.allow) user ??= decision.user;
        return decision.allow;
      });
      const targets = allowed.map(entry).filter((item): item is TargetEntry => item !== undefined);
      return answer(200, { targets }, user ? { user } : {});
    } finally {
      preAuth.release(client);
    }
  };
}
