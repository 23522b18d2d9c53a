// OpenID Connect sign-in for the page: the authorization code flow with PKCE (a public client, no
// secret), endpoints as the gateway discovered them. The ID token (its audience is the client id,
// which is the gateway's oidcAudience) becomes the gateway token; it is kept only for this tab.
export interface OidcSettings {
  issuer: string;
  clientId: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  scope: string;
}

const PENDING_KEY = "entryway.oidc.pending";

function base64url(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function randomString(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

function redirectUri(): string {
  return new URL("/", location.href).href;
}

/** Goes to the identity provider; `returnTo` (a query string) is restored after sign-in. */
export async function beginOidcSignIn(settings: OidcSettings, returnTo: string): Promise<void> {
  const verifier = randomString();
  const state = randomString();
  const nonce = randomString();
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier, state, nonce, returnTo }));
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))),
  );
  const url = new URL(settings.authorizationEndpoint);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: settings.clientId,
    redirect_uri: redirectUri(),
    scope: settings.scope,
    state,
    nonce,
    code_challenge: challenge,
    code_challenge_method: "S256",
  }).toString();
  location.assign(url.href);
}

/** On the way back from the identity provider: trades the code for tokens. Null when this is no such return. */
export async function completeOidcSignIn(settings: OidcSettings): Promise<string | null> {
  const query = new URLSearchParams(location.search);
  const code = query.get("code");
  const error = query.get("error");
  if (!code && !error) return null;
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? "null") as {
    verifier: string;
    state: string;
    nonce: string;
    returnTo: string;
  } | null;
  sessionStorage.removeItem(PENDING_KEY);
  history.replaceState(null, "", `/${pending?.returnTo ?? ""}`);
  if (error) throw new Error(`${error}${query.get("error_description") ? ": " + query.get("error_description") : ""}`);
  if (!pending || query.get("state") !== pending.state)
    throw new Error("the sign-in answer does not match a sign-in started in this tab");
  const response = await fetch(settings.tokenEndpoint, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: code!,
      redirect_uri: redirectUri(),
      client_id: settings.clientId,
      code_verifier: pending.verifier,
    }),
  });
  if (!response.ok) throw new Error(`the token endpoint answered HTTP ${response.status}`);
  const tokens = (await response.json()) as { id_token?: string };
  if (!tokens.id_token) throw new Error("the token endpoint returned no ID token");
  const payload = JSON.parse(
    new TextDecoder().decode(
      Uint8Array.from(atob(tokens.id_token.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/")), (c) =>
        c.charCodeAt(0),
      ),
    ),
  ) as { nonce?: string };
  // The gateway verifies the signature, issuer and audience; the nonce ties the token to this sign-in.
  if (payload.nonce !== pending.nonce) throw new Error("the ID token's nonce does not match this sign-in");
  return tokens.id_token;
}
