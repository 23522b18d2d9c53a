// The three authorizers against real HTTP peers on loopback: a webhook server, an OIDC issuer's JWKS
// endpoint (keys made with jose), and the Kubernetes stand-in's TokenReview/SubjectAccessReview.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubernetesAuthorizer } from "../src/auth/kubernetes.js";
import { oidcAuthorizer } from "../src/auth/oidc.js";
import { webhookAuthorizer } from "../src/auth/webhook.js";
import { loadKubeConfig } from "../src/backends/kubernetes.js";
import type { Target } from "../src/target.js";
import { startKubeStandin, type KubeStandin } from "./helpers/kube-standin.js";

const pod: Target = { kind: "pod", namespace: "team-a", pod: "web-0" };
const request = (token: string, target: Target = pod) => ({ token, target, clientAddress: "127.0.0.1" });

async function serve(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

describe("webhook authorizer", () => {
  let hook: Awaited<ReturnType<typeof serve>>;
  const received: unknown[] = [];
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
        res.end(JSON.stringify(body.token === "good" ? { allowed: true, user: "alice" } : { allowed: false, reason: "not on the team" }));
      });
    });
  });
  afterAll(() => hook.close());

  it("asks with token and target, and follows the answer", async () => {
    const authorizer = webhookAuthorizer(hook.url, 500);
    expect(await authorizer.authorize(request("good"))).toEqual({ allow: true, user: "alice" });
    expect(received.at(-1)).toEqual({ token: "good", target: pod, clientAddress: "127.0.0.1" });
    expect(await authorizer.authorize(request("other"))).toEqual({ allow: false, reason: "not on the team" });
  });

  it.each(["slow", "broken", "garbage"])("fails closed when the webhook is %s", async (token) => {
    const decision = await webhookAuthorizer(hook.url, 300).authorize(request(token));
    expect(decision.allow).toBe(false);
  });

  it("fails closed when the webhook is unreachable", async () => {
    const decision = await webhookAuthorizer("http://127.0.0.1:1/", 300).authorize(request("good"));
    expect(decision).toMatchObject({ allow: false, reason: expect.stringMatching(/webhook authorizer unavailable/) });
  });
});

describe("OIDC authorizer", () => {
  let issuer: Awaited<ReturnType<typeof serve>>;
  let sign: (claims: Record<string, unknown>, options?: { audience?: string; issuer?: string; expiresIn?: string }) => Promise<string>;
  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair("ES256");
    const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
    issuer = await serve((req, res) => {
      res.setHeader("content-type", "application/json");
      if (req.url === "/.well-known/openid-configuration") return void res.end(JSON.stringify({ issuer: issuer.url, jwks_uri: `${issuer.url}/keys` }));
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    sign = (claims, options = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: "ES256", kid: "k1" })
        .setIssuer(options.issuer ?? issuer.url)
        .setAudience(options.audience ?? "entryway")
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? "5m")
        .sign(privateKey);
  });
  afterAll(() => issuer.close());

  const authorizer = () => oidcAuthorizer({ issuer: issuer.url, audience: "entryway", jwksUri: "", usernameClaim: "email", namespacesClaim: "namespaces" });

  it("allows the namespaces in the claim, discovering the keys from the issuer", async () => {
    const token = await sign({ email: "alice@example.com", namespaces: ["team-a", "team-b"] });
    expect(await authorizer().authorize(request(token))).toEqual({ allow: true, user: "alice@example.com" });
    expect(await authorizer().authorize(request(token, { kind: "pod", namespace: "kube-system", pod: "x" }))).toMatchObject({ allow: false, user: "alice@example.com" });
    expect(await authorizer().authorize(request(token, { kind: "docker", container: "c" }))).toMatchObject({ allow: false });
    const everywhere = await sign({ email: "root@example.com", namespaces: "*" });
    expect(await authorizer().authorize(request(everywhere, { kind: "docker", container: "c" }))).toMatchObject({ allow: true });
  });

  it.each([
    ["another audience", { audience: "someone-else" }],
    ["another issuer", { issuer: "https://evil.example" }],
    ["an expired token", { expiresIn: "-1m" }],
  ])("denies %s", async (_name, options) => {
    const token = await sign({ email: "alice@example.com", namespaces: ["team-a"] }, options);
    expect(await authorizer().authorize(request(token))).toMatchObject({ allow: false, reason: expect.stringMatching(/invalid token/) });
  });

  it("denies a forged signature and a token without the user claim", async () => {
    const token = await sign({ email: "alice@example.com", namespaces: ["team-a"] });
    const [header, payload] = token.split(".");
    const forged = `${header}.${Buffer.from(JSON.stringify({ email: "alice@example.com", namespaces: ["*"], iss: issuer.url, aud: "entryway", exp: 9e9 })).toString("base64url")}.${token.split(".")[2]}`;
    expect(payload).toBeDefined();
    expect((await authorizer().authorize(request(forged))).allow).toBe(false);
    expect((await authorizer().authorize(request(await sign({ namespaces: ["team-a"] })))).allow).toBe(false);
  });
});

describe("Kubernetes authorizer (TokenReview + SubjectAccessReview)", () => {
  let kube: KubeStandin;
  beforeAll(async () => {
    kube = await startKubeStandin({
      protocol: "v5.channel.k8s.io",
      serviceAccountToken: "gateway-sa",
      pods: [],
      users: { "alice-token": "alice", "bob-token": "bob" },
      execAllowed: { alice: ["team-a"] },
    });
  });
  afterAll(() => kube.stop());

  it("allows exec where RBAC says so and nowhere else", async () => {
    const authorizer = kubernetesAuthorizer(loadKubeConfig(kube.kubeconfigPath));
    expect(await authorizer.authorize(request("alice-token"))).toEqual({ allow: true, user: "alice" });
    expect(await authorizer.authorize(request("alice-token", { kind: "pod", namespace: "team-b", pod: "x" }))).toMatchObject({ allow: false, user: "alice" });
    expect(await authorizer.authorize(request("bob-token"))).toMatchObject({ allow: false, reason: expect.stringMatching(/bob may not exec in namespace team-a/) });
    expect(await authorizer.authorize(request("forged"))).toMatchObject({ allow: false, reason: expect.stringMatching(/token rejected/) });
  });
});
