// `entryway cp` against a real gateway on podman (busybox tar in the container): 100 MB both ways
// with equal checksums. And archives a hostile container's tar could send (kubectl cp's CVEs: see
// src/cli/cp.ts), none of which writes outside the destination: those come from the Kubernetes
// stand-in, whose commands run on this machine, where a `tar` first in PATH prints them (busybox's
// shell runs its own tar applet whatever the container's files say).
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path, { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pty from "node-pty";
import tar from "tar-stream";
import { ExitCode } from "../../src/cli/enter-options.js";
import { entryPath } from "../../src/cli/cp.js";
import { formatBytes, formatDuration, progressLine, summaryLine } from "../../src/cli/progress.js";
import { kubernetesBackend, loadKubeConfig } from "../../src/backends/kubernetes.js";
import { startGateway, tokenAuthorizer, type TestGateway } from "../../../testkit/gateway/gateway.js";
import { startKubeStandin, type KubeStandin } from "../../../testkit/gateway/kube-standin.js";
import { describeNeeding } from "../../../testkit/gateway/tools.js";
import { podmanAvailable, withCliBed, type ClientBed } from "./bed.js";
import { cleanEnv, cliCommand, expectHelp, REPO, runCli } from "../../../testkit/gateway/cli-harness.js";

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

type Entry = { name: string; type?: "file" | "directory" | "symlink" | "link"; content?: string; linkname?: string };

async function makeTar(entries: Entry[]): Promise<Buffer> {
  const pack = tar.pack();
  for (const { content, ...header } of entries) pack.entry({ type: "file", mode: 0o644, ...header }, content ?? "");
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

it("maps archive entries under the expected name, and refuses absolute names and ..", () => {
  expect(entryPath("data/a/b.txt", "data", "/dest/copy")).toBe("/dest/copy/a/b.txt");
  expect(entryPath("./data/", "data", "/dest/copy")).toBe("/dest/copy");
  for (const bad of ["/etc/passwd", "data/../../x", "data/a/../../../x", "other/x", "datax/y", "../data/x"]) {
    expect(() => entryPath(bad, "data", "/dest/copy"), bad).toThrow(/refusing the archive/);
  }
});

it("refuses Windows separators, drives, streams and control characters on both path flavours, and keeps paths under the destination", () => {
  const startup =
    "data/..\\..\\..\\..\\Users\\me\\AppData\\Roaming\\Microsoft\\Windows\\Start Menu\\Programs\\Startup\\x.bat";
  const hostile = [
    startup,
    "data/C:\\Windows\\x.dll",
    "data/C:x",
    "data/file.txt:stream",
    "data/\\\\server\\share\\x",
    "data/a\x1b]52;c;Y3VybA==\x07",
    "data/\u009b2J",
    "data/a\nb",
  ];
  const flavours = [
    ["win32", path.win32, "C:\\Users\\me\\dest\\data"],
    ["posix", path.posix, "/home/me/dest/data"],
  ] as const;
  for (const [flavour, paths, destination] of flavours) {
    for (const name of hostile)
      expect(() => entryPath(name, "data", destination, paths), `${flavour} ${JSON.stringify(name)}`).toThrow(
        /refusing the archive from the container: entry .* holds/,
      );
    for (const name of ["data/../x", "/data/x", "data/a/../../x"])
      expect(() => entryPath(name, "data", destination, paths), `${flavour} ${name}`).toThrow(/is outside data/);
    expect(entryPath("data/sub/report 1.txt", "data", destination, paths)).toBe(
      paths.join(destination, "sub", "report 1.txt"),
    );
  }
  expect(entryPath("data/sub/x", "data", "C:\\dest\\data", path.win32)).toBe("C:\\dest\\data\\sub\\x");
});

it("formats the progress meter's bytes, rate, percentage and time left", () => {
  expect([0, 1023, 1536, 5 * 1024 ** 2, 3.25 * 1024 ** 3].map(formatBytes)).toEqual([
    "0 B",
    "1023 B",
    "1.5 KiB",
    "5.0 MiB",
    "3.3 GiB",
  ]);
  expect([0, 4.2, 65, 3725].map(formatDuration)).toEqual(["0:00", "0:05", "1:05", "1:02:05"]);
  const MiB = 1024 ** 2;
  expect(progressLine("sent", 25 * MiB, 2000, 100 * MiB)).toBe(
    "sent 25.0 MiB of 100.0 MiB (25%)  12.5 MiB/s  ETA 0:06",
  );
  expect(progressLine("received", 25 * MiB, 2000)).toBe("received 25.0 MiB  12.5 MiB/s");
  expect(progressLine("sent", 0, 0, 10)).toBe("sent 0 B of 10 B (0%)  0 B/s");
  expect(summaryLine("received", 100 * MiB, 4000)).toBe("received 100.0 MiB in 4.0 s (25.0 MiB/s)");
});

it("--help explains both directions and the checks on the archive; entryway --help lists cp", async () => {
  const env = cleanEnv(tmpdir());
  await expectHelp(["cp"], env, [
    "<local path> <target>:<path>",
    "<target>:<path> <local path>",
    "symlinks, hard links",
    "exit status",
  ]);
  expect((await runCli(["--help"], { env })).stdout).toMatch(/^ {2}cp {14}copy files to or from a container/m);
  expect(await runCli(["cp", "a", "b"], { env })).toMatchObject({
    code: ExitCode.usage,
    stderr: "entryway: exactly one of source and destination must be <target>:<path> (entryway cp --help)\n",
  });
});

describeNeeding({ podman: podmanAvailable() }, "entryway cp against a gateway on podman", () => {
  let bed: ClientBed;
  let home: string;
  let env: NodeJS.ProcessEnv;

  withCliBed("cp-box", "entryway-cp-", (...started) => ([bed, home, env] = started));

  it("copies a directory with 100 MB in and back out with equal checksums", async () => {
    const big = randomBytes(100 * 1024 * 1024);
    const source = join(home, "up");
    mkdirSync(join(source, "sub"), { recursive: true });
    writeFileSync(join(source, "big.bin"), big);
    writeFileSync(join(source, "sub", "small.txt"), "small 你好\n");
    const started = Date.now();
    expect(await runCli(["cp", source, `${bed.container}:/tmp/copied`], { env, timeoutMs: 300_000 })).toMatchObject({
      code: 0,
      stderr: "",
    });
    const upSeconds = (Date.now() - started) / 1000;
    const remote = await runCli(
      ["enter", bed.container, "--", "md5sum", "/tmp/copied/big.bin", "/tmp/copied/sub/small.txt"],
      { env },
    );
    expect(remote.stdout).toContain(createHash("md5").update(big).digest("hex"));
    const back = join(home, "back");
    const downStarted = Date.now();
    expect(await runCli(["cp", `${bed.container}:/tmp/copied`, back], { env, timeoutMs: 300_000 })).toMatchObject({
      code: 0,
      stderr: "",
    });
    const downSeconds = (Date.now() - downStarted) / 1000;
    expect(sha256(readFileSync(join(back, "big.bin")))).toBe(sha256(big));
    expect(readFileSync(join(back, "sub", "small.txt"), "utf8")).toBe("small 你好\n");
    // An existing local directory as the destination: the copy goes inside it, under its own name.
    expect(await runCli(["cp", `${bed.container}:/tmp/copied/sub`, back], { env })).toMatchObject({ code: 0 });
    expect(readFileSync(join(back, "sub", "small.txt"), "utf8")).toBe("small 你好\n");
    console.log(`entryway cp 100 MiB: in ${upSeconds.toFixed(1)} s, out ${downSeconds.toFixed(1)} s`);
  });

  it("a missing remote file or folder: one line and exit 66, from busybox tar's own message", async () => {
    const [file, folder] = await Promise.all([
      runCli(["cp", `${bed.container}:/tmp/no-such-file`, join(home, "nothing")], { env }),
      runCli(["cp", `${bed.container}:/no/such/file`, join(home, "nothing")], { env }),
    ]);
    expect(file).toMatchObject({
      code: ExitCode.notFound,
      stderr: `entryway: ${bed.container}:/tmp/no-such-file: no such file or directory in the container\n`,
    });
    expect(folder).toMatchObject({
      code: ExitCode.notFound,
      stderr: `entryway: ${bed.container}:/no/such/file: no such file or directory in the container\n`,
    });
    expect(existsSync(join(home, "nothing"))).toBe(false);
  });
});

describe("entryway cp: hostile archives from a container (Kubernetes stand-in)", () => {
  let kube: KubeStandin;
  let g: TestGateway;
  let home: string;
  let env: NodeJS.ProcessEnv;
  let evilTar: string;
  const path = process.env.PATH;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "entryway-cp-hostile-"));
    evilTar = join(home, "evil.tar");
    mkdirSync(join(home, "bin"));
    // With a "missing" file beside it, it answers as busybox's tar (and podman's exec) do for a path
    // that is not there; else it prints the planted archive.
    writeFileSync(
      join(home, "bin", "tar"),
      `#!/bin/sh
if [ -e '${join(home, "missing")}' ]; then
  echo "tar: can't change directory to '$4': No such file or directory" >&2
  echo "Error: write unixpacket @->/proc/self/fd/14/attach: write: broken pipe" >&2
  exit 1
fi
cat '${evilTar}'
`,
      { mode: 0o755 },
    );
    process.env.PATH = `${join(home, "bin")}:${path}`; // the stand-in runs commands with this PATH
    kube = await startKubeStandin({
      protocol: "v5.channel.k8s.io",
      serviceAccountToken: "sa",
      pods: [{ namespace: "team-a", name: "evil-0", containers: ["app"] }],
    });
    g = await startGateway(kubernetesBackend(loadKubeConfig(kube.kubeconfigPath)), tokenAuthorizer());
    env = cleanEnv(home, { ENTRYWAY_GATEWAY: g.base, ENTRYWAY_TOKEN: "user:alice" });
  });
  afterAll(async () => {
    process.env.PATH = path;
    await g?.stop();
    await kube?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const plant = async (entries: Entry[]) => writeFileSync(evilTar, await makeTar(entries));
  /** Plants `entries` as the container's archive and copies its /srv/data to `dest` with `entryway cp`. */
  const copyPlanted = async (entries: Entry[], dest: string) => {
    await plant(entries);
    return runCli(["cp", "team-a/evil-0:/srv/data", dest], { env });
  };
  /**
   * Copies `entries` to a new folder's dest/data, which `entryway cp` must refuse (bad request) with
   * "refusing the archive from the container: entry <name> " and what `why` matches; returns the folder and the outcome.
   */
  const expectRefused = async (prefix: string, entries: Entry[], why: RegExp) => {
    const root = mkdtempSync(join(home, prefix));
    const result = await copyPlanted(entries, join(root, "dest", "data"));
    expect(result).toMatchObject({
      code: ExitCode.badRequest,
      stderr: expect.stringMatching(
        new RegExp(`^entryway: refusing the archive from the container: entry .* ${why.source}`),
      ),
    });
    return { root, result };
  };

  it.each([
    [
      "a .. entry (CVE-2019-11249)",
      [
        { name: "data/ok.txt", content: "ok" },
        { name: "data/../../escape.txt", content: "pwned" },
      ],
    ],
    ["an absolute name", [{ name: "/tmp/escape.txt", content: "pwned" }]],
    ["a name outside the one asked for", [{ name: "elsewhere/escape.txt", content: "pwned" }]],
  ])("refuses an archive with %s and writes nothing outside the destination", async (_what, entries) => {
    const { root } = await expectRefused("hostile-", entries as Entry[], /is outside data\n$/);
    expect(existsSync(join(root, "escape.txt"))).toBe(false);
    expect(existsSync(join(root, "dest", "escape.txt"))).toBe(false);
    expect(existsSync("/tmp/escape.txt")).toBe(false);
  });

  it.each([
    ["a Windows path (\\ as separators)", [{ name: "data/..\\..\\Startup\\x.bat", content: "pwned" }]],
    ["a drive letter", [{ name: "data/C:\\x.bat", content: "pwned" }]],
    ["a terminal escape in a name", [{ name: "data/\x1b]0;owned\x07x", content: "pwned" }]],
  ])("refuses an archive with %s on this platform too, writing nothing", async (_what, entries) => {
    const { root, result } = await expectRefused(
      "unsafe-name-",
      entries as Entry[],
      /holds \\, : or a control character/,
    );
    expect(result.stderr).not.toContain("\x1b");
    expect(existsSync(join(root, "dest", "data"))).toBe(false);
  });

  it("a remote path that is not there is one line and exit 66, both ways (not tar's message and the runtime's broken pipe)", async () => {
    writeFileSync(join(home, "missing"), "");
    try {
      const [down, up] = await Promise.all([
        runCli(["cp", "team-a/evil-0:/no/such/data", join(home, "nothing")], { env }),
        runCli(["cp", join(home, "missing"), "team-a/evil-0:/no/such/dir/file"], { env }),
      ]);
      expect(down).toMatchObject({
        code: ExitCode.notFound,
        stderr: "entryway: team-a/evil-0:/no/such/data: no such file or directory in the container\n",
      });
      expect(up).toMatchObject({
        code: ExitCode.notFound,
        stderr: "entryway: team-a/evil-0:/no/such/dir: no such file or directory in the container\n",
      });
      expect(existsSync(join(home, "nothing"))).toBe(false);
    } finally {
      rmSync(join(home, "missing"));
    }
  });

  it("a progress meter on a terminal's stderr (a pseudo-terminal), none with --quiet or when stderr is not a terminal", async () => {
    const content = randomBytes(3 * 1024 * 1024).toString("base64"); // 4 MiB of text
    await plant([
      { name: "data", type: "directory" },
      { name: "data/big.txt", content },
    ]);
    const inPty = (args: string[]) =>
      new Promise<{ code: number; output: string }>((resolve) => {
        const [command, ...rest] = cliCommand(...args);
        const term = pty.spawn(command!, rest, { cols: 120, rows: 10, cwd: REPO, env: env as Record<string, string> });
        let output = "";
        term.onData((data) => (output += data));
        term.onExit(({ exitCode }) => setTimeout(() => resolve({ code: exitCode, output }), 300));
      });
    const root = mkdtempSync(join(home, "meter-"));
    const [meter, quiet, piped] = await Promise.all([
      inPty(["cp", "team-a/evil-0:/srv/data", join(root, "a")]),
      inPty(["cp", "--quiet", "team-a/evil-0:/srv/data", join(root, "b")]),
      runCli(["cp", "team-a/evil-0:/srv/data", join(root, "c")], { env }),
    ]);
    expect(meter.code).toBe(0);
    // Redrawn in place (CR, the line, erase to its end: ESC [K), then the summary on its own line.
    const lines = meter.output.split("\x1b[K");
    expect(lines).toContainEqual(
      expect.stringMatching(/^\rreceived \d+(\.\d)? (B|KiB|MiB) {2}\d+(\.\d)? (B|KiB|MiB)\/s$/),
    );
    expect(lines.at(-2)).toMatch(/^\rreceived 4\.0 MiB in \d+\.\d s \(\d+(\.\d)? (KiB|MiB|GiB)\/s\)$/);
    expect(lines.at(-1)).toMatch(/^\r?\n$/);
    expect(quiet).toEqual({ code: 0, output: "" });
    expect(piped).toMatchObject({ code: 0, stderr: "" });
    for (const name of ["a", "b", "c"]) expect(readFileSync(join(root, name, "big.txt"), "utf8")).toBe(content);
  });

  it("prints a link's target with its control characters escaped", async () => {
    const root = mkdtempSync(join(home, "link-name-"));
    const result = await copyPlanted(
      [{ name: "data/link", type: "symlink", linkname: "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07" }],
      join(root, "dest"),
    );
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("\x1b");
    expect(result.stderr).toMatch(/-> \\x1b\]52;c;Y3VybCBldmlsIHwgc2g=\\x07: symlink entries are not copied/);
  });

  it("skips symlinks and hard links, so a file cannot be written through one (CVE-2019-1002101, CVE-2019-11246, CVE-2019-11251)", async () => {
    const root = mkdtempSync(join(home, "links-"));
    const outside = join(root, "outside");
    mkdirSync(outside);
    const dest = join(root, "dest");
    const result = await copyPlanted(
      [
        { name: "data", type: "directory" },
        { name: "data/link", type: "symlink", linkname: outside },
        { name: "data/link/pwned.txt", content: "pwned" },
        { name: "data/up", type: "symlink", linkname: "../.." },
        { name: "data/hard", type: "link", linkname: "/etc/passwd" },
        { name: "data/fine.txt", content: "fine" },
      ],
      dest,
    );
    expect(result.code).toBe(0);
    expect(result.stderr.trimEnd().split("\n")).toEqual([
      expect.stringMatching(/^entryway: skipped .*data\/link -> .*outside: symlink entries are not copied$/),
      expect.stringMatching(/^entryway: skipped .*data\/up -> \.\.\/\.\.: symlink entries are not copied$/),
      expect.stringMatching(/^entryway: skipped .*data\/hard -> \/etc\/passwd: link entries are not copied$/),
    ]);
    expect(existsSync(join(outside, "pwned.txt"))).toBe(false);
    expect(readFileSync(join(dest, "link", "pwned.txt"), "utf8")).toBe("pwned"); // a plain directory inside the destination
    expect(readFileSync(join(dest, "fine.txt"), "utf8")).toBe("fine");
  });
});
