// gateway/src/log.ts: every JSON line (log lines, and audit records on stdout, which it writes) is one
// line without raw C1 controls or line separators; a stdout reader that is gone or stops reading
// never stops the gateway.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { auditSink } from "../../src/audit.js";
import { jsonLogger, lineWriter } from "../../src/log.js";
import { command, expectOneLine, record } from "../../../testkit/gateway/json-lines.js";

describe("every JSON line the gateway writes is one line, without raw C1 controls or line separators", () => {
  it("audit records on stdout and log lines", () => {
    const lines: string[] = [];
    auditSink("", (line) => lines.push(line)).write(record);
    jsonLogger("info", (line) => lines.push(line)).log("info", "session refused", { command });
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(expectOneLine(line)).toMatchObject({ command });
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
});
