// Contexts (`entryway config ...`, `--context`): the CLI run as a process over a config file in a
// scratch home, the old flat file migrated without losing a key, and the settings a context gives.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readClientConfig } from "../../src/cli/contexts.js";
import { parseEnterTarget, resolveSettings } from "../../src/cli/enter-options.js";
import { ExitCode } from "../../src/cli/exit-codes.js";
import { cleanEnv, runCli } from "../../../testkit/gateway/cli-harness.js";

let home: string;
let env: NodeJS.ProcessEnv;
let file: string;
const LEGACY = {
  gateway: "https://old.example.com",
  token: "old-token",
  caFile: "/etc/ssl/corp.pem",
  connectTimeout: 7,
  keepalive: 20,
};

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), "entryway-contexts-"));
  env = cleanEnv(home);
  delete env.ENTRYWAY_CONNECT_TIMEOUT;
  file = join(home, ".config", "entryway", "client.json");
  mkdirSync(join(home, ".config", "entryway"), { recursive: true });
  writeFileSync(file, JSON.stringify(LEGACY), { mode: 0o644 });
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe("entryway config over the one config file", () => {
  it("reads the old flat file as the current context 'default', and migrates it on the first write, keeping every key", async () => {
    expect(await resolveSettings({}, env)).toEqual({
      gateway: LEGACY.gateway,
      token: LEGACY.token,
      caFile: LEGACY.caFile,
      connectTimeoutSeconds: 7,
      keepaliveSeconds: 20,
    });
    const listed = await runCli(["config", "get-contexts"], { env });
    expect(listed).toMatchObject({ code: 0, stderr: "" });
    expect(listed.stdout.split("\n")[1]).toMatch(/^\*\s+default\s+https:\/\/old\.example\.com\s+token$/);

    writeFileSync(join(home, "prod-token"), "prod-token\n");
    const set = await runCli(
      [
        "config",
        "set-context",
        "prod",
        "-g",
        "https://prod.example.com",
        "--token-file",
        join(home, "prod-token"),
        "-n",
        "shop",
        "-c",
        "app",
      ],
      { env },
    );
    expect(set).toMatchObject({ code: 0, stdout: "context prod created\n" });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      currentContext: "default",
      contexts: {
        default: {
          gateway: LEGACY.gateway,
          auth: { token: LEGACY.token },
          caFile: LEGACY.caFile,
          connectTimeout: 7,
          keepalive: 20,
        },
        prod: {
          gateway: "https://prod.example.com",
          auth: { tokenFile: join(home, "prod-token") },
          namespace: "shop",
          container: "app",
        },
      },
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(`${file}.old`, "utf8"))).toEqual(LEGACY);
  });

  it("switches, lists names, says the current one, and refuses an unknown one with the usage code", async () => {
    expect(await runCli(["config", "current-context"], { env })).toMatchObject({ code: 0, stdout: "default\n" });
    expect(await runCli(["config", "use-context", "prod"], { env })).toMatchObject({ code: 0 });
    expect(await runCli(["config", "get-contexts", "-o", "name"], { env })).toMatchObject({
      code: 0,
      stdout: "default\nprod\n",
    });
    expect(await resolveSettings({}, env)).toEqual({
      gateway: "https://prod.example.com",
      token: "prod-token",
      connectTimeoutSeconds: 10,
      keepaliveSeconds: 15,
      namespace: "shop",
      container: "app",
    });
    // --context and ENTRYWAY_CONTEXT pick another for one run; flags still win over the context.
    expect(await resolveSettings({ context: "default" }, env)).toMatchObject({
      gateway: LEGACY.gateway,
      token: LEGACY.token,
    });
    expect(await resolveSettings({ token: "flag" }, { ...env, ENTRYWAY_CONTEXT: "default" })).toMatchObject({
      gateway: LEGACY.gateway,
      token: "flag",
    });
    const unknown = await runCli(["config", "use-context", "nope"], { env });
    expect(unknown.code).toBe(ExitCode.usage);
    expect(unknown.stderr).toBe(`entryway: no context "nope" in ${file} (known: default, prod)\n`);
  });

  it("changes only the fields given, and removes one given empty", async () => {
    expect(
      await runCli(["config", "set-context", "--current", "--namespace", "", "--token-env", "PROD_TOKEN"], { env }),
    ).toMatchObject({
      code: 0,
      stdout: "context prod modified\n",
    });
    const { config } = readClientConfig(file, true);
    expect(config.contexts.prod).toEqual({
      gateway: "https://prod.example.com",
      auth: { tokenEnv: "PROD_TOKEN" },
      container: "app",
    });
    await expect(resolveSettings({}, env)).rejects.toMatchObject({
      exitCode: ExitCode.denied,
      message: expect.stringMatching(/\$PROD_TOKEN, which is not set/),
    });
    expect(await resolveSettings({}, { ...env, PROD_TOKEN: "from-env" })).toMatchObject({ token: "from-env" });
  });

  it("reads a target without a namespace in the context's, with its container unless one is named", () => {
    const defaults = { namespace: "shop", container: "app" };
    expect(parseEnterTarget("api-1", undefined, defaults)).toEqual({
      kind: "pod",
      namespace: "shop",
      pod: "api-1",
      container: "app",
    });
    expect(parseEnterTarget("db#0", undefined, defaults)).toEqual({
      kind: "workload",
      namespace: "shop",
      workload: "db",
      instance: 0,
      container: "app",
    });
    expect(parseEnterTarget("other/api-1/side", undefined, defaults)).toMatchObject({
      namespace: "other",
      container: "side",
    });
    expect(parseEnterTarget("api-1", "cli", defaults)).toMatchObject({ container: "cli" });
    expect(parseEnterTarget("web-1")).toEqual({ kind: "docker", container: "web-1" });
  });

  it("enter --context uses that context; an OIDC context asks for entryway login (exit 77)", async () => {
    expect(
      await runCli(
        [
          "config",
          "set-context",
          "sso",
          "-g",
          "http://127.0.0.1:9",
          "--oidc-issuer",
          "https://id.example.com",
          "--oidc-client-id",
          "entryway",
        ],
        { env },
      ),
    ).toMatchObject({ code: 0 });
    const result = await runCli(["enter", "--context", "sso", "web-1"], { env });
    expect(result).toMatchObject({
      code: ExitCode.denied,
      stderr: "entryway: context sso signs in with OIDC (https://id.example.com): run entryway login --context sso\n",
    });
    const missing = await runCli(["cp", "--context", "nope", "web-1:/x", join(home, "out")], { env });
    expect(missing.code).toBe(ExitCode.usage);
    expect(missing.stderr).toMatch(/^entryway: no context "nope"/);
  });
});
