// OIDC ID/access tokens (JWT) verified with jose against the issuer's keys. The namespaces claim
// lists where the user may go: a namespace name, "*" for every namespace, "docker" for Docker targets.
//
// jose checks exp only when the token has one, so exp (and iat, for the age bound) are required
// claims here; only asymmetric algorithms are accepted (config.ts refuses "none" and HS*).
// Key rotation: createRemoteJWKSet fetches the JWKS again when a token names a key it does not
// hold, at most once per cooldownDuration (default 30 s) after a successful fetch, and refreshes
// keys older than cacheMaxAge (default 10 min) (panva/jose docs/jwks/remote/functions/createRemoteJWKSet.md
// and docs/jwks/remote/interfaces/RemoteJWKSetOptions.md).
//
// The issuer, its discovery document and the JWKS must come over https (plain http only to a
// loopback address): whoever can change them on the way can hand the gateway a key of their own,
// and then sign any token. That holds for a jwks_uri discovery names, too.
import { createRemoteJWKSet, jwtVerify, type JWSAlgorithm, type JWTPayload } from "jose";
import { defaultConfig } from "../config.js";
import { secureUrl } from "../net.js";
import { failClosed, identifyFailClosed, type Authorizer, type Identity } from "./authorizer.js";

export interface OidcOptions {
  issuer: string;
  audience: string;
  jwksUri: string;
  usernameClaim: string;
  namespacesClaim: string;
  /** The claim listing the user's groups (reviewers of recordings); default defaultConfig.oidcGroupsClaim. */
  groupsClaim?: string;
  /** Default: defaultConfig.oidcAlgorithms. */
  algorithms?: string[];
  /** Default: defaultConfig.oidcMaxTokenAgeSeconds. */
  maxTokenAgeSeconds?: number;
  /** jose's cooldownDuration: the least time between two JWKS fetches for an unknown key. */
  jwksCooldownMs?: number;
}

const KEYS_IN_TRANSIT = "the keys that verify tokens come from there";

async function discoverJwksUri(issuer: string): Promise<URL> {
  const response = await fetch(new URL(issuer.replace(/\/$/, "") + "/.well-known/openid-configuration"), {
    signal: AbortSignal.timeout(5000),
    redirect: "error",
  });
  if (!response.ok) throw new Error(`OIDC discovery answered HTTP ${response.status}`);
  const { jwks_uri: jwksUri } = (await response.json()) as { jwks_uri?: string };
  if (!jwksUri) throw new Error("OIDC discovery has no jwks_uri");
  return secureUrl(jwksUri, "the jwks_uri OIDC discovery names", KEYS_IN_TRANSIT);
}

/** A claim holding a list: a JSON array of strings, or one string separated by spaces or commas. */
function listClaim(claim: unknown): string[] {
  if (Array.isArray(claim)) return claim.filter((v): v is string => typeof v === "string");
  return typeof claim === "string" ? claim.split(/[\s,]+/).filter(Boolean) : [];
}

export function oidcAuthorizer(options: OidcOptions): Authorizer {
  if (!options.issuer || !options.audience)
    throw new Error("oidcIssuer and oidcAudience are required for the oidc authorizer");
  secureUrl(options.issuer, "oidcIssuer", KEYS_IN_TRANSIT);
  if (options.jwksUri) secureUrl(options.jwksUri, "oidcJwksUri", KEYS_IN_TRANSIT);
  let keys: ReturnType<typeof createRemoteJWKSet> | undefined;
  /** The verified claims with the user, or why the token is refused. */
  async function verify(
    token: string,
  ): Promise<{ ok: true; user: string; payload: JWTPayload } | { ok: false; reason: string }> {
    keys ??= createRemoteJWKSet(options.jwksUri ? new URL(options.jwksUri) : await discoverJwksUri(options.issuer), {
      ...(options.jwksCooldownMs !== undefined ? { cooldownDuration: options.jwksCooldownMs } : {}),
    });
    let payload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: (options.algorithms ?? defaultConfig.oidcAlgorithms) as JWSAlgorithm[],
        requiredClaims: ["exp", "iat"],
        maxTokenAge: options.maxTokenAgeSeconds ?? defaultConfig.oidcMaxTokenAgeSeconds,
      }));
    } catch (error) {
      return { ok: false, reason: `invalid token: ${error instanceof Error ? error.message : String(error)}` };
    }
    const user = payload[options.usernameClaim];
    if (typeof user !== "string" || !user) return { ok: false, reason: `token has no ${options.usernameClaim} claim` };
    return { ok: true, user, payload };
  }
  const { authorize } = failClosed("oidc", async ({ token, target }) => {
    const verified = await verify(token);
    if (!verified.ok) return { allow: false, reason: verified.reason };
    const { user, payload } = verified;
    const scopes = listClaim(payload[options.namespacesClaim]);
    const needed = target.kind === "docker" ? "docker" : target.namespace;
    if (scopes.includes("*") || scopes.includes(needed)) return { allow: true, user, expiresAt: payload.exp! * 1000 };
    return { allow: false, reason: `${user} may not enter ${needed}`, user };
  });
  const identify = identifyFailClosed("oidc", async ({ token }): Promise<Identity> => {
    const verified = await verify(token);
    if (!verified.ok) return { known: false, reason: verified.reason };
    return {
      known: true,
      user: verified.user,
      groups: listClaim(verified.payload[options.groupsClaim ?? defaultConfig.oidcGroupsClaim]),
    };
  });
  return { authorize, identify };
}
