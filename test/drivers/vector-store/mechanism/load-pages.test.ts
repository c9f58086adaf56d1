import { expect, test, setDefaultTimeout } from "bun:test";
import { Mirror } from "../../../../src/drivers/vector-store/mirror.ts";
import { LOAD_PAGE_ROWS, readMirror } from "../../../../src/drivers/vector-store/restart.ts";
import { cosine, loopTurns, makeWorld, productRows, SPEC } from "../helpers.ts";

setDefaultTimeout(60_000);

// A start-up reads its rows into the mirror a page at a time and turns the event loop after each
// page (restart.ts readMirror). Without the turns a local libSQL read never yields: a service
// restarting with 600k rows answered nothing for the 8 s of the read, and it kept the pages'
// memory to the end. Peak memory and waits are too noisy to assert here; the turns are not.
test("a start-up reads every live row into the mirror, turning the event loop after each page", async () => {
  await using world = await makeWorld();
  const store = await world.open();
  await store.createCollection("c", SPEC);
  const rows = productRows(Math.round(2.5 * LOAD_PAGE_ROWS), SPEC.dimensions, 3);
  for (let i = 0; i < rows.length; i += 1000) await store.upsert("c", rows.slice(i, i + 1000));
  const deleted = ["5", "4100", "9000"];
  await store.delete("c", deleted);
  const live = await world.client.execute({ sql: "SELECT live_generation AS g FROM vs_collections WHERE name = ?", args: ["c"] });
  const ref = { collection: "c", generation: Number(live.rows[0]!.g), spec: SPEC };

  const loop = loopTurns();
  const mirror = new Mirror(SPEC);
  await readMirror(world.client, ref, mirror);
  const during = loop.stop();

  expect(mirror.liveCount).toBe(rows.length - deleted.length);
  const pages = Math.ceil(mirror.liveCount / LOAD_PAGE_ROWS);
  expect(during).toBeGreaterThanOrEqual(pages);
  const rids = Array.from(mirror.liveRids());
  const pks = new Set(rids.map((rid) => mirror.pkOf(rid)));
  for (const pk of deleted) expect(pks.has(pk)).toBe(false);
  for (const rid of rids.filter((_, i) => i % 997 === 0)) {
    const row = rows[Number(mirror.pkOf(rid))]!;
    expect(cosine(mirror.vectorOf(rid), row.vector)).toBeGreaterThan(0.99999);
    expect(mirror.textOf(rid)).toBe(row.text);
  }
});

// With the f32 limit below what the rows need, a start-up reads them compact from the first row:
// the same codes as a mirror that turned compact part-way, without the f32 slabs and texts it held
// until then (restart.ts readMirror, Mirror.expectRows).
test("a start-up whose rows pass the f32 limit reads them compact from the first row", async () => {
  await using world = await makeWorld();
  const store = await world.open();
  await store.createCollection("c", SPEC);
  const rows = productRows(3000, SPEC.dimensions, 5);
  for (let i = 0; i < rows.length; i += 1000) await store.upsert("c", rows.slice(i, i + 1000));
  const live = await world.client.execute({ sql: "SELECT live_generation AS g FROM vs_collections WHERE name = ?", args: ["c"] });
  const ref = { collection: "c", generation: Number(live.rows[0]!.g), spec: SPEC };
  const floatBytes = 1000 * SPEC.dimensions * 4; // a third of the rows

  const mirror = new Mirror(SPEC, { floatBytes });
  let compactAtFirstPage = false;
  const set = mirror.set.bind(mirror);
  mirror.set = (...args) => {
    if (mirror.liveCount === 0) compactAtFirstPage = !mirror.hasFloats;
    set(...args);
  };
  await readMirror(world.client, ref, mirror);
  expect(compactAtFirstPage).toBe(true);
  expect(mirror.liveCount).toBe(rows.length);

  const partWay = new Mirror(SPEC, { floatBytes });
  const inOrder = Array.from(mirror.liveRids());
  for (const rid of inOrder) {
    const row = rows[Number(mirror.pkOf(rid))]!;
    partWay.set(rid, row.vector, [], row.pk, row.text, mirror.versionOf(rid));
  }
  expect(partWay.hasFloats).toBe(false);
  for (const rid of inOrder) expect(mirror.indexVectorOf(rid)).toEqual(partWay.indexVectorOf(rid));
});
