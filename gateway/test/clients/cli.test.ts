// `entryway enter` as a person uses it, against a real gateway on the Docker backend (podman):
// inside tmux (a real terminal: typing, resizing, exit codes, the terminal restored on every way
// out), piped, through TLS, and each error as one line with its own exit code.
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { endpointUrl, EnterError, ExitCode, parseEnterTarget, resolveSettings } from "../../src/cli/enter-options.js";
import { podmanAvailable, withCliBed, type ClientBed } from "./bed.js";
import { describeNeeding } from "../../../testkit/gateway/tools.js";
import {
  cleanEnv,
  cliCommand,
  expectHelp,
  REPO,
  runCli,
  startTlsProxy,
  startTmux,
  tmuxAvailable,
  type Tmux,
} from "../../../testkit/gateway/cli-harness.js";
import { digest, fileDigest, pasteBlock, printable } from "./input-samples.js";

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** Types `command` (after `before`) at the local shell in tmux, then `echo CLI-EXIT=$?`, and presses Enter. */
async function runInTmux(tmux: Tmux, command: string[], before = ""): Promise<void> {
  await tmux.type(`${before}${command.map(shellQuote).join(" ")}; echo CLI-EXIT=$?`);
  await tmux.enter();
}
/** busybox's `clear`, its prompt on the top line, and its request for the cursor position (which tmux answers). */
const TOP_PROMPT = "\x1b[H\x1b[J/ # \x1b[6n";
/** Shows the local terminal's line discipline: "icanon echo" when sane, "-icanon -echo" when raw. */
const TTY_STATE = `echo TTY=$(stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo | tr '\\n' ' ')`;

/**
 * The local terminal's modes after the CLI ended, printed by the local shell (TTY=icanon echo when
 * restored). The terminal may still answer a cursor query the remote shell sent (ESC [6n) after
 * the CLI has gone: those bytes land in the local shell's line and garble the command (seen on a
 * loaded machine: "5Recho: not found"). So the line is cleared (C-u) and typed again, up to three
 * times; the modes asked for stay the same.
 */
async function expectTerminalRestored(tmux: Tmux): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await tmux.tmux("send-keys", "-t", "cli", "C-u");
    await tmux.type(`clear; ${TTY_STATE}`);
    await tmux.enter();
    try {
      await tmux.waitFor(/^TTY=icanon echo\s*$/m, attempt < 3 ? 10_000 : 45_000);
      return;
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

describe("target syntax, settings and URL (no gateway)", () => {
  it("parses the three target forms", () => {
    expect(parseEnterTarget("web-1")).toEqual({ kind: "docker", container: "web-1" });
    expect(parseEnterTarget("shop/api-1/app")).toEqual({
      kind: "pod",
      namespace: "shop",
      pod: "api-1",
      container: "app",
    });
    expect(parseEnterTarget("shop/api-1", "side")).toEqual({
      kind: "pod",
      namespace: "shop",
      pod: "api-1",
      container: "side",
    });
    expect(parseEnterTarget("shop/statefulset/db#0/mysql")).toEqual({
      kind: "workload",
      namespace: "shop",
      workload: "statefulset/db",
      instance: 0,
      container: "mysql",
    });
    expect(parseEnterTarget("shop/web#2")).toEqual({
      kind: "workload",
      namespace: "shop",
      workload: "web",
      instance: 2,
    });
    for (const bad of ["", "a//b", "a/b/c/d", "shop/web#x", "web#1", "shop/web#1/c/d", "a/b/c/d#1"]) {
      expect(() => parseEnterTarget(bad), bad).toThrow(EnterError);
    }
    expect(() => parseEnterTarget("box", "c")).toThrow(/Kubernetes targets/);
  });

  it("builds the endpoint URL with the target and command in the query", () => {
    const target = parseEnterTarget("shop/web#2/app");
    expect(endpointUrl("https://gw.example", target, ["sh", "-c", "id"]).href).toBe(
      "wss://gw.example/v1/enter?namespace=shop&workload=web&instance=2&container=app&command=sh&command=-c&command=id",
    );
    expect(endpointUrl("ws://127.0.0.1:8080/custom/path", parseEnterTarget("box"), []).href).toBe(
      "ws://127.0.0.1:8080/custom/path?container=box",
    );
    expect(() => endpointUrl("ftp://x", target, [])).toThrow(/scheme/);
  });

  it("refuses plain ws:// or http:// to a host that is not loopback, unless --insecure", () => {
    const target = parseEnterTarget("box");
    for (const gateway of ["ws://gw.example.com", "http://10.0.0.5:8080", "ws://[fd00::1]/v1/enter"]) {
      expect(() => endpointUrl(gateway, target, []), gateway).toThrow(
        expect.objectContaining({
          exitCode: ExitCode.usage,
          message: expect.stringMatching(/unencrypted.*--insecure/),
        }),
      );
      expect(endpointUrl(gateway, target, [], true).protocol).toBe("ws:");
    }
    for (const gateway of ["ws://127.0.0.1:8080", "http://localhost:8080", "ws://[::1]:8080", "wss://gw.example.com"]) {
      expect(() => endpointUrl(gateway, target, []), gateway).not.toThrow();
    }
  });

  it("takes settings from flags, then the environment, then the config file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "entryway-cli-settings-"));
    try {
      const config = join(dir, "client.json");
      writeFileSync(join(dir, "token"), "from-token-file\n");
      writeFileSync(
        config,
        JSON.stringify({ gateway: "https://file", token: "from-file", caFile: "/ca.pem", connectTimeout: 3 }),
      );
      const env = { ENTRYWAY_CLIENT_CONFIG: config };
      expect(await resolveSettings({}, env)).toEqual({
        gateway: "https://file",
        token: "from-file",
        caFile: "/ca.pem",
        connectTimeoutSeconds: 3,
        keepaliveSeconds: 15,
      });
      expect(
        await resolveSettings({}, { ...env, ENTRYWAY_GATEWAY: "https://env", ENTRYWAY_TOKEN_FILE: join(dir, "token") }),
      ).toMatchObject({ gateway: "https://env", token: "from-token-file" });
      expect(
        await resolveSettings(
          { gateway: "https://flag", token: "from-flag" },
          { ...env, ENTRYWAY_GATEWAY: "https://env", ENTRYWAY_TOKEN: "from-env" },
        ),
      ).toMatchObject({ gateway: "https://flag", token: "from-flag" });
      // The default config file: $XDG_CONFIG_HOME/entryway/client.json; a missing default is fine, a missing named one is not.
      mkdirSync(join(dir, "entryway"));
      writeFileSync(
        join(dir, "entryway", "client.json"),
        JSON.stringify({ gateway: "https://xdg", tokenFile: join(dir, "token") }),
      );
      expect(await resolveSettings({}, { XDG_CONFIG_HOME: dir })).toMatchObject({
        gateway: "https://xdg",
        token: "from-token-file",
        connectTimeoutSeconds: 10,
      });
      await expect(resolveSettings({ token: "t" }, { XDG_CONFIG_HOME: join(dir, "none") })).rejects.toThrow(
        /no gateway URL/,
      );
      await expect(resolveSettings({ config: join(dir, "missing.json") }, {})).rejects.toMatchObject({
        exitCode: ExitCode.usage,
      });
      writeFileSync(config, JSON.stringify({ gateway: "https://file", tokne: "typo" }));
      await expect(resolveSettings({}, env)).rejects.toThrow(/unknown key tokne/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

describeNeeding(
  { podman: podmanAvailable(), tmux: tmuxAvailable() },
  "entryway enter against a gateway on podman",
  () => {
    let bed: ClientBed;
    let home: string;
    let env: NodeJS.ProcessEnv;

    withCliBed("cli-box", "entryway-cli-home-", (...started) => ([bed, home, env] = started));

    it("in tmux: attaches, types, follows the window size, passes CJK through, exits 3 and restores the terminal", async () => {
      const tmux = await startTmux(env, 100, 30);
      try {
        await tmux.waitFor(/local\$ ?$/m);
        await tmux.type(TTY_STATE);
        await tmux.enter();
        await tmux.waitFor(/TTY=icanon echo/);
        await runInTmux(tmux, cliCommand("enter", bed.container), "clear; ");
        await tmux.waitFor(/^\/ #\s*$/m); // busybox sh's prompt in the container
        await tmux.type("echo SIZE=$(stty size)");
        await tmux.enter();
        await tmux.waitFor(/^SIZE=30 100$/m);
        await tmux.resize(120, 40); // SIGWINCH to the CLI, WINCH to the gateway, resize of the exec
        await tmux.type("echo SIZE=$(stty size)");
        await tmux.enter();
        await tmux.waitFor(/^SIZE=40 120$/m);
        await tmux.type("echo 你好世界-$((6*7))");
        await tmux.enter();
        await tmux.waitFor(/^你好世界-42$/m);
        await tmux.type("exit 3");
        await tmux.enter();
        await tmux.waitFor(/^CLI-EXIT=3$/m);
        await expectTerminalRestored(tmux);
      } finally {
        await tmux.stop();
      }
    });

    it("in tmux: loses no keystroke: a 2,000-character line typed and a 100,000-character paste, each right after a prompt on the top line, reach `cat` whole", async () => {
      const tmux = await startTmux(env, 100, 30);
      const dir = mkdtempSync(join(tmpdir(), "entryway-cli-paste-"));
      try {
        await tmux.waitFor(/local\$ ?$/m);
        await runInTmux(tmux, cliCommand("enter", bed.container));
        await tmux.waitFor(/^\/ #\s*$/m);
        // The keys go in the moment `clear` has put the prompt on the top line, where tmux answers busybox's
        // cursor request with ESC [ 1 ; 5 R, after which busybox's line editor loses keys (src/cursor-report.ts).
        const typed = printable(2000);
        const typing = tmux.typeOnOutput(TOP_PROMPT, `cat > /tmp/typed-cli\r${typed}\r`);
        await tmux.type("clear");
        await tmux.enter();
        await typing;
        // ^D once `cat` has the line: typed ahead, while the shell's line editor still held the terminal
        // in its raw mode, ^D would be taken as a character, not as the end of input.
        await expect
          .poll(() => fileDigest(bed.podman, bed.container, "/tmp/typed-cli"), { timeout: 60_000, interval: 250 })
          .toMatch(/^2001 bytes/);
        await tmux.tmux("send-keys", "-t", "cli", "C-d");
        await tmux.waitFor(/^\/ #\s*$/m);
        expect(await fileDigest(bed.podman, bed.container, "/tmp/typed-cli")).toBe(digest(typed + "\n"));

        const block = pasteBlock(100_000);
        writeFileSync(join(dir, "block"), block);
        await tmux.tmux("load-buffer", "-b", "block", join(dir, "block"));
        const command = tmux.typeOnOutput(TOP_PROMPT, "cat > /tmp/pasted-cli\r");
        await tmux.type("clear");
        await tmux.enter();
        await command;
        await tmux.tmux("paste-buffer", "-d", "-b", "block", "-t", "cli"); // its "\n"s as "\r", as a terminal sends Enter
        await expect
          .poll(() => fileDigest(bed.podman, bed.container, "/tmp/pasted-cli"), { timeout: 120_000, interval: 500 })
          .toMatch(/^100000 bytes/);
        await tmux.tmux("send-keys", "-t", "cli", "C-d");
        await tmux.waitFor(/^\/ #\s*$/m);
        expect(await fileDigest(bed.podman, bed.container, "/tmp/pasted-cli")).toBe(digest(block));
        await tmux.type("exit 0");
        await tmux.enter();
        await tmux.waitFor(/^CLI-EXIT=0$/m);
      } finally {
        await tmux.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("in tmux: SIGTERM and a lost connection each restore the terminal, with 143 and 69", async () => {
      const certDir = mkdtempSync(join(tmpdir(), "entryway-cli-tls-"));
      const proxy = await startTlsProxy(Number(new URL(bed.base).port), certDir);
      const tmux = await startTmux(env, 90, 25);
      try {
        await tmux.waitFor(/local\$ ?$/m);
        await runInTmux(tmux, cliCommand("enter", bed.container));
        await tmux.waitFor(/^\/ #\s*$/m);
        process.kill(await tmux.foregroundPid(), "SIGTERM");
        // The line may begin with the local terminal's late answer to the remote shell's cursor
        // query, echoed once the terminal is restored (seen on a loaded machine).
        await tmux.waitFor(/entryway: ended by SIGTERM\nCLI-EXIT=143$/m);
        await expectTerminalRestored(tmux);

        // Through the TLS proxy (trusting its CA), then the connection is cut under the session.
        const viaTls = cliCommand(
          "enter",
          "--gateway",
          `https://127.0.0.1:${proxy.port}`,
          "--ca-file",
          join(certDir, "cert.pem"),
          bed.container,
        );
        await runInTmux(tmux, viaTls, "clear; ");
        await tmux.waitFor(/^\/ #\s*$/m);
        await tmux.type("echo over-$((1+1))-tls");
        await tmux.enter();
        await tmux.waitFor(/^over-2-tls$/m);
        proxy.cut();
        await tmux.waitFor(/^entryway: connection to the gateway lost .*\n(.*\n)?CLI-EXIT=69$/m);
        await expectTerminalRestored(tmux);
      } finally {
        await tmux.stop();
        await proxy.stop();
        rmSync(certDir, { recursive: true, force: true });
      }
    });

    it("pipe mode (stdin and stdout not terminals): the command's own stdout and stderr, and its exit code", async () => {
      // echo '...' | entryway enter box > out.txt
      const piped = await runCli(["enter", bed.container], {
        env,
        input: "echo piped-$((40+2)); echo oops >&2\nexit 4\n",
      });
      expect(piped).toMatchObject({ code: 4, stdout: "piped-42\n", stderr: "oops\n" });
      // No exit in the input: the end of input ends the shell, a partial last line included.
      const ends = await runCli(["enter", bed.container], { env, input: "echo no-exit-$((2+3))" });
      expect(ends).toMatchObject({ code: 0, stdout: "no-exit-5\n", stderr: "" });
      // A command instead of the shell (the gateway allows it by default).
      const command = await runCli(["enter", bed.container, "--", "sh", "-c", "echo cmd-ran; exit 9"], { env });
      expect(command).toMatchObject({ code: 9, stdout: "cmd-ran\n" });
      // --tty: the input is typed on a remote terminal, which echoes it and ends lines with \r\n.
      const tty = await runCli(["enter", "--tty", bed.container], { env, input: "echo tty-$((1+1))\nexit 5\n" });
      expect(tty.stdout).toMatch(/^tty-2\r$/m);
      expect(tty.stdout).toContain("echo tty-$((1+1))");
      expect(tty.code).toBe(5);
      expect(await runCli(["enter", "--tty", "-T", bed.container], { env })).toMatchObject({
        code: ExitCode.usage,
        stderr: "entryway: --tty and --no-tty (-T) contradict each other\n",
      });
      expect(bed.audit.filter((e) => e.event === "session.end").length).toBeGreaterThanOrEqual(4);
    });

    it("pipe mode: 1 MB of random bytes through cat come back with the same sha256", async () => {
      const input = randomBytes(1024 * 1024);
      const result = await runCli(["enter", bed.container, "--", "cat"], { env, input });
      expect(result).toMatchObject({ code: 0, stderr: "" });
      expect(result.output.length).toBe(input.length);
      expect(sha256(result.output)).toBe(sha256(input));
    });

    it("in tmux: -T runs without a remote terminal even on a local one", async () => {
      const tmux = await startTmux(env, 80, 24);
      try {
        await tmux.waitFor(/local\$ ?$/m);
        await runInTmux(
          tmux,
          cliCommand("enter", "-T", bed.container, "--", "sh", "-c", "[ -t 0 ] || [ -t 1 ] || echo NO-TTY; exit 2"),
        );
        await tmux.waitFor(/^NO-TTY\nCLI-EXIT=2$/m);
      } finally {
        await tmux.stop();
      }
    });

    it("a gateway gone silent (no close, no answer) is noticed by the keepalive: one line, exit 69", async () => {
      const certDir = mkdtempSync(join(tmpdir(), "entryway-cli-tls-"));
      const proxy = await startTlsProxy(Number(new URL(bed.base).port), certDir);
      const [command, ...args] = cliCommand(
        "enter",
        "--gateway",
        `https://127.0.0.1:${proxy.port}`,
        "--ca-file",
        join(certDir, "cert.pem"),
        "--keepalive",
        "1",
        bed.container,
        "--",
        "sh",
        "-c",
        "echo ready; sleep 60",
      );
      const child = spawn(command!, args, { cwd: REPO, env, stdio: ["pipe", "pipe", "pipe"] });
      try {
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        await expect.poll(() => stdout, { timeout: 45_000 }).toMatch(/ready/);
        proxy.freeze();
        const frozenAt = Date.now();
        const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
        expect(code).toBe(ExitCode.network);
        expect(Date.now() - frozenAt).toBeLessThan(20_000); // about 2 s; slack for a loaded CI machine
        expect(stderr).toBe("entryway: connection to the gateway lost: no answer to a ping in 1 s\n");
      } finally {
        child.kill("SIGKILL");
        await proxy.stop();
        rmSync(certDir, { recursive: true, force: true });
      }
    });

    it("settings from a config file with a token file", async () => {
      const dir = join(home, ".config", "entryway");
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(home, "token"), "user:carol\n");
      writeFileSync(join(dir, "client.json"), JSON.stringify({ gateway: bed.base, tokenFile: join(home, "token") }));
      try {
        const result = await runCli(["enter", bed.container], { env: cleanEnv(home), input: "exit 6\n" });
        expect(result).toMatchObject({ code: 6, stderr: "" });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("each error is one clear line on stderr with its own exit code", async () => {
      const certDir = mkdtempSync(join(tmpdir(), "entryway-cli-tls-"));
      const proxy = await startTlsProxy(Number(new URL(bed.base).port), certDir);
      const port = new URL(bed.base).port;
      try {
        const cases: { args: string[]; env?: Record<string, string>; code: number; line: RegExp }[] = [
          {
            args: ["enter", bed.container],
            env: { ENTRYWAY_TOKEN: "stolen" },
            code: ExitCode.denied,
            line: /^entryway: permission denied: unknown token$/,
          },
          { args: ["enter", "no-such-box"], code: ExitCode.notFound, line: /^entryway: .*no-such-box/ },
          {
            args: ["enter", "--gateway", "http://127.0.0.1:9", bed.container],
            code: ExitCode.network,
            line: /^entryway: cannot reach the gateway at ws:\/\/127\.0\.0\.1:9: connection refused$/,
          },
          {
            args: ["enter", "--gateway", `http://127.0.0.1:${port}/wrong`, bed.container],
            code: ExitCode.network,
            line: /^entryway: no gateway endpoint at .*\/wrong \(HTTP 404\)/,
          },
          {
            args: ["enter", "--gateway", `https://127.0.0.1:${proxy.port}`, bed.container],
            code: ExitCode.tls,
            line: /^entryway: TLS error with wss:\/\/127\.0\.0\.1:\d+: self-signed certificate.*--ca-file/,
          },
          {
            args: ["enter", "--gateway", `https://127.0.0.1:${port}`, bed.container],
            code: ExitCode.tls,
            line: /^entryway: TLS error with wss:\/\/127\.0\.0\.1:\d+: the server does not speak TLS .*use http:\/\/ or ws:\/\//,
          },
          { args: ["enter", "a/b/c/d"], code: ExitCode.usage, line: /^entryway: bad target "a\/b\/c\/d"/ },
          {
            args: ["enter", "--frobnicate", bed.container],
            code: ExitCode.usage,
            line: /^entryway: Unknown option '--frobnicate'/,
          },
          {
            args: ["enter", bed.container],
            env: { ENTRYWAY_TOKEN: "" },
            code: ExitCode.denied,
            line: /^entryway: no access token: /,
          },
        ];
        const results = await Promise.all(cases.map((c) => runCli(c.args, { env: { ...env, ...c.env } })));
        results.forEach((result, i) => {
          const c = cases[i]!;
          expect({ args: c.args.join(" "), code: result.code, stderr: result.stderr.trimEnd() }).toMatchObject({
            code: c.code,
            stderr: expect.stringMatching(c.line),
          });
          expect(result.stderr, c.args.join(" ")).toMatch(/^[^\n]+\n$/); // one line
          expect(result.stdout).toBe("");
        });
        expect(new Set(cases.map((c) => c.code)).size).toBe(5); // denied, not found, network, TLS, usage
      } finally {
        await proxy.stop();
        rmSync(certDir, { recursive: true, force: true });
      }
    });

    it("--help documents targets, options, settings and exit codes", async () => {
      await expectHelp(["enter"], env, [
        "targets:",
        "<namespace>/<pod>[/<container>]",
        "<namespace>/<workload>#<n>",
        "--gateway",
        "--token-file",
        "--ca-file",
        "--tty",
        "-T, --no-tty",
        "Pipe mode",
        "ENTRYWAY_GATEWAY",
        "client.json",
        "exit status",
        "77  denied",
      ]);
    });
  },
);
