// What the mirror keeps of each row beside its vector, indexed by rid: its typed metadata
// (columns.ts), its primary key and, while the mirror has its f32 vectors, its embedded text; and
// what is read from them by value: the rows per keyword value (the planner's known match counts,
// columns.ts) and the keyword postings (keyword-postings.ts).
// The mirror (mirror.ts) extends this class rather than holding one, so that its readers (search,
// planner, keyword ranking) read a row whole from the mirror as before. The mirror says which rows
// are live and whether it is compact, and writes each row's fields from its own set() and
// remove(), so the order of a row's changes (codes, orders, fields, liveness) stays in one place.
import type { ColumnAccess, GenerationSpec, Metadata, MetadataValue } from "../store-api/index.ts";
import { booleanColumn, type ColumnStore, keywordColumn, numberColumn } from "./columns.ts";
import { KeywordPostings } from "./keyword-postings.ts";

export abstract class RowFields {
  /** False once compact (mirror.ts): the texts go with the f32 vectors. */
  abstract readonly hasFloats: boolean;
  /** One past the highest rid ever stored. */
  abstract readonly ridEnd: number;
  abstract isLive(rid: number): boolean;

  private readonly columns: ColumnStore[];
  private readonly pks: (string | undefined)[] = [];
  /** Each row's embedded text while the mirror has its f32 vectors; empty once compact (refine.ts reads them from libSQL). */
  private readonly texts: (string | undefined)[] = [];
  private labelChars = 0;
  /**
   * The keyword ranking in memory (keyword-postings.ts): made when a search first ranks by words
   * (`keywordPostings`), filled from the texts in background steps; null until then, when texts
   * are not kept, and once compact. A collection never searched by words pays nothing for it.
   */
  private words: KeywordPostings | null = null;
  /** Resolves once the keyword postings started by `keywordPostings` are whole (or were dropped). */
  filled: Promise<void> = Promise.resolve();

  constructor(
    readonly spec: GenerationSpec,
    initialRows: number,
    /** Between steps of the keyword fill: the generation's turn for the foreground (pace.ts). */
    private readonly turn: () => Promise<void>,
  ) {
    this.columns = spec.metadata.map((c) =>
      c.type === "keyword" ? keywordColumn(initialRows) : c.type === "boolean" ? booleanColumn(initialRows) : numberColumn(initialRows),
    );
  }

  /** The store of metadata column `c` (column-order.ts sorts rows by its keys). */
  protected column(c: number): ColumnStore {
    return this.columns[c]!;
  }

  /** Makes room for rids below `capacity`. */
  protected growFields(capacity: number): void {
    for (const c of this.columns) c.grow(capacity);
  }

  /** A row's metadata, already typed per column. */
  protected writeMetadata(rid: number, metadata: MetadataValue[]): void {
    this.columns.forEach((c, i) => c.set(rid, metadata[i] ?? null));
  }

  /** A stored row's pk and text: the text is kept only while the mirror has its f32 vectors, and given to the postings that cover the row. */
  protected writeLabels(rid: number, pk: string, text: string): void {
    this.setLabels(rid, pk, this.hasFloats ? text : undefined);
    if (this.words?.covers(rid)) this.words.add(rid, text);
  }

  /** Forgets a removed row's fields. */
  protected clearFields(rid: number): void {
    this.columns.forEach((c) => c.set(rid, null));
    this.setLabels(rid, undefined, undefined);
    if (this.words?.covers(rid)) this.words.remove(rid);
  }

  private setLabels(rid: number, pk: string | undefined, text: string | undefined): void {
    this.labelChars += (pk?.length ?? 0) - (this.pks[rid]?.length ?? 0);
    this.pks[rid] = pk;
    if (!this.hasFloats) return;
    this.labelChars += (text?.length ?? 0) - (this.texts[rid]?.length ?? 0);
    this.texts[rid] = text;
  }

  /** The mirror turned compact: the texts, and the postings made from them, go for good (they stay in libSQL). */
  protected dropTexts(): void {
    this.words = null;
    for (const text of this.texts) this.labelChars -= text?.length ?? 0;
    this.texts.length = 0;
  }

  /**
   * The keyword postings once whole, else null (a search then ranks in FTS5): the first call
   * starts filling them from the texts (`fill` resolves when they are whole, or given up).
   */
  keywordPostings(): KeywordPostings | null {
    if (!this.hasFloats) return null;
    if (!this.words) {
      const words = (this.words = new KeywordPostings());
      this.filled = words.fill(() => this.ridEnd, (rid) => (this.isLive(rid) ? this.texts[rid] : undefined), () => this.words === words, this.turn);
    }
    return this.words.whole ? this.words : null;
  }

  /** The primary key of a live rid. */
  pkOf(rid: number): string {
    return this.pks[rid]!;
  }

  /** The embedded text of a live rid, or undefined once compact. */
  textOf(rid: number): string | undefined {
    return this.texts[rid];
  }

  readonly access: ColumnAccess<number> = (column) => {
    const store = this.columns[column];
    if (!store) throw new Error(`no metadata column ${column}`);
    return (rid) => store.get(rid);
  };

  /** Live rows whose keyword column `column` holds `value`; null when the column is not a keyword column. */
  keywordCount(column: number, value: MetadataValue): number | null {
    return this.columns[column]?.count?.(value) ?? null;
  }

  /** Live rows whose keyword column `column` holds one of `values`, ascending; null when the column is not a keyword column. */
  keywordRids(column: number, values: readonly MetadataValue[]): Uint32Array | null {
    return this.columns[column]?.rids?.(values) ?? null;
  }

  /** A filter value's key on column `column` (column-order.ts); null when no row can hold it. */
  readonly keyOf = (column: number, value: MetadataValue): number | null => this.columns[column]?.keyOf?.(value) ?? null;

  metadataOf(rid: number): Metadata {
    const out: Metadata = {};
    this.spec.metadata.forEach((c, i) => (out[c.name] = this.columns[i]!.get(rid)));
    return out;
  }

  /**
   * An estimate of the columns, pks, texts and postings. Strings are counted at 2 B/char plus
   * ~32 B of header and slot (JSC stores Latin-1 strings in 1 B/char, so this over-counts ASCII text).
   */
  protected fieldBytes(): number {
    const strings = this.pks.length + this.texts.length;
    const labels = this.labelChars * 2 + strings * 32;
    return this.columns.reduce((s, c) => s + c.bytes(), 0) + labels + (this.words?.bytes() ?? 0);
  }
}
