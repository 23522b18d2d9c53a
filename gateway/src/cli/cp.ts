// `entryway cp`: files to and from a container over the same authorized exec as `entryway enter`,
// as kubectl cp does it: tar runs in the container (`tar xf - -C <dir>` to upload, `tar cf - -C <dir>
// <name>` to download) in the gateway's pipe mode, and tar-stream packs or unpacks the archive here.
//
// The archive that comes back is written by whatever `tar` the container has, so it is hostile input.
// kubectl cp's history is the list of what it may try: CVE-2019-1002101 (a symlink in the archive,
// then a file written through it, kubernetes/kubernetes#75037), CVE-2019-11246 (the incomplete fix,
// #76788), CVE-2019-11249 (`..` and prefix tricks, #80436), CVE-2019-11251 (two symlinks, #87773;
// kubectl has copied no links since 1.16, #82143). So here: every entry must lie under the name
// asked for; absolute names and `..` components refuse the whole archive; symlinks, hard links and
// device files are skipped (one line each on stderr), so nothing can be written through a link; files
// are opened with O_NOFOLLOW and get no setuid/setgid bits. Tar names use "/" only, but Windows also
// takes "\" as a separator and "C:" as a drive (Node's path.win32, as the Win32 API), so a name
// with "\", ":" or a control character refuses the archive on every platform (an archive means the
// same everywhere), and the resolved path must lie under the destination by path.relative.
//
// Into a container the archive is packed here from readdir names (no separator can be in one),
// without links, modes masked to 0777; the container's tar gets its directory as an argument, never
// through a shell.
import {
  constants,
  createReadStream,
  createWriteStream,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  statSync,
} from "node:fs";
import path, { join, posix, type PlatformPath } from "node:path";
import { PassThrough, Readable, Transform, Writable } from "node:stream";
import { parseOperands } from "./args.js";
import tar from "tar-stream";
import { EnterError, ExitCode, reportFailure } from "./enter-options.js";
import { CONNECTION_OPTIONS, runSession, sessionSettings } from "./enter.js";
import { progressMeter, type Meter } from "./progress.js";

const HELP = `usage: entryway cp [options] <local path> <target>:<path>
       entryway cp [options] <target>:<path> <local path>

Copies a file or a directory into a container or out of it through the Entryway exec gateway, like
kubectl cp: tar runs in the container (it needs a tar), and the archive crosses the same authorized
exec session as entryway enter. <target> is what entryway enter takes (see entryway enter --help).
The destination path is the copy's name; when a local destination is an existing directory, the
copy goes inside it.

The archive from a container is not trusted: an entry outside the name asked for (an absolute path,
a ".." component) or with a \\, : or control character in its name refuses the whole archive (exit
${ExitCode.badRequest}, nothing written past that entry); symlinks, hard links and device files are
skipped with one line on stderr each.

On a terminal, a progress meter on stderr: the bytes so far (of the total, for an upload), the
rate and the time left (an upload's); none when stderr is not a terminal, or with -q/--quiet.
A remote path that does not exist is one line and exit ${ExitCode.notFound}.

options: the connection options of entryway enter (-g/--gateway, -t/--token, --token-file,
  -c/--container, --ca-file, --insecure, --connect-timeout, --keepalive, --config, --context),
  -q/--quiet, -h/--help.

exit status: 0, the remote tar's exit code, or one of entryway's codes (entryway --help).
`;

interface RemotePath {
  /** The target's text, read with the context's defaults (parseEnterTarget). */
  target: string;
  path: string;
}

/** `<target>:<path>`, or null for a local path (one without a colon, or starting with /, ./ or ../). */
export function parseRemote(text: string): RemotePath | null {
  const colon = text.indexOf(":");
  if (colon <= 0 || /^\.{0,2}\//.test(text)) return null;
  const path = text.slice(colon + 1);
  const name = posix.basename(path);
  if (!path || name === "" || name === "." || name === ".." || path.endsWith("/")) {
    throw new EnterError(
      ExitCode.usage,
      `bad remote path ${JSON.stringify(path)}: name a file or directory (no trailing /)`,
    );
  }
  return { target: text.slice(0, colon), path };
}

/** The bytes of the regular files under `source` (what packLocal sends), for the meter's total. */
function localSize(source: string): number {
  const stat = lstatSync(source);
  if (stat.isFile()) return stat.size;
  if (!stat.isDirectory()) return 0;
  return readdirSync(source).reduce((sum, child) => sum + localSize(join(source, child)), 0);
}

/** Packs a local file or directory as entries under `name`; links and special files are skipped. */
function packLocal(source: string, name: string, meter: Meter): Readable {
  const pack = tar.pack();
  const add = async (path: string, entryName: string): Promise<void> => {
    const stat = lstatSync(path);
    const mode = stat.mode & 0o777;
    if (stat.isDirectory()) {
      pack.entry({ name: entryName, type: "directory", mode, mtime: stat.mtime });
      for (const child of readdirSync(path).sort()) await add(join(path, child), `${entryName}/${child}`);
    } else if (stat.isFile()) {
      await new Promise<void>((resolve, reject) => {
        const entry = pack.entry(
          { name: entryName, type: "file", size: stat.size, mode, mtime: stat.mtime },
          (error) => (error ? reject(error) : resolve()),
        );
        createReadStream(path)
          .on("error", reject)
          .on("data", (chunk) => meter.add(chunk.length))
          .pipe(entry as unknown as Writable);
      });
    } else process.stderr.write(`entryway: skipped ${path}: not a regular file or directory\n`);
  };
  add(source, name).then(
    () => pack.finalize(),
    (error: Error) => pack.destroy(error),
  );
  return pack as unknown as Readable; // a streamx stream: data, end, pause and resume as Node's
}

/**
 * What no entry name may hold: "\" and ":" (a separator, a drive or a stream on Windows) and
 * control characters (C0, DEL and C1: printed, they would drive the terminal).
 */
/* eslint-disable no-control-regex -- control characters are what it matches (a block: a formatter may wrap the line) */
const UNSAFE_NAME = /[\\:\x00-\x1f\x7f-\x9f]/;
/* eslint-enable no-control-regex */

/** Text from the archive as it may be printed: control characters escaped. */
/* eslint-disable no-control-regex -- control characters are what it matches (a block: a formatter may wrap the line) */
const printable = (text: string) =>
  text.replace(/[\x00-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
/* eslint-enable no-control-regex */

/**
 * The local path for an archive entry, or an error when the entry would land outside `destination`.
 * `paths` is the local path flavour (Node's path; tests pass path.win32 and path.posix).
 */
export function entryPath(
  entryName: string,
  expected: string,
  destination: string,
  paths: PlatformPath = path,
): string {
  const refuse = (why: string) =>
    new EnterError(
      ExitCode.badRequest,
      `refusing the archive from the container: entry ${JSON.stringify(entryName.slice(0, 200))} ${why}`,
    );
  if (UNSAFE_NAME.test(entryName))
    throw refuse("holds \\, : or a control character (a separator, drive or stream on Windows)");
  const parts = entryName.split("/").filter((part) => part !== "" && part !== ".");
  if (entryName.startsWith("/") || parts.includes("..") || parts[0] !== expected)
    throw refuse(`is outside ${expected}`);
  const resolved = paths.join(destination, ...parts.slice(1));
  const relative = paths.relative(destination, resolved);
  if (relative === ".." || relative.startsWith(`..${paths.sep}`) || paths.isAbsolute(relative))
    throw refuse(`is outside ${expected}`);
  return resolved;
}

/** A pass-through that adds what passes to the meter. */
const counting = (meter: Meter) =>
  new Transform({
    transform(chunk: Buffer, _encoding, done) {
      meter.add(chunk.length);
      done(null, chunk);
    },
  });

/** Unpacks the archive from the container into `destination`, with the checks in the header. */
function unpackInto(destination: string, expected: string, meter: Meter): { sink: Writable; done: Promise<void> } {
  const extract = tar.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on("entry", (header, stream, next) => {
      stream.on("error", () => {}); // destroying the extract errors the entry too: extract's own error is the one reported
      const fail = (error: unknown) => extract.destroy(error as Error);
      let path: string;
      try {
        path = entryPath(header.name, expected, destination);
      } catch (error) {
        return fail(error);
      }
      if (header.type === "directory") {
        mkdirSync(path, { recursive: true, mode: 0o755 });
        stream.resume();
        return next();
      }
      if (header.type !== "file" && header.type !== "contiguous-file") {
        const link = header.linkname ? ` -> ${printable(header.linkname)}` : "";
        process.stderr.write(
          `entryway: skipped ${header.name}${link}: ${printable(header.type ?? "unknown")} entries are not copied\n`,
        );
        stream.resume();
        return next();
      }
      mkdirSync(join(path, ".."), { recursive: true, mode: 0o755 });
      // O_NOFOLLOW: a symlink already at that name (never one of ours) is not written through.
      const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
      let fd: number;
      try {
        fd = openSync(path, flags, (header.mode ?? 0o644) & 0o777);
      } catch (error) {
        return fail(error);
      }
      const file = createWriteStream(path, { fd });
      file.on("error", fail);
      file.on("finish", () => next());
      stream.pipe(counting(meter)).pipe(file);
    });
    extract.on("finish", resolve);
    extract.on("error", reject);
  });
  return { sink: extract as unknown as Writable, done };
}

export const options = { ...CONNECTION_OPTIONS, quiet: { type: "boolean", short: "q" } } as const;

/** What tar says of a path that is not there: busybox "can't change directory to '/x': No such ...", GNU "Cannot stat: No such ...". */
const NO_SUCH_PATH = /No such file or directory/;

/**
 * The remote tar's stderr, kept (its first 64 KiB) until it has ended: a missing path becomes one
 * line and exit 66 instead of tar's message and the runtime's broken pipe; anything else is
 * passed on as tar wrote it.
 */
function remoteErrors(): { sink: Writable; report(code: number, where: string): number } {
  const chunks: Buffer[] = [];
  let size = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (size < 64 * 1024) chunks.push(chunk);
      size += chunk.length;
      done();
    },
  });
  return {
    sink,
    report(code, where) {
      const text = Buffer.concat(chunks).toString("utf8");
      if (code !== 0 && code < 64 && NO_SUCH_PATH.test(text))
        throw new EnterError(ExitCode.notFound, `${where}: no such file or directory in the container`);
      process.stderr.write(text);
      return code;
    },
  };
}

export async function run(argv: string[]): Promise<number> {
  try {
    const parsed = parseOperands(argv, options, HELP, 2, () => "give a source and a destination (entryway cp --help)");
    if (parsed === undefined) return 0;
    const { values, positionals } = parsed;
    const [from, to] = [parseRemote(positionals[0]!), parseRemote(positionals[1]!)];
    if ((from === null) === (to === null))
      throw new EnterError(
        ExitCode.usage,
        "exactly one of source and destination must be <target>:<path> (entryway cp --help)",
      );

    if (to) {
      const source = positionals[0]!;
      let total: number;
      try {
        total = localSize(source);
      } catch (error) {
        throw new EnterError(ExitCode.usage, `cannot read ${source}: ${(error as Error).message}`);
      }
      const directory = posix.dirname(to.path);
      const settings = await sessionSettings(values, to.target, ["tar", "xf", "-", "-C", directory], true);
      const meter = progressMeter(process.stderr, "sent", { quiet: values.quiet, total });
      const errors = remoteErrors();
      const code = await runSession(settings, true, {
        input: packLocal(source, posix.basename(to.path), meter),
        output: new PassThrough().resume(),
        errors: errors.sink,
      });
      meter.end(code === 0);
      return errors.report(code, `${to.target}:${directory}`);
    }

    const remote = from!;
    const name = posix.basename(remote.path);
    let destination = positionals[1]!;
    try {
      if (statSync(destination).isDirectory()) destination = join(destination, name);
    } catch {
      // a new name
    }
    const command = ["tar", "cf", "-", "-C", posix.dirname(remote.path), name];
    const settings = await sessionSettings(values, remote.target, command, true);
    const meter = progressMeter(process.stderr, "received", { quiet: values.quiet });
    const { sink, done } = unpackInto(destination, name, meter);
    // A refused archive ends the session at once (the refusal is the one line on stderr).
    const unpackError = (error: unknown) =>
      error instanceof EnterError
        ? error
        : new EnterError(
            ExitCode.badRequest,
            `cannot unpack the archive from the container: ${(error as Error).message}`,
          );
    const abort = new AbortController();
    done.catch((error: unknown) => abort.abort(unpackError(error)));
    const errors = remoteErrors();
    const code = await runSession(settings, true, {
      input: Readable.from([]),
      output: sink,
      errors: errors.sink,
      signal: abort.signal,
    });
    if (code !== 0) {
      meter.end(false);
      return errors.report(code, `${remote.target}:${remote.path}`);
    }
    sink.end();
    await done.catch((error: unknown) => {
      meter.end(false);
      throw unpackError(error);
    });
    meter.end(true);
    return errors.report(0, `${remote.target}:${remote.path}`);
  } catch (error) {
    return reportFailure(error, "cp");
  }
}
