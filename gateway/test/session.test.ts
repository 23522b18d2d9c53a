// Protocol and session behaviour against an in-memory backend: token sources, limits, timeouts,
// UTF-8 carry through the whole path, reaping, shutdown, and bad input (with a property-based fuzz test).
import fc from "fast-check";
import protobuf from "protobufjs";
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../src/config.js";
import { encodeRequest, RequestType, ResponseType } from "../src/protocol.js";
import { failClosed, type Recheck } from "../src/auth/authorizer.js";
import { SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX } from "../src/server.js";
import { EntryClient } from "../../testkit/gateway/client.js";
import { fakeBackend } from "../../testkit/gateway/fake-backend.js";
import { startGateway, tokenAuthorizer, type TestGateway } from "../../testkit/gateway/gateway.js";

const fatal = new TextDecoder("utf-8", { fatal: true });
let gateways: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  gateways = [];
});

async function setup(overrides: Parameters<typeof startGateway>[2] = {}) {
  const backend = fakeBackend();
  const authorizer = tokenAuthorizer();
  const g = await startGateway(backend, authorizer, overrides);
  gateways.push(g);
  const url = g.url({ container: "box" });
  const open = async (token = "user:alice") => {
    const client = await EntryClient.connect(url, { token });
    return client;
  };
  return { backend, authorizer, g, url, open };
}

async function echo(client: EntryClient, word: string) {
  client.type(`${word}\n`);
  await client.waitFor((c) => c.text.includes(word));
}

describe("token sources", () => {
  it("accepts Entry's access-token header, a bearer header, the subprotocol and a first AUTH message", async () => {
    const { url, open, backend } = await setup();
    await echo(await open(), "via-entry-header");
    await echo(await EntryClient.connect(url, { headers: { authorization: "Bearer user:bob" } }), "via-bearer");
    const viaProtocol = await EntryClient.connect(url, {
      protocols: [SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX + Buffer.from("user:carol").toString("base64url")],
    });
    expect(viaProtocol.ws.protocol).toBe(SUBPROTOCOL); // the token is never echoed back
    await echo(viaProtocol, "via-subprotocol");
    const viaMessage = await EntryClient.connect(url);
    viaMessage.ws.send(encodeRequest(RequestType.AUTH, "user:dave"));
    await echo(viaMessage, "via-auth-message");
    expect(backend.execs).toBe(4);
  });

  it("closes with unauthenticated when no token arrives in time, creating nothing", async () => {
    const { url, backend } = await setup({ authTimeoutMs: 200 });
    const client = await EntryClient.connect(url);
    expect(await client.closed).toMatchObject({ closeCode: "unauthenticated" });
    expect(backend.execs).toBe(0);
  });

  it("denies before any exec is created and says why", async () => {
    const { open, backend, g } = await setup();
    const client = await open("stolen");
    const closed = await client.closed;
    expect(closed).toMatchObject({ closeCode: "denied" });
    expect(closed.reason).toMatch(/permission denied: unknown token/);
    expect(backend.execs).toBe(0);
    expect(g.audit).toEqual([expect.objectContaining({ event: "session.refused", closeCode: "denied" })]);
  });
});

describe("session", () => {
  it("applies WINCH, ignoring unusable sizes and clamping huge ones", async () => {
    const { open } = await setup();
    const client = await open();
    client.winch(120, 40);
    for (const bad of ["abc", "0 0", "", "12"]) client.ws.send(encodeRequest(RequestType.WINCH, bad));
    await echo(client, "size");
    await client.waitFor(/40 120/);
    client.ws.send(encodeRequest(RequestType.WINCH, "99999 99999"));
    client.type("size\n");
    await client.waitFor(/4096 4096/);
  });

  it("sends the exit code in CLOSE and audits start and end", async () => {
    const { open, g } = await setup();
    const client = await open();
    client.type("exit 7\n");
    expect(await client.closed).toMatchObject({
      exitCode: 7,
      closeCode: "exit",
      reason: "shell exited with code 7",
      wsCode: 1000,
    });
    await g.gateway.sessions.values().next().value?.finished;
    const end = g.audit.find((e) => e.event === "session.end");
    expect(end).toMatchObject({
      user: "alice",
      target: "docker/box",
      exitCode: 7,
      closeCode: "exit",
      client: "127.0.0.1",
      bytesIn: 7,
    });
    expect(g.audit[0]).toMatchObject({ event: "session.start", user: "alice" });
  });

  it.each(["你", "😀"])("never splits %s across frames, at any chunk boundary and frame size", async (char) => {
    for (const outputFrameBytes of [4, 5, 7]) {
      const { backend, open } = await setup({ outputFrameBytes });
      const text = Array.from({ length: 8 }, (_, lead) => "x".repeat(lead) + char).join("|");
      const bytes = Buffer.from(text);
      // The backend delivers the text cut at every byte position in turn.
      backend.script = [...bytes].map((b) => Buffer.from([b]));
      const client = await open();
      await client.waitFor((c) => c.text.includes(text));
      for (const frame of client.frames.filter((f) => f.msgType === ResponseType.STDOUT)) {
        expect(frame.content.length).toBeLessThanOrEqual(outputFrameBytes);
        expect(() => fatal.decode(frame.content)).not.toThrow();
      }
    }
  });

  it("ends the shell when the client vanishes", async () => {
    const { open, backend, g } = await setup();
    const client = await open();
    await echo(client, "hello");
    client.ws.terminate();
    await expect.poll(() => backend.reaped).toEqual([100]);
    await expect.poll(() => g.audit.at(-1)).toMatchObject({ event: "session.end", closeCode: "client-gone" });
  });

  it("ends the shell when the client leaves before the shell reported its PID", async () => {
    const { open, backend } = await setup();
    backend.startDelayMs = 500;
    const client = await open();
    await expect.poll(() => backend.execs).toBe(1);
    client.ws.terminate(); // the exec exists, its PID report is still on the way
    await expect.poll(() => backend.reaped, { timeout: 3000 }).toEqual([100]);
  });

  it("a reaper that hangs pins no slot: the user's and the replica's slots come back while it runs", async () => {
    const { open, backend } = await setup({
      maxSessionsPerUser: 1,
      maxSessions: 1,
      reapTimeoutMs: 600_000,
      drainTimeoutMs: 500,
    });
    backend.reaperHangs = true;
    const first = await open();
    await echo(first, "first");
    first.ws.terminate(); // abandoned: the reaper starts, and hangs
    await expect.poll(() => backend.reaped).toEqual([100]);
    await echo(await open(), "second"); // the same user, at both limits
  });

  it("a reaper that hangs is given up at reapTimeoutMs, audited (reap.failed) and counted", async () => {
    const { open, backend, g } = await setup({ reapGraceSeconds: 0.1, reapTimeoutMs: 1000 });
    backend.reaperHangs = true;
    const client = await open();
    await echo(client, "up");
    client.ws.terminate();
    await expect
      .poll(() => g.reaps, { timeout: 10_000 })
      .toEqual([
        {
          event: "reap.failed",
          session: expect.any(String),
          user: "alice",
          container: "fake/box",
          pid: 100,
          reason: "the reaper did not end within 1000 ms",
        },
      ]);
    expect(await (await fetch(`${g.monitoring}/metrics`)).text()).toMatch(
      /entryway_shells_reaped_total\{result="timeout"\} 1/,
    );
    await expect.poll(() => g.audit.at(-1)).toMatchObject({ event: "session.end", closeCode: "client-gone" });
  });

  it("drops a peer that stops answering WebSocket pings, and ends its shell", async () => {
    const { open, backend } = await setup({ wsPingIntervalMs: 200 });
    const client = await open();
    await echo(client, "hello");
    (client.ws as unknown as { _socket: { pause(): void } })._socket.pause(); // stops reading: no pongs
    await expect.poll(() => backend.reaped, { timeout: 5000 }).toEqual([100]);
  });

  it("sends application PINGs and closes idle sessions", async () => {
    const { open, backend } = await setup({ pingIntervalMs: 100, idleTimeoutMs: 600 });
    const client = await open();
    const closed = await client.closed;
    expect(closed).toMatchObject({ closeCode: "idle-timeout" });
    expect(client.frames.filter((f) => f.msgType === ResponseType.PING).length).toBeGreaterThanOrEqual(3);
    expect(backend.reaped).toHaveLength(1);
  });

  it("enforces per-user and per-replica limits", async () => {
    const { open } = await setup({ maxSessionsPerUser: 2, maxSessions: 3 });
    const held = [await open(), await open()];
    for (const c of held) await echo(c, "up");
    expect(await (await open()).closed).toMatchObject({ closeCode: "limit" });
    await echo(await open("user:bob"), "bob-up");
    const closed = await (await open("user:carol")).closed;
    expect(closed).toMatchObject({ closeCode: "limit" });
    expect(closed.reason).toMatch(/replica/);
  });

  it("on shutdown refuses new connections, tells open sessions why and ends their shells", async () => {
    const { open, backend, g, url } = await setup();
    const clients = [await open(), await open("user:bob")];
    for (const c of clients) await echo(c, "up");
    await g.stop();
    for (const c of clients) expect(await c.closed).toMatchObject({ closeCode: "shutdown", reason: "test over" });
    expect(backend.reaped.sort()).toEqual([100, 101]);
    await expect(EntryClient.connect(url, { token: "user:alice" })).rejects.toThrow();
  });
});

describe("bad input", () => {
  it("refuses an unusable target with bad-request and audits it", async () => {
    const { g, backend } = await setup();
    const client = await EntryClient.connect(g.url({ container: "../etc" }), { token: "user:alice" });
    expect(await client.closed).toMatchObject({
      closeCode: "bad-request",
      reason: expect.stringMatching(/invalid container/),
    });
    expect(backend.execs).toBe(0);
    expect(g.audit).toEqual([
      expect.objectContaining({ event: "session.refused", closeCode: "bad-request", client: "127.0.0.1" }),
    ]);
  });

  it("closes on malformed protobuf, ignores unknown types and empty frames, and leaves other sessions alone", async () => {
    const { open } = await setup();
    const bystander = await open("user:bob");
    await echo(bystander, "before");

    const unknown = await open();
    unknown.ws.send(encodeRequest(9, "??"));
    unknown.ws.send(Buffer.alloc(0));
    unknown.ws.send(encodeRequest(RequestType.PLAIN, ""));
    unknown.ws.send(encodeRequest(RequestType.AUTH, "user:mallory")); // after authentication: ignored
    await echo(unknown, "still-here");

    const malformed = await open();
    await echo(malformed, "up");
    malformed.sendRaw(Buffer.from([0x0a, 0xff, 0xff]));
    expect(await malformed.closed).toMatchObject({ closeCode: "bad-request" });

    await echo(bystander, "after");
  });

  it("closes with 1009 on a frame over maxFrameBytes", async () => {
    const { open, backend } = await setup({ maxFrameBytes: 1024 });
    const client = await open();
    await echo(client, "up");
    client.type("x".repeat(4096));
    expect((await client.closed).wsCode).toBe(1009);
    await expect.poll(() => backend.reaped).toHaveLength(1);
  });

  it("survives random frames: each is ignored or closes the session, never the gateway (fuzz)", async () => {
    const { open, g } = await setup({ maxFrameBytes: 4096 });
    const bystander = await open("user:bob");
    await echo(bystander, "bystander");
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 64 }), { minLength: 1, maxLength: 5 }), async (frames) => {
        const client = await open();
        await echo(client, "ready");
        for (const frame of frames) client.sendRaw(Buffer.from(frame));
        client.type("alive\n");
        // Either the session answers or it closed with a documented code.
        await client
          .waitFor((c) => c.text.includes("alive\n") || c.ws.readyState === WebSocket.CLOSED, 5000)
          .catch(() => {});
        if (client.ws.readyState === WebSocket.CLOSED)
          expect(["bad-request"]).toContain((await client.closed).closeCode);
        else expect(client.text).toContain("alive");
        client.ws.close();
        await client.closed;
      }),
      { numRuns: 60 },
    );
    await echo(bystander, "bystander-after");
    const health = await fetch(`${g.base}/healthz`);
    expect(health.status).toBe(200);
  });
});

describe("session lifetime", () => {
  it("ends a session at maxSessionSeconds with CLOSE expired, and ends its shell", async () => {
    const { open, backend, g } = await setup({ maxSessionSeconds: 1 });
    const client = await open();
    await echo(client, "busy");
    expect(await client.closed).toMatchObject({ closeCode: "expired", reason: "the session reached its limit of 1 s" });
    await expect.poll(() => backend.reaped).toHaveLength(1);
    await expect.poll(() => g.audit.at(-1)).toMatchObject({ event: "session.end", closeCode: "expired" });
  });

  it("ends a session when its token expires (the authorizer's expiresAt, from OIDC exp)", async () => {
    const backend = fakeBackend();
    const g = await startGateway(backend, {
      authorize: async () => ({ allow: true, user: "alice", expiresAt: Date.now() + 1500 }),
    });
    gateways.push(g);
    const client = await EntryClient.connect(g.url({ container: "box" }), { token: "any" });
    await echo(client, "still-valid");
    expect(await client.closed).toMatchObject({ closeCode: "expired", reason: "the access token expired" });
    await expect.poll(() => backend.reaped).toHaveLength(1);
  });
});

describe("ending during setup (the session's signal)", () => {
  /** A step that waits until the test lets it go on. */
  function gate() {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { opened, open, calls: 0 };
  }

  it("a client that leaves while the target is resolved: no exec is started, the slot comes back, the refusal is audited", async () => {
    const { open, backend, g } = await setup({ maxSessionsPerUser: 1 });
    const resolving = gate();
    const resolve = backend.resolve.bind(backend);
    backend.resolve = async (target) => {
      resolving.calls++;
      await resolving.opened;
      return resolve(target);
    };
    const client = await open();
    await expect.poll(() => resolving.calls).toBe(1);
    client.ws.terminate();
    await expect.poll(() => g.gateway.sessions.size).toBe(0);
    resolving.open(); // the backend answers after the session ended
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(backend.execs).toBe(0);
    expect(backend.reaped).toEqual([]);
    expect(g.audit).toEqual([
      expect.objectContaining({ event: "session.refused", user: "alice", closeCode: "client-gone" }),
    ]);
    await echo(await open(), "the-slot-came-back");
  });

  it("an exec created after the client left is ended, never counted as active, and the session audited as refused", async () => {
    const { open, backend, g } = await setup();
    const creating = gate();
    const exec = backend.exec.bind(backend);
    backend.exec = async (...args) => {
      creating.calls++;
      await creating.opened;
      return exec(...args);
    };
    const client = await open();
    await expect.poll(() => creating.calls).toBe(1);
    client.ws.terminate();
    await expect.poll(() => g.audit.length).toBe(1);
    creating.open();
    await expect.poll(() => backend.reaped).toEqual([100]);
    expect(g.audit).toEqual([
      expect.objectContaining({ event: "session.refused", closeCode: "client-gone", container: "fake/box" }),
    ]);
    expect(await (await fetch(`${g.monitoring}/metrics`)).text()).toMatch(/entryway_sessions_active 0/);
  });
});

describe("sessions that end with their grant", () => {
  it("asks the authorizer again every reauthorizeIntervalMs: a revoked grant ends the session, an authorizer that cannot answer does not", async () => {
    let answer: Recheck = { outcome: "allowed" };
    let rechecks = 0;
    const backend = fakeBackend();
    const recheck = async () => {
      rechecks++;
      return answer;
    };
    const g = await startGateway(
      backend,
      { authorize: async () => ({ allow: true, user: "alice", recheck }) },
      { reauthorizeIntervalMs: 100 },
    );
    gateways.push(g);
    const client = await EntryClient.connect(g.url({ container: "box" }), { token: "any" });
    await echo(client, "granted");
    await expect.poll(() => rechecks).toBeGreaterThanOrEqual(2);
    answer = { outcome: "unavailable", detail: "webhook answered HTTP 503" };
    const before = rechecks;
    await expect.poll(() => rechecks).toBeGreaterThanOrEqual(before + 2);
    await echo(client, "still-here");
    expect(g.logs).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: expect.stringMatching(/could not authorize the session again/),
        error: "webhook answered HTTP 503",
      }),
    );
    answer = {
      outcome: "revoked",
      closeCode: "denied",
      reason: "permission denied: alice may no longer exec in namespace team-a",
    };
    expect(await client.closed).toMatchObject({
      closeCode: "denied",
      reason: "permission denied: alice may no longer exec in namespace team-a",
    });
    await expect.poll(() => backend.reaped).toHaveLength(1);
    await expect.poll(() => g.audit.at(-1)).toMatchObject({ event: "session.end", closeCode: "denied", user: "alice" });
    expect(await (await fetch(`${g.monitoring}/metrics`)).text()).toMatch(
      /entryway_auth_denials_total\{reason="revoked"\} 1/,
    );
  });

  it("asks again every 5 minutes by default", () => {
    expect(defaultConfig.reauthorizeIntervalMs).toBe(300_000);
  });
});

describe("audit", () => {
  it("records the command a client chose", async () => {
    const { g } = await setup();
    const client = await EntryClient.connect(
      g.url({ container: "box", command: ["sh", "-c", "id; cat /etc/shadow"] }),
      { token: "user:alice" },
    );
    client.type("exit 0\n");
    await client.closed;
    await expect.poll(() => g.audit.at(-1)).toMatchObject({ event: "session.end" });
    expect(g.audit.map((e) => e.command)).toEqual([
      ["sh", "-c", "id; cat /etc/shadow"],
      ["sh", "-c", "id; cat /etc/shadow"],
    ]);
  });

  it("takes the client address from X-Forwarded-For only when the peer is a trusted proxy", async () => {
    const forwarded = { "x-forwarded-for": "198.51.100.7, 203.0.113.9" };
    const direct = await setup();
    await (
      await EntryClient.connect(direct.url, { token: "nope", headers: forwarded })
    ).closed;
    expect(direct.g.audit.at(-1)).toMatchObject({ client: "127.0.0.1" });
    const proxied = await setup({ trustedProxies: ["127.0.0.0/8"] });
    await (
      await EntryClient.connect(proxied.url, { token: "nope", headers: forwarded })
    ).closed;
    // The nearest hop that is not a trusted proxy; what the client itself wrote further left proves nothing.
    expect(proxied.g.audit.at(-1)).toMatchObject({ client: "203.0.113.9" });
    const chained = await setup({ trustedProxies: ["127.0.0.0/8", "203.0.113.0/24"] });
    await (
      await EntryClient.connect(chained.url, { token: "nope", headers: forwarded })
    ).closed;
    expect(chained.g.audit.at(-1)).toMatchObject({ client: "198.51.100.7" });
  });

  it("keeps the raw query string (a token put in the URL) out of a refused upgrade's record", async () => {
    const { g } = await setup();
    const client = await EntryClient.connect(g.url({ container: "../etc", access_token: "secret-in-the-url" }), {
      token: "user:alice",
    });
    expect(await client.closed).toMatchObject({ closeCode: "bad-request" });
    expect(g.audit).toHaveLength(1);
    expect(JSON.stringify(g.audit)).not.toContain("secret-in-the-url");
    expect(g.audit[0]).toMatchObject({ event: "session.refused", target: "/v1/enter" });
  });

  it("logs a backend's error text and never sends it to the client", async () => {
    const secret = 'HTTP 500 {"message":"etcd at 10.0.0.12:2379 timed out"}';
    const unavailable = failClosed("kubernetes", async () => {
      throw new Error(secret);
    });
    const g = await startGateway(fakeBackend(), unavailable);
    gateways.push(g);
    const denied = await (await EntryClient.connect(g.url({ container: "box" }), { token: "anything" })).closed;
    expect(denied).toMatchObject({
      closeCode: "denied",
      reason: "permission denied: kubernetes authorizer unavailable",
    });
    expect(JSON.stringify(g.audit)).not.toContain("etcd");
    expect(g.logs).toContainEqual(expect.objectContaining({ msg: "authorizer failed", error: secret }));

    const broken = fakeBackend();
    broken.resolve = async () => {
      throw new Error(secret);
    };
    const h = await startGateway(broken, tokenAuthorizer());
    gateways.push(h);
    const failed = await (await EntryClient.connect(h.url({ container: "box" }), { token: "user:alice" })).closed;
    expect(failed).toMatchObject({ closeCode: "backend-error" });
    expect(failed.reason).not.toContain("etcd");
    expect(h.logs).toContainEqual(expect.objectContaining({ msg: "session setup failed", error: secret }));
    expect(await (await fetch(`${h.monitoring}/readyz`)).text()).not.toContain("etcd");
  });
});

describe("browsers and bad frames", () => {
  it("refuses a cross-site Origin with 403 before the upgrade, and allows the gateway's own", async () => {
    const { g, url, authorizer, backend } = await setup();
    await expect(EntryClient.connect(url, { token: "user:alice", origin: "https://evil.example" })).rejects.toThrow(
      /HTTP 403/,
    );
    expect(authorizer.calls).toBe(0);
    expect(g.audit).toEqual([]);
    const own = await EntryClient.connect(url, { token: "user:alice", origin: g.base });
    await echo(own, "same-origin");
    const cli = await EntryClient.connect(url, { token: "user:alice" }); // no Origin: not a browser
    await echo(cli, "no-origin");
    expect(backend.execs).toBe(2);
  });

  it("without allowedOrigins, refuses a host name's own origin (DNS rebinding), and allows an address's or localhost's", async () => {
    const { url, authorizer } = await setup();
    const port = new URL(url).port;
    // An attacker's name resolved to the gateway: the browser's Host and Origin agree.
    await expect(
      EntryClient.connect(url, {
        token: "user:alice",
        origin: `http://rebind.evil.example:${port}`,
        headers: { host: `rebind.evil.example:${port}` },
      }),
    ).rejects.toThrow(/HTTP 403/);
    expect(authorizer.calls).toBe(0);
    await echo(
      await EntryClient.connect(url, {
        token: "user:alice",
        origin: `http://localhost:${port}`,
        headers: { host: `localhost:${port}` },
      }),
      "localhost",
    );
    await echo(await EntryClient.connect(url, { token: "user:alice", origin: `http://127.0.0.1:${port}` }), "address");
  });

  it("allows exactly the configured origins when allowedOrigins is set", async () => {
    const { url, g } = await setup({ allowedOrigins: ["https://exec.example.com"] });
    await echo(await EntryClient.connect(url, { token: "user:alice", origin: "https://exec.example.com" }), "listed");
    await expect(EntryClient.connect(url, { token: "user:alice", origin: g.base })).rejects.toThrow(/HTTP 403/);
    await expect(
      EntryClient.connect(url, { token: "user:alice", origin: "https://exec.example.com.evil.example" }),
    ).rejects.toThrow(/HTTP 403/);
  });

  it("ends a text frame that is not UTF-8 with CLOSE bad-request (not close 1007)", async () => {
    const { open, g } = await setup();
    const client = await open();
    await echo(client, "up");
    client.ws.send(Buffer.from([0x0a, 0x02, 0xff, 0xfe]), { binary: false });
    expect(await client.closed).toMatchObject({
      closeCode: "bad-request",
      reason: expect.stringMatching(/not UTF-8/),
      wsCode: 1000,
    });
    await expect.poll(() => g.audit.at(-1)).toMatchObject({ event: "session.end", closeCode: "bad-request" });
  });
});

describe("before authentication", () => {
  it("survives a flood of 1,000 unauthenticated connections: over-limit upgrades get 429 before any WebSocket, a good session still works", async () => {
    const cap = {
      maxPendingConnections: 256,
      maxPendingPerSource: 100,
      authAttemptsPerMinute: 150,
      authTimeoutMs: 60_000,
    };
    const { g, url, authorizer } = await setup(cap);
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const statuses = new Map<string, number>();
    const opened: WebSocket[] = [];
    await Promise.all(
      Array.from(
        { length: 1000 },
        () =>
          new Promise<void>((resolve) => {
            const ws = new WebSocket(url, { perMessageDeflate: false });
            const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);
            ws.once("open", () => {
              opened.push(ws);
              count("open");
              resolve();
            });
            ws.once("unexpected-response", (_request, response) => {
              count(String(response.statusCode));
              resolve();
            });
            ws.once("error", () => {
              count("error");
              resolve();
            });
          }),
      ),
    );
    expect(Object.fromEntries(statuses)).toEqual({ open: 100, 429: 900 });
    // A good session, from another address, while 100 connections still wait for their AUTH.
    const good = await EntryClient.connect(url, { token: "user:alice", localAddress: "127.0.0.2" });
    await echo(good, "responsive");
    // Every waiting connection now sends a wrong token: the authorizer hears each at most once.
    for (const ws of opened) ws.send(encodeRequest(RequestType.AUTH, "stolen"));
    await expect.poll(() => authorizer.calls, { timeout: 20_000 }).toBe(101);
    // Once those slots are free, the per-address attempt budget (150 a minute, 101 spent) runs out
    // (its exact arithmetic, on a fixed clock, is in unit/limits.test.ts): most of the next 100 get 429.
    let admitted = 0;
    for (let i = 0; i < 100; i++) {
      try {
        const again = await EntryClient.connect(url, { token: "stolen" });
        admitted++;
        await again.closed;
      } catch (error) {
        expect(String(error)).toMatch(/HTTP 429/);
      }
    }
    expect(admitted).toBeGreaterThanOrEqual(cap.authAttemptsPerMinute - 100);
    expect(admitted).toBeLessThan(100);
    expect(authorizer.calls).toBe(101 + admitted);
    global.gc?.();
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
    console.log(
      `flood of 1000 upgrades: ${JSON.stringify(Object.fromEntries(statuses))}, authorizer calls ${authorizer.calls}, heap growth ${(heapGrowth / 1e6).toFixed(1)} MB (gateway and clients in one process)`,
    );
    expect(heapGrowth).toBeLessThan(64e6);
    for (const ws of opened) ws.terminate();
    expect(g.gateway.sessions.size).toBeLessThanOrEqual(1);
  });
});

describe("behind the ingress (trustedProxyHops)", () => {
  // The test process is the proxy (peer 127.0.0.1): like the Istio ingress gateway and ingress-nginx,
  // it appends the address it saw to X-Forwarded-For; what the client wrote stays to its left.
  const viaProxy = (client: string, written?: string) => ({
    "x-forwarded-for": written ? `${written}, ${client}` : client,
  });

  it("one client's token-less connections lock out only that client; the audit names the client, not the proxy", async () => {
    const { url, g } = await setup({ trustedProxyHops: 1, maxPendingPerSource: 8, authTimeoutMs: 60_000 });
    const flood = await Promise.all(
      Array.from({ length: 8 }, () => EntryClient.connect(url, { headers: viaProxy("198.51.100.7") })),
    );
    await expect(EntryClient.connect(url, { headers: viaProxy("198.51.100.7") })).rejects.toThrow(/HTTP 429/);
    // Addresses the client writes itself change nothing: the proxy's hop is the one believed.
    await expect(EntryClient.connect(url, { headers: viaProxy("198.51.100.7", "192.0.2.1") })).rejects.toThrow(
      /HTTP 429/,
    );
    const other = await EntryClient.connect(url, { token: "user:bob", headers: viaProxy("203.0.113.9") });
    await echo(other, "not-locked-out");
    other.type("exit 0\n");
    await other.closed;
    await expect.poll(() => g.audit.at(-1)).toMatchObject({ event: "session.end", user: "bob", client: "203.0.113.9" });
    for (const c of flood) c.ws.terminate();
  });

  it("counts an IPv6 client by its /64: other addresses of the same /64 share its limit, another /64 does not", async () => {
    const { url } = await setup({ trustedProxyHops: 1, maxPendingPerSource: 2, authTimeoutMs: 60_000 });
    const held = [
      await EntryClient.connect(url, { headers: viaProxy("2001:db8:1:2::a") }),
      await EntryClient.connect(url, { headers: viaProxy("2001:db8:1:2:ffff::1") }),
    ];
    await expect(EntryClient.connect(url, { headers: viaProxy("2001:db8:1:2::b") })).rejects.toThrow(/HTTP 429/);
    await echo(await EntryClient.connect(url, { token: "user:bob", headers: viaProxy("2001:db8:1:3::a") }), "other-64");
    for (const c of held) c.ws.terminate();
  });

  it("believes X-Forwarded-For from no peer without trustedProxies or trustedProxyHops", async () => {
    const { url } = await setup({ maxPendingPerSource: 2, authTimeoutMs: 60_000 });
    const held = [
      await EntryClient.connect(url, { headers: viaProxy("198.51.100.7") }),
      await EntryClient.connect(url, { headers: viaProxy("198.51.100.8") }),
    ];
    await expect(EntryClient.connect(url, { token: "user:bob", headers: viaProxy("203.0.113.9") })).rejects.toThrow(
      /HTTP 429/,
    );
    for (const c of held) c.ws.terminate();
  });
});

describe("HTTP endpoints", () => {
  it("serves health, readiness and Prometheus metrics on the monitoring port, and not on the public one", async () => {
    const { open, g } = await setup();
    const client = await open();
    await echo(client, "counted");
    client.type("exit 0\n");
    await client.closed;
    await (
      await open("nope")
    ).closed;
    expect((await fetch(`${g.base}/healthz`)).status).toBe(200);
    expect((await fetch(`${g.base}/readyz`)).status).toBe(404);
    expect((await fetch(`${g.base}/metrics`)).status).toBe(404);
    expect(g.monitoring).not.toBe(g.base);
    expect((await fetch(`${g.monitoring}/healthz`)).status).toBe(200);
    expect((await fetch(`${g.monitoring}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`${g.monitoring}/metrics`)).text();
    expect(metrics).toMatch(/entryway_sessions_total\{outcome="exit"\} 1/);
    expect(metrics).toMatch(/entryway_auth_denials_total\{reason="denied"\} 1/);
    expect(metrics).toMatch(/entryway_bytes_total\{direction="in"\} 15/);
    expect(metrics).toMatch(/entryway_sessions_active 0/);
  });
});

describe("pipe mode and Entry's original protocol", () => {
  // Entry's message.proto as it was (github.com/laincloud/entry), without any extension.
  const entryOnly = protobuf.parse(`syntax = "proto3"; package entry;
    message RequestMessage { enum RequestType { PLAIN = 0; WINCH = 1; } RequestType msgType = 1; bytes content = 2; }
    message ResponseMessage { enum ResponseType { STDOUT = 0; STDERR = 1; CLOSE = 2; PING = 3; } ResponseType msgType = 1; bytes content = 2; }`).root;
  const EntryRequest = entryOnly.lookupType("entry.RequestMessage");
  const EntryResponse = entryOnly.lookupType("entry.ResponseMessage");

  it("a client that knows only Entry's messages gets a TTY; EOF (type 3) is ignored on a TTY", async () => {
    const { url } = await setup();
    const ws = new WebSocket(url, { headers: { "access-token": "user:alice" } });
    const replies: { msgType: number; content: Buffer }[] = [];
    ws.on("message", (data: Buffer) =>
      replies.push(
        EntryResponse.toObject(EntryResponse.decode(data), { enums: Number, bytes: Buffer, defaults: true }) as never,
      ),
    );
    await new Promise((resolve) => ws.once("open", resolve));
    const send = (msgType: number, content: string) =>
      ws.send(EntryRequest.encode(EntryRequest.create({ msgType, content: Buffer.from(content) })).finish());
    const text = () =>
      Buffer.concat(replies.filter((r) => r.msgType === 0).map((r) => Buffer.from(r.content ?? []))).toString();
    send(1, "100 30");
    send(0, "size\n");
    await expect.poll(text).toContain("30 100\n");
    ws.send(encodeRequest(RequestType.EOF, "")); // a newer client's EOF: no end of a TTY's input
    send(0, "size\n");
    await expect.poll(() => text().split("30 100\n").length).toBe(3);
    send(0, "exit 3\n");
    await expect.poll(() => replies.at(-1)?.msgType).toBe(2);
    expect(Buffer.from(replies.at(-1)!.content).toString()).toBe("shell exited with code 3");
  });

  it("on a TTY, the terminal's cursor reports reach the shell with a padded one-digit row; pipe mode passes bytes as they are", async () => {
    const { g } = await setup();
    const reports = "\x1b[1;5R typed\x1b[12;5R\x1b";
    const tty = await EntryClient.connect(g.url({ container: "box" }), { token: "user:alice" });
    tty.type(reports); // the fake shell echoes what it reads
    await tty.waitFor((c) => c.text.endsWith("\x1b"));
    expect(tty.text).toBe("\x1b[01;5R typed\x1b[12;5R\x1b");
    const pipe = await EntryClient.connect(g.url({ container: "box", tty: "false" }), { token: "user:alice" });
    pipe.type(reports);
    pipe.eof();
    await pipe.closed;
    expect(pipe.text).toBe(reports);
  });

  it("pipe mode keeps all early input (past 64 KiB), ignores WINCH, passes EOF and ignores input after it", async () => {
    const { backend, g } = await setup();
    backend.startDelayMs = 300; // the input arrives before the shell is ready
    const client = await EntryClient.connect(g.url({ container: "box", tty: "false" }), { token: "user:alice" });
    const input = Buffer.concat([Buffer.alloc(200 * 1024, "x"), Buffer.from("\n")]);
    client.winch(100, 30);
    for (let offset = 0; offset < input.length; offset += 16 * 1024)
      client.type(input.subarray(offset, offset + 16 * 1024));
    client.type("size\n");
    client.eof();
    client.type("after EOF\n");
    expect(await client.closed).toMatchObject({ closeCode: "exit", exitCode: 0 });
    expect(client.text).toBe(`${input.toString()}size\n24 80\n`); // the fake's size: the default, not the WINCH
  });
});
