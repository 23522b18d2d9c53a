// Entry's model: ask the platform's console per request. POST {token, target, clientAddress} as JSON;
// the webhook answers {"allowed": true, "user": "alice"} or {"allowed": false, "reason": "..."}.
// Anything else (timeout, non-2xx, a redirect, bad JSON) denies. The token travels in the body, so
// the URL must be https (plain http only to a loopback address) and a redirect is never followed.
import { isLoopbackHost } from "../net.js";
import { failClosed, type Authorizer } from "./authorizer.js";

export function webhookAuthorizer(url: string, timeoutMs: number): Authorizer {
  if (!url) throw new Error("webhookUrl is required for the webhook authorizer");
  const parsed = new URL(url);
  if (parsed.protocol !== "https:" && !(parsed.protocol === "http:" && isLoopbackHost(parsed.hostname))) {
    throw new Error("webhookUrl must be https (plain http only to a loopback address): the token travels in the request");
  }
  return failClosed("webhook", async ({ token, target, clientAddress }) => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, target, clientAddress }),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: "manual",
    });
    if (response.status >= 300 && response.status < 400) return { allow: false, reason: "webhook authorizer unavailable", detail: `webhook answered a redirect (HTTP ${response.status}); redirects are not followed` };
    if (!response.ok) return { allow: false, reason: "webhook authorizer unavailable", detail: `webhook answered HTTP ${response.status}` };
    const body = (await response.json()) as { allowed?: unknown; user?: unknown; reason?: unknown };
    const user = typeof body.user === "string" && body.user ? body.user : undefined;
    if (body.allowed === true && user) return { allow: true, user };
    const reason = typeof body.reason === "string" && body.reason ? body.reason : "not allowed";
    return user ? { allow: false, reason, user } : { allow: false, reason };
  });
}
