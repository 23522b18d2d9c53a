// What the web terminal (main.ts) and the replay page (replay.ts) share besides xterm.js.

/** The tab's token in sessionStorage: the web terminal's sign-in, which the replay page reuses. */
export const TOKEN_KEY = "entryway.token";

export const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
export const show = (id: string, visible = true) => ($(id).hidden = !visible);
