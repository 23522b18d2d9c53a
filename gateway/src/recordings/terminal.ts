// What of a recording's output a replay may write to the reviewer's terminal: the recorded
// terminal queries taken out (withoutTerminalQueries), and the allow-list of control sequences that
// only draw (TerminalAllowList, onlyAllowedSequences), after xterm's control sequences
// (invisible-island.net/xterm/ctlseqs/ctlseqs.html). No Node APIs: the web replay page uses it too.
import type { CastEvent } from "./cast.js";

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
      // Each state is read by the method of its name.
      out += this[this.state](ch, ch.codePointAt(0)!);
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
