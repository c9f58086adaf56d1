import pino from "pino";

// Never log a secret or a raw key (STYLE, CONTRACT 6). Fields under these names are censored
// wherever they appear in a logged object.
const SECRET_PATHS = [
  "api_key", "key", "password", "private_key", "secret", "token", "access_token", "refresh_token",
  "code", "credentials", "authorization", "headers.authorization", "req.headers.authorization",
];

export type Logger = pino.Logger;

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: [...SECRET_PATHS, ...SECRET_PATHS.map((p) => `*.${p}`)], censor: "[redacted]" },
      formatters: { level: (label) => ({ level: label }) },
    },
    // stderr keeps stdout's first line for the `listening` announcement (CONTRACT 1).
    destination ?? pino.destination({ fd: 2, sync: true }),
  );
}
