// The one exit-code table of every `entryway` subcommand (gateway/README.md "Exit codes"), after
// BSD's sysexits.h: 64 EX_USAGE, 65 EX_DATAERR, 66 EX_NOINPUT, 69 EX_UNAVAILABLE, 70 EX_SOFTWARE,
// 71 EX_OSERR, 75 EX_TEMPFAIL, 77 EX_NOPERM, 78 EX_CONFIG; 67 is this CLI's own (a session limit).
// A remote command's own exit code passes through unchanged; these are the CLI's own failures, each
// after one line on stderr starting with "entryway".

export const ExitCode = {
  ok: 0,
  /** Bad command line: unknown command or option, bad target or URL, unreadable config, token or CA file. */
  usage: 64,
  /** Bad data: the gateway refused the request as malformed, an archive or recording that cannot be read. */
  badRequest: 65,
  /** No such target, remote path, recording or workspace. */
  notFound: 66,
  /** The gateway's session limit. */
  limit: 67,
  /** Unavailable: the gateway cannot be reached in time (each stage named), or the connection was lost. */
  network: 69,
  /** The gateway or the CONNECT gateway could not start the shell or reach the workspace. */
  backend: 70,
  /** TLS: the certificate was not accepted, or the server does not speak TLS. */
  tls: 71,
  /** The gateway ended the session (idle timeout, shutdown). */
  ended: 75,
  /** Denied: no token, an authorizer's no, HTTP 401/403. */
  denied: 77,
  /** `entryway serve`: its settings are wrong. */
  config: 78,
} as const;

/** One line of the table per code, for --help texts and the README (the test compares them). */
export const EXIT_CODE_MEANINGS: ReadonlyArray<readonly [number, string]> = [
  [ExitCode.usage, "usage: bad command, option, target or URL; unreadable config, token or CA file"],
  [ExitCode.badRequest, "bad data: the gateway refused the request as malformed, an unreadable archive or recording"],
  [ExitCode.notFound, "not found: no such target, remote path, recording or workspace"],
  [ExitCode.limit, "session limit reached"],
  [ExitCode.network, "unavailable: the gateway not reached in time (the stage named), or the connection lost"],
  [ExitCode.backend, "the gateway could not start the shell; the CONNECT gateway could not reach the workspace"],
  [ExitCode.tls, "TLS: the certificate was not accepted, or the server does not speak TLS"],
  [ExitCode.ended, "the gateway ended the session (idle timeout, shutdown)"],
  [ExitCode.denied, "denied: no token, an authorizer's no, HTTP 401/403"],
  [ExitCode.config, "entryway serve: bad settings"],
];

/** The table as --help prints it, indented. */
export function exitCodeHelp(indent = "  "): string {
  return EXIT_CODE_MEANINGS.map(([code, meaning]) => `${indent}${code}  ${meaning}\n`).join("");
}

/** A failure that becomes one line on stderr and an exit code. */
export class CliError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}
