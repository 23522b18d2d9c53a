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
//    stopped (recordings-s3.ts, recovery); its data says so.

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

/** `<ISO start time with : and . as ->-<session uuid>`, as recordings are named (recording-sink.ts recordingId). */
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

/**
 * The terminal queries a recording may hold, after xterm's control sequences
 * (invisible-island.net/xterm/ctlseqs/ctlseqs.html): device status and cursor position reports
 * (CSI [?] Ps n), device attributes (CSI [>=] Ps c), XTVERSION (CSI > Ps q), mode reports
 * (CSI [?] Ps $ p), window reports (CSI 11/13-16/18-21 t), colour and clipboard queries
 * (OSC 4/5/10-19/52 ... ; ? ST) and DECRQSS/XTGETTCAP (DCS $ q / DCS + q ... ST).
 */
/* eslint-disable no-control-regex -- escape sequences are what it matches (a block: a formatter may wrap the line) */
const TERMINAL_QUERY =
  /\x1b\[(?:\??\d*(?:;\d*)*n|[>=]?\d*c|>\d*q|\??\d+\$p|(?:1[1345689]|2[01])(?:;\d*)*t)|\x1b\](?:[45];\d+|1\d|52;[a-z0-9]*);\?(?:\x07|\x1b\\)|\x1bP[$+]q[^\x07\x1b]*(?:\x07|\x1b\\)/g;
/* eslint-enable no-control-regex */
/** A tail that may be the start of a query cut by an event boundary (a sequence still open). */
/* eslint-disable no-control-regex -- escape sequences are what it matches (a block: a formatter may wrap the line) */
const OPEN_SEQUENCE = /\x1b(?:\[[\d;?>=$]*|\][\d;a-z?]*\x1b?|P[$+]?q?[^\x07\x1b]*\x1b?)?$/;
/* eslint-enable no-control-regex */

/**
 * The output events without terminal queries. Played back, a query makes the local terminal answer
 * on its input (busybox ash asks for the cursor position with ESC [6n), and an answer that arrives
 * after playback lands on the replayed screen; the recorded session already had its answers. A
 * query cut between two events is found by holding an open sequence back to the next event.
 */
export function withoutTerminalQueries(events: CastEvent[]): CastEvent[] {
  const played: CastEvent[] = [];
  let held = "";
  for (const event of events) {
    if (event.code !== "o") {
      played.push(event);
      continue;
    }
    const text = (held + event.data).replace(TERMINAL_QUERY, "");
    const open = OPEN_SEQUENCE.exec(text);
    held = open && open[0].length < 256 ? open[0] : "";
    played.push({ ...event, data: held ? text.slice(0, -held.length) : text });
  }
  if (held) played.push({ time: events.at(-1)!.time, code: "o", data: held });
  return played;
}

/**
 * The private modes (CSI ? Pm h / l) a replay may set or reset: autowrap (7), cursor visibility
 * (25), the alternate screen (47, 1047, 1049) and the saved cursor (1048); bracketed paste (2004)
 * only off. Mouse reporting, key modes, focus events and the rest change what the reviewer's
 * terminal sends or does after the replay, and are dropped.
 */
const PRIVATE_MODES_SET = new Set(["7", "25", "47", "1047", "1048", "1049"]);
const PRIVATE_MODES_RESET = new Set([...PRIVATE_MODES_SET, "2004"]);
/**
 * CSI finals without a prefix that only draw: SGR (m); cursor movement CUU CUD CUF CUB CNL CPL CHA
 * CUP HVP VPA VPR HPA HPR CHT CBT (A-H, f, d, e, `, a, I, Z); erase and edit ED EL ECH DCH ICH IL DL
 * (J K X P @ L M); scrolling SU SD and the scroll region DECSTBM (S T r); save/restore cursor (s, u).
 */
const DRAWING_CSI_FINALS = "mABCDEFGHfde`aIZJKXP@LMSTrsu";

/** A CSI sequence as it may be replayed (perhaps with some of its modes taken out), or null. */
function allowedCsi(body: string, final: string): string | null {
  const match = /^([<=>?]?)([\d;:]*)$/.exec(body);
  if (!match) return null; // intermediates (cursor style, DECSCA, ...) or garbage
  const [, marker, params] = match as unknown as [string, string, string];
  if (marker === "") {
    if (final === "u" && params !== "") return null; // CSI u with parameters is a keyboard protocol
    if (DRAWING_CSI_FINALS.includes(final)) return `\x1b[${body}${final}`;
    if ((final === "h" || final === "l") && params === "4") return `\x1b[4${final}`; // insert mode
    return null;
  }
  if (marker === "?" && (final === "h" || final === "l")) {
    const allowed = params
      .split(";")
      .filter((mode) => (final === "h" ? PRIVATE_MODES_SET : PRIVATE_MODES_RESET).has(mode));
    return allowed.length > 0 ? `\x1b[?${allowed.join(";")}${final}` : null;
  }
  if (marker === "?" && (final === "J" || final === "K")) return `\x1b[?${params}${final}`; // selective erase
  return null;
}

/** C0 controls a replay may write: BEL, BS, HT, LF, VT, FF, CR, SO, SI (charset shifts). */
const ALLOWED_C0 = new Set([0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f]);

/**
 * Terminal output filtered to an allow-list, for writing a recording into a reviewer's terminal: a
 * recorded user controls every byte, and terminals act on more than drawing (after xterm's control
 * sequences, invisible-island.net/xterm/ctlseqs/ctlseqs.html): OSC 52 writes the clipboard, OSC 0/2
 * the title, OSC 8 makes links, OSC 50 changes the font, iTerm2's OSC 1337 File= writes files, DCS
 * and friends reach the terminal's own features, and queries make it type answers. Kept: text, the
 * C0 controls above, SGR, cursor movement, erasing, scrolling and scroll regions, the alternate
 * screen, cursor visibility, autowrap, insert mode, charset designation (ESC ( ) * + - . /) and
 * shifts, ESC 7/8 (save/restore cursor), ESC D/E/M (index, next line, reverse index), and turning
 * bracketed paste off. Dropped: every OSC, DCS, SOS, PM and APC string with its content, every other
 * CSI and ESC sequence, other C0 controls, DEL and the C1 controls (U+0080..U+009F: some terminals
 * take U+009B as CSI). Sequences may be cut anywhere between pushes.
 */
export class TerminalAllowList {
  private state: "text" | "escape" | "csi" | "string" = "text";
  /** The escape or CSI sequence read so far. */
  private sequence = "";
  /** Inside a string (OSC, DCS, ...): the last character was ESC (ESC \ ends it). */
  private stringEscape = false;

  push(text: string): string {
    let out = "";
    for (const ch of text) {
      const code = ch.codePointAt(0)!;
      switch (this.state) {
        case "text":
          out += this.text(ch, code);
          break;
        case "escape":
          out += this.escape(ch, code);
          break;
        case "csi":
          out += this.csi(ch, code);
          break;
        case "string":
          out += this.string(ch, code);
          break;
      }
    }
    return out;
  }

  private text(ch: string, code: number): string {
    if (code === 0x1b) {
      this.state = "escape";
      this.sequence = "";
      return "";
    }
    if (code < 0x20) return ALLOWED_C0.has(code) ? ch : "";
    if (code >= 0x7f && code <= 0x9f) return "";
    return ch;
  }

  private escape(ch: string, code: number): string {
    if (this.sequence === "") {
      if (ch === "[") {
        this.state = "csi";
        return "";
      }
      if ("]PX^_".includes(ch)) {
        this.state = "string";
        this.stringEscape = false;
        return "";
      }
    }
    if (code >= 0x20 && code <= 0x2f && this.sequence.length < 4) {
      this.sequence += ch; // an intermediate
      return "";
    }
    this.state = "text";
    if (code >= 0x30 && code <= 0x7e) {
      const allowed =
        this.sequence === "" ? "78DEM".includes(ch) : this.sequence.length === 1 && "()*+-./".includes(this.sequence);
      return allowed ? `\x1b${this.sequence}${ch}` : "";
    }
    return this.text(ch, code); // not a sequence after all: the ESC is dropped, the character is read as text
  }

  private csi(ch: string, code: number): string {
    if (code >= 0x20 && code <= 0x3f) {
      if (this.sequence.length < 64) this.sequence += ch;
      else this.sequence = "\x00"; // too long to be anything we keep: drop it at its end
      return "";
    }
    this.state = "text";
    const body = this.sequence;
    this.sequence = "";
    if (code >= 0x40 && code <= 0x7e) return allowedCsi(body, ch) ?? "";
    return this.text(ch, code); // cut by a control character: the CSI is dropped
  }

  private string(ch: string, code: number): string {
    if (this.stringEscape) {
      this.stringEscape = false;
      if (ch === "\\") {
        this.state = "text";
        return "";
      }
      this.state = "escape"; // ESC ended the string and starts a sequence of its own
      this.sequence = "";
      return this.escape(ch, code);
    }
    if (code === 0x1b) this.stringEscape = true;
    else if (code === 0x07 || code === 0x9c || code === 0x18 || code === 0x1a) this.state = "text"; // BEL, ST, CAN, SUB
    return "";
  }
}

/** The output events through one TerminalAllowList (events keep their order and times; others pass unchanged). */
export function onlyAllowedSequences(events: CastEvent[]): CastEvent[] {
  const filter = new TerminalAllowList();
  return events.map((event) => (event.code === "o" ? { ...event, data: filter.push(event.data) } : event));
}
