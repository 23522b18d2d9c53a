// Terminal input that busybox's line editor (the shell of busybox and Alpine images) would lose.
//
// At each prompt, busybox ash asks the terminal where the cursor is (ESC [ 6 n, libbb/lineedit.c
// ask_terminal) and the terminal answers with a cursor position report, ESC [ <row> ; <col> R.
// busybox reads that answer with its key reader (libbb/read_key.c read_key): it first compares the
// bytes after ESC with its table of key sequences, reading one more byte whenever a sequence still
// matches. The report for row 1 and column 3 or 5 (a "$ " or "/ # " prompt on the top line, as after
// `clear`) is ESC [ 1 ; 3 R or ESC [ 1 ; 5 R, which matches Alt-Right or Ctrl-Right (ESC [ 1 ; 3 C,
// ESC [ 1 ; 5 C) up to its last byte: the table comparison reads the whole report. The loop that
// looks for a report afterwards checks for the final R only after reading one more byte, so it never
// sees it; it keeps reading every byte that arrives within 50 ms of the last, up to its 15-byte buffer,
// and then throws the lot away as an unknown sequence. Keys typed or pasted right after the prompt
// (anything faster than one key per 50 ms) are lost, up to ten of them: the report's 5 bytes and 10
// more. Seen in the web terminal (xterm.js answers the request) and in any local terminal behind
// `entryway enter` (tmux, xterm, ...), and with `podman exec -it` alike: it is busybox's, not the
// transport's.
//
// The gateway writes such a report with a leading zero in its row, ESC [ 0 1 ; 5 R: the same numbers
// to every reader of decimal parameters (busybox's own strtoul included), but its third byte, 0,
// starts no key sequence, so busybox's table comparison stops there and its report loop finds the
// R. Only reports with a one-digit row are touched (from row 10 on, no key sequence is that long).
// A report is answered by the terminal in one write, so it arrives in one input frame; one split
// across frames (only a 64 KiB read boundary could do that) is passed as it is, and nothing is held
// back: a lone ESC key must reach the program at once.

const ESC = 0x1b;
const BRACKET = 0x5b; // [
const SEMICOLON = 0x3b;
const R = 0x52;
const ZERO = 0x30;
const PADDING = Buffer.from([ZERO]);
const isDigit = (byte: number | undefined) => byte !== undefined && byte >= 0x30 && byte <= 0x39;

/** Where the cursor position report starting at `at` ends (the index after its R), or -1 if none starts there. */
function reportEnd(input: Uint8Array, at: number): number {
  // ESC [ <one digit, 1-9> ; <digits> R
  if (input[at + 1] !== BRACKET || !isDigit(input[at + 2]) || input[at + 2] === ZERO || input[at + 3] !== SEMICOLON)
    return -1;
  let end = at + 4;
  if (!isDigit(input[end])) return -1;
  while (isDigit(input[end])) end++;
  return input[end] === R ? end + 1 : -1;
}

/** `input` with a zero inserted before the row of every cursor position report with a one-digit row; `input` itself when there is none. */
export function padCursorReports(input: Buffer): Buffer {
  let at = input.indexOf(ESC);
  if (at < 0) return input; // typing: no escape at all, no work
  const pieces: Buffer[] = [];
  let copied = 0;
  while (at >= 0) {
    const end = reportEnd(input, at);
    if (end > 0) {
      pieces.push(input.subarray(copied, at + 2), PADDING);
      copied = at + 2;
      at = end;
    } else at++;
    at = input.indexOf(ESC, at);
  }
  if (pieces.length === 0) return input;
  pieces.push(input.subarray(copied));
  return Buffer.concat(pieces);
}
