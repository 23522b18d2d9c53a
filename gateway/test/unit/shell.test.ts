// gateway/src/shell.ts: the PID marker filter at every chunk boundary, the wrapper and the reaper
// (on a real process whose name holds parentheses), and the wrapper's start handshake on a real
// terminal (node-pty) under dash and busybox sh.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PidMarkerFilter, reapCommand, START_SIGNAL, wrapCommand } from "../../src/shell.js";
import { onTerminal } from "../../../testkit/gateway/terminal.js";

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
