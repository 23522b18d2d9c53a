// Sizes the clients keep to on the wire, shared by the CLI and the web page (so: no Node APIs here).

/**
 * Input per PLAIN frame. Input can come in any size (a paste into the web terminal, a pipe's 64 KiB
 * reads into the CLI), and the gateway closes a session on a frame over its maxFrameBytes (64 KiB by
 * default): larger input goes as several frames, well under it.
 */
export const INPUT_FRAME_BYTES = 32 * 1024;
