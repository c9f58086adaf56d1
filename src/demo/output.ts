// What the demo prints: numbered steps, the curl command of each call, result tables and a
// progress bar that redraws in place on a terminal and prints plain lines otherwise (CI logs).

type Writer = { write(text: string): unknown; isTTY?: boolean };

export type Output = ReturnType<typeof createOutput>;

const BAR_WIDTH = 30;
/** Off a terminal, a progress line at most this often (and always the last one). */
const PLAIN_PROGRESS_EVERY_MS = 500;

export function createOutput(stream: Writer = process.stdout) {
  const tty = Boolean(stream.isTTY);
  const bold = (s: string) => (tty ? `\x1b[1m${s}\x1b[0m` : s);
  const dim = (s: string) => (tty ? `\x1b[2m${s}\x1b[0m` : s);
  const line = (s = "") => stream.write(s + "\n");
  let stepNumber = 0;

  return {
    tty,
    line,
    step(title: string) {
      line();
      line(bold(`${++stepNumber}. ${title}`));
    },
    note(text: string) {
      line(`   ${text}`);
    },
    curl(command: string) {
      line(dim(command.split("\n").map((l) => `   ${l}`).join("\n")));
    },
    table(headers: string[], rows: string[][]) {
      const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
      const format = (cells: string[]) => "   " + cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
      line(bold(format(headers)));
      for (const row of rows) line(format(row));
    },
    /** Returns an updater `(done, total)` and a `finish()` that ends the bar's line. */
    progress(label: string) {
      let lastPlainAt = 0;
      let lastShown = "";
      const render = (done: number, total: number) => {
        const ratio = total > 0 ? Math.min(1, done / total) : 0;
        const filled = Math.round(ratio * BAR_WIDTH);
        const percent = `${Math.floor(ratio * 100)}%`.padStart(4);
        return `   ${label} [${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ${percent}  ${done}/${total} rows`;
      };
      return {
        update(done: number, total: number) {
          const text = render(done, total);
          if (text === lastShown) return;
          if (tty) stream.write(`\r${text}`);
          else if (Date.now() - lastPlainAt >= PLAIN_PROGRESS_EVERY_MS) {
            line(text);
            lastPlainAt = Date.now();
          } else return;
          lastShown = text;
        },
        finish(done: number, total: number) {
          const text = render(done, total);
          if (tty) stream.write(`\r${text}\n`);
          else if (text !== lastShown) line(text);
        },
      };
    },
  };
}

export const truncate = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);
