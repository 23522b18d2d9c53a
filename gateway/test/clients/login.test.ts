// `entryway login` / `logout` run as processes against a real OpenID provider (oidc-provider, in
// this process), with the test as the user's browser: the browser flow (PKCE, loopback redirect,
// state), the device flow, refresh before expiry, a refused consent, an answer with a wrong state,
// logout with revocation; and `entryway enter` using the sign-in's token with a gateway whose OIDC
// authorizer verifies it.
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oidcAuthorizer } from "../../src/auth/oidc.js";
import { defaultConfig } from "../../src/config.js";
import { webAssets } from "../../src/web-assets.js";
import { tokenStorePath } from "../../src/cli/token-store.js";
import { fakeBackend } from "../../../testkit/gateway/fake-backend.js";
import { startGateway, type TestGateway } from "../../../testkit/gateway/gateway.js";
import { startOpenIdProvider, userAgent, type OpenIdProvider } from "../../../testkit/gateway/openid-provider.js";
import { cleanEnv, cliCommand, REPO, runCli, type CliResult } from "../../../testkit/gateway/cli-harness.js";

const CLIENT_ID = "entryway-cli";

/** The CLI as a process whose stderr the test reads while it runs (the address to open, the code to type). */
function startCli(args: string[], env: NodeJS.ProcessEnv) {
  const [command, ...rest] = cliCommand(...args);
  const child = spawn(command!, rest, { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const waiters: (() => void)[] = [];
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString("utf8");
    for (const wake of waiters.splice(0)) wake();
  });
  const done = new Promise<CliResult>((resolve) =>
    child.on("close", (code) => resolve({ code, stdout, stderr, output: Buffer.from(stdout) })),
  );
  return {
    done,
    /** Resolves with the first match of `pattern` in stderr, as soon as it is printed. */
    async stderrMatch(pattern: RegExp): Promise<RegExpMatchArray> {
      for (;;) {
        const match = pattern.exec(stderr);
        if (match) return match;
        if (child.exitCode !== null) throw new Error(`the CLI ended first: ${stderr}`);
        await new Promise<void>((wake) => {
          waiters.push(wake);
          child.once("close", wake);
        });
      }
    },
  };
}

describe("entryway login against oidc-provider", () => {
  let provider: OpenIdProvider;
  let bed: TestGateway;
  let home: string;
  let env: NodeJS.ProcessEnv;
  const flags = () => ["--issuer", provider.issuer, "--client-id", CLIENT_ID];
  const stored = () =>
    JSON.parse(readFileSync(tokenStorePath(env), "utf8")) as {
      current: string;
      logins: Record<string, { idToken: string; refreshToken?: string; expiresAt: number }>;
    };
  const storedLogin = () => Object.values(stored().logins)[0]!;

  /** `entryway login --no-browser` with no provider named: it must find this one and this client; alice signs in. */
  const signInAsAlice = async (cliEnv: NodeJS.ProcessEnv) => {
    const login = startCli(["login", "--no-browser"], cliEnv);
    const [, address] = await login.stderrMatch(/To sign in, open:\n {2}(\S+)\n/);
    expect(new URL(address!).origin).toBe(provider.issuer);
    expect(new URL(address!).searchParams.get("client_id")).toBe(CLIENT_ID);
    await userAgent(address!, { user: "alice" });
    expect((await login.done).code).toBe(0);
  };

  beforeAll(async () => {
    provider = await startOpenIdProvider({ clientId: CLIENT_ID, namespaces: { alice: ["docker"], bob: ["shop"] } });
    const authorizer = oidcAuthorizer({
      issuer: provider.issuer,
      audience: CLIENT_ID,
      jwksUri: "",
      usernameClaim: "sub",
      namespacesClaim: "namespaces",
    });
    const config = { authorizer: "oidc" as const, oidcIssuer: provider.issuer, oidcAudience: CLIENT_ID };
    // The web terminal's /web/config.json names the issuer and client id (login without flags).
    bed = await startGateway(fakeBackend(), authorizer, config, [
      webAssets({ config: { ...defaultConfig, ...config } }),
    ]);
    home = mkdtempSync(join(tmpdir(), "entryway-login-"));
    env = cleanEnv(home, { ENTRYWAY_GATEWAY: bed.base });
  });
  afterAll(async () => {
    await bed?.stop();
    await provider?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it("signs in through the browser flow, keeps the tokens for the user alone, and enter uses them", async () => {
    const login = startCli(["login", ...flags(), "--no-browser"], env);
    const [, address] = await login.stderrMatch(/To sign in, open:\n {2}(\S+)\n/);
    const url = new URL(address!);
    expect(url.origin).toBe(provider.issuer);
    const redirect = new URL(url.searchParams.get("redirect_uri")!);
    expect(redirect.hostname).toBe("127.0.0.1");
    expect(redirect.pathname).toBe("/callback");
    expect(Number(redirect.port)).toBeGreaterThan(0);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("state")).toBeTruthy();

    const page = await userAgent(url.href, { user: "alice" });
    expect(page).toMatchObject({ status: 200, url: expect.stringContaining(`${redirect.origin}/callback?`) });
    expect(page.body).toContain("Signed in");
    const result = await login.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Signed in to ${provider.issuer}`);

    const file = tokenStorePath(env);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(file, "..")).mode & 0o777).toBe(0o700);
    const tokens = storedLogin();
    expect(tokens.refreshToken).toBeTruthy();
    for (const secret of [tokens.idToken, tokens.refreshToken!])
      expect(result.stdout + result.stderr).not.toContain(secret);

    // No --token, no ENTRYWAY_TOKEN, no config file: the sign-in's ID token, which the gateway's
    // OIDC authorizer verifies against the provider's keys.
    const entered = await runCli(["enter", "web-1"], { env, input: "exit 3\n" });
    expect(entered.code, entered.stderr).toBe(3);
    expect(bed.audit.filter((e) => e.event === "session.start").map((e) => e.user)).toEqual(["alice"]);
    // entryway ls with the same token: the OIDC authorizer allows alice every container.
    expect(await runCli(["ls"], { env })).toMatchObject({ code: 0, stdout: "TARGET\nweb-1\nweb-2\n" });
  });

  it("refreshes the token before it expires, and keeps the new one", async () => {
    const before = storedLogin();
    const file = stored();
    // The stored token now looks a minute from its end (its real exp is an hour away).
    for (const login of Object.values(file.logins)) login.expiresAt = Date.now() + 60_000;
    writeFileSync(tokenStorePath(env), JSON.stringify(file), { mode: 0o600 });

    const entered = await runCli(["enter", "web-1"], { env, input: "exit 4\n" });
    expect(entered.code, entered.stderr).toBe(4);
    const after = storedLogin();
    expect(after.idToken).not.toBe(before.idToken);
    expect(after.expiresAt).toBeGreaterThan(Date.now() + 30 * 60_000);
    expect(statSync(tokenStorePath(env)).mode & 0o777).toBe(0o600);
    expect(bed.audit.filter((e) => e.event === "session.start").map((e) => e.user)).toEqual(["alice", "alice"]);
  });

  it("refuses an answer whose state is not the sign-in's, and keeps nothing from it", async () => {
    const before = readFileSync(tokenStorePath(env), "utf8");
    const login = startCli(["login", ...flags(), "--no-browser"], env);
    const [, address] = await login.stderrMatch(/To sign in, open:\n {2}(\S+)\n/);
    const callback = new URL(new URL(address!).searchParams.get("redirect_uri")!);
    callback.searchParams.set("code", "a-code-from-elsewhere");
    callback.searchParams.set("state", "not-this-sign-ins");
    expect((await fetch(callback)).status).toBe(400);
    const result = await login.done;
    expect(result.code).toBe(77);
    expect(result.stderr).toMatch(/^entryway: sign-in refused: the answer's state is not this sign-in's/m);
    expect(readFileSync(tokenStorePath(env), "utf8")).toBe(before);
  });

  it("ends with 77 when the user refuses consent, and keeps nothing", async () => {
    const before = readFileSync(tokenStorePath(env), "utf8");
    const login = startCli(["login", ...flags(), "--no-browser"], env);
    const [, address] = await login.stderrMatch(/To sign in, open:\n {2}(\S+)\n/);
    const page = await userAgent(address!, { user: "alice", deny: true });
    expect(page.status).toBe(403);
    const result = await login.done;
    expect(result.code).toBe(77);
    expect(result.stderr).toMatch(/^entryway: sign-in failed: access_denied/m);
    expect(readFileSync(tokenStorePath(env), "utf8")).toBe(before);
  });

  it("signs in with the device flow; the gateway then knows the new user", async () => {
    const login = startCli(["login", ...flags(), "--device"], env);
    const [, verification, code] = await login.stderrMatch(/open (\S+) on any device and enter the code (\S+)\n/);
    const page = await userAgent(verification!, { user: "bob", userCode: code! });
    expect(page.status).toBe(200);
    const result = await login.done;
    expect(result.code, result.stderr).toBe(0);
    const tokens = storedLogin();
    expect(JSON.parse(Buffer.from(tokens.idToken.split(".")[1]!, "base64url").toString())).toMatchObject({
      sub: "bob",
      aud: CLIENT_ID,
    });
    // bob's namespaces claim has no "docker": the same gateway says no.
    const entered = await runCli(["enter", "web-1"], { env, input: "exit 3\n" });
    expect(entered.code).toBe(77);
    expect(entered.stderr).toMatch(/bob may not enter docker/);
    expect(await runCli(["ls"], { env })).toMatchObject({ code: 0, stdout: "", stderr: "No targets you may enter.\n" });
  });

  it("takes the issuer and client id from the context's oidc auth, and enter in that context uses its sign-in", async () => {
    const config = join(home, "contexts.json");
    writeFileSync(
      config,
      JSON.stringify({
        currentContext: "lab",
        contexts: {
          lab: { gateway: bed.base, auth: { oidc: { issuer: provider.issuer, clientId: CLIENT_ID } } },
          plain: { gateway: bed.base, auth: { tokenFile: join(home, "token") } },
        },
      }),
    );
    const inContext = { ...env, ENTRYWAY_GATEWAY: "", ENTRYWAY_CLIENT_CONFIG: config };
    await signInAsAlice(inContext);
    const sessions = bed.audit.filter((e) => e.event === "session.start").length;
    const entered = await runCli(["enter", "web-1"], { env: inContext, input: "exit 5\n" });
    expect(entered.code, entered.stderr).toBe(5);
    expect(
      bed.audit
        .filter((e) => e.event === "session.start")
        .slice(sessions)
        .map((e) => e.user),
    ).toEqual(["alice"]);
    // A context without OIDC has no sign-in to end; the sign-in stays.
    const plain = await runCli(["logout", "--context", "plain"], { env: inContext });
    expect(plain).toMatchObject({
      code: 64,
      stderr: expect.stringMatching(/context plain does not sign in with OIDC/),
    });
    expect(storedLogin().refreshToken).toBeTruthy();
  });

  it("signs out: revokes the tokens at the provider and removes them; enter then asks for a sign-in", async () => {
    const { refreshToken } = storedLogin();
    const result = await runCli(["logout"], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Signed out of ${provider.issuer}; its tokens were revoked.`);
    expect(await provider.refresh(refreshToken!)).toEqual({ status: 400, error: "invalid_grant" });
    expect(() => statSync(tokenStorePath(env))).toThrow(/ENOENT/);
    const entered = await runCli(["enter", "web-1"], { env, input: "exit 3\n" });
    expect(entered.code).toBe(77);
    expect(entered.stderr).toMatch(/^entryway: no access token: run entryway login/m);
  });

  it("finds the issuer and client id through the gateway (never a plain-http one), and refuses a token file others may read", async () => {
    await signInAsAlice(env);
    // Not from a plain-http gateway elsewhere: its answer could send the user to another sign-in page.
    const plain = await runCli(["login", "--gateway", "http://192.0.2.1:8080"], { env });
    expect(plain).toMatchObject({
      code: 64,
      stderr: expect.stringMatching(/^entryway: refusing plain 192\.0\.2\.1:8080/),
    });
    chmodSync(tokenStorePath(env), 0o644);
    const entered = await runCli(["enter", "web-1"], { env, input: "exit 3\n" });
    expect(entered.code).toBe(77);
    expect(entered.stderr).toMatch(/may be read by others \(mode 644\)/);
  });
});
