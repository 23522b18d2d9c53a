// The README's quick start, as a newcomer runs it: on a fresh clone of the committed tree, with a PATH
// that has the machine's Node 20 and npm and nothing of this project's (no Node >= 22.12, no tsx, no
// node_modules), each command must set itself up (scripts/bootstrap.sh) and say so. Also the set-up's
// two failures (no npm registry, no root for apt) and the local exec gateway the quick start names,
// against a private podman. The commands are read from README.md, so they cannot drift.
import { spawn } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { parse } from "yaml";
import { podmanAvailable, startPodman, type Podman } from "../../testkit/gateway/podman";
import { repoRoot } from "../../testkit/harness/helm";
import { run as runProcess, type ProcessResult } from "../../testkit/harness/process";

/** The fenced blocks of the README's "## Quick start" section, each as its commands (comments dropped). */
function quickStartBlocks(readme: string): string[][] {
  const section = /^## Quick start\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
  if (!section) throw new Error('README.md has no "## Quick start" section');
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((block) =>
    block[1]!
      .split("\n")
      .map((line) => line.replace(/\s+#.*$/, "").trim())
      .filter(Boolean),
  );
}

const [[renderCommand, testCommand, ...extra] = [], [gatewayCommand, ...extraGateway] = []] = quickStartBlocks(
  readFileSync(path.join(repoRoot, "README.md"), "utf8"),
);

// A newcomer's PATH: the system's directories only (Node 20 and npm from Debian's layout), checked below.
const NEWCOMER_PATH = "/usr/bin:/bin";
const REGISTRY_DOWN = "http://127.0.0.1:9/";
const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-quickstart-"));
// Clean-up removes fresh clones with their node_modules and a podman store: minutes on a loaded machine.
const CLEANUP_TIMEOUT = 600_000;
afterAll(() => rmSync(scratch, { recursive: true, force: true }), CLEANUP_TIMEOUT);

function newcomerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  // HOME keeps the machine's npm cache and user config; TMPDIR keeps the set-up's logs in the scratch folder.
  return { PATH: NEWCOMER_PATH, HOME: os.homedir(), LANG: "C.UTF-8", TMPDIR: scratch, ...extra };
}

const run = (command: string, cwd: string, env: NodeJS.ProcessEnv, input = "") =>
  runProcess("bash", ["-c", command], { cwd, env, input });

/** A fresh clone of the commit checked out here (committed content only). */
async function freshClone(name: string): Promise<string> {
  const head = (await run("git rev-parse HEAD", repoRoot, process.env)).stdout.trim();
  const dir = path.join(scratch, name);
  const clone = await run(
    `git clone --quiet --no-checkout '${repoRoot}' '${dir}' && git -C '${dir}' checkout --quiet ${head}`,
    scratch,
    process.env,
  );
  if (clone.status !== 0) throw new Error(`git clone failed: ${clone.stderr}`);
  return dir;
}

describe("README quick start", () => {
  it("gives the two commands, and .ci/run runs the second", () => {
    expect(renderCommand).toBe("npm run render -- dev");
    expect(testCommand).toBe("npm test");
    expect(extra).toEqual([]);
    const ciCommands = readFileSync(path.join(repoRoot, ".ci/run"), "utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith("#"));
    expect(ciCommands.at(-1)).toBe(testCommand);
    // npm test is where the set-up starts: Debian packages, Node, dependencies, then the suites.
    const scripts = (
      JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts.test).toBe("bash scripts/bootstrap.sh --for-tests npm run check");
  });

  it("the newcomer's PATH has a Node older than 22.12 and no tsx (else this test proves nothing)", async () => {
    const probe = await run("node --version; npm --version; command -v tsx || echo no-tsx", scratch, newcomerEnv());
    const [node, npm, tsx] = probe.stdout.trim().split("\n");
    expect(node).toMatch(/^v(1\d|20|21|22\.(\d|1[01]))\./);
    expect(npm).toMatch(/^\d+\./);
    expect(tsx).toBe("no-tsx");
  });

  describe("the first command on a fresh clone", () => {
    let clone: string;
    let result: ProcessResult;
    beforeAll(async () => {
      clone = await freshClone("render");
      // The machine's npm cache, used first (no revalidation of what it holds): the set-up still
      // downloads Node 24 and installs every dependency, without waiting on the registry for each.
      result = await run(renderCommand!, clone, newcomerEnv({ npm_config_prefer_offline: "true" }));
    }, 600_000);

    it("sets itself up, saying what it installs, and renders the dev stack", () => {
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
      expect(result.stdout).toMatch(
        /^setup: Node v20\.\S+ is older than 22\.12: installing Node 24 from the npm registry \(node-linux-\w+@24\) into \.ci\/cache\/node$/m,
      );
      expect(result.stdout).toMatch(
        /^setup: installing the npm dependencies of package-lock\.json \(npm ci, with Node v24\.\S+\)$/m,
      );
      expect(result.stdout).toMatch(/^rendered \d+ objects of stack "dev" to rendered\/dev$/m);
    });

    it("prints the objects by kind as written, and the stack outputs with secrets redacted", () => {
      const out = path.join(clone, "rendered/dev");
      const kinds = new Map<string, number>();
      for (const file of readdirSync(out).filter((f) => !f.startsWith("_"))) {
        const { kind } = parse(readFileSync(path.join(out, file), "utf8")) as { kind: string };
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }
      const printedKinds = /^objects by kind:\n((?: {2}.*\n)+)/m.exec(result.stdout)?.[1];
      const printed = new Map(
        printedKinds!
          .trimEnd()
          .split("\n")
          .map((line) => line.trim().split(" "))
          .map(([n, kind]) => [kind!, Number(n)] as const),
      );
      expect(printed).toEqual(kinds);
      expect(result.stdout).toContain(`rendered ${[...kinds.values()].reduce((a, b) => a + b)} objects`);

      const outputsFile = readFileSync(path.join(out, "_outputs.yaml"), "utf8");
      const printedOutputs =
        /^stack outputs \(rendered\/dev\/_outputs\.yaml; secret values shown as \[secret\]\):\n((?: {2}.*\n?)+)/m.exec(
          result.stdout,
        )?.[1];
      expect(printedOutputs!.replace(/^ {2}/gm, "").trimEnd()).toBe(outputsFile.trimEnd());
      expect((parse(outputsFile) as Record<string, unknown>).ansibleFormsAdminPassword).toBe("[secret]");
      for (const text of [result.stdout, ...readdirSync(out).map((f) => readFileSync(path.join(out, f), "utf8"))]) {
        expect(text).not.toMatch(/offline-random-|offline-secret-config-/);
      }
    });

    describe("the exec gateway, started locally by the quick start's command", () => {
      let podman: Podman;
      let gateway: ReturnType<typeof spawn>;
      let stdout = "";
      let exited: Promise<number | null>;
      let banner: { url: string; tokenFile: string; enter: string; monitoring: string };

      beforeAll(async () => {
        if (!podmanAvailable())
          throw new Error("podman, runc and busybox-static are required (see .ci/apt-packages.txt)");
        podman = await startPodman();
        await podman.startContainer("quickstart-shell");
        // Its own process group, so the test can press Ctrl-C as a terminal does: SIGINT to the whole group.
        gateway = spawn("bash", ["-c", `${gatewayCommand} -- --docker-host unix://${podman.socketPath} --port 0`], {
          cwd: clone,
          env: newcomerEnv(),
          stdio: ["ignore", "pipe", "inherit"],
          detached: true,
        });
        exited = new Promise((resolve) => gateway.on("exit", (code) => resolve(code)));
        gateway.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
        for (;;) {
          const match =
            /listens on (\S+) .*\n.*token is in (\S+) .*\n.*shell in a container: +(.*)\n.*\n.*readiness, metrics: +(\S+)\/readyz,/.exec(
              stdout,
            );
          if (match) {
            banner = { url: match[1]!, tokenFile: match[2]!, enter: match[3]!, monitoring: match[4]! };
            break;
          }
          if (gateway.exitCode !== null) throw new Error(`gateway:local exited: ${stdout}`);
          await new Promise((r) => setTimeout(r, 200));
        }
      }, 300_000);
      afterAll(async () => {
        if (gateway && gateway.exitCode === null && gateway.signalCode === null) process.kill(-gateway.pid!, "SIGKILL");
        await podman?.stop();
      }, CLEANUP_TIMEOUT);

      it("is one command, listening on 127.0.0.1 only, healthy and ready against the socket", async () => {
        expect(gatewayCommand).toBe("npm run gateway:local");
        expect(extraGateway).toEqual([]);
        expect(banner.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect(stdout).toMatch(
          /"msg":"listening","address":"127\.0\.0\.1",.*"backend":"docker","authorizer":"webhook"/,
        );
        expect((await fetch(`${banner.url}/healthz`)).status).toBe(200);
        expect(banner.monitoring).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect((await fetch(`${banner.monitoring}/readyz`)).status).toBe(200);
        // Readiness and metrics are never on the public port.
        expect((await fetch(`${banner.url}/readyz`)).status).toBe(404);
      });

      it("opens a shell in a container with the printed command and the one token, kept out of the output", async () => {
        expect(statSync(banner.tokenFile).mode & 0o777).toBe(0o600);
        const shell = await run(
          banner.enter.replace("<container>", "quickstart-shell"),
          clone,
          newcomerEnv(),
          "echo quick$((6*7))\nexit 3\n",
        );
        expect(shell.stdout).toContain("quick42");
        expect(shell.status).toBe(3);
        expect(stdout).not.toContain(readFileSync(banner.tokenFile, "utf8").trim());
      });

      it("denies any other token", async () => {
        const wrongToken = path.join(scratch, "wrong-token");
        writeFileSync(wrongToken, "not-the-token\n", { mode: 0o600 });
        const denied = await run(
          banner.enter.replace(banner.tokenFile, wrongToken).replace("<container>", "quickstart-shell"),
          clone,
          newcomerEnv(),
          "echo never\n",
        );
        expect(denied.status).toBe(77);
        expect(denied.stderr.trim()).toMatch(/^entryway: .*not the token of this gateway:local run/);
        expect(denied.stdout).not.toContain("never");
      });

      it("stops on Ctrl-C, draining, and removes the token", async () => {
        process.kill(-gateway.pid!, "SIGINT");
        await exited;
        expect(stdout).toMatch(/"msg":"stopping","signal":"SIGTERM"/);
        expect(existsSync(banner.tokenFile)).toBe(false);
        await expect(fetch(`${banner.url}/healthz`)).rejects.toThrow();
      });
    });
  });

  describe("set-up failures end in one line", () => {
    it("no npm registry, with Node 20: downloading Node 24 fails", async () => {
      const clone = await freshClone("no-registry-node");
      const emptyCache = mkdtempSync(path.join(scratch, "npm-cache-"));
      const env = newcomerEnv({
        npm_config_registry: REGISTRY_DOWN,
        npm_config_cache: emptyCache,
        npm_config_fetch_retries: "0",
      });
      const result = await run(renderCommand!, clone, env);
      expect(result.status).not.toBe(0);
      expect(result.stdout).toMatch(/^setup: Node v20\.\S+ is older than 22\.12: installing Node 24/m);
      expect(result.stderr).toMatch(
        /^setup: error: installing Node 24 failed: cannot reach the npm registry http:\/\/127\.0\.0\.1:9\/ \(ECONNREFUSED\); full log: \S+\n$/,
      );
      expect(readFileSync(/full log: (\S+)/.exec(result.stderr)![1]!, "utf8")).toMatch(/ECONNREFUSED/);
    });

    it("no npm registry, with Node 24: npm ci fails", async () => {
      const clone = await freshClone("no-registry-deps");
      // A newcomer whose Node is recent enough: this test's own (vitest needs >= 22.12 too).
      const node24 = path.dirname(process.execPath);
      const emptyCache = mkdtempSync(path.join(scratch, "npm-cache-"));
      const env = newcomerEnv({
        PATH: `${node24}:${NEWCOMER_PATH}`,
        npm_config_registry: REGISTRY_DOWN,
        npm_config_cache: emptyCache,
        npm_config_fetch_retries: "0",
      });
      const result = await run(renderCommand!, clone, env);
      expect(result.status).not.toBe(0);
      expect(result.stderr).toMatch(
        /^setup: error: npm ci failed: cannot reach the npm registry http:\/\/127\.0\.0\.1:9\/ \(ECONNREFUSED\); full log: \S+\n$/,
      );
      expect(result.stdout).toMatch(/^setup: installing the npm dependencies/m);
    });

    it("no root for apt: names the missing Debian packages and the command that installs them", async () => {
      // The real bootstrap, run as nobody, with one package this machine lacks added to the list.
      const missing = await run("dpkg-query -W -f='${Status}' hello", scratch, process.env);
      expect(missing.stdout).not.toContain("install ok installed");
      // Outside the scratch folder (mode 0700), where nobody can read it.
      const tree = mkdtempSync(path.join(os.tmpdir(), "entryway-no-root-"));
      onTestFinished(() => rmSync(tree, { recursive: true, force: true }));
      chmodSync(tree, 0o755);
      for (const dir of [".ci", "scripts"]) mkdirSync(path.join(tree, dir));
      cpSync(path.join(repoRoot, "scripts/bootstrap.sh"), path.join(tree, "scripts/bootstrap.sh"));
      writeFileSync(
        path.join(tree, ".ci/apt-packages.txt"),
        readFileSync(path.join(repoRoot, ".ci/apt-packages.txt"), "utf8") + "hello\n",
      );
      const asNobody = process.getuid?.() === 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
      const result = await run(
        `${asNobody}bash scripts/bootstrap.sh --for-tests npm run check`,
        tree,
        newcomerEnv({ HOME: tree }),
      );
      expect(result.status).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe(
        "setup: error: the test suites need Debian packages that are not installed, and installing them needs root: sudo apt-get install --no-install-recommends hello\n",
      );
    });
  });
});
