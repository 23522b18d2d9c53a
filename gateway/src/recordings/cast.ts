// Reading asciicast v2 (docs.asciinema.org/manual/asciicast/v2): a JSON header line, then one
// [seconds, code, data] event per line; "o" is output, "r" a resize ("COLSxROWS"), others (input
// "i", markers "m", and this gateway's own below) are kept for players to skip. No Node APIs: the web
// replay page uses it too.
//
// The gateway adds three event codes of its own. The format allows that: "The list is open to
// extension ... A tool which interprets the event stream (web/cli player, post-processor) should
// ignore (or pass through) event codes it doesn't understand" (asciinema/asciinema
// doc/asciicast-v2.md, "Supported event codes"); the names carry the gateway's name so that no
// future code of the format can mean something else.
//  - BYTES_EVENT: the exact bytes of the output event just before it, base64 (RFC 4648), written
//    only when those bytes are not valid UTF-8 (an "o" event is a JSON string, so such bytes show
//    there as U+FFFD): with it every byte of the output can be rebuilt (outputBytes).
//  - END_EVENT: the last event of a recording that was stored to its end; its data is the
//    session's close code. A recording without it is incomplete: still being recorded, or its
//    gateway stopped (a crash) before the end.
//  - INCOMPLETE_EVENT: written when another replica finished the upload of a recording whose gateway
//    stopped (s3/recovery.ts); its data says so.

export interface CastHeader {
  version: 2;
  width: number;
  height: number;
  timestamp?: number;
  title?: string;
}

export interface CastEvent {
  /** Seconds since the start of the recording. */
  time: number;
  code: string;
  data: string;
}

export interface Cast {
  header: CastHeader;
  events: CastEvent[];
  /** The time of the last event, in seconds. */
  duration: number;
}

/** Parses a whole cast file; throws with the line number on anything that is not asciicast v2. */
export function parseCast(text: string): Cast {
  const lines = text.split("\n");
  let header: CastHeader;
  try {
    header = JSON.parse(lines[0] ?? "") as CastHeader;
  } catch {
    throw new Error("not an asciicast file: the first line is not a JSON header");
  }
  if (header?.version !== 2) throw new Error(`not an asciicast v2 file (version ${JSON.stringify(header?.version)})`);
  if (!Number.isInteger(header.width) || !Number.isInteger(header.height) || header.width < 1 || header.height < 1)
    throw new Error("the header has no terminal width and height");
  const events: CastEvent[] = [];
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.trim() === "") continue;
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      throw new Error(`line ${index + 1}: not JSON`);
    }
    if (
      !Array.isArray(event) ||
      typeof event[0] !== "number" ||
      typeof event[1] !== "string" ||
      typeof event[2] !== "string"
    )
      throw new Error(`line ${index + 1}: not a [time, code, data] event`);
    events.push({ time: event[0], code: event[1], data: event[2] });
  }
  return { header, events, duration: events.at(-1)?.time ?? 0 };
}

/** A resize event's size, or null when its data is not COLSxROWS. */
export function parseResize(data: string): { cols: number; rows: number } | null {
  const match = /^(\d{1,4})x(\d{1,4})$/.exec(data);
  return match ? { cols: Number(match[1]), rows: Number(match[2]) } : null;
}

/**
 * When each event plays, in seconds from the start of playback, at `speed` times the recorded pace,
 * with every pause longer than `maxIdle` seconds (when given) cut to it, as asciinema's
 * idle_time_limit does.
 */
export function playbackTimes(events: CastEvent[], speed: number, maxIdle?: number): number[] {
  const times: number[] = [];
  let previous = 0;
  let at = 0;
  for (const event of events) {
    let pause = Math.max(0, event.time - previous);
    if (maxIdle !== undefined) pause = Math.min(pause, maxIdle);
    at += pause / speed;
    previous = event.time;
    times.push(at);
  }
  return times;
}

/** A recording as GET /v1/recordings lists it. */
export interface RecordingSummary {
  id: string;
  user: string;
  target: string;
  /** ISO time the session's recording started. */
  start: string;
  /** Seconds from the start to the last event stored. */
  duration: number;
  /** Bytes. */
  size: number;
  /** True when the recording was stored to its end (END_EVENT); false while it is being recorded, or when its gateway stopped first. */
  complete: boolean;
}

export const BYTES_EVENT = "entryway.bytes";
export const END_EVENT = "entryway.end";
export const INCOMPLETE_EVENT = "entryway.incomplete";

/** Base64 without Node's Buffer (the web page uses this module too). */
function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

/**
 * The output, byte for byte, as the session sent it: each "o" event's text as UTF-8, or the exact
 * bytes a BYTES_EVENT after it holds.
 */
export function outputBytes(events: CastEvent[]): Uint8Array {
  const encoder = new TextEncoder();
  const chunks: Uint8Array[] = [];
  for (const event of events) {
    if (event.code === "o") chunks.push(encoder.encode(event.data));
    else if (event.code === BYTES_EVENT && chunks.length > 0) chunks[chunks.length - 1] = fromBase64(event.data);
  }
  const whole = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    whole.set(chunk, offset);
    offset += chunk.length;
  }
  return whole;
}

/**
 * What the last bytes of a recording tell: the time of its last whole event (its duration) and
 * whether that event is END_EVENT. `tail` is the end of the file (a listing reads a few KiB of it);
 * a first line cut by the window is skipped.
 */
export function castEnding(tail: string): { duration: number; complete: boolean } {
  const lines = tail.split("\n").filter((line) => line.trim() !== "");
  for (let index = lines.length - 1; index >= 0; index--) {
    try {
      const event = JSON.parse(lines[index]!) as unknown;
      if (Array.isArray(event) && typeof event[0] === "number")
        return { duration: event[0], complete: event[1] === END_EVENT && index === lines.length - 1 };
    } catch {
      // the window's first line, cut in the middle
    }
  }
  return { duration: 0, complete: false };
}

/** `<ISO start time with : and . as ->-<session uuid>`, as recordings are named (sink.ts recordingId). */
const RECORDING_ID =
  /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The start time an id encodes, or null when the string is not a recording id. */
export function recordingStart(id: string): Date | null {
  const match = RECORDING_ID.exec(id);
  if (!match) return null;
  const [, date, hours, minutes, seconds, millis] = match;
  const start = new Date(`${date}T${hours}:${minutes}:${seconds}.${millis}Z`);
  return Number.isNaN(start.getTime()) ? null : start;
}
