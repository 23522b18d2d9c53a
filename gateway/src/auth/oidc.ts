// OIDC ID/access tokens (JWT) verified with jose against the issuer's keys. The namespaces claim
// lists where the user may go: a namespace name, "*" for every namespace, "docker" for Docker targets.
import { createRemoteJWKSet, jwtVerify } from "jose";
import { failClosed, type Authorizer } from "./authorizer.js";

export interface OidcOptions {
  issuer: string;
  audience: string;
  jwksUri: string;
  usernameClaim: string;
  namespacesClaim: string;
}

async function discoverJwksUri(issuer: string): Promise<URL> {
  const response = await fetch(new URL(issuer.replace(/\/$/, "") + "/.well-known/openid-configuration"), {
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok) throw new Error(`OIDC discovery answered HTTP ${response.status}`);
  const { jwks_uri: jwksUri } = (await response.json()) as { jwks_uri?: string };
  if (!jwksUri) throw new Error("OIDC discovery has no jwks_uri");
  return new URL(jwksUri);
}

export function oidcAuthorizer(options: OidcOptions): Authorizer {
  if (!options.issuer || !options.audience) throw new Error("oidcIssuer and oidcAudience are required for the oidc authorizer");
  let keys: ReturnType<typeof createRemoteJWKSet> | undefined;
  return failClosed("oidc", async ({ token, target }) => {
    keys ??= createRemoteJWKSet(options.jwksUri ? new URL(options.jwksUri) : await discoverJwksUri(options.issuer));
    let payload;
    try {
      ({ payload } = await jwtVerify(token, keys, { issuer: options.issuer, audience: options.audience }));
    } catch (error) {
      return { allow: false, reason: `invalid token: ${error instanceof Error ? error.message : String(error)}` };
    }
    const user = payload[options.usernameClaim];
    if (typeof user !== "string" || !user) return { allow: false, reason: `token has no ${options.usernameClaim} claim` };
    const claim = payload[options.namespacesClaim];
    const scopes = Array.isArray(claim) ? claim.filter((v): v is string => typeof v === "string") : typeof claim === "string" ? claim.split(/[\s,]+/) : [];
    const needed = target.kind === "docker" ? "docker" : target.namespace;
    if (scopes.includes("*") || scopes.includes(needed)) return { allow: true, user };
    return { allow: false, reason: `${user} may not enter ${needed}`, user };
  });
}
