// A keyword query's text as an FTS5 MATCH expression (keyword-index.ts): FTS5's own syntax is
// read as plain words, so no query text is a syntax error; a text without words matches nothing.
import { expect, test } from "bun:test";
import { matchExpression } from "../../../../src/drivers/vector-store/keyword-index.ts";

test("FTS5 operators and quotes are words; a text of none is no expression", () => {
  expect(matchExpression('NEAR(a b) "x" * ^c col:d AND e')).toBe('"NEAR" OR "a" OR "b" OR "x" OR "c" OR "col" OR "d" OR "AND" OR "e"');
  expect(matchExpression("?! -- ***")).toBeNull();
});
