import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import net from "node:net";
import { join } from "node:path";
import { existsSync } from "node:fs";
import pty from "node-pty";
import { describe, expect, it, vi } from "vitest";
import { auditSink } from "../src/audit.js";
import { cidrList, envName, loadConfig } from "../src/config.js";
import { jsonLogger, lineWriter } from "../src/log.js";
import { CastEncoder, event as castEvent } from "../src/recordings/sink.js";
import { dockerBackend, StreamDemuxer } from "../src/backends/docker.js";
import { PreAuthLimits } from "../src/limits.js";
import { clientAddress, limitKey } from "../src/net.js";
import { itNeeding, missingTools, toolPlan } from "./helpers/tools.js";
import { padCursorReports } from "../src/cursor-report.js";
import { OutputFramer, type FrameSend } from "../src/output.js";
import {
  decodeRequest,
  decodeResponse,
  encodeOutput,
  encodeRequest,
  encodeResponse,
  parseWinch,
  RequestType,
  ResponseType,
} from "../src/protocol.js";
import { PidMarkerFilter, reapCommand, START_SIGNAL, wrapCommand } from "../src/shell.js";
import { parseTarget, TargetError } from "../src/target.js";
import { incompleteTailLength, splitOnCharBoundaries, Utf8Carry } from "../src/utf8.js";

const fatal = new TextDecoder("utf-8", { fatal: true });
const samples = ["你", "😀"]; // a 3-byte and a 4-byte character

describe("UTF-8 framing", () => {
  it.each(samples)("carries the incomplete tail of %s at every split point", (char) => {
    const bytes = Buffer.from(`a${char}b${char}`);
    for (let split = 0; split <= bytes.length; split++) {
      const carry = new Utf8Carry();
      const frames = [carry.push(bytes.subarray(0, split)), carry.push(bytes.subarray(split)), carry.flush()];
      for (const frame of frames) expect(() => fatal.decode(frame)).not.toThrow();
      expect(Buffer.concat(frames).toString()).toBe(`a${char}b${char}`);
    }
  });

  it.each(samples)("carries %s split byte by byte", (char) => {
    const carry = new Utf8Carry();
    const frames = [...Buffer.from(char)].map((byte) => carry.push(Buffer.from([byte])));
    expect(frames.slice(0, -1).every((f) => f.length === 0)).toBe(true);
    expect(frames.at(-1)!.toString()).toBe(char);
  });

  it("does not hold back invalid bytes forever", () => {
    expect(incompleteTailLength(Buffer.from([0x80, 0x80, 0x80]))).toBe(0);
    expect(incompleteTailLength(Buffer.from([0x41]))).toBe(0);
    expect(incompleteTailLength(Buffer.from([0xf0, 0x9f, 0x98]))).toBe(3);
  });

  it.each(samples)("splits output into bounded frames on character boundaries (%s)", (char) => {
    for (let max = 4; max <= 9; max++) {
      for (let lead = 0; lead < max; lead++) {
        const data = Buffer.from("x".repeat(lead) + char.repeat(5));
        const pieces = splitOnCharBoundaries(data, max);
        for (const piece of pieces) {
          expect(piece.length).toBeLessThanOrEqual(max);
          expect(() => fatal.decode(piece)).not.toThrow();
        }
        expect(Buffer.concat(pieces).equals(data)).toBe(true);
      }
    }
  });
});

describe("output frames (OutputFramer)", () => {
  /** A socket that records each frame (copied: the framer reuses its buffers) and completes writes when told. */
  function socket() {
    const frames: Buffer[] = [];
    const pending: (() => void)[] = [];
    const send: FrameSend = (frame, written) => {
      frames.push(Buffer.from(frame));
      pending.push(() => written());
    };
    const writeAll = () => pending.splice(0).forEach((done) => done());
    return { frames, send, writeAll, contents: () => frames.map((f) => decodeResponse(f).content.toString("latin1")) };
  }
  const options = {
    frameBytes: 32,
    text: true,
    highBytes: 1 << 20,
    lowBytes: 1 << 18,
    onPause: () => {},
    onResume: () => {},
  };

  it("sends output at once when the socket is idle, as protobuf.js encodes the message, at every length-varint size", () => {
    for (const length of [1, 127, 128, 16383, 16384, 65000]) {
      for (const msgType of [ResponseType.STDOUT, ResponseType.STDERR]) {
        const s = socket();
        const content = Buffer.alloc(length, "x");
        new OutputFramer(s.send, { ...options, frameBytes: 1 << 20 }).push(content, msgType);
        expect(s.frames).toEqual([encodeResponse({ msgType, content })]);
      }
    }
  });

  it("gathers output behind a frame the socket is still writing, and sends it as one frame when that write is done", () => {
    const s = socket();
    const framer = new OutputFramer(s.send, options);
    framer.push(Buffer.from("a"), ResponseType.STDOUT);
    framer.push(Buffer.from("b"), ResponseType.STDOUT);
    framer.push(Buffer.from("c"), ResponseType.STDOUT);
    expect(s.contents()).toEqual(["a"]);
    s.writeAll();
    expect(s.contents()).toEqual(["a", "bc"]);
  });

  it.each(samples)(
    "cuts frames at frameBytes on character boundaries (%s at every offset); pipe mode cuts bytes",
    (char) => {
      for (let lead = 0; lead < 8; lead++) {
        const text = "x".repeat(lead) + char.repeat(12);
        const s = socket();
        const framer = new OutputFramer(s.send, { ...options, frameBytes: 8 });
        framer.push(Buffer.from(text), ResponseType.STDOUT);
        s.writeAll();
        framer.flush();
        for (const frame of s.frames) {
          const content = decodeResponse(frame).content;
          expect(content.length).toBeLessThanOrEqual(8);
          expect(() => fatal.decode(content)).not.toThrow();
        }
        expect(Buffer.concat(s.frames.map((f) => decodeResponse(f).content)).toString()).toBe(text);
      }
      const s = socket();
      const bytes = 1 + 4 * Buffer.byteLength(char);
      new OutputFramer(s.send, { ...options, frameBytes: 8, text: false }).push(
        Buffer.from("x" + char.repeat(4)),
        ResponseType.STDOUT,
      );
      s.writeAll(); // full frames go at once, the rest when the socket has written them
      expect(s.frames.map((f) => decodeResponse(f).content.length)).toEqual([
        ...Array(Math.floor(bytes / 8)).fill(8),
        bytes % 8,
      ]);
    },
  );

  it("holds the first bytes of a character until the rest comes, and sends them at the end (flush)", () => {
    const s = socket();
    const framer = new OutputFramer(s.send, options);
    const bytes = Buffer.from("你");
    framer.push(bytes.subarray(0, 2), ResponseType.STDOUT);
    expect(s.frames).toEqual([]);
    framer.push(bytes.subarray(2), ResponseType.STDOUT);
    expect(s.contents()).toEqual([bytes.toString("latin1")]);
    framer.push(bytes.subarray(0, 1), ResponseType.STDOUT);
    framer.flush();
    expect(s.frames.at(-1)).toEqual(encodeResponse({ msgType: ResponseType.STDOUT, content: bytes.subarray(0, 1) }));
  });

  it("waits up to 1 ms to fill a frame when output is bulk, never for output at a person's pace", async () => {
    vi.useFakeTimers();
    try {
      const s = socket();
      const framer = new OutputFramer(s.send, { ...options, frameBytes: 32 * 1024 });
      framer.push(Buffer.from("prompt$ "), ResponseType.STDOUT);
      s.writeAll();
      expect(s.frames).toHaveLength(1); // not bulk: at once
      for (let i = 0; i < 16; i++) {
        framer.push(Buffer.alloc(4096, "y"), ResponseType.STDOUT); // 64 KiB within the same millisecond
        s.writeAll();
      }
      const before = s.frames.length;
      framer.push(Buffer.alloc(100, "z"), ResponseType.STDOUT);
      expect(s.frames).toHaveLength(before); // bulk: the frame waits for more
      framer.push(Buffer.alloc(100, "z"), ResponseType.STDOUT);
      await vi.advanceTimersByTimeAsync(1);
      expect(s.frames).toHaveLength(before + 1);
      expect(decodeResponse(s.frames.at(-1)!).content.length).toBeGreaterThanOrEqual(200);
      s.writeAll();
      await vi.advanceTimersByTimeAsync(100); // a pause: the output is no longer bulk
      framer.push(Buffer.from("k"), ResponseType.STDOUT);
      expect(s.frames).toHaveLength(before + 2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("pauses the exec above highBytes queued and resumes at lowBytes, and reuses its frame buffers", () => {
    const s = socket();
    const calls: string[] = [];
    const sent: Buffer[] = [];
    const framer = new OutputFramer(
      (frame, written) => {
        sent.push(frame);
        s.send(frame, written);
      },
      {
        ...options,
        frameBytes: 100,
        text: false,
        highBytes: 250,
        lowBytes: 100,
        onPause: () => calls.push("pause"),
        onResume: () => calls.push("resume"),
      },
    );
    framer.push(Buffer.alloc(400, "x"), ResponseType.STDOUT);
    expect(calls).toEqual(["pause"]);
    expect(framer.queued).toBeGreaterThan(250);
    s.writeAll();
    expect(calls).toEqual(["pause", "resume"]);
    framer.push(Buffer.alloc(150, "y"), ResponseType.STDOUT); // more than a frame: frame buffers again
    expect(sent.slice(0, 4).map((f) => f.buffer)).toContain(sent.at(-1)!.buffer); // one back from the pool
  });
});

describe("Entry's messages", () => {
  it("round-trips requests and responses, with the exit code extension", () => {
    expect(decodeRequest(encodeRequest(RequestType.WINCH, "80 24"))).toEqual({
      msgType: 1,
      content: Buffer.from("80 24"),
    });
    const close = decodeResponse(
      encodeResponse({ msgType: ResponseType.CLOSE, content: Buffer.from("bye"), exitCode: 0, closeCode: "exit" }),
    );
    expect(close).toEqual({ msgType: 2, content: Buffer.from("bye"), exitCode: 0, closeCode: "exit" });
    expect(
      decodeResponse(encodeResponse({ msgType: ResponseType.PING, content: Buffer.alloc(0) })).exitCode,
    ).toBeUndefined();
  });

  it("stays readable by a client that knows only Entry's two fields", () => {
    // Hand-encoded the way Entry's Go client decodes: field 1 varint, field 2 bytes; extensions are skipped fields.
    const frame = encodeResponse({
      msgType: ResponseType.CLOSE,
      content: Buffer.from("ok"),
      exitCode: 3,
      closeCode: "exit",
    });
    expect(frame.subarray(0, 6)).toEqual(Buffer.from([0x08, 0x02, 0x12, 0x02, 0x6f, 0x6b]));
  });

  it("encodes output frames byte for byte as the protobuf encoder does, at every length-varint size", () => {
    for (const length of [0, 1, 127, 128, 16_383, 16_384, 70_000]) {
      const content = Buffer.alloc(length, 0x61);
      for (const msgType of [ResponseType.STDOUT, ResponseType.STDERR, ResponseType.PING]) {
        expect(encodeOutput(msgType, content).equals(encodeResponse({ msgType, content }))).toBe(true);
      }
    }
  });

  it("parses WINCH, ignoring unusable sizes and clamping huge ones", () => {
    expect(parseWinch(Buffer.from("120 40"))).toEqual({ cols: 120, rows: 40 });
    expect(parseWinch(Buffer.from("abc"))).toBeNull();
    expect(parseWinch(Buffer.from("0 0"))).toBeNull();
    expect(parseWinch(Buffer.from(""))).toBeNull();
    expect(parseWinch(Buffer.from("99999 99999"))).toEqual({ cols: 4096, rows: 4096 });
  });
});

describe("shell wrapper", () => {
  it("strips the PID marker wherever the first output puts it, across chunk boundaries", () => {
    const output = Buffer.from("echoed input\r\n\x1b]7337;entryway-pid=4242,987654\x07$ prompt");
    for (let split = 0; split <= output.length; split++) {
      const filter = new PidMarkerFilter();
      const passed = Buffer.concat([
        filter.push(output.subarray(0, split)),
        filter.push(output.subarray(split)),
        filter.flush(),
      ]);
      expect(passed.toString()).toBe("echoed input\r\n$ prompt");
      expect(filter.shell).toEqual({ pid: 4242, startTime: "987654" });
    }
  });

  it("passes output through unchanged when there is no marker", () => {
    const filter = new PidMarkerFilter();
    const out = Buffer.concat([filter.push(Buffer.from("plain \x1b]73")), filter.flush()]);
    expect(out.toString()).toBe("plain \x1b]73");
    expect(filter.shell).toBeNull();
  });

  it("wraps the command and builds the reaper", () => {
    expect(wrapCommand(["top", "-b"], {}).slice(-2)).toEqual(["top", "-b"]);
    expect(reapCommand({ pid: 17, startTime: "4711" }, 2).slice(-3)).toEqual(["17", "4711", "20"]);
  });

  it("reads the start time after the last ')' of /proc/<pid>/stat, and the reaper signals only that process", async () => {
    // A process whose name (comm) holds spaces and parentheses, as any program may choose.
    const dir = mkdtempSync(join(tmpdir(), "entryway-comm-"));
    const name = join(dir, "a) (b c");
    symlinkSync("/bin/sleep", name);
    const victim = spawn(name, ["30"], { stdio: "ignore" });
    const exited = new Promise((resolve) => victim.once("exit", resolve));
    try {
      const stat = readFileSync(`/proc/${victim.pid}/stat`, "utf8");
      expect(stat).toContain("(a) (b c)");
      const startTime = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
      // The wrapper's own report, parsed by the same shell function, for a shell that then execs sleep.
      const wrapper = wrapCommand(["true"], {});
      const wrapped = execFileSync(wrapper[0]!, wrapper.slice(1)).toString("latin1");
      const marker = new PidMarkerFilter();
      expect(Buffer.concat([marker.push(Buffer.from(wrapped, "latin1")), marker.flush()]).length).toBe(0); // the marker, and nothing else
      expect(marker.shell).toEqual({ pid: expect.any(Number), startTime: expect.stringMatching(/^\d+$/) });
      // Asynchronously, so that this process (the victim's parent) reaps it once it ends.
      const run = (shell: { pid: number; startTime: string }) =>
        new Promise<number | null>((resolve) =>
          spawn(reapCommand(shell, 5)[0]!, reapCommand(shell, 5).slice(1), { stdio: "ignore" }).once("exit", resolve),
        );
      expect(await run({ pid: victim.pid!, startTime: String(Number(startTime) - 1) })).toBe(0); // not ours: left alone
      expect(victim.exitCode).toBeNull();
      expect(victim.signalCode).toBeNull();
      expect(await run({ pid: victim.pid!, startTime })).toBe(1); // ours: SIGHUP ends it
      await exited;
      expect(victim.signalCode).toBe("SIGHUP");
    } finally {
      victim.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A program on a real terminal (node-pty), with everything it printed so far. */
function onTerminal(file: string, args: string[], env: Record<string, string> = {}) {
  const terminal = pty.spawn(file, args, {
    cols: 80,
    rows: 24,
    env: { PATH: "/usr/bin:/bin", HOME: "/", TERM: "xterm", ...env },
    encoding: null,
  });
  let output = "";
  terminal.onData((data) => void (output += (data as unknown as Buffer).toString("latin1")));
  const exited = new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)));
  const until = async (test: () => boolean, what: string) => {
    for (const deadline = Date.now() + 10_000; !test(); await new Promise((r) => setTimeout(r, 10))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output: ${JSON.stringify(output)}`);
    }
  };
  return {
    terminal,
    exited,
    until,
    get output() {
      return output;
    },
  };
}

describe("the wrapper's start handshake, on a real terminal", () => {
  it.each([["/bin/sh"], ["/bin/busybox", "sh"]].filter(([file]) => existsSync(file!)))(
    "%s: the command starts only on START_SIGNAL, which leaves no trace in the output",
    async (...shell) => {
      const [, ...wrapper] = wrapCommand(
        ["/bin/sh", "-c", "stty -a | grep -o -e ' -icanon' -e ' icanon'; echo started"],
        { terminal: { cols: 80, rows: 24 } },
      );
      const run = onTerminal(shell[0]!, [...shell.slice(1), ...wrapper]);
      await run.until(() => /entryway-pid=\d+,\d*/.test(run.output) && run.output.endsWith("\x07"), "the PID marker");
      await new Promise((r) => setTimeout(r, 300));
      const withoutMarker = () => {
        const marker = new PidMarkerFilter();
        return Buffer.concat([marker.push(Buffer.from(run.output, "latin1")), marker.flush()]).toString();
      };
      expect(withoutMarker()).toBe(""); // the marker and nothing else: the command waits
      run.terminal.write(START_SIGNAL.toString("latin1"));
      expect(await run.exited).toBe(0);
      // ^D ended the wrapper's read unechoed, and the command found the terminal as it was (canonical).
      expect(withoutMarker()).toBe(" icanon\r\nstarted\r\n");
    },
  );

  it.each([["/bin/sh"], ["/bin/busybox", "sh"]].filter(([file]) => existsSync(file!)))(
    "%s: the command starts at the size the gateway knew, with no resize from the runtime",
    async (...shell) => {
      const [, ...wrapper] = wrapCommand(["/bin/sh", "-c", "stty size"], { terminal: { cols: 123, rows: 45 } });
      const run = onTerminal(shell[0]!, [...shell.slice(1), ...wrapper]);
      await run.until(() => run.output.endsWith("\x07"), "the PID marker");
      run.terminal.write(START_SIGNAL.toString("latin1"));
      expect(await run.exited).toBe(0);
      expect(run.output.endsWith("\x0745 123\r\n")).toBe(true);
    },
  );

  it("without a terminal (pipe mode) the command starts at once", async () => {
    const run = onTerminal("/bin/sh", wrapCommand(["/bin/sh", "-c", "echo started"], {}).slice(1));
    expect(await run.exited).toBe(0);
    expect(run.output.endsWith("\x07started\r\n")).toBe(true);
  });
});

describe("cursor position reports for busybox's line editor", () => {
  it("pads the row of reports with a one-digit row, and nothing else", () => {
    const keys = Buffer.from("ls -l\r");
    expect(padCursorReports(keys)).toBe(keys); // no escape: the same buffer, no copy
    const pad = (text: string) => padCursorReports(Buffer.from(text, "latin1")).toString("latin1");
    expect(pad("\x1b[1;5R")).toBe("\x1b[01;5R");
    expect(pad("ab\x1b[1;3Rcdef\x1b[9;120Rg")).toBe("ab\x1b[01;3Rcdef\x1b[09;120Rg");
    for (const untouched of [
      "\x1b[12;5R",
      "\x1b[0;5R",
      "\x1b[1;5C",
      "\x1b[1;R",
      "\x1b[1;5",
      "\x1b",
      "x\x1b[",
      "\x1b[?1;5R",
      "\x1bOA",
    ])
      expect(pad(untouched)).toBe(untouched);
  });

  // busybox's own line editor on a real terminal, the report answered the moment it asks, keys right
  // behind it (as a terminal answers while someone types or pastes). The report for the top line's
  // "/ # " prompt, row 1 column 5, loses itself and the next ten keys; padded, nothing is lost.
  itNeeding(
    { busybox: existsSync("/bin/busybox") },
    "busybox sh loses the ten keys after an unpadded report of row 1, column 5, and none after a padded one",
    async () => {
      const typeAfterReport = async (report: string) => {
        const shell = onTerminal("/bin/busybox", ["sh"], { PS1: "/ # " });
        await shell.until(() => shell.output.includes("\x1b[6n"), "the cursor position request");
        shell.terminal.write(report + "echo typed-$((6*7))-0123456789\r");
        await shell.until(() => /typed-42-0123456789\r\n|not found/.test(shell.output), "the command's outcome");
        shell.terminal.write("exit\r");
        await shell.exited;
        return shell.output;
      };
      const lost = await typeAfterReport("\x1b[1;5R");
      expect(lost).not.toMatch(/^typed-42-0123456789\r$/m); // the control: "echo typed" went missing
      expect(lost).toMatch(/-42-0123456789: not found/);
      expect(await typeAfterReport(padCursorReports(Buffer.from("\x1b[1;5R")).toString("latin1"))).toMatch(
        /^typed-42-0123456789\r$/m,
      );
    },
  );
});

describe("targets", () => {
  const url = (q: string) => new URL(`http://g/v1/enter?${q}`);
  it("reads pods, workloads and Docker containers", () => {
    expect(parseTarget(url("namespace=a&pod=p&container=c"), {}, "kubernetes")).toEqual({
      kind: "pod",
      namespace: "a",
      pod: "p",
      container: "c",
    });
    expect(parseTarget(url("namespace=a&workload=statefulset/web&instance=2"), {}, "kubernetes")).toEqual({
      kind: "workload",
      namespace: "a",
      workload: "statefulset/web",
      instance: 2,
    });
    expect(parseTarget(url("container=my_box"), {}, "docker")).toEqual({ kind: "docker", container: "my_box" });
  });
  it("takes Entry's app-name/proc-name/instance-no headers", () => {
    expect(parseTarget(url(""), { "app-name": "hello", "proc-name": "web", "instance-no": "1" }, "kubernetes")).toEqual(
      { kind: "workload", namespace: "hello", workload: "web", instance: 1 },
    );
  });
  it.each([
    "namespace=A&pod=p",
    "namespace=a",
    "namespace=a&pod=../x",
    "namespace=a&workload=web&instance=x",
    "namespace=a&workload=daemonset/x&instance=0",
  ])("rejects %s", (q) => {
    expect(() => parseTarget(url(q), {}, "kubernetes")).toThrow(TargetError);
  });
});

describe("limits before authentication", () => {
  it("caps waiting connections in all and per address, and attempts per address per minute (token bucket)", () => {
    let now = 0;
    const limits = new PreAuthLimits(
      { maxPendingConnections: 3, maxPendingPerSource: 2, authAttemptsPerMinute: 4 },
      () => now,
    );
    expect(limits.admit("a")).toBeNull();
    expect(limits.admit("a")).toBeNull();
    expect(limits.admit("a")).toMatchObject({ status: 429 });
    expect(limits.admit("b")).toBeNull();
    expect(limits.admit("c")).toMatchObject({ status: 503 });
    limits.release("a");
    limits.release("a");
    expect(limits.admit("a")).toBeNull(); // third attempt
    limits.release("a");
    expect(limits.admit("a")).toBeNull(); // fourth
    limits.release("a");
    expect(limits.admit("a")).toMatchObject({ status: 429, reason: expect.stringMatching(/attempts a minute/) });
    now += 15_000; // a quarter of a minute buys one attempt back
    expect(limits.admit("a")).toBeNull();
    limits.release("a");
    expect(limits.admit("a")).toMatchObject({ status: 429 });
  });
});

describe("client addresses behind proxies", () => {
  const trust = (proxies: string[], hops: number) => ({
    proxies: cidrList(proxies),
    proxiesConfigured: proxies.length > 0,
    hops,
  });
  const xff = "192.0.2.1, 198.51.100.7, 203.0.113.9";

  it("takes the hops-th address from the right with trustedProxyHops, the peer when there are fewer or garbage", () => {
    expect(clientAddress("10.1.2.3", xff, trust([], 1))).toBe("203.0.113.9");
    expect(clientAddress("10.1.2.3", [xff], trust([], 2))).toBe("198.51.100.7");
    expect(clientAddress("10.1.2.3", "203.0.113.9", trust([], 2))).toBe("10.1.2.3");
    expect(clientAddress("10.1.2.3", undefined, trust([], 1))).toBe("10.1.2.3");
    expect(clientAddress("10.1.2.3", "192.0.2.1, not-an-address", trust([], 1))).toBe("10.1.2.3");
    expect(clientAddress("::ffff:10.1.2.3", "::ffff:203.0.113.9", trust([], 1))).toBe("203.0.113.9");
  });

  it("with trustedProxies and trustedProxyHops, believes only those peers", () => {
    expect(clientAddress("10.1.2.3", xff, trust(["10.0.0.0/8"], 1))).toBe("203.0.113.9");
    expect(clientAddress("172.16.0.5", xff, trust(["10.0.0.0/8"], 1))).toBe("172.16.0.5");
  });

  it("believes nobody by default", () => {
    expect(clientAddress("10.1.2.3", xff, trust([], 0))).toBe("10.1.2.3");
  });

  it("counts IPv6 clients by their /64, however the address is written; IPv4 and other keys as they are", () => {
    expect(limitKey("2001:db8:1:2::a")).toBe("2001:db8:1:2::/64");
    expect(limitKey("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(limitKey("2001:db8:1:3::a")).toBe("2001:db8:1:3::/64");
    expect(limitKey("::1")).toBe("::/64");
    expect(limitKey("203.0.113.9")).toBe("203.0.113.9");
    expect(limitKey("a")).toBe("a");
  });
});

describe("suites that need tools", () => {
  it("fail under CI when a tool is missing, are skipped (and named) only outside CI", () => {
    expect(toolPlan({ podman: true, tmux: true }, true)).toBe("run");
    expect(toolPlan({ podman: true, tmux: false }, true)).toBe("fail");
    expect(toolPlan({ podman: false }, false)).toBe("skip");
    expect(missingTools({ podman: false, tmux: true, chromium: false })).toEqual(["podman", "chromium"]);
  });
});

describe("config", () => {
  it("reads environment variables and validates them", () => {
    expect(envName("maxSessionsPerUser")).toBe("ENTRYWAY_MAX_SESSIONS_PER_USER");
    const config = loadConfig({
      ENTRYWAY_BACKEND: "docker",
      ENTRYWAY_PING_INTERVAL_MS: "5000",
      ENTRYWAY_SHELL: '["/bin/bash","-l"]',
      ENTRYWAY_ALLOW_COMMAND: "false",
    });
    expect(config).toMatchObject({
      backend: "docker",
      pingIntervalMs: 5000,
      shell: ["/bin/bash", "-l"],
      allowCommand: false,
    });
    expect(() => loadConfig({ ENTRYWAY_BACKEND: "lxc" })).toThrow(/backend/);
    expect(() => loadConfig({ ENTRYWAY_IDLE_TIMEOUT_MS: "soon" })).toThrow(/idleTimeoutMs/);
  });

  it("reads the settings document ENTRYWAY_CONFIG names, the environment winning", () => {
    const dir = mkdtempSync(join(tmpdir(), "entryway-config-"));
    try {
      const file = join(dir, "config.json");
      writeFileSync(
        file,
        JSON.stringify({
          authorizer: "oidc",
          oidcIssuer: "https://id.example.com",
          maxSessions: 20,
          allowCommand: false,
          trustedProxies: ["10.0.0.0/8"],
        }),
      );
      expect(loadConfig({ ENTRYWAY_CONFIG: file })).toMatchObject({
        authorizer: "oidc",
        oidcIssuer: "https://id.example.com",
        maxSessions: 20,
        allowCommand: false,
        trustedProxies: ["10.0.0.0/8"],
      });
      expect(loadConfig({ ENTRYWAY_CONFIG: file, ENTRYWAY_MAX_SESSIONS: "7" }).maxSessions).toBe(7);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ["{", /config\.json: cannot read the settings document: .*JSON/],
    ["[1]", /config\.json: the settings document must be a JSON object of settings, got array/],
    ["null", /got null/],
    ['{"maxSession": 5}', /config\.json: unknown setting maxSession/],
    // Own keys only: these are `in` every object.
    ['{"constructor": 1, "__proto__": {"port": 1}}', /unknown setting constructor; unknown setting __proto__/],
    ['{"maxSessions": "5"}', /maxSessions: expected number, got string "5"/],
    ['{"maxSessions": null}', /maxSessions: expected number, got null/],
    ['{"allowCommand": "false"}', /allowCommand: expected boolean, got string/],
    ['{"trustedProxies": "10.0.0.0/8"}', /trustedProxies: expected array, got string/],
    ['{"trustedProxies": [1]}', /trustedProxies: expected an array of strings/],
    ['{"logLevel": {"level": "debug"}}', /logLevel: expected string, got object/],
    ['{"logLevel": "verbose"}', /logLevel: expected one of debug, info, warn, error, got verbose/],
    ['{"maxSessions": -1}', /maxSessions: expected a non-negative number, got -1/],
    // Every bad key at once.
    [
      '{"backend": 2, "port": "80"}',
      /config\.json: backend: expected string, got number 2; port: expected number, got string "80"/,
    ],
  ])("refuses a bad settings document with a message naming the key (%s)", (text, message) => {
    const dir = mkdtempSync(join(tmpdir(), "entryway-config-"));
    try {
      const file = join(dir, "config.json");
      writeFileSync(file, text);
      expect(() => loadConfig({ ENTRYWAY_CONFIG: file })).toThrow(message);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("waits at most 3 s for the AUTH message of a connection that came without a token, and takes trustedProxyHops", () => {
    expect(loadConfig({})).toMatchObject({ authTimeoutMs: 3000, trustedProxyHops: 0 });
    expect(loadConfig({ ENTRYWAY_TRUSTED_PROXY_HOPS: "1" }).trustedProxyHops).toBe(1);
    expect(() => loadConfig({ ENTRYWAY_TRUSTED_PROXY_HOPS: "1.5" })).toThrow(/trustedProxyHops/);
  });
});

describe("recording settings", () => {
  const s3 = {
    ENTRYWAY_RECORD_S3_BUCKET: "exec-recordings",
    ENTRYWAY_RECORD_S3_ENDPOINT: "https://objects.example.com:9000",
    ENTRYWAY_RECORD_S3_FORCE_PATH_STYLE: "true",
    ENTRYWAY_RECORD_S3_PREFIX: "gw/",
  };
  it("takes an S3 sink with an https endpoint, path style and a prefix", () => {
    expect(loadConfig(s3)).toMatchObject({
      recordS3Bucket: "exec-recordings",
      recordS3ForcePathStyle: true,
      recordS3Prefix: "gw/",
      recordFlushSeconds: 10,
      recordPartBytes: 5 * 1024 * 1024,
    });
    expect(loadConfig({ ...s3, ENTRYWAY_RECORD_S3_ENDPOINT: "http://127.0.0.1:8333" }).recordS3Endpoint).toBe(
      "http://127.0.0.1:8333",
    );
  });
  it.each([
    [{ ...s3, ENTRYWAY_RECORD_DIR: "/recordings" }, /recordDir and recordS3Bucket are both set/],
    [{ ENTRYWAY_RECORD_S3_PREFIX: "gw/" }, /recordS3Prefix set but recordS3Bucket is empty/],
    [{ ENTRYWAY_RECORD_S3_FORCE_PATH_STYLE: "true" }, /recordS3ForcePathStyle set but recordS3Bucket is empty/],
    [{ ...s3, ENTRYWAY_RECORD_RETENTION_DAYS: "30" }, /bucket lifecycle rule/],
    [{ ...s3, ENTRYWAY_RECORD_S3_ENDPOINT: "http://objects.example.com" }, /must be https/],
    [{ ...s3, ENTRYWAY_RECORD_S3_ENDPOINT: "https://key:secret@objects.example.com" }, /must not carry credentials/],
    [{ ...s3, ENTRYWAY_RECORD_S3_BUCKET: "Exec_Recordings" }, /not a bucket name/],
    [{ ...s3, ENTRYWAY_RECORD_S3_PREFIX: "/abs/" }, /not a key prefix/],
    [{ ...s3, ENTRYWAY_RECORD_S3_PREFIX: "a/../b/" }, /not a key prefix/],
    [{ ...s3, ENTRYWAY_RECORD_PART_BYTES: "1048576" }, /recordPartBytes must be between 5242880/],
    [{ ENTRYWAY_RECORD_FLUSH_SECONDS: "0" }, /recordFlushSeconds/],
  ])("refuses %j", (env, message) => {
    expect(() => loadConfig(env as NodeJS.ProcessEnv)).toThrow(message);
  });
});

describe("every JSON line the gateway writes is one line, without raw C1 controls or line separators", () => {
  // The attack: a command (allowCommand) holding U+2028, NEL (U+0085), CSI (U+009B), DEL and U+2029.
  const command = ["sh", "-c", "echo a\u2028b\u0085c\u009b31md\u007fe\u2029f"];
  // What Python's str.splitlines() breaks a line at (docs.python.org/3/library/stdtypes.html#str.splitlines).
  // eslint-disable-next-line no-control-regex -- control characters are what it matches
  const lineBreaks = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;
  const raw = /[\u007f-\u009f\u2028\u2029]/;
  const record = {
    event: "session.start" as const,
    session: "s1",
    target: "t",
    command,
    client: "127.0.0.1",
    startedAt: new Date().toISOString(),
  };
  const expectOneLine = (text: string) => {
    expect(text.endsWith("\n")).toBe(true);
    expect(text.slice(0, -1).split(lineBreaks)).toHaveLength(1);
    expect(text).not.toMatch(raw);
    return JSON.parse(text) as unknown;
  };

  it("the audit file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "audit-"));
    try {
      const sink = auditSink(join(dir, "audit.log"));
      sink.write(record);
      await sink.close();
      expect(expectOneLine(readFileSync(join(dir, "audit.log"), "utf8"))).toMatchObject({ command });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it("audit records on stdout and log lines", () => {
    const lines: string[] = [];
    auditSink("", (line) => lines.push(line)).write(record);
    jsonLogger("info", (line) => lines.push(line)).log("info", "session refused", { command });
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(expectOneLine(line)).toMatchObject({ command });
  });
  it("a recording's header (its metadata) and events", () => {
    const header = new CastEncoder().header(
      { session: "s1", user: command[2], target: command[2] },
      { cols: 80, rows: 24 },
    );
    expect(expectOneLine(header)).toMatchObject({ title: command[2], entryway: { user: command[2] } });
    expect(expectOneLine(castEvent(1, "o", command[2]))).toEqual([1, "o", command[2]]);
  });
});

describe("audit and logs never stop the gateway", () => {
  it("drops and counts lines when stdout's reader is gone (EPIPE), without throwing", async () => {
    const reader = spawn("true", [], { stdio: ["pipe", "ignore", "ignore"] });
    await new Promise((resolve) => reader.once("exit", resolve));
    const write = lineWriter(reader.stdin, 1024);
    // The first write may still be taken by the stream; the pipe's EPIPE comes as an 'error' event,
    // which would end the process were it not caught.
    for (let i = 0; i < 100; i++) {
      write(`line ${i}\n`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(reader.stdin.destroyed).toBe(true);
    expect(write.dropped()).toBeGreaterThanOrEqual(99);
  });

  it("never holds more than the backlog for a reader that stops reading, and never blocks", async () => {
    const reader = spawn("sleep", ["60"], { stdio: ["pipe", "ignore", "ignore"] });
    try {
      const write = lineWriter(reader.stdin, 1024 * 1024);
      const line = `${"x".repeat(1023)}\n`;
      // 20 MiB to a reader that reads nothing: a blocking write would hang here for ever.
      for (let i = 0; i < 20 * 1024; i++) write(line);
      expect(reader.stdin.writableLength).toBeLessThanOrEqual(1024 * 1024 + line.length);
      expect(write.dropped()).toBeGreaterThan(18 * 1024);
    } finally {
      reader.kill("SIGKILL");
    }
  });

  it("sends the records of an audit file that cannot be written (ENOSPC: /dev/full) to stdout, with the cause once", async () => {
    const lines: string[] = [];
    const sink = auditSink("/dev/full", (line) => lines.push(line));
    const record = {
      event: "session.end" as const,
      session: "s1",
      target: "t",
      client: "127.0.0.1",
      startedAt: new Date().toISOString(),
    };
    sink.write(record);
    sink.write({ ...record, session: "s2" });
    await expect.poll(() => lines.length).toBe(3);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.filter((l) => l.msg === "the audit file cannot be written: audit records go to stdout")).toEqual([
      expect.objectContaining({ error: expect.stringMatching(/ENOSPC/) }),
    ]);
    expect(
      parsed
        .filter((l) => l.type === "audit")
        .map((l) => l.session)
        .sort(),
    ).toEqual(["s1", "s2"]);
    sink.write({ ...record, session: "s3" });
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ type: "audit", session: "s3" });
    await sink.close();
  });
});

describe("Docker exec start, read by hand (no engine: a socket that answers as one)", () => {
  /** An engine on a unix socket: exec create answers an id; exec start answers `start` (head, stream and all, in one write). */
  async function fakeEngine(start: string) {
    const dir = mkdtempSync(join(tmpdir(), "entryway-engine-"));
    const path = join(dir, "engine.sock");
    const server = net.createServer((socket) => {
      let request = "";
      socket.on("data", (data: Buffer) => {
        request += data.toString("latin1");
        const body = /\r\n\r\n([\s\S]*)$/.exec(request)?.[1];
        const length = Number(/content-length: (\d+)/i.exec(request)?.[1] ?? 0);
        if (body === undefined || body.length < length) return;
        const json = (status: string, value: unknown) => {
          const text = JSON.stringify(value);
          return `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${text.length}\r\n\r\n${text}`;
        };
        if (request.startsWith("POST /v1.41/containers/")) socket.end(json("201 Created", { Id: "e1234" }));
        else if (request.startsWith("GET /v1.41/exec/e1234/json"))
          socket.end(json("200 OK", { Running: false, ExitCode: 7 }));
        else socket.end(start);
        request = "";
      });
    });
    await new Promise<void>((resolve) => server.listen(path, resolve));
    return {
      url: `unix://${path}`,
      stop: () =>
        new Promise<void>((resolve) => server.close(() => (rmSync(dir, { recursive: true, force: true }), resolve()))),
    };
  }
  const target = { container: "c", label: "docker/c" };

  it("takes the stream that follows a 101 in the same read, demultiplexed without a TTY, and the exit code", async () => {
    const frame = (stream: number, payload: string) =>
      Buffer.concat([Buffer.from([stream, 0, 0, 0, 0, 0, 0, payload.length]), Buffer.from(payload)]).toString("latin1");
    const engine = await fakeEngine(
      "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n" +
        frame(1, "out") +
        frame(2, "err"),
    );
    try {
      const seen: string[] = [];
      const ended = new Promise<number | null>(
        (resolve) =>
          void dockerBackend(engine.url).exec(
            target,
            ["sh"],
            { cols: 80, rows: 24 },
            {
              onOutput: (chunk, which) => void seen.push(`${which}:${chunk.toString()}`),
              onEnd: (r) => resolve(r.exitCode),
            },
            { tty: false },
          ),
      );
      expect(await ended).toBe(7);
      expect(seen).toEqual(["stdout:out", "stderr:err"]);
    } finally {
      await engine.stop();
    }
  });

  it("refuses an answer that is not an upgrade", async () => {
    const engine = await fakeEngine(
      'HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 26\r\n\r\n{"message":"no such exec"}',
    );
    try {
      await expect(
        dockerBackend(engine.url).exec(target, ["sh"], { cols: 80, rows: 24 }, { onOutput: () => {}, onEnd: () => {} }),
      ).rejects.toThrow(/HTTP 404 instead of an upgrade/);
    } finally {
      await engine.stop();
    }
  });
});

describe("Docker's multiplexed exec stream (no TTY)", () => {
  const frame = (stream: number, payload: string) => {
    const header = Buffer.alloc(8);
    header[0] = stream;
    header.writeUInt32BE(Buffer.byteLength(payload), 4);
    return Buffer.concat([header, Buffer.from(payload)]);
  };

  it("splits stdout from stderr with the stream cut at every offset", () => {
    const stream = Buffer.concat([frame(1, "out 你\n"), frame(2, "err\n"), frame(1, ""), frame(1, "more")]);
    for (let cut = 0; cut <= stream.length; cut++) {
      const seen: Record<string, string[]> = { stdout: [], stderr: [] };
      const demuxer = new StreamDemuxer((chunk, which) => seen[which]!.push(chunk.toString("latin1")));
      demuxer.push(stream.subarray(0, cut));
      demuxer.push(stream.subarray(cut));
      expect(Buffer.from(seen.stdout!.join(""), "latin1").toString()).toBe("out 你\nmore");
      expect(seen.stderr!.join("")).toBe("err\n");
    }
  });
});
