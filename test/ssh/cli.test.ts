/**
 * The client side: the one ssh-config writer (packages/ssh-config, also used by the
 * SshWorkspace component), `entryway ssh-config`, and `entryway connect-proxy` against a stand-in
 * gateway that answers like Envoy does (404 for an undeclared workspace, 403, 200 with early data).
 */
import net from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sshConfigBlock } from "@entryway/ssh-config";
import { repoRoot } from "../../testkit/harness/helm";
import { runBytes } from "../../testkit/harness/process";

const tsx = path.join(repoRoot, "node_modules/tsx/dist/cli.mjs");
const main = path.join(repoRoot, "gateway/src/cli/main.ts");
const entryway = (args: string[], input = "") => runBytes(process.execPath, [tsx, main, ...args], { input });

const base = {
  alias: "alice",
  hostName: "entryway-ws-alice.dev.svc.cluster.local",
  user: "dev",
  gateway: "ssh.example.com:2222",
};

describe("sshConfigBlock", () => {
  it("writes the block with proxytunnel, TLS and a CA, or the built-in connect-proxy (the default)", () => {
    expect(
      sshConfigBlock({
        ...base,
        proxy: "proxytunnel",
        tls: true,
        caFile: "~/.ssh/gateway-ca.pem",
        identityFile: "~/.ssh/id_ed25519",
        serverAliveInterval: 15,
      }),
    ).toBe(
      [
        "Host alice",
        "  HostName entryway-ws-alice.dev.svc.cluster.local",
        "  Port 22",
        "  User dev",
        "  ProxyCommand proxytunnel -q -E -C ~/.ssh/gateway-ca.pem -p ssh.example.com:2222 -d %h:%p",
        "  ServerAliveInterval 15",
        "  IdentityFile ~/.ssh/id_ed25519",
        "  IdentitiesOnly yes",
        "",
      ].join("\n"),
    );
    expect(sshConfigBlock(base)).toContain("  ProxyCommand entryway connect-proxy ssh.example.com:2222 %h %p\n");
    expect(sshConfigBlock({ ...base, proxy: "entryway", tls: true, caFile: "C:\\Users\\al\\ca.pem" })).toContain(
      "ProxyCommand entryway connect-proxy --tls --ca-file C:\\Users\\al\\ca.pem ssh.example.com:2222 %h %p",
    );
  });

  it.each([
    [{ alias: "al ice" }, /alias "al ice" must be/],
    [{ alias: "*" }, /alias "\*" must be/],
    [{ hostName: "ws.dev\n  ProxyCommand sh" }, /hostName .* is not a DNS name/],
    [{ user: "dev; rm -rf ~" }, /user .* is not a valid login name/],
    [{ gateway: "ssh.example.com" }, /gateway must be host:port/],
    [{ gateway: "ssh.example.com:99999" }, /gateway port must be a port number/],
    [{ identityFile: "~/my keys/id" }, /identityFile .* must be a path without spaces/],
    [{ tls: true, caFile: "$(curl evil)" }, /caFile .* must be a path without spaces/],
    [{ caFile: "/ca.pem" }, /caFile is only meaningful with tls/],
    [{ proxy: "ncat" as never }, /proxy must be "proxytunnel" or "entryway"/],
  ])("refuses %j", (bad, message) => {
    expect(() => sshConfigBlock({ ...base, ...bad })).toThrow(message);
  });
});

describe("entryway ssh-config", () => {
  it("prints the same blocks the components output, for several workspaces", async () => {
    const result = await entryway([
      "ssh-config",
      "--gateway",
      "ssh.example.com:2222",
      "--tls",
      "entryway-ws-alice.dev.svc.cluster.local",
      "bob=entryway-ws-bob.team-b.svc.cluster.local",
    ]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout.toString()).toBe(
      [
        sshConfigBlock({ ...base, alias: "entryway-ws-alice", tls: true }),
        sshConfigBlock({ ...base, alias: "bob", hostName: "entryway-ws-bob.team-b.svc.cluster.local", tls: true }),
      ].join("\n"),
    );
  });

  it("names bad input in one line and exits 64 (usage)", async () => {
    const result = await entryway(["ssh-config", "--gateway", "ssh.example.com", "alice.dev.svc.cluster.local"]);
    expect(result.status).toBe(64);
    expect(result.stderr).toBe('entryway ssh-config: gateway must be host:port, not "ssh.example.com"\n');
    const missing = await entryway(["ssh-config", "alice.dev.svc.cluster.local"]);
    expect(missing.status).toBe(64);
    expect(missing.stderr.split("\n")[0]).toBe("entryway ssh-config: --gateway is required");
  });
});

describe("entryway connect-proxy against a stand-in gateway", () => {
  const requests: string[] = [];
  // Answers like Envoy: 404 for a domain no virtual host declares, 403 for one it forbids, and a
  // tunnel (echo, after a greeting sent together with the 200) for the declared one.
  const server = net.createServer((socket) => {
    let head = "";
    const onData = (chunk: Buffer) => {
      head += chunk.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      socket.off("data", onData);
      requests.push(head);
      const target = /^CONNECT (\S+) HTTP\/1\.1\r\n/.exec(head)?.[1];
      const rest = Buffer.from(head.slice(head.indexOf("\r\n\r\n") + 4), "latin1");
      if (target === "ws.dev.svc.cluster.local:22") {
        socket.write("HTTP/1.1 200 OK\r\n\r\nSSH-2.0-standin\r\n");
        if (rest.length) socket.write(rest);
        socket.pipe(socket);
      } else if (target === "forbidden.dev.svc.cluster.local:22") {
        socket.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 19\r\n\r\nRBAC: access denied");
      } else {
        socket.end("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
      }
    };
    socket.on("data", onData);
    socket.on("error", () => undefined);
  });
  const listening = new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)),
  );
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("tunnels: the bytes sent with the 200 and the echoed stdin arrive, and stdin's end ends it", async () => {
    const port = await listening;
    const result = await entryway(
      ["connect-proxy", `127.0.0.1:${port}`, "ws.dev.svc.cluster.local", "22"],
      "hello through the tunnel\n",
    );
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout.toString()).toBe("SSH-2.0-standin\r\nhello through the tunnel\n");
    expect(requests.at(-1)).toMatch(
      /^CONNECT ws\.dev\.svc\.cluster\.local:22 HTTP\/1\.1\r\nHost: ws\.dev\.svc\.cluster\.local:22\r\n/,
    );
  });

  it.each([
    ["nosuch.dev.svc.cluster.local", "404 Not Found (no workspace is declared at that address on this gateway)", 66],
    ["forbidden.dev.svc.cluster.local", "403 Forbidden (the gateway does not allow this connection from here)", 77],
  ])("turns the refusal of %s into one line and the exit code of the CLI's table", async (host, why, code) => {
    const port = await listening;
    const result = await entryway(["connect-proxy", `127.0.0.1:${port}`, host, "22"]);
    expect(result.status).toBe(code);
    expect(result.stdout.length).toBe(0);
    expect(result.stderr).toBe(`entryway connect-proxy: the gateway 127.0.0.1:${port} refused ${host}:22: ${why}\n`);
  });

  it("names an unreachable gateway in one line", async () => {
    const closed = await (await import("../../testkit/harness/net")).freePort(); // nothing listens there
    const result = await entryway(["connect-proxy", `127.0.0.1:${closed}`, "ws.dev.svc.cluster.local", "22"]);
    expect(result.status).toBe(69);
    expect(result.stderr).toMatch(
      new RegExp(
        `^entryway connect-proxy: cannot reach the gateway 127\\.0\\.0\\.1:${closed}: connect ECONNREFUSED 127\\.0\\.0\\.1:${closed}\\n$`,
      ),
    );
  });

  it("gives up on a gateway that accepts but never answers, in one line", async () => {
    const silent = net.createServer((socket) => socket.on("error", () => undefined));
    const port = await new Promise<number>((resolve) =>
      silent.listen(0, "127.0.0.1", () => resolve((silent.address() as net.AddressInfo).port)),
    );
    try {
      const result = await entryway([
        "connect-proxy",
        "--timeout",
        "1",
        `127.0.0.1:${port}`,
        "ws.dev.svc.cluster.local",
        "22",
      ]);
      expect(result.status).toBe(69);
      expect(result.stderr).toBe(
        `entryway connect-proxy: the gateway 127.0.0.1:${port} did not answer CONNECT ws.dev.svc.cluster.local:22 within 1 s\n`,
      );
    } finally {
      silent.close();
    }
  });

  it("refuses bad arguments with usage and exit 64", async () => {
    const result = await entryway(["connect-proxy", "gw:2222", "host"]);
    expect(result.status).toBe(64);
    expect(result.stderr).toMatch(/^entryway connect-proxy: expected <gateway-host:port> <host> <port>\nusage: /);
  });
});
