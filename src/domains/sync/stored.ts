// Reads the stored text and vector of given rows, for reusing a vector instead of embedding the
// same text again (a re-backfill copying unchanged rows; a hash that changed while the text did
// not). The store has no public call for this yet, so this reads its generation tables directly,
// read-only, on the same client: TODO(vector store) move into VectorStore as `rows(name, pks)`.
import type { Services } from "../../services.ts";
import { generationTables } from "../../drivers/vector-store/schema.ts";

export type StoredDoc = { text: string; vector: Float32Array };

export async function readStoredDocs(services: Services, collection: string, generation: number, pks: string[]): Promise<Map<string, StoredDoc>> {
  const out = new Map<string, StoredDoc>();
  if (pks.length === 0) return out;
  const t = generationTables(collection, generation);
  const rs = await services.database.client.execute({
    sql: `SELECT r.pk, d.text, d.vec FROM ${t.rows} r JOIN ${t.docs} d ON d.rid = r.rid WHERE r.pk IN (SELECT value FROM json_each(?))`,
    args: [JSON.stringify(pks)],
  });
  for (const row of rs.rows) {
    const blob = row.vec as ArrayBuffer;
    out.set(String(row.pk), { text: String(row.text), vector: new Float32Array(blob.slice(0)) });
  }
  return out;
}
