// Characters the UTF-8 tests cut at every byte, and a decoder that throws on a broken one.

/** A 3-byte and a 4-byte character. */
export const samples = ["你", "😀"];

/** Throws on any invalid or incomplete UTF-8: what a frame must never hold. */
export const fatal = new TextDecoder("utf-8", { fatal: true });
