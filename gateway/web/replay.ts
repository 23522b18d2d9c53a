// The replay page (/replay): a reviewer's token (the web terminal's, kept for this tab, or pasted
// here), the list from GET /v1/recordings, and a player: xterm.js at the recorded size, the cast's
// output at its pace, play/pause, speed, and a seek bar. /replay?id=<id> opens one recording.
import type { Terminal } from "@xterm/xterm";
import { parseCast, parseResize, type Cast } from "../src/recordings/cast.js";
import type { RecordingSummary } from "../src/recordings/cast.js";
import { $, show, TOKEN_KEY } from "./page.js";
import { openTerminal, styleElementsWithNonce } from "./xterm-setup.js";
import "./replay.css";

const RECORDINGS = "/v1/recordings";

styleElementsWithNonce();

const setStatus = (text: string) => ($("status").textContent = text);
const clock = (seconds: number) => `${Math.floor(seconds / 60)}:${String(Math.floor(seconds % 60)).padStart(2, "0")}`;

function showOnly(section: "sign-in" | "list" | "player"): void {
  for (const id of ["sign-in", "list", "player"]) show(id, id === section);
  show("bar-list", section === "player");
}

class AuthError extends Error {}

async function api(path: string, token: string): Promise<Response> {
  const response = await fetch(path, { headers: { authorization: `Bearer ${token}` }, cache: "no-store" });
  if (response.status === 401 || response.status === 403)
    throw new AuthError(
      ((await response.json().catch(() => ({}))) as { error?: string }).error ?? `HTTP ${response.status}`,
    );
  if (!response.ok) throw new Error(`the gateway answered HTTP ${response.status}`);
  return response;
}

/**
 * Plays a cast into a terminal. The position is the cast's own clock (seconds); seeking rebuilds the
 * screen by writing every event up to the new position at once, then playback goes on from there.
 */
class Player {
  private index = 0;
  private position = 0;
  private speed = 1;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Wall clock (ms) and cast position when playback last (re)started. */
  private anchor = { at: 0, position: 0 };
  /** Writes xterm.js has not parsed yet: its write() is asynchronous. */
  private pendingWrites = 0;
  playing = false;

  constructor(
    readonly cast: Cast,
    private readonly term: Terminal,
  ) {}

  get done(): boolean {
    return this.index >= this.cast.events.length;
  }

  /** Whether the screen shows every event written so far (xterm.js has parsed them all). */
  get settled(): boolean {
    return this.pendingWrites === 0;
  }

  /** The cast's position now, in seconds. */
  now(): number {
    if (!this.playing) return this.position;
    return Math.min(
      this.cast.duration,
      this.anchor.position + ((performance.now() - this.anchor.at) / 1000) * this.speed,
    );
  }

  play(): void {
    if (this.done) this.seek(0);
    this.playing = true;
    this.anchor = { at: performance.now(), position: this.position };
    this.schedule();
  }

  pause(): void {
    this.position = this.now();
    this.playing = false;
    clearTimeout(this.timer);
  }

  setSpeed(speed: number): void {
    const playing = this.playing;
    if (playing) this.pause();
    this.speed = speed;
    if (playing) this.play();
  }

  /** Rebuilds the screen as it was at `seconds`, then goes on playing if it was. */
  seek(seconds: number): void {
    const playing = this.playing;
    if (playing) this.pause();
    this.term.reset();
    this.term.resize(this.cast.header.width, this.cast.header.height);
    this.index = 0;
    this.apply((event) => event.time <= seconds);
    this.position = seconds;
    if (playing) this.play();
  }

  /** Applies the next events while `due` holds, writing runs of output in one go. */
  private apply(due: (event: { time: number }) => boolean): void {
    let output = "";
    const flush = () => {
      if (output) {
        this.pendingWrites++;
        this.term.write(output, () => this.pendingWrites--);
      }
      output = "";
    };
    for (; this.index < this.cast.events.length && due(this.cast.events[this.index]!); this.index++) {
      const event = this.cast.events[this.index]!;
      if (event.code === "o") output += event.data;
      else if (event.code === "r") {
        const size = parseResize(event.data);
        if (!size) continue;
        flush();
        this.term.resize(size.cols, size.rows);
      }
    }
    flush();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (!this.playing) return;
    const now = this.now();
    this.apply((event) => event.time <= now);
    this.position = now;
    if (this.done) {
      this.position = this.cast.duration;
      this.playing = false;
      return;
    }
    const next = this.cast.events[this.index]!.time;
    this.timer = setTimeout(() => this.schedule(), Math.max(0, ((next - now) / this.speed) * 1000));
  }
}

async function main(): Promise<void> {
  const { term, renderer } = openTerminal($("terminal"));
  let player: Player | undefined;
  let token = sessionStorage.getItem(TOKEN_KEY);

  const updateControls = () => {
    if (!player) return;
    const now = player.now();
    $<HTMLInputElement>("seek").value = String(now);
    $("clock").textContent = `${clock(now)} / ${clock(player.cast.duration)}`;
    $("play").textContent = player.playing ? "Pause" : "Play";
  };
  setInterval(updateControls, 200);

  const signIn = (why?: string) => {
    sessionStorage.removeItem(TOKEN_KEY);
    token = null;
    showOnly("sign-in");
    $("sign-in-error").textContent = why ?? "";
    show("sign-in-error", Boolean(why));
  };

  async function list(): Promise<void> {
    player?.pause();
    history.replaceState(null, "", "/replay");
    $("target-label").textContent = "";
    setStatus("loading…");
    const { recordings } = (await (await api(RECORDINGS, token!)).json()) as { recordings: RecordingSummary[] };
    const rows = $("list-rows");
    rows.replaceChildren();
    for (const recording of recordings) {
      const row = document.createElement("tr");
      // A recording without its end event is still running, or its gateway stopped before the end.
      const duration = recording.complete ? clock(recording.duration) : `${clock(recording.duration)} (incomplete)`;
      const cells = [
        new Date(recording.start).toLocaleString(),
        recording.user,
        recording.target,
        duration,
        `${Math.ceil(recording.size / 1024)} KiB`,
      ];
      for (const [index, text] of cells.entries()) {
        const cell = document.createElement("td");
        cell.textContent = text;
        if (index >= 3) cell.className = "number";
        row.append(cell);
      }
      const open = document.createElement("button");
      open.type = "button";
      open.textContent = "Replay";
      open.addEventListener("click", () => void run(() => replay(recording.id)));
      const action = document.createElement("td");
      action.append(open);
      row.append(action);
      rows.append(row);
    }
    show("list-empty", recordings.length === 0);
    setStatus(`${recordings.length} recording${recordings.length === 1 ? "" : "s"}`);
    showOnly("list");
  }

  async function replay(id: string): Promise<void> {
    setStatus("loading…");
    const cast = parseCast(await (await api(`${RECORDINGS}/${encodeURIComponent(id)}`, token!)).text());
    history.replaceState(null, "", `/replay?id=${encodeURIComponent(id)}`);
    player?.pause();
    $("target-label").textContent = cast.header.title ?? id;
    showOnly("player");
    const seek = $<HTMLInputElement>("seek");
    seek.max = String(cast.duration);
    player = new Player(cast, term);
    player.seek(0);
    player.setSpeed(Number($<HTMLSelectElement>("speed").value));
    player.play();
    setStatus("");
    updateControls();
  }

  /** Runs a step; a refused token leads back to signing in, other failures show in the status. */
  async function run(step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      if (error instanceof AuthError) return signIn(`The gateway refused this token: ${error.message}`);
      setStatus(error instanceof Error ? error.message : String(error));
    }
  }

  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const value = $<HTMLTextAreaElement>("token").value.trim();
    if (!value) return;
    token = value;
    sessionStorage.setItem(TOKEN_KEY, value);
    void run(start);
  });
  $("bar-list").addEventListener("click", () => void run(list));
  $("play").addEventListener("click", () => {
    if (!player) return;
    if (player.playing) player.pause();
    else player.play();
    updateControls();
  });
  $<HTMLSelectElement>("speed").addEventListener("change", (event) =>
    player?.setSpeed(Number((event.target as HTMLSelectElement).value)),
  );
  $<HTMLInputElement>("seek").addEventListener("input", (event) => {
    player?.seek(Number((event.target as HTMLInputElement).value));
    updateControls();
  });

  const start = async () => {
    const id = new URLSearchParams(location.search).get("id");
    if (id) await replay(id);
    else await list();
  };

  // For automation and tests: the terminal and where playback is.
  Object.defineProperty(window, "entrywayReplay", {
    value: {
      terminal: term,
      get renderer() {
        return renderer();
      },
      get state() {
        return player
          ? {
              position: player.now(),
              duration: player.cast.duration,
              playing: player.playing,
              done: player.done,
              settled: player.settled,
            }
          : null;
      },
      seek: (seconds: number) => player?.seek(seconds),
    },
  });
  if (token) await run(start);
  else signIn();
}

main().catch((error: unknown) => {
  document.body.textContent = `Entryway could not start: ${error instanceof Error ? error.message : String(error)}`;
});
