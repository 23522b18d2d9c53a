// The three authorizers against real HTTP peers on loopback: a webhook server, an OIDC issuer's JWKS
// endpoint (keys made with jose), and the Kubernetes stand-in's TokenReview/SubjectAccessReview.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubernetesAuthorizer } from "../src/auth/kubernetes.js";
import { oidcAuthorizer, type OidcOptions } from "../src/auth/oidc.js";
import { webhookAuthorizer } from "../src/auth/webhook.js";
import { webAssets } from "../src/web-assets.js";
import { loadKubeConfig } from "../src/backends/kubernetes.js";
import { defaultConfig, loadConfig } from "../src/config.js";
import type { Target } from "../src/target.js";
import {
  API_SERVER_AUDIENCE,
  judgeAccessReview,
  standinUser,
  startKubeStandin,
  type KubeStandin,
  type StandinUser,
} from "../../testkit/gateway/kube-standin.js";

const pod: Target = { kind: "pod", namespace: "team-a", pod: "web-0" };
const request = (token: string, target: Target = pod) => ({ token, target, clientAddress: "127.0.0.1" });

async function serve(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("webhook authorizer", () => {
  let hook: Awaited<ReturnType<typeof serve>>;
  const received: unknown[] = [];
  let revoked: boolean | "down" = false;
  beforeAll(async () => {
    hook = await serve((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { token: string };
        received.push(body);
        if (body.token === "slow") return void setTimeout(() => res.end("{}"), 2000);
        if (body.token === "broken") return void res.writeHead(500).end("oops");
        if (body.token === "garbage") return void res.end("not json");
        res.setHeader("content-type", "application/json");
        if ((body as { purpose?: string }).purpose === "identify") {
          return void res.end(
            JSON.stringify(
              body.token === "good" ? { allowed: true, user: "alice", groups: ["auditors", 7] } : { allowed: false },
            ),
          );
        }
        if (body.token === "revocable") {
          if (revoked === "down") return void res.writeHead(503).end();
          return void res.end(
            JSON.stringify(
              revoked ? { allowed: false, reason: "alice left the team" } : { allowed: true, user: "alice" },
            ),
          );
        }
        res.end(
          JSON.stringify(
            body.token === "good" || body.token.split(".").length === 3
              ? { allowed: true, user: "alice" }
              : { allowed: false, reason: "not on the team" },
          ),
        );
      });
    });
  });
  afterAll(() => hook.close());

  it("asks with token and target, and follows the answer", async () => {
    const authorizer = webhookAuthorizer(hook.url, 500);
    expect(await authorizer.authorize(request("good"))).toEqual({
      allow: true,
      user: "alice",
      recheck: expect.any(Function),
    });
    expect(received.at(-1)).toEqual({ token: "good", target: pod, clientAddress: "127.0.0.1" });
    expect(await authorizer.authorize(request("other"))).toEqual({ allow: false, reason: "not on the team" });
  });

  it("asks again for a running session: a no ends it (denied), an unreachable webhook does not; a JWT's exp bounds it", async () => {
    const authorizer = webhookAuthorizer(hook.url, 500);
    revoked = false;
    const decision = await authorizer.authorize(request("revocable"));
    if (!decision.allow || !decision.recheck) throw new Error("the webhook allowed revocable, with a recheck");
    expect(decision.expiresAt).toBeUndefined(); // not a JWT
    expect(await decision.recheck()).toEqual({ outcome: "allowed" });
    expect(received.at(-1)).toEqual({ token: "revocable", target: pod, clientAddress: "127.0.0.1" });
    revoked = "down";
    expect(await decision.recheck()).toMatchObject({ outcome: "unavailable", detail: "webhook answered HTTP 503" });
    revoked = true;
    expect(await decision.recheck()).toEqual({
      outcome: "revoked",
      closeCode: "denied",
      reason: "permission denied: alice left the team",
    });
    const exp = Math.floor(Date.now() / 1000) + 600;
    const jwt = await new UnsecuredJWT({ sub: "alice" }).setExpirationTime(exp).encode();
    expect(await authorizer.authorize(request(jwt))).toMatchObject({ allow: true, expiresAt: exp * 1000 });
  });

  it("identifies a token's user and groups for reviewers, without a target", async () => {
    const authorizer = webhookAuthorizer(hook.url, 500);
    expect(await authorizer.identify!({ token: "good", clientAddress: "127.0.0.1" })).toEqual({
      known: true,
      user: "alice",
      groups: ["auditors"],
    });
    expect(received.at(-1)).toEqual({ token: "good", clientAddress: "127.0.0.1", purpose: "identify" });
    expect(await authorizer.identify!({ token: "other", clientAddress: "127.0.0.1" })).toMatchObject({ known: false });
    for (const token of ["broken", "garbage"])
      expect(await authorizer.identify!({ token, clientAddress: "127.0.0.1" })).toMatchObject({ known: false });
  });

  it.each(["slow", "broken", "garbage"])("fails closed when the webhook is %s", async (token) => {
    const decision = await webhookAuthorizer(hook.url, 300).authorize(request(token));
    expect(decision.allow).toBe(false);
  });

  it("fails closed when the webhook is unreachable, and keeps the error text out of the reason", async () => {
    const decision = await webhookAuthorizer("http://127.0.0.1:1/", 300).authorize(request("good"));
    expect(decision).toMatchObject({
      allow: false,
      reason: "webhook authorizer unavailable",
      detail: expect.stringMatching(/fetch failed/),
    });
  });

  it("needs https, except to a loopback address", () => {
    expect(() => webhookAuthorizer("http://console.example.com/authorize", 300)).toThrow(/must be https/);
    expect(() => webhookAuthorizer("http://10.0.0.1/authorize", 300)).toThrow(/must be https/);
    expect(() => webhookAuthorizer("https://console.example.com/authorize", 300)).not.toThrow();
    expect(() => webhookAuthorizer("http://[::1]:8080/authorize", 300)).not.toThrow();
  });

  it("never follows a redirect (the token would go along)", async () => {
    const elsewhere = await serve((_req, res) => res.end(JSON.stringify({ allowed: true, user: "mallory" })));
    const redirecting = await serve((_req, res) => res.writeHead(307, { location: elsewhere.url }).end());
    try {
      const decision = await webhookAuthorizer(redirecting.url, 500).authorize(request("good"));
      expect(decision).toMatchObject({ allow: false, detail: expect.stringMatching(/redirect/) });
    } finally {
      await elsewhere.close();
      await redirecting.close();
    }
  });
});

describe("OIDC authorizer", () => {
  let issuer: Awaited<ReturnType<typeof serve>>;
  let keyFetches = 0;
  const jwks: JWK[] = [];
  type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
  let privateKey: PrivateKey;
  type SignOptions = {
    audience?: string;
    issuer?: string;
    expiresIn?: string | null;
    issuedAt?: number | null;
    kid?: string;
    key?: PrivateKey;
  };
  const sign = (claims: Record<string, unknown>, options: SignOptions = {}) => {
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256", kid: options.kid ?? "k1" })
      .setIssuer(options.issuer ?? issuer.url)
      .setAudience(options.audience ?? "entryway");
    if (options.issuedAt !== null) jwt.setIssuedAt(options.issuedAt);
    if (options.expiresIn !== null) jwt.setExpirationTime(options.expiresIn ?? "5m");
    return jwt.sign(options.key ?? privateKey);
  };
  beforeAll(async () => {
    const pair = await generateKeyPair("ES256");
    privateKey = pair.privateKey;
    jwks.push({ ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256", use: "sig" });
    issuer = await serve((req, res) => {
      res.setHeader("content-type", "application/json");
      if (req.url === "/.well-known/openid-configuration")
        return void res.end(JSON.stringify({ issuer: issuer.url, jwks_uri: `${issuer.url}/keys` }));
      keyFetches++;
      res.end(JSON.stringify({ keys: jwks }));
    });
  });
  afterAll(() => issuer.close());

  const authorizer = (options: Partial<OidcOptions> = {}) =>
    oidcAuthorizer({
      issuer: issuer.url,
      audience: "entryway",
      jwksUri: "",
      usernameClaim: "email",
      namespacesClaim: "namespaces",
      ...options,
    });
  const alice = { email: "alice@example.com", namespaces: ["team-a"] };

  it("the web terminal offers OIDC sign-in only when the endpoints discovery names are https (or loopback)", async () => {
    let endpoints = {
      authorization_endpoint: "http://login.example.net/authorize",
      token_endpoint: "https://login.example.net/token",
    };
    const discovery = await serve((_req, res) => res.end(JSON.stringify(endpoints)));
    const logs: Record<string, unknown>[] = [];
    const config = {
      ...defaultConfig,
      authorizer: "oidc" as const,
      oidcIssuer: discovery.url,
      oidcAudience: "entryway",
    };
    const route = webAssets({ config, logger: { log: (level, msg, fields) => logs.push({ level, msg, ...fields }) } });
    const page = await serve((req, res) => void route(req, res));
    try {
      const oidcOf = async () =>
        ((await (await fetch(`${page.url}/web/config.json`)).json()) as { oidc: unknown }).oidc;
      expect(await oidcOf()).toBeNull();
      expect(logs).toContainEqual(
        expect.objectContaining({
          error: expect.stringMatching(/the authorization_endpoint OIDC discovery names must be https/),
        }),
      );
      endpoints = {
        authorization_endpoint: "https://login.example.net/authorize",
        token_endpoint: "https://login.example.net/token",
      };
      expect(await oidcOf()).toMatchObject({
        authorizationEndpoint: "https://login.example.net/authorize",
        tokenEndpoint: "https://login.example.net/token",
      });
    } finally {
      await page.close();
      await discovery.close();
    }
  });

  it("needs https for the issuer and the keys, except to a loopback address, also for a jwks_uri discovery names", async () => {
    expect(() => authorizer({ issuer: "http://id.example.com" })).toThrow(
      /oidcIssuer must be https \(plain http only to a loopback address\)/,
    );
    expect(() => authorizer({ jwksUri: "http://keys.example.com/jwks" })).toThrow(/oidcJwksUri must be https/);
    expect(() =>
      authorizer({ issuer: "https://id.example.com", jwksUri: "https://keys.example.com/jwks" }),
    ).not.toThrow();
    // A discovery document (on loopback) that sends the gateway for its keys over plain http elsewhere.
    const downgrading = await serve((_req, res) =>
      res.end(JSON.stringify({ jwks_uri: "http://keys.example.net/jwks" })),
    );
    try {
      const decision = await authorizer({ issuer: downgrading.url }).authorize(
        request(await sign(alice, { issuer: downgrading.url })),
      );
      expect(decision).toMatchObject({
        allow: false,
        reason: "oidc authorizer unavailable",
        detail: expect.stringMatching(/the jwks_uri OIDC discovery names must be https/),
      });
    } finally {
      await downgrading.close();
    }
  });

  it("allows the namespaces in the claim, discovering the keys from the issuer, and says when the token expires", async () => {
    const token = await sign({ email: "alice@example.com", namespaces: ["team-a", "team-b"] });
    const exp = decodeJwt(token).exp!;
    expect(await authorizer().authorize(request(token))).toEqual({
      allow: true,
      user: "alice@example.com",
      expiresAt: exp * 1000,
    });
    expect(
      await authorizer().authorize(request(token, { kind: "pod", namespace: "kube-system", pod: "x" })),
    ).toMatchObject({ allow: false, user: "alice@example.com" });
    expect(await authorizer().authorize(request(token, { kind: "docker", container: "c" }))).toMatchObject({
      allow: false,
    });
    const everywhere = await sign({ email: "root@example.com", namespaces: "*" });
    expect(await authorizer().authorize(request(everywhere, { kind: "docker", container: "c" }))).toMatchObject({
      allow: true,
    });
  });

  it("identifies the user with the groups claim (an array or a list), and knows no forged token", async () => {
    const token = await sign({ ...alice, groups: ["devs", "auditors"] });
    expect(await authorizer().identify!({ token, clientAddress: "127.0.0.1" })).toEqual({
      known: true,
      user: "alice@example.com",
      groups: ["devs", "auditors"],
    });
    const listed = await sign({ ...alice, roles: "devs, auditors" });
    expect(
      await authorizer({ groupsClaim: "roles" }).identify!({ token: listed, clientAddress: "127.0.0.1" }),
    ).toMatchObject({ groups: ["devs", "auditors"] });
    expect(
      await authorizer().identify!({
        token: await sign(alice, { audience: "someone-else" }),
        clientAddress: "127.0.0.1",
      }),
    ).toMatchObject({ known: false });
  });

  it.each<[string, SignOptions, RegExp]>([
    ["another audience", { audience: "someone-else" }, /"aud" claim/],
    ["another issuer", { issuer: "https://evil.example" }, /"iss" claim/],
    ["an expired token", { expiresIn: "-1m" }, /"exp" claim timestamp check failed/],
    ["a token without exp", { expiresIn: null }, /missing required "exp" claim/],
    ["a token without iat (its age cannot be bounded)", { issuedAt: null }, /missing required "iat" claim/],
    [
      "a token issued longer ago than maxTokenAgeSeconds, whatever its exp",
      { issuedAt: Math.floor(Date.now() / 1000) - 7200, expiresIn: "1h" },
      /"iat" claim timestamp check failed \(too far in the past\)/,
    ],
    [
      "a token signed by a key the issuer does not publish (unknown kid)",
      { kid: "k-unknown" },
      /no applicable key found/,
    ],
  ])("denies %s", async (_name, options, why) => {
    const token = await sign(alice, options);
    expect(await authorizer({ maxTokenAgeSeconds: 3600 }).authorize(request(token))).toMatchObject({
      allow: false,
      reason: expect.stringMatching(why),
    });
  });

  it('denies alg "none" and an HS256 token made with the public key as the secret', async () => {
    const payload = {
      ...alice,
      iss: issuer.url,
      aud: "entryway",
      iat: Math.floor(Date.now() / 1000),
      exp: Math.floor(Date.now() / 1000) + 300,
    };
    const unsigned = new UnsecuredJWT(payload).encode();
    expect(await authorizer().authorize(request(unsigned))).toMatchObject({
      allow: false,
      reason: expect.stringMatching(/invalid token/),
    });
    const publicKeyAsSecret = new TextEncoder().encode(JSON.stringify(jwks[0]));
    const hmac = await new SignJWT(payload).setProtectedHeader({ alg: "HS256", kid: "k1" }).sign(publicKeyAsSecret);
    expect(await authorizer().authorize(request(hmac))).toMatchObject({
      allow: false,
      reason: expect.stringMatching(/invalid token/),
    });
    expect(() => loadConfig({ ENTRYWAY_OIDC_ALGORITHMS: '["RS256","HS256"]' })).toThrow(/HS256 not allowed/);
    expect(() => loadConfig({ ENTRYWAY_OIDC_ALGORITHMS: '["none"]' })).toThrow(/none not allowed/);
  });

  it("denies a forged signature and a token without the user claim", async () => {
    const token = await sign(alice);
    const [header, payload] = token.split(".");
    const forged = `${header}.${Buffer.from(JSON.stringify({ email: "alice@example.com", namespaces: ["*"], iss: issuer.url, aud: "entryway", exp: 9e9 })).toString("base64url")}.${token.split(".")[2]}`;
    expect(payload).toBeDefined();
    expect((await authorizer().authorize(request(forged))).allow).toBe(false);
    expect((await authorizer().authorize(request(await sign({ namespaces: ["team-a"] })))).allow).toBe(false);
  });

  it("picks up a rotated key from the JWKS without a restart", async () => {
    const running = authorizer({ jwksCooldownMs: 0 });
    expect(await running.authorize(request(await sign(alice)))).toMatchObject({ allow: true });
    const rotated = await generateKeyPair("ES256");
    const tokenFromNewKey = await sign(alice, { kid: "k2", key: rotated.privateKey });
    expect(await running.authorize(request(tokenFromNewKey))).toMatchObject({
      allow: false,
      reason: expect.stringMatching(/no applicable key/),
    });
    const fetchesBefore = keyFetches;
    jwks.push({ ...(await exportJWK(rotated.publicKey)), kid: "k2", alg: "ES256", use: "sig" });
    expect(await running.authorize(request(tokenFromNewKey))).toMatchObject({ allow: true, user: "alice@example.com" });
    expect(keyFetches).toBe(fetchesBefore + 1);
  });
});

/** The Kubernetes authorizer's yes for `user`: with the debug check and the recheck of the grant. */
const allowedAs = (user: string) => ({
  allow: true,
  user,
  mayDebug: expect.any(Function),
  recheck: expect.any(Function),
});

describe("Kubernetes authorizer (TokenReview + SubjectAccessReview)", () => {
  let kube: KubeStandin;
  const carol: StandinUser = {
    username: "carol",
    uid: "6f1c",
    groups: ["system:authenticated", "oncall"],
    extra: { "authentication.kubernetes.io/credential-id": ["JTI=c1"], scopes: ["exec"] },
    audiences: ["entryway"],
  };
  beforeAll(async () => {
    kube = await startKubeStandin({
      protocol: "v5.channel.k8s.io",
      serviceAccountToken: "gateway-sa",
      pods: [],
      users: {
        "alice-token": "alice",
        "bob-token": "bob",
        "carol-token": carol,
        // A token made for the API server (kubectl create token without --audience): full cluster access, not for the gateway.
        "apiserver-token": { ...standinUser("apiserver-token", "alice"), audiences: [API_SERVER_AUDIENCE] },
      },
      execAllowed: { alice: ["team-a"], carol: ["team-a/web-0"] },
      debugAllowed: { carol: ["team-a/web-0"] },
    });
  });
  afterAll(() => kube.stop());
  const authorizer = () => kubernetesAuthorizer(loadKubeConfig(kube.kubeconfigPath), defaultConfig.tokenAudiences);

  it("allows exec where RBAC says so and nowhere else", async () => {
    expect(await authorizer().authorize(request("alice-token"))).toEqual(allowedAs("alice"));
    expect(
      await authorizer().authorize(request("alice-token", { kind: "pod", namespace: "team-b", pod: "x" })),
    ).toMatchObject({ allow: false, user: "alice" });
    expect(await authorizer().authorize(request("bob-token"))).toMatchObject({
      allow: false,
      reason: expect.stringMatching(/bob may not exec in namespace team-a/),
    });
    expect(await authorizer().authorize(request("forged"))).toMatchObject({
      allow: false,
      reason: "token rejected",
      detail: "invalid bearer token",
    });
  });

  it("takes the expiry of a short-lived token (kubectl create token --duration) from its exp", async () => {
    const exp = Math.floor(Date.now() / 1000) + 600;
    const shortLived = await new UnsecuredJWT({ sub: "system:serviceaccount:team-a:dave" })
      .setExpirationTime(exp)
      .encode();
    kube.users.set(shortLived, standinUser(shortLived, "dave"));
    kube.execAllowed.dave = ["team-a"];
    expect(await authorizer().authorize(request(shortLived))).toMatchObject({
      allow: true,
      user: "dave",
      expiresAt: exp * 1000,
    });
    expect(await authorizer().authorize(request("alice-token"))).not.toHaveProperty("expiresAt"); // not a JWT: no expiry known
  });

  it("asks both reviews again for a running session: a removed RoleBinding ends it (denied), a deleted ServiceAccount too (expired)", async () => {
    kube.users.set("erin-token", standinUser("erin-token", "erin"));
    kube.execAllowed.erin = ["team-a"];
    const decision = await authorizer().authorize(request("erin-token"));
    if (!decision.allow || !decision.recheck) throw new Error("erin may exec in team-a, with a recheck");
    expect(await decision.recheck()).toEqual({ outcome: "allowed" });
    expect(kube.accessReviews.at(-1)).toMatchObject({
      user: "erin",
      resourceAttributes: { namespace: "team-a", name: "web-0", verb: "create", subresource: "exec" },
    });
    kube.execAllowed.erin = [];
    expect(await decision.recheck()).toEqual({
      outcome: "revoked",
      closeCode: "denied",
      reason: expect.stringMatching(/^permission denied: erin may no longer exec in namespace team-a/),
    });
    kube.execAllowed.erin = ["team-a"];
    kube.users.delete("erin-token");
    expect(await decision.recheck()).toEqual({
      outcome: "revoked",
      closeCode: "expired",
      reason: "the access token is no longer valid (token rejected)",
    });
  });

  it("asks TokenReview for the entryway audience, and refuses a token made for the API server", async () => {
    expect(kube.tokenReviews.at(-1)).toMatchObject({ audiences: ["entryway"] });
    expect(await authorizer().authorize(request("apiserver-token"))).toMatchObject({
      allow: false,
      reason: "token rejected",
    });
    expect(kube.tokenReviews.at(-1)).toEqual({ token: "apiserver-token", audiences: ["entryway"] });
  });

  /** The SubjectAccessReview carol's token asks for on team-a/web-0: her whole user, and the resource. */
  const carolReview = (verb: string, subresource: string) => ({
    user: "carol",
    uid: "6f1c",
    groups: ["system:authenticated", "oncall"],
    extra: { "authentication.kubernetes.io/credential-id": ["JTI=c1"], scopes: ["exec"] },
    resourceAttributes: { namespace: "team-a", name: "web-0", verb, resource: "pods", subresource },
  });

  it("asks a second SubjectAccessReview, patch pods/ephemeralcontainers on the pod, for a debug container", async () => {
    const carol = await authorizer().authorize(request("carol-token"));
    if (!carol.allow || !carol.mayDebug) throw new Error("carol may exec in team-a/web-0 and gets the debug question");
    expect(await carol.mayDebug({ namespace: "team-a", pod: "web-0" })).toEqual({ allow: true });
    expect(kube.accessReviews.at(-1)).toEqual(carolReview("patch", "ephemeralcontainers"));
    expect(await carol.mayDebug({ namespace: "team-a", pod: "web-1" })).toMatchObject({
      allow: false,
      reason: expect.stringMatching(/carol may not add debug containers to pod team-a\/web-1/),
    });
    // Exec rights alone (alice) are not debug rights.
    const alice = await authorizer().authorize(request("alice-token"));
    expect(alice.allow && (await alice.mayDebug!({ namespace: "team-a", pod: "web-0" }))).toMatchObject({
      allow: false,
    });
  });

  it("passes the whole user and the whole resource to SubjectAccessReview", async () => {
    expect(await authorizer().authorize(request("carol-token"))).toEqual(allowedAs("carol"));
    expect(kube.accessReviews.at(-1)).toEqual(carolReview("create", "exec"));
    // carol may enter one pod only: another pod, or a workload (no pod name yet), is refused.
    expect(
      await authorizer().authorize(request("carol-token", { kind: "pod", namespace: "team-a", pod: "web-1" })),
    ).toMatchObject({ allow: false });
    expect(
      await authorizer().authorize(
        request("carol-token", { kind: "workload", namespace: "team-a", workload: "web", instance: 0 }),
      ),
    ).toMatchObject({ allow: false });
  });

  it("identifies the user with the groups TokenReview reports, refusing a token made for the API server", async () => {
    expect(await authorizer().identify!({ token: "carol-token", clientAddress: "127.0.0.1" })).toEqual({
      known: true,
      user: "carol",
      groups: ["system:authenticated", "oncall"],
    });
    expect(await authorizer().identify!({ token: "apiserver-token", clientAddress: "127.0.0.1" })).toMatchObject({
      known: false,
      reason: expect.stringMatching(/token rejected/),
    });
    expect(await authorizer().identify!({ token: "forged", clientAddress: "127.0.0.1" })).toMatchObject({
      known: false,
      reason: "token rejected",
    });
  });

  it("the stand-in refuses a SubjectAccessReview that drops any field (so the test above can fail)", () => {
    const complete = {
      user: "carol",
      uid: carol.uid,
      groups: carol.groups,
      extra: carol.extra,
      resourceAttributes: { namespace: "team-a", name: "web-0", verb: "create", resource: "pods", subresource: "exec" },
    };
    const allowed = { carol: ["team-a/web-0"] };
    expect(judgeAccessReview(complete, [carol], allowed)).toEqual({ allowed: true });
    for (const field of ["user", "uid", "groups", "extra"] as const) {
      const { [field]: _dropped, ...rest } = complete;
      expect(judgeAccessReview(rest, [carol], allowed), field).toMatchObject({ allowed: false });
    }
    for (const field of ["namespace", "name", "verb", "resource", "subresource"] as const) {
      const { [field]: _dropped, ...attributes } = complete.resourceAttributes;
      expect(judgeAccessReview({ ...complete, resourceAttributes: attributes }, [carol], allowed), field).toMatchObject(
        { allowed: false },
      );
    }
  });
});
