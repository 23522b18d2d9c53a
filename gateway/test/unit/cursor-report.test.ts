// gateway/src/cursor-report.ts: cursor position reports padded for busybox's line editor, and
// busybox sh itself on a real terminal losing the ten keys after an unpadded report (the control)
// and none after a padded one.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { padCursorReports } from "../../src/cursor-report.js";
import { onTerminal } from "../../../testkit/gateway/terminal.js";
import { itNeeding } from "../../../testkit/gateway/tools.js";

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
