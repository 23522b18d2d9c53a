// Entry's model: ask the platform's console per request. POST {token, target, clientAddress} as JSON;
// the webhook answers {"allowed": true, "user": "alice"} or {"allowed": false, "reason": "..."}.
// Anything else (timeout, non-2xx, a redirect, bad JSON) denies. The token travels in the body, so
// the URL must be https (plain http only to a loopback address) and a redirect is never followed.
// For access to recordings the gateway asks who holds a token: POST {token, clientAddress,
// purpose: "identify"} (no target); the answer {"allowed": true, "user": "alice", "groups": [...]}
// names the user and groups, anything else leaves them unknown.
//
// A session lasts no longer than its grant: a token that is a JWT ends the session at its exp, and
// the same question is asked again for a running session (recheck): a no ends it (`denied`).
import { secureUrl } from "../net.js";
import {
  failClosed,
  identifyFailClosed,
  jwtExpiry,
  recheckFailSoft,
  type Authorizer,
  type Identity,
  type Recheck,
} from "./authorizer.js";

export function webhookAuthorizer(url: string, timeoutMs: number): Authorizer {
  if (!url) throw new Error("webhookUrl is required for the webhook authorizer");
  secureUrl(url, "webhookUrl", "the token travels in the request");
  /** The webhook's JSON answer, or why there is none to trust. */
  async function ask(
    body: Record<string, unknown>,
  ): Promise<
    | { ok: true; answer: { allowed?: unknown; user?: unknown; reason?: unknown; groups?: unknown } }
    | { ok: false; detail: string }
  > {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: "manual",
    });
    if (response.status >= 300 && response.status < 400)
      return { ok: false, detail: `webhook answered a redirect (HTTP ${response.status}); redirects are not followed` };
    if (!response.ok) return { ok: false, detail: `webhook answered HTTP ${response.status}` };
    return { ok: true, answer: (await response.json()) as Record<string, unknown> };
  }
  const { authorize } = failClosed("webhook", async ({ token, target, clientAddress }) => {
    const asked = await ask({ token, target, clientAddress });
    if (!asked.ok) return { allow: false, reason: "webhook authorizer unavailable", detail: asked.detail };
    const body = asked.answer;
    const user = typeof body.user === "string" && body.user ? body.user : undefined;
    if (body.allowed === true && user) {
      const recheck = recheckFailSoft(async (): Promise<Recheck> => {
        const again = await ask({ token, target, clientAddress });
        if (!again.ok) return { outcome: "unavailable", detail: again.detail };
        if (again.answer.allowed === true && again.answer.user === user) return { outcome: "allowed" };
        const why =
          typeof again.answer.reason === "string" && again.answer.reason
            ? again.answer.reason
            : again.answer.allowed === true
              ? `the webhook now names another user than ${user}`
              : "not allowed";
        return { outcome: "revoked", closeCode: "denied", reason: `permission denied: ${why}` };
      });
      const expiresAt = jwtExpiry(token);
      return { allow: true, user, recheck, ...(expiresAt !== undefined ? { expiresAt } : {}) };
    }
    const reason = typeof body.reason === "string" && body.reason ? body.reason : "not allowed";
    return user ? { allow: false, reason, user } : { allow: false, reason };
  });
  const identify = identifyFailClosed("webhook", async ({ token, clientAddress }): Promise<Identity> => {
    const asked = await ask({ token, clientAddress, purpose: "identify" });
    if (!asked.ok) return { known: false, reason: "webhook authorizer unavailable", detail: asked.detail };
    const { allowed, user, groups } = asked.answer;
    if (allowed !== true || typeof user !== "string" || !user)
      return { known: false, reason: "the webhook does not know this token" };
    return {
      known: true,
      user,
      groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === "string") : [],
    };
  });
  return { authorize, identify };
}
