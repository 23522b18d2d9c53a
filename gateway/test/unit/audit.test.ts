// gateway/src/audit.ts: the audit file's lines are one line each (no raw C1 controls or line
// separators), and an audit file that cannot be written sends its records to stdout.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { auditSink } from "../../src/audit.js";
import { command, expectOneLine, record } from "../../../testkit/gateway/json-lines.js";

describe("every JSON line the gateway writes is one line, without raw C1 controls or line separators", () => {
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
});

describe("audit and logs never stop the gateway", () => {
  it("sends the records of an audit file that cannot be written (ENOSPC: /dev/full) to stdout, with the cause once", async () => {
    const lines: string[] = [];
    const sink = auditSink("/dev/full", (line) => lines.push(line));
    const ended = {
      event: "session.end" as const,
      session: "s1",
      target: "t",
      client: "127.0.0.1",
      startedAt: new Date().toISOString(),
    };
    sink.write(ended);
    sink.write({ ...ended, session: "s2" });
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
    sink.write({ ...ended, session: "s3" });
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ type: "audit", session: "s3" });
    await sink.close();
  });
});
