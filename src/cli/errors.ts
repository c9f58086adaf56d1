// How a CLI command fails: one line on stderr and an exit code (docs/running.md#exit-codes):
// 2 for a command line, setting or state the operator must fix (a missing flag, an existing
// backup file, a data directory in use), 1 for a failure along the way (the service unreachable
// or answering an error, a copy that failed).
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

/** A refused command line or state: exit 2. */
export const usage = (message: string) => new CliError(message, 2);

/** A failure while working: exit 1. */
export const failure = (message: string) => new CliError(message, 1);
