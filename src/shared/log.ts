import pino from "pino";
import { writeSync } from "node:fs";

// Never log a secret or a raw key (STYLE, docs/running.md#secrets). Fields under these names are censored
// wherever they appear in a logged object.
const SECRET_PATHS = [
  "api_key", "key", "password", "private_key", "secret", "token", "access_token", "refresh_token",
  "code", "credentials", "authorization", "headers.authorization", "req.headers.authorization",
];

export type Logger = pino.Logger;

// How long one line may wait on a reader that is not keeping up (EAGAIN on a non-blocking pipe)
// before it is dropped: long enough for any live reader, short enough not to stall requests.
const BUSY_RETRY_MS = 1_000;
const BUSY_PAUSE_MS = 5;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * A destination that can never take the process down. pino's default (sonic-boom) emits write
 * failures as an `error` event, which with no listener is thrown: a log on a full disk (ENOSPC)
 * or a closed pipe (EPIPE) then killed the service, and crash-looped it on every start. A line
 * that cannot be written is dropped instead — the service keeps answering, which matters more.
 */
export function fdDestination(fd: number): pino.DestinationStream & { dropped(): number } {
  let dropped = 0;
  return {
    write(line: string) {
      let rest = Buffer.from(line);
      const deadline = Date.now() + BUSY_RETRY_MS;
      while (rest.length > 0) {
        try {
          rest = rest.subarray(writeSync(fd, rest));
        } catch (err) {
          const code = (err as { code?: string }).code;
          if ((code === "EAGAIN" || code === "EBUSY") && Date.now() < deadline) {
            Atomics.wait(pause, 0, 0, BUSY_PAUSE_MS);
            continue;
          }
          dropped++;
          return;
        }
      }
    },
    dropped: () => dropped,
  };
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: [...SECRET_PATHS, ...SECRET_PATHS.map((p) => `*.${p}`)], censor: "[redacted]" },
      formatters: { level: (label) => ({ level: label }) },
    },
    // stderr keeps stdout's first line for the `listening` announcement (docs/running.md#commands).
    destination ?? fdDestination(2),
  );
}
