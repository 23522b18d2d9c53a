// The signed-in token a command sends: a context whose auth is `oidc` takes the sign-in of its issuer
// and client id; with no token from flags, environment or context, the current sign-in (the last
// entryway login). The ID token, refreshed first when it is about to expire. The fallback, a token
// from `kubectl create token`, goes through --token-file or a context's tokenFile.
import { discover, refreshLogin } from "./oidc-login.js";
import { TokenStore, type StoredLogin } from "./token-store.js";

/** Refresh when less than this is left, or less than half the token's life when that is shorter. */
export const REFRESH_MARGIN_MS = 5 * 60 * 1000;

export function needsRefresh(login: StoredLogin, now = Date.now(), lifetimeMs?: number): boolean {
  const margin = Math.min(REFRESH_MARGIN_MS, lifetimeMs !== undefined ? lifetimeMs / 2 : REFRESH_MARGIN_MS);
  return login.expiresAt - now < margin;
}

/** The ID token's lifetime (exp - iat), read without checking it: only to choose when to refresh. */
function lifetimeOf(idToken: string): number | undefined {
  try {
    const payload = JSON.parse(Buffer.from(idToken.split(".")[1] ?? "", "base64url").toString("utf8")) as {
      iat?: unknown;
      exp?: unknown;
    };
    return typeof payload.iat === "number" && typeof payload.exp === "number"
      ? (payload.exp - payload.iat) * 1000
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The signed-in ID token for `issuer` and `clientId` (else the current sign-in), refreshed and kept
 * again when it is about to expire. Undefined when nobody signed in.
 */
export async function signedInToken(
  env: NodeJS.ProcessEnv,
  which: { issuer?: string; clientId?: string } = {},
): Promise<string | undefined> {
  const store = new TokenStore(env);
  const login = store.get(which.issuer, which.clientId);
  if (!login) return undefined;
  if (!needsRefresh(login, Date.now(), lifetimeOf(login.idToken))) return login.idToken;
  const config = await discover(login.issuer, login.clientId);
  let fresh: StoredLogin;
  try {
    fresh = await refreshLogin(config, login);
  } catch (error) {
    // Another command may have refreshed meanwhile, and a provider that rotates refresh tokens then
    // refuses the one read here: take what that command kept.
    const again = store.get(login.issuer, login.clientId);
    if (again && again.refreshToken !== login.refreshToken && !needsRefresh(again)) return again.idToken;
    throw error;
  }
  store.update(fresh);
  return fresh.idToken;
}
