// What the keystroke tests type and paste into `cat > file` in the container, and how they read the
// file back. Printable ASCII only: in the terminal's canonical mode, which `cat` reads in, control
// characters edit the line (erase, kill, ^V, ^D) and a line holds at most 4095 characters (Linux
// drivers/tty/n_tty.c, n_tty_receive_buf_common: longer lines are cut), so the block's lines stay short.
import { createHash, randomBytes } from "node:crypto";
import type { Podman } from "../../../testkit/gateway/podman.js";

/** `length` random printable ASCII characters, spaces included. */
export function printable(length: number): string {
  return Array.from(randomBytes(length), (byte) => String.fromCharCode(0x20 + (byte % 95))).join("");
}

/** A block of `length` characters in lines of 1 to 120 printable characters, each ending in "\n". */
export function pasteBlock(length: number): string {
  const lines: string[] = [];
  let size = 0;
  while (size < length) {
    const line = printable(Math.min(1 + (randomBytes(1)[0]! % 120), length - size - 1)) + "\n";
    lines.push(line);
    size += line.length;
  }
  return lines.join("");
}

/** Size and SHA-256 of a text, as one string to compare (a mismatch then says how much arrived). */
export function digest(text: string): string {
  return `${Buffer.byteLength(text)} bytes, sha256 ${createHash("sha256").update(text).digest("hex")}`;
}

/** digest() of a file in the container ("missing" when there is none). */
export async function fileDigest(podman: Podman, container: string, path: string): Promise<string> {
  const content = await podman.podman("exec", container, "cat", path).catch(() => null);
  return content === null ? "missing" : digest(content);
}
