// Failures as Snowflake reports them: a code, a SQL state and a message (see README.md for
// which codes are real Snowflake codes and which are the fake's own).
export class WarehouseSqlError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly sqlState: string,
  ) {
    super(message);
  }
}

export const objectMissing = (name: string) => new WarehouseSqlError("002003", `SQL compilation error:\nObject '${name}' does not exist or not authorized.`, "42S02");
