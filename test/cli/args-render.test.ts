// The CLI's small pure parts: the strict flag parser every command uses (node:util parseArgs,
// its refusals as one line) and the renderings status and tasks print.
import { describe, expect, test } from "bun:test";
import { localDatabasePath } from "../../src/db/client.ts";
import { ArgsError, parseFlags } from "../../src/shared/args.ts";
import { age, count, progressBar, table } from "../../src/cli/render.ts";

const SPEC = { strings: ["port", "host"], booleans: ["keep"] } as const;

describe("happy", () => {
  test("--name value, --name=value and bare booleans; the last repeat wins", () => {
    const flags = parseFlags(["--port", "9000", "--host=0.0.0.0", "--keep", "--port=9001"], SPEC);
    expect(flags.strings).toEqual({ port: "9001", host: "0.0.0.0" });
    expect([...flags.booleans]).toEqual(["keep"]);
    expect(parseFlags([], SPEC)).toEqual({ strings: {}, booleans: new Set() });
    expect(parseFlags(["--host="], SPEC).strings.host).toBe("");
  });

  test.each([
    [0, "0s"], [59, "59s"], [60, "1m"], [3599, "59m"], [3600, "1h"], [86_399, "23h"], [86_400, "1d"], [-4, "0s"],
  ])("age(%p) is %p", (seconds, shown) => {
    expect(age(seconds)).toBe(shown);
  });

  test("counts carry thousands separators whatever the locale", () => {
    expect([0, 999, 1000, 1234567].map(count)).toEqual(["0", "999", "1,000", "1,234,567"]);
  });

  test("a progress bar shows the share done, padded so redraws keep its length", () => {
    expect(progressBar(5000, 10_000)).toBe("[##########----------]  50%  5,000/10,000 rows");
    expect(progressBar(0, 300)).toBe("[--------------------]   0%   0/300 rows");
    expect(progressBar(300, 300)).toBe("[####################] 100% 300/300 rows");
    expect(progressBar(12, 0)).toBe("12 rows");
    expect(progressBar(0, 10_000).length).toBe(progressBar(9_999, 10_000).length);
  });

  test("tables pad each column to its widest cell", () => {
    expect(table(["A", "BB"], [["xyz", "1"], ["q", "22"]])).toEqual(["A    BB", "xyz  1", "q    22"]);
  });

  test.each([
    ["file:/srv/vecsync/vecsync.db", "/srv/vecsync/vecsync.db"],
    ["file:data/vecsync.db", "data/vecsync.db"],
    ["file:///srv/with%20space/v.db", "/srv/with space/v.db"],
    ["libsql://db.example.com", null],
    ["http://127.0.0.1:8081", null],
  ])("the database file of %p is %p", (url, path) => {
    expect(localDatabasePath(url)).toBe(path);
  });
});

describe("errors", () => {
  test.each([
    [["--bogus", "1"], "unknown flag --bogus"],
    [["-x"], "unknown flag -x"],
    [["--port"], "--port needs a value"],
    [["--port", "--host", "h"], "--port needs a value"],
    [["--keep=yes"], "--keep takes no value"],
    [["stray"], 'unexpected argument "stray"'],
    [["--keep", "--", "after"], 'unexpected argument "after"'],
  ])("%p is refused: %p", (args, message) => {
    expect(() => parseFlags(args, SPEC)).toThrow(new ArgsError(message));
  });
});
