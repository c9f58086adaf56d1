// Plain-text rendering for the client commands: aligned tables, counts with separators, short
// ages ("12s", "3m") and progress bars. No colours: the output is read in terminals and in logs alike.

/** 12345 → "12,345" (the separator is fixed, not the locale's: output is compared in scripts and tests). */
export const count = (n: number) => Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/** Seconds → the largest whole unit: "12s", "3m", "5h", "2d". */
export function age(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** Seconds since an ISO time, as `age`. */
export const since = (iso: string, nowMs: number) => age((nowMs - Date.parse(iso)) / 1000);

/** Columns padded to their widest cell, two spaces apart; the header row first. */
export function table(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(headers), ...rows.map(line)];
}

export const BAR_WIDTH = 20;

/** `[##########----------]  50% 5,000/10,000 rows`; without a known total, just the rows. */
export function progressBar(done: number, total: number, width = BAR_WIDTH): string {
  if (total <= 0) return `${count(done)} rows`;
  const ratio = Math.min(1, Math.max(0, done / total));
  const filled = Math.round(ratio * width);
  const percent = `${Math.floor(ratio * 100)}%`.padStart(4);
  // The done count padded to the total's width: the bar's line keeps its length from one redraw to the next.
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${percent} ${count(done).padStart(count(total).length)}/${count(total)} rows`;
}

/** A line cut to the terminal's width, so that redrawing by moving the cursor up stays exact. */
export const fit = (line: string, columns: number | undefined) => (columns && line.length > columns ? `${line.slice(0, Math.max(0, columns - 1))}…` : line);

export const truncate = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);
