// What every `entryway` subcommand shares, with the CLI run as a process: the one exit-code table
// (bad flags, unreachable gateways, serve's bad settings), `entryway version` / `--version` against
// a gateway, and the completion scripts made from the subcommand table.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT_CODE_MEANINGS, ExitCode } from "../../src/cli/exit-codes.js";
import { subcommands } from "../../src/cli/main.js";
import { VERSION } from "../../src/version.js";
import { fakeBackend } from "../../../testkit/gateway/fake-backend.js";
import { startGateway, tokenAuthorizer, type TestGateway } from "../../../testkit/gateway/gateway.js";
import { cleanEnv, cliCommand, expectHelp, REPO, runCli } from "../../../testkit/gateway/cli-harness.js";
import { freePort } from "../../../testkit/harness/net.js";

let home: string;
let env: NodeJS.ProcessEnv;
let closedPort: number;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "entryway-cli-common-"));
  env = cleanEnv(home, { ENTRYWAY_CONNECT_TIMEOUT: "20" });
  closedPort = await freePort(); // nothing listens there: connecting is refused
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe("one exit-code table", () => {
  it("a bad option is 64 for every subcommand, as are no command and an unknown one", async () => {
    const names = Object.keys(subcommands);
    const results = await Promise.all([
      ...names.map((name) => runCli([name, "--bogus"], { env })),
      runCli([], { env }),
      runCli(["nosuch"], { env }),
    ]);
    for (const [index, result] of results.entries()) {
      const what = index < names.length ? `${names[index]} --bogus` : index === names.length ? "(none)" : "nosuch";
      expect(result.code, `${what}: ${result.stderr}`).toBe(ExitCode.usage);
      expect(result.stderr, what).toMatch(/^entryway|^usage: entryway/);
    }
  });

  it("an unreachable gateway is 69 for enter, cp, replay and connect-proxy; serve's bad settings 78", async () => {
    const gateway = `http://127.0.0.1:${closedPort}`;
    const [enter, cp, replay, proxy, serve] = await Promise.all([
      runCli(["enter", "-g", gateway, "-t", "user:a", "web-1"], { env }),
      runCli(["cp", "-g", gateway, "-t", "user:a", "web-1:/etc/hostname", join(home, "out")], { env }),
      runCli(
        ["replay", "-g", gateway, "-t", "user:a", "2026-01-01T00-00-00-000Z-01234567-89ab-cdef-0123-456789abcdef"],
        { env },
      ),
      runCli(["connect-proxy", `127.0.0.1:${closedPort}`, "ws.dev.svc.cluster.local", "22"], { env }),
      runCli(["serve"], { env: { ...env, ENTRYWAY_MAX_SESSIONS: "many" } }),
    ]);
    for (const result of [enter, cp, replay, proxy]) {
      expect(result.code, result.stderr).toBe(ExitCode.network);
      expect(result.stderr).toMatch(/cannot reach the gateway.*(connection refused|ECONNREFUSED)/);
    }
    expect(serve).toMatchObject({
      code: ExitCode.config,
      stderr: expect.stringMatching(/^entryway serve: maxSessions:/),
    });
  });

  it("gateway/README.md's table has every code with its meaning, and entryway --help prints the same table", async () => {
    const readme = readFileSync(join(REPO, "gateway/README.md"), "utf8");
    const rows = readme.split("\n").filter((line) => /^\| \d+ +\|/.test(line));
    for (const [code, meaning] of EXIT_CODE_MEANINGS) {
      const row = rows.find((line) => line.startsWith(`| ${code} `));
      expect(row, `${code}`).toContain(`| ${meaning} `);
    }
    await expectHelp(
      [],
      env,
      EXIT_CODE_MEANINGS.map(([code, meaning]) => `  ${code}  ${meaning}\n`),
    );
  });
});

describe("entryway version", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startGateway(fakeBackend(), tokenAuthorizer());
  });
  afterAll(() => g.stop());

  it("prints the client's version, and the gateway's from a GET of its endpoint without a token", async () => {
    const base = g.base;
    // At /version, and at the endpoint's path without an upgrade (which every exposure routes): the CLI asks there.
    for (const path of ["/version", "/v1/enter"])
      expect(await (await fetch(`${base}${path}`)).json(), path).toEqual({ version: VERSION });
    const [both, flag, client, unreachable] = await Promise.all([
      runCli(["version", "-g", base], { env }),
      runCli(["--version"], { env: { ...env, ENTRYWAY_GATEWAY: base } }),
      runCli(["version", "--client", "-g", base], { env }),
      runCli(["version", "-g", `http://127.0.0.1:${closedPort}`], { env }),
    ]);
    const host = new URL(base).host;
    for (const result of [both, flag])
      expect(result).toMatchObject({
        code: 0,
        stdout: `client: ${VERSION}\ngateway: ${VERSION} (http://${host})\n`,
        stderr: "",
      });
    expect(client).toMatchObject({ code: 0, stdout: `client: ${VERSION}\n`, stderr: "" });
    expect(unreachable).toMatchObject({ code: 0, stdout: `client: ${VERSION}\n` });
    expect(unreachable.stderr).toMatch(
      /^entryway: the gateway's version is unknown: cannot reach the gateway at http:\/\/127\.0\.0\.1:\d+: connection refused\n$/,
    );
    expect(JSON.parse(readFileSync(join(REPO, "gateway/package.json"), "utf8")).version).toBe(VERSION);
  });
});

describe("entryway completion", () => {
  const run = promisify(execFile);
  /** What bash completes for the words typed so far (the last one being completed). */
  async function bashComplete(script: string, words: string[]): Promise<string[]> {
    const file = join(home, "completion.bash");
    writeFileSync(file, script);
    const array = words.map((w) => `'${w}'`).join(" ");
    const { stdout } = await run("bash", [
      "-c",
      `source ${file}; COMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _entryway; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ]);
    return stdout.split("\n").filter(Boolean).sort();
  }

  it("bash completes subcommands, each one's flags and verbs from its own option table, and context names", async () => {
    const [command, ...args] = cliCommand("completion", "bash");
    const { stdout: script } = await run(command!, args, { cwd: REPO, env });
    expect(await bashComplete(script, ["entryway", "co"])).toEqual(["completion", "config", "connect-proxy"]);
    expect(await bashComplete(script, ["entryway", "enter", "--con"])).toEqual([
      "--config",
      "--connect-timeout",
      "--container",
      "--context",
    ]);
    expect(await bashComplete(script, ["entryway", "cp", "--q"])).toEqual(["--quiet"]);
    expect(await bashComplete(script, ["entryway", "config", "use"])).toEqual(["use-context"]);
    // Context names come from the config file through `entryway config get-contexts -o name`.
    writeFileSync(join(home, "entryway"), `#!/bin/sh\nexec ${cliCommand().join(" ")} "$@"\n`, { mode: 0o755 });
    const contexts = join(home, "contexts.json");
    writeFileSync(contexts, JSON.stringify({ contexts: { prod: { gateway: "https://p" }, dev: {} } }));
    const file = join(home, "completion.bash");
    writeFileSync(file, script);
    const { stdout } = await run(
      "bash",
      [
        "-c",
        `source ${file}; COMP_WORDS=(entryway enter --context ''); COMP_CWORD=3; _entryway; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { env: { ...env, PATH: `${home}:${env.PATH}`, ENTRYWAY_CLIENT_CONFIG: contexts } },
    );
    expect(stdout.split("\n").filter(Boolean).sort()).toEqual(["dev", "prod"]);
  });

  it("zsh and fish scripts name every subcommand and flag of the table; a shell not known is 64", async () => {
    const [zsh, fish, other] = await Promise.all([
      runCli(["completion", "zsh"], { env }),
      runCli(["completion", "fish"], { env }),
      runCli(["completion", "tcsh"], { env }),
    ]);
    expect(other.code).toBe(ExitCode.usage);
    expect(zsh.stdout).toMatch(/^#compdef entryway\n/);
    for (const [name, { load }] of Object.entries(subcommands)) {
      const { options } = await load();
      expect(zsh.stdout).toContain(`'${name}:`);
      expect(fish.stdout).toContain(` -a ${name} -d `);
      for (const flag of Object.keys(options)) {
        expect(zsh.stdout).toMatch(new RegExp(`    ${name}\\) compadd -- .*--${flag}\\b`));
        expect(fish.stdout).toContain(`complete -c entryway -n "__fish_seen_subcommand_from ${name}" -l ${flag}`);
      }
    }
  });
});
