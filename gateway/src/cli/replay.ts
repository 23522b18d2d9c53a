// `entryway replay <file|id>`: plays an asciicast v2 recording in this terminal with its timing. A
// file is read as it is; a recording id (as GET /v1/recordings lists them) is fetched from the
// gateway with the token, as a reviewer. Exit codes are enter's (enter-options.ts ExitCode).
import { existsSync, readFileSync } from "node:fs";
import { parseOperands } from "./args.js";
import { outputBytes, parseCast, playbackTimes, recordingStart, type Cast } from "../recordings/cast.js";
import { onlyAllowedSequences, withoutTerminalQueries } from "../recordings/terminal.js";
import { EnterError, ExitCode, reportFailure } from "./enter-options.js";
import { gatewayGet, gatewayHttpUrl, gatewayRequest, HTTP_OPTIONS } from "./gateway-http.js";

const HELP = `usage: entryway replay [options] <file | recording id>

Plays an asciicast v2 recording in this terminal, with its timing. A recording id (from
GET /v1/recordings) is fetched from the gateway; that needs a token of a reviewer.
For the same picture, replay in a terminal of the recorded size (the header's width x height).
Ctrl-C or q stops; other keys are ignored.

The recorded user chose every byte, so only drawing reaches your terminal: text, colours and
attributes, cursor movement, erasing, scrolling, the alternate screen and charsets. Anything else
(clipboard and title writes, links, fonts, file transfers, queries, mouse and key modes) is
dropped, unless --raw.

options:
  -s, --speed <factor>   play this many times faster (default 1; 0.5 is half speed)
      --bytes            write the recorded output byte for byte at once (no timing, terminal
                         queries kept, bytes that are not UTF-8 as they were): for a file or a pipe
      --max-idle <sec>   cut every pause longer than this to it
      --raw              write every escape sequence as recorded (but terminal queries): only for
                         recordings you trust; a recorded user can then set your clipboard or title
  -g, --gateway <url>    the gateway (https://host), for an id
  -t, --token <token>    access token (prefer --token-file or ENTRYWAY_TOKEN)
      --token-file <p>   read the token from a file
      --ca-file <pem>    trust this CA besides Node's roots
      --config <path>    client config file (as for entryway enter)
      --context <name>   the context of the config file to use (entryway config get-contexts)
      --insecure         allow plain http:// to a host that is not loopback
  -h, --help             this help
`;

/** The recording's URL on the gateway; plain http only to loopback unless `insecure`. */
export function recordingUrl(gateway: string, id: string, insecure = false): URL {
  return gatewayHttpUrl(gateway, `/v1/recordings/${id}`, insecure);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * While playing, the local terminal is raw and its input is read and dropped (the recording's
 * queries are taken out before playback, see withoutTerminalQueries). Ctrl-C or q stops. Returns
 * the function that restores the terminal.
 */
function muteInput(stop: () => void): () => void {
  const stdin = process.stdin;
  if (!stdin.isTTY) return () => {};
  stdin.setRawMode(true);
  const onData = (data: Buffer) => {
    if (data.includes(0x03) || data.includes(0x71)) stop();
  };
  stdin.on("data", onData);
  stdin.resume();
  return () => {
    stdin.off("data", onData);
    stdin.setRawMode(false);
    stdin.pause();
  };
}

/**
 * Writes each output event at its time; resizes cannot change the local terminal and are skipped.
 * Only the allowed sequences are written (onlyAllowedSequences), or with `raw` all but the queries.
 */
async function play(
  text: string,
  speed: number,
  maxIdle: number | undefined,
  raw: boolean,
  out: NodeJS.WritableStream,
): Promise<void> {
  const parsed = parseCast(text);
  const cast = { ...parsed, events: raw ? withoutTerminalQueries(parsed.events) : onlyAllowedSequences(parsed.events) };
  const times = playbackTimes(cast.events, speed, maxIdle);
  let stopped = false;
  const restore = muteInput(() => (stopped = true));
  try {
    await playEvents(cast, times, out, () => stopped);
  } finally {
    restore();
  }
}

async function playEvents(
  cast: Cast,
  times: number[],
  out: NodeJS.WritableStream,
  stopped: () => boolean,
): Promise<void> {
  const started = performance.now();
  for (const [index, event] of cast.events.entries()) {
    if (stopped()) return;
    if (event.code !== "o") continue;
    const wait = times[index]! * 1000 - (performance.now() - started);
    if (wait > 1) await sleep(wait);
    if (!out.write(event.data)) await new Promise((resolve) => out.once("drain", resolve));
  }
}

function positive(name: string, text: string | undefined, fallback?: number): number | undefined {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new EnterError(ExitCode.usage, `${name} must be a positive number, got ${JSON.stringify(text)}`);
  return value;
}

export const options = {
  speed: { type: "string", short: "s" },
  "max-idle": { type: "string" },
  ...HTTP_OPTIONS,
  raw: { type: "boolean" },
  bytes: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export async function run(argv: string[]): Promise<number> {
  try {
    const parsed = parseOperands(
      argv,
      options,
      HELP,
      1,
      () => "name one recording: a .cast file or a recording id (entryway replay --help)",
    );
    if (parsed === undefined) return 0;
    const { values, positionals } = parsed;
    const speed = positive("--speed", values.speed, 1)!;
    const maxIdle = positive("--max-idle", values["max-idle"]);
    const source = positionals[0]!;
    let text: string;
    if (existsSync(source) || !recordingStart(source)) {
      try {
        text = readFileSync(source, "utf8");
      } catch (error) {
        throw new EnterError(
          ExitCode.usage,
          `cannot read ${source}: ${(error as Error).message} (and it is not a recording id)`,
        );
      }
    } else {
      text = await gatewayGet(await gatewayRequest(values, `/v1/recordings/${source}`), {
        deniedHint: " (recordings are for reviewers only)",
        notFound: `no recording ${source} on the gateway`,
      });
    }
    const raw = values.raw === true;
    if (raw)
      process.stderr.write(
        "entryway: warning: --raw writes the recording's escape sequences as recorded: a recorded session can set your clipboard and title, and use your terminal's other features\n",
      );
    try {
      if (values.bytes) {
        // The recorded output byte for byte, for a file or a pipe: on a terminal it is --raw's risk.
        if (process.stdout.isTTY)
          process.stderr.write(
            "entryway: warning: --bytes writes the recorded output as it was, escape sequences included, to your terminal\n",
          );
        const bytes = outputBytes(parseCast(text).events);
        await new Promise<void>((resolve, reject) =>
          process.stdout.write(bytes, (error) => (error ? reject(error) : resolve())),
        );
        return 0;
      }
      await play(text, speed, maxIdle, raw, process.stdout);
    } catch (error) {
      if (error instanceof EnterError) throw error;
      throw new EnterError(ExitCode.badRequest, `${source}: ${(error as Error).message}`);
    }
    return 0;
  } catch (error) {
    return reportFailure(error, "replay");
  }
}
