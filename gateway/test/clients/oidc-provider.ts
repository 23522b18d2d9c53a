// A STAND-IN OPENID PROVIDER for the web terminal's sign-in test (no identity provider runs here):
// discovery, an authorization endpoint that signs the user in at once (as an IdP with a live session
// would) and redirects back with a code, a token endpoint that checks the PKCE verifier and returns
// an ES256-signed ID token (CORS allowed, as IdPs do for browser clients), and the JWKS.
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT } from "jose";

export interface OidcProvider {
  issuer: string;
  /** Authorization requests as received (query parameters). */
  authorizations: Record<string, string>[];
  /** Token requests (form fields). */
  tokenRequests: Record<string, string>[];
  stop(): Promise<void>;
}

export async function startOidcProvider(options: {
  clientId: string;
  subject: string;
  namespaces: string[];
}): Promise<OidcProvider> {
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "test-key", alg: "ES256", use: "sig" };
  const codes = new Map<string, { challenge: string; redirectUri: string; nonce: string }>();
  const authorizations: Record<string, string>[] = [];
  const tokenRequests: Record<string, string>[] = [];
  let issuer = "";

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", issuer);
    const json = (status: number, body: unknown, extra: Record<string, string> = {}) =>
      response.writeHead(status, { "content-type": "application/json", ...extra }).end(JSON.stringify(body));
    if (url.pathname === "/.well-known/openid-configuration") {
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        code_challenge_methods_supported: ["S256"],
      });
    }
    if (url.pathname === "/jwks") return json(200, { keys: [jwk] });
    if (url.pathname === "/authorize") {
      const query = Object.fromEntries(url.searchParams);
      authorizations.push(query);
      if (
        query.client_id !== options.clientId ||
        query.response_type !== "code" ||
        query.code_challenge_method !== "S256" ||
        !query.code_challenge
      ) {
        return response.writeHead(400).end("bad authorization request");
      }
      const code = randomBytes(16).toString("hex");
      codes.set(code, { challenge: query.code_challenge, redirectUri: query.redirect_uri!, nonce: query.nonce ?? "" });
      const back = new URL(query.redirect_uri!);
      back.searchParams.set("code", code);
      back.searchParams.set("state", query.state ?? "");
      return response.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === "/token" && request.method === "POST") {
      const chunks: Buffer[] = [];
      request.on("data", (c: Buffer) => chunks.push(c));
      request.on("end", () => {
        const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString("utf8")));
        tokenRequests.push(form);
        const cors = { "access-control-allow-origin": request.headers.origin ?? "*" };
        const grant = codes.get(form.code ?? "");
        codes.delete(form.code ?? "");
        const verifierHash = createHash("sha256")
          .update(form.code_verifier ?? "")
          .digest("base64url");
        if (
          !grant ||
          form.grant_type !== "authorization_code" ||
          form.client_id !== options.clientId ||
          form.redirect_uri !== grant.redirectUri ||
          verifierHash !== grant.challenge
        ) {
          return json(400, { error: "invalid_grant" }, cors);
        }
        void new SignJWT({ namespaces: options.namespaces, nonce: grant.nonce })
          .setProtectedHeader({ alg: "ES256", kid: "test-key" })
          .setIssuer(issuer)
          .setAudience(options.clientId)
          .setSubject(options.subject)
          .setIssuedAt()
          .setExpirationTime("5m")
          .sign(privateKey)
          .then((idToken) =>
            json(200, { id_token: idToken, access_token: "opaque", token_type: "Bearer", expires_in: 300 }, cors),
          );
      });
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    authorizations,
    tokenRequests,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
