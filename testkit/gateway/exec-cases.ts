// The "proof on real parts" cases, run against each real backend (podman's Docker API, and the
// Kubernetes stand-in running real shells in real PTYs).
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../../gateway/src/backends/backend.js";
import { ResponseType } from "../../gateway/src/protocol.js";
import { PidMarkerFilter, reapCommand, wrapCommand } from "../../gateway/src/shell.js";
import { parseTarget } from "../../gateway/src/target.js";
import { EntryClient } from "./client.js";
import { startGateway, tokenAuthorizer, type TestGateway } from "./gateway.js";

export interface RealBed {
  backend: Backend;
  /** Query naming the container to enter. */
  target: Record<string, string>;
  /** Ids of the execs the backend knows in the target (a new exec adds a new id). */
  execIds(): Promise<string[]>;
  /** Shells (started by the gateway) alive in the target container. */
  shells(): Promise<number>;
  stop(): Promise<void>;
}

const fatal = new TextDecoder("utf-8", { fatal: true });
const TOKEN = "user:alice";

/** Output of `seq 1 n`, which both busybox and coreutils print identically. */
function seqOutput(n: number): Buffer {
  const lines: string[] = [];
  for (let i = 1; i <= n; i++) lines.push(String(i));
  return Buffer.from(lines.join("\n") + "\n");
}

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

function expectFramesAreUtf8(client: EntryClient): void {
  for (const frame of client.frames.filter((f) => f.msgType === ResponseType.STDOUT)) {
    expect(() => fatal.decode(frame.content)).not.toThrow();
  }
}

/**
 * A command for the client to run in raw mode, so the PTY passes bytes through unchanged, as its
 * very first action. The runtime's own read-modify-write of the PTY modes (conmon's, runc's: see
 * shell.ts) cannot undo it: the gateway's wrapper starts the command only after the gateway has read
 * its PID marker, which the runtime passes on only once it is done with the modes.
 */
const raw = (script: string) => ({ command: ["/bin/sh", "-c", `stty raw -echo; ${script}`] });

/**
 * A command whose very first action is raw mode, and that reports the terminal's modes once the
 * runtime is surely done with them: its "ready" has come through the runtime (which passes output on
 * only after setting the modes up, shell.ts), and it goes on only when the client answers. Were raw
 * mode undone, `head` reads in canonical mode (the "\r" ends the line) and stty reports icanon.
 */
export const RAW_FIRST = ["/bin/sh", "-c", "stty raw -echo; printf ready; head -c 1 >/dev/null; stty -a"];

/** The answer RAW_FIRST waits for. */
export const RAW_FIRST_ANSWER = "x\r";

/** Whether RAW_FIRST's report shows raw mode (no icanon, no echo). */
export function rawModeKept(output: string): boolean {
  const modes = output.split(/\s+/);
  return modes.includes("-icanon") && modes.includes("-echo");
}

/** Runs RAW_FIRST through the gateway at `url`; its output. */
export async function runRawFirst(url: string, token: string): Promise<string> {
  const client = await EntryClient.connect(url, { token });
  await client.waitFor(/^ready/);
  client.type(RAW_FIRST_ANSWER);
  expect(await client.closed).toMatchObject({ exitCode: 0 });
  return client.text;
}

async function outBytes(g: TestGateway): Promise<number> {
  const metric = await g.gateway.metrics.bytes.get();
  return metric.values.find((v) => v.labels.direction === "out")?.value ?? 0;
}

export function execBackendCases(name: string, createBed: () => Promise<RealBed>): void {
  describe(`${name}: proof on real parts`, () => {
    let bed: RealBed;
    let g: TestGateway;
    const open = (query: Record<string, string | string[]> = {}, token = TOKEN, keepFrames = true) =>
      EntryClient.connect(g.url({ ...bed.target, ...query }), { token, keepFrames });
    /** Runs `script` in raw mode (see raw). */
    const openRaw = (script: string, keepFrames = true, gateway = g) =>
      EntryClient.connect(gateway.url({ ...bed.target, ...raw(script) }), { token: TOKEN, keepFrames });

    beforeAll(async () => {
      bed = await createBed();
      g = await startGateway(bed.backend, tokenAuthorizer(), {
        maxSessionsPerUser: 100,
        maxSessions: 200,
        reapGraceSeconds: 1,
      });
    });
    afterAll(async () => {
      await g?.stop();
      await bed?.stop();
    });

    it("echo round trip", async () => {
      const client = await open();
      client.type("echo $((6*7))\n");
      await client.waitFor(/[\r\n]42\r\n/); // bash may put an escape sequence and \r before it
      client.type("exit\n");
      expect(await client.closed).toMatchObject({ closeCode: "exit", exitCode: 0 });
      expectFramesAreUtf8(client);
    });

    it("resize is seen by stty size, at connect and on every WINCH", async () => {
      const client = await open();
      client.winch(123, 45);
      client.type("stty size\n");
      await client.waitFor(/[\r\n]45 123\r\n/);
      client.winch(100, 30);
      await client.retypeUntil("stty size\n", /[\r\n]30 100\r\n/);
      client.type("exit\n");
      await client.closed;
    });

    it.each([0, 3])("passes exit code %i to the client", async (code) => {
      const client = await open();
      client.type(`exit ${code}\n`);
      const closed = await client.closed;
      expect(closed).toMatchObject({ closeCode: "exit", exitCode: code, reason: `shell exited with code ${code}` });
    });

    it("a command of the client's choice ends with its own exit code", async () => {
      const client = await openRaw("printf done; exit 42");
      expect(await client.closed).toMatchObject({ exitCode: 42 });
      expect(client.text).toBe("done");
    });

    it.each(["你", "😀"])("%s arrives intact at every frame boundary", async (char) => {
      // A second gateway with 5-byte frames: the line with `lead` ASCII bytes puts the character across
      // every offset of a frame boundary.
      const small = await startGateway(bed.backend, tokenAuthorizer(), { outputFrameBytes: 5 });
      try {
        const expected = Array.from({ length: 5 }, (_, lead) => "x".repeat(lead) + char.repeat(3)).join("\n") + "\n";
        const client = await openRaw(`printf '${expected.replace(/\n/g, "\\n")}'`, true, small);
        await client.closed;
        expect(client.text).toBe(expected);
        for (const frame of client.frames.filter((f) => f.msgType === ResponseType.STDOUT)) {
          expect(frame.content.length).toBeLessThanOrEqual(5);
          expect(() => fatal.decode(frame.content)).not.toThrow();
        }
      } finally {
        await small.stop();
      }
    });

    it("denied authorization creates no exec", async () => {
      const before = await bed.execIds();
      const client = await open({}, "not-a-user");
      expect(await client.closed).toMatchObject({ closeCode: "denied" });
      expect((await bed.execIds()).filter((id) => !before.includes(id))).toEqual([]);
    });

    it("50 concurrent sessions each streaming 5 MB arrive with equal checksums", async () => {
      const n = 720_000; // `seq 1 720000` is 4.9 MB
      const expected = seqOutput(n);
      expect(expected.length).toBeGreaterThan(4.5e6);
      // Written to a file first: `cat` then writes in large blocks, as bulk output does (seq on a TTY writes line by line).
      const script = `f=/tmp/entryway-seq-$$; seq 1 ${n} > $f; cat $f; rm -f $f`;
      const clients = await Promise.all(Array.from({ length: 50 }, () => openRaw(script, false)));
      const results = await Promise.all(clients.map((c) => c.closed));
      for (const [i, client] of clients.entries()) {
        expect(results[i]).toMatchObject({ exitCode: 0 });
        expect(client.outputBytes).toBe(expected.length);
        expect(sha256(client.output)).toBe(sha256(expected));
      }
    });

    it("a client that stops reading keeps gateway memory bounded, and resumes", async () => {
      const baseline = await bed.shells();
      const client = await openRaw("yes 0123456789abcdef0123456789abcdef | cat", false);
      await client.waitFor((c) => c.outputBytes > 4e6); // a fast producer
      const socket = (client.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      socket.pause();
      const rssBefore = process.memoryUsage().rss;
      const sentAtPause = await outBytes(g);
      // Wait until the gateway stops sending: the kernel's socket buffers and the gateway's window are full.
      let previous = -1;
      let sent = sentAtPause;
      for (let i = 0; i < 40 && sent !== previous; i++) {
        await new Promise((r) => setTimeout(r, 500));
        previous = sent;
        sent = await outBytes(g);
      }
      expect(sent).toBe(previous); // the exec output is paused, not buffered without end
      expect(sent - sentAtPause).toBeLessThan(16e6); // socket buffers + the 1 MiB window
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
      socket.resume();
      const received = client.outputBytes;
      await client.waitFor((c) => c.outputBytes > received + 10e6);
      client.ws.terminate();
      await expect.poll(() => bed.shells(), { timeout: 20_000, interval: 250 }).toBe(baseline);
    });

    it("control: closing an exec stream alone leaves the shell running; the reaper ends it", async () => {
      // Without the gateway's reaping, this is the lingering shell of kubernetes#89031 / runc#3359.
      const resolved = await bed.backend.resolve(parseTarget(new URL(g.url(bed.target)), {}, bed.backend.name));
      const before = await bed.shells();
      const marker = new PidMarkerFilter();
      const exec = await bed.backend.exec(
        resolved,
        wrapCommand(["/bin/sh"], {}),
        { cols: 80, rows: 24 },
        { onOutput: (c) => void marker.push(c), onEnd: () => {} },
      );
      await expect.poll(() => marker.shell !== null && bed.shells(), { timeout: 10_000 }).toBe(before + 1);
      exec.close();
      await new Promise((r) => setTimeout(r, 1500));
      expect(await bed.shells()).toBe(before + 1);
      const shell = marker.shell!;
      expect(shell.startTime).toMatch(/^\d+$/);
      // PID reuse: the same PID with another start time is another process, and is left alone.
      expect(
        await bed.backend.run(
          resolved,
          reapCommand({ pid: shell.pid, startTime: String(Number(shell.startTime) + 1) }, 1),
        ),
      ).toBe(0);
      expect(await bed.shells()).toBe(before + 1);
      expect(await bed.backend.run(resolved, reapCommand(shell, 1))).toBe(1); // ended by SIGHUP
      await expect.poll(() => bed.shells(), { timeout: 10_000 }).toBe(before);
    });

    it("a run that does not end is dropped when its signal aborts (the reaper's deadline), and none starts after", async () => {
      const resolved = await bed.backend.resolve(parseTarget(new URL(g.url(bed.target)), {}, bed.backend.name));
      const before = await bed.shells();
      await expect(
        bed.backend.run(resolved, ["/bin/sh", "-c", "sleep 3"], { signal: AbortSignal.timeout(300) }),
      ).rejects.toThrow(/abort|timeout/i);
      const execs = await bed.execIds();
      const late = bed.backend.run(resolved, ["/bin/sh", "-c", "exit 0"], { signal: AbortSignal.abort() });
      await expect(late).rejects.toThrow(/abort/i);
      await expect.poll(() => bed.shells(), { timeout: 15_000 }).toBe(before); // the sleep ends by itself
      // No exec was created for the late run (an engine may forget ended execs, so only new ids count).
      expect((await bed.execIds()).filter((id) => !execs.includes(id))).toEqual([]);
    });

    describe("pipe mode (tty=false)", () => {
      const pipe = (script: string) => open({ tty: "false", command: ["/bin/sh", "-c", script] });

      it("keeps stdout and stderr apart and passes the exit code", async () => {
        const client = await pipe("echo out; echo err >&2; echo out2; exit 7");
        expect(await client.closed).toMatchObject({ closeCode: "exit", exitCode: 7 });
        expect(client.text).toBe("out\nout2\n"); // no PID marker, no \r\n of a terminal
        expect(client.errorOutput.toString()).toBe("err\n");
      });

      it("1 MB of random bytes through cat arrive unchanged, and EOF ends cat", async () => {
        const input = randomBytes(1024 * 1024);
        const client = await open({ tty: "false", command: ["cat"] });
        for (let offset = 0; offset < input.length; offset += 16 * 1024)
          client.type(input.subarray(offset, offset + 16 * 1024));
        client.eof();
        expect(await client.closed).toMatchObject({ closeCode: "exit", exitCode: 0 });
        expect(client.outputBytes).toBe(input.length);
        expect(sha256(client.output)).toBe(sha256(input));
      });

      it("control: until EOF, cat keeps reading", async () => {
        const client = await open({ tty: "false", command: ["cat"] });
        client.type("one\n");
        await client.waitFor(/^one\n$/);
        client.type("two\n"); // cat is still there to echo it
        await client.waitFor(/^one\ntwo\n$/);
        client.eof();
        expect(await client.closed).toMatchObject({ exitCode: 0 });
      });

      it("a client that leaves mid-command: the reaper ends the command", async () => {
        // Without a terminal no hangup reaches the command's children: the reaper ends the process the
        // wrapper reported (README "The lingering shell"), here the command itself.
        const baseline = await bed.shells();
        const client = await pipe("echo started; exec sleep 1000");
        await client.waitFor(/started\n/);
        await expect.poll(() => bed.shells(), { timeout: 10_000 }).toBeGreaterThan(baseline);
        client.ws.terminate();
        await expect.poll(() => bed.shells(), { timeout: 20_000, interval: 250 }).toBe(baseline);
      });

      it("refuses a tty value other than true or false", async () => {
        const client = await open({ tty: "no" });
        expect(await client.closed).toMatchObject({ closeCode: "bad-request" });
      });
    });

    it("20 clients killed abruptly leave 0 shells behind", async () => {
      const baseline = await bed.shells();
      const script = fileURLToPath(new URL("./killed-clients.mjs", import.meta.url));
      const child = spawn(process.execPath, [script, g.url(bed.target), TOKEN, "20"], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => d.toString().includes("ready") && resolve());
        child.on("exit", (code) => reject(new Error(`client process exited with ${code}`)));
      });
      expect(await bed.shells()).toBe(baseline + 20);
      child.kill("SIGKILL");
      await expect.poll(() => bed.shells(), { timeout: 30_000, interval: 250 }).toBe(baseline);
      await expect
        .poll(() => g.audit.filter((e) => e.event === "session.end" && e.closeCode === "client-gone").length)
        .toBeGreaterThanOrEqual(20);
    });
  });
}
