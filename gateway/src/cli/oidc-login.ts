// The CLI's OpenID Connect client, on openid-client (panva/openid-client, certified): the
// authorization code flow with PKCE on a loopback redirect (RFC 8252 section 7.3:
// http://127.0.0.1:<ephemeral port>/callback, the state checked), the device authorization grant
// (RFC 8628), refresh, and revocation (RFC 7009) at logout. A public client: no secret. The token
// kept for the gateway is the ID token, whose audience is the client id (as for the web page).
//
// The issuer must be https (plain http only on a loopback address, as the gateway's OIDC settings):
// whoever can change its answers on the way can hand out tokens.
import http from "node:http";
import type { AddressInfo } from "node:net";
import * as client from "openid-client";
import { isLoopbackHost } from "../net.js";
import { CliError as EnterError, ExitCode } from "./exit-codes.js";
import type { StoredLogin } from "./token-store.js";

export const DEFAULT_SCOPES = "openid offline_access";

/** The provider's metadata and this client, from the issuer's discovery document. */
export async function discover(issuer: string, clientId: string): Promise<client.Configuration> {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new EnterError(ExitCode.usage, `bad issuer URL ${JSON.stringify(issuer)}`);
  }
  const plainLoopback = url.protocol === "http:" && isLoopbackHost(url.hostname);
  if (url.protocol !== "https:" && !plainLoopback)
    throw new EnterError(ExitCode.usage, `the issuer must be https (plain http only on a loopback address): ${issuer}`);
  try {
    return await client.discovery(url, clientId, undefined, client.None(), {
      ...(plainLoopback ? { execute: [client.allowInsecureRequests] } : {}),
      timeout: 10,
    });
  } catch (error) {
    throw new EnterError(ExitCode.network, `OIDC discovery at ${issuer} failed: ${describe(error)}`);
  }
}

/** The provider's error code and text, never a token. */
function describe(error: unknown): string {
  if (error instanceof client.ResponseBodyError || error instanceof client.AuthorizationResponseError) {
    const text = typeof error.error_description === "string" ? `: ${error.error_description}` : "";
    return `${error.error}${text}`;
  }
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}

/** A failed grant as one line and an exit code: refused by the user or the provider is 77, else 69. */
export function grantError(what: string, error: unknown): EnterError {
  if (error instanceof EnterError) return error;
  const code =
    error instanceof client.ResponseBodyError || error instanceof client.AuthorizationResponseError
      ? error.error
      : undefined;
  const refused = code !== undefined && code !== "server_error" && code !== "temporarily_unavailable";
  return new EnterError(refused ? ExitCode.denied : ExitCode.network, `${what}: ${describe(error)}`);
}

function toLogin(
  config: client.Configuration,
  tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers,
  previous?: StoredLogin,
): StoredLogin {
  const claims = tokens.claims();
  if (!tokens.id_token || !claims)
    throw new EnterError(ExitCode.denied, "the provider gave no ID token (is the openid scope allowed?)");
  const refreshToken = tokens.refresh_token ?? previous?.refreshToken;
  return {
    issuer: config.serverMetadata().issuer,
    clientId: config.clientMetadata().client_id,
    idToken: tokens.id_token,
    expiresAt: claims.exp * 1000,
    ...(tokens.access_token ? { accessToken: tokens.access_token } : {}),
    ...(refreshToken ? { refreshToken } : {}),
    ...(tokens.scope ? { scope: tokens.scope } : previous?.scope ? { scope: previous.scope } : {}),
  };
}

export interface BrowserFlowOptions {
  scope: string;
  /** Called with the address to open; may start a browser. */
  onUrl(url: URL): void;
  timeoutMs: number;
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><p>${text}</p>`;

/**
 * The authorization code flow with PKCE: a one-shot server on 127.0.0.1 (an ephemeral port) takes the
 * redirect. An answer whose state is not this request's is refused and ends the sign-in (the code is
 * never redeemed); so does the provider's error (access_denied when the user said no).
 */
export async function browserLogin(config: client.Configuration, options: BrowserFlowOptions): Promise<StoredLogin> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const server = http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  try {
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: options.scope,
      response_type: "code",
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      nonce,
      // Providers that follow OIDC Core 11 issue a refresh token (offline_access) only after consent.
      ...(options.scope.split(" ").includes("offline_access") ? { prompt: "consent" } : {}),
    });
    return await new Promise<StoredLogin>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new EnterError(ExitCode.denied, "sign-in timed out: no answer came back to the browser's redirect")),
        options.timeoutMs,
      );
      const finish = (outcome: { login: StoredLogin } | { error: EnterError }) => {
        clearTimeout(timer);
        if ("login" in outcome) resolve(outcome.login);
        else reject(outcome.error);
      };
      server.on("request", (request, response) => {
        const current = new URL(request.url ?? "/", redirectUri);
        const page = (status: number, title: string, text: string) =>
          response
            .writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
            .end(PAGE(title, text));
        if (request.method !== "GET" || current.pathname !== "/callback") return page(404, "Not found", "Not found.");
        if (current.searchParams.get("state") !== state) {
          page(400, "Sign-in refused", "This answer is not for the sign-in that entryway started. Nothing was kept.");
          return finish({
            error: new EnterError(
              ExitCode.denied,
              "sign-in refused: the answer's state is not this sign-in's (a stale browser tab, or somebody else's request)",
            ),
          });
        }
        client
          .authorizationCodeGrant(config, current, {
            pkceCodeVerifier: verifier,
            expectedState: state,
            expectedNonce: nonce,
            idTokenExpected: true,
          })
          .then(
            (tokens) => {
              const login = toLogin(config, tokens);
              page(200, "Signed in", "Signed in to entryway. You may close this window.");
              finish({ login });
            },
            (error: unknown) => {
              const failure = grantError("sign-in failed", error);
              page(
                failure.exitCode === ExitCode.denied ? 403 : 502,
                "Sign-in failed",
                "Sign-in failed; see the terminal.",
              );
              finish({ error: failure });
            },
          );
      });
      options.onUrl(url);
    });
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

export interface DeviceFlowOptions {
  scope: string;
  /** Called with what the user must open and type. */
  onCode(prompt: { verificationUri: string; verificationUriComplete?: string; userCode: string }): void;
}

/** The device authorization grant: the user signs in on another device; this polls until they did. */
export async function deviceLogin(config: client.Configuration, options: DeviceFlowOptions): Promise<StoredLogin> {
  let started;
  try {
    started = await client.initiateDeviceAuthorization(config, { scope: options.scope });
  } catch (error) {
    throw grantError("the provider refused the device sign-in", error);
  }
  options.onCode({
    verificationUri: started.verification_uri,
    userCode: started.user_code,
    ...(started.verification_uri_complete ? { verificationUriComplete: started.verification_uri_complete } : {}),
  });
  try {
    return toLogin(config, await client.pollDeviceAuthorizationGrant(config, started));
  } catch (error) {
    throw grantError("device sign-in failed", error);
  }
}

/** New tokens for a login's refresh token; the refresh token is kept when the provider does not rotate it. */
export async function refreshLogin(config: client.Configuration, login: StoredLogin): Promise<StoredLogin> {
  if (!login.refreshToken)
    throw new EnterError(
      ExitCode.denied,
      "the sign-in has expired and the provider gave no refresh token: run entryway login",
    );
  try {
    return toLogin(config, await client.refreshTokenGrant(config, login.refreshToken), login);
  } catch (error) {
    const failure = grantError("the sign-in could not be refreshed", error);
    if (failure.exitCode === ExitCode.denied)
      throw new EnterError(ExitCode.denied, `${failure.message}; run entryway login`);
    throw failure;
  }
}

/** Revokes the refresh token (and the access token) where the provider offers revocation; false where it does not. */
export async function revokeLogin(config: client.Configuration, login: StoredLogin): Promise<boolean> {
  if (!config.serverMetadata().revocation_endpoint) return false;
  try {
    if (login.refreshToken)
      await client.tokenRevocation(config, login.refreshToken, { token_type_hint: "refresh_token" });
    if (login.accessToken) await client.tokenRevocation(config, login.accessToken, { token_type_hint: "access_token" });
  } catch (error) {
    throw grantError("revocation failed", error);
  }
  return true;
}
