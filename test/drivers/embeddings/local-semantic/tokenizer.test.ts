// local-semantic-v1's tokenizer on the shipped vocabulary: the ids are pinned, so a change in
// segmentation (which would move every stored vector) shows here first.
import { describe, expect, test } from "bun:test";
import { Tokenizer, UNKNOWN_ID, type Vocabulary } from "../../../../src/drivers/embeddings/local-semantic/tokenizer.ts";
import { MODEL_FILES } from "../../../../src/drivers/embeddings/local-semantic/assets.ts";

const vocabulary = (await Bun.file(MODEL_FILES.vocabulary).json()) as Vocabulary;
const tokenizer = new Tokenizer(vocabulary);
const ids = (text: string) => tokenizer.encode(text).ids;
const pieces = (text: string) => ids(text).map((id) => vocabulary[id]![0]);

describe("happy", () => {
  test.each([
    ["Hello world.", [341, 4125, 311, 6]],
    ["a waterproof jacket for rainy hikes", [11, 473, 1170, 1339, 7195, 22, 2976, 48, 2038, 452, 7]],
    ["The Universal Sentence Encoder", [34, 4302, 2631, 90, 114, 419, 709, 2203, 359, 783]],
    ["don't stop", [101, 13, 17, 630]],
  ])("%j segments to pinned ids", (text, expected) => {
    expect(ids(text)).toEqual(expected);
  });

  test("the best-scoring split, each word marked with ▁", () => {
    expect(pieces("Hello world.")).toEqual(["▁H", "ello", "▁world", "."]);
    expect(pieces("a waterproof jacket")).toEqual(["▁a", "▁water", "pro", "of", "▁jacket"]);
  });

  test("NFKC first: full-width letters and a combining accent read as their plain forms", () => {
    expect(ids("ｆｕｌｌ width")).toEqual(ids("full width"));
    expect(ids("cafe\u0301")).toEqual(ids("caf\u00e9"));
  });

  test("any run of whitespace is one word break, and the ends are trimmed", () => {
    expect(ids("Espresso machine\nwith\t\tstainless  steel ")).toEqual(ids("Espresso machine with stainless steel"));
    expect(pieces("  spaced\t\tout \n")).toEqual(["▁space", "d", "▁out"]);
  });

  test("pieces scored null in the vocabulary (user-defined symbols) are taken", () => {
    expect(pieces("see https://vecsync.dev")).toContain("://");
  });

  test("counts its tokens", () => {
    expect(tokenizer.encode("Hello world.")).toEqual({ ids: [341, 4125, 311, 6], tokens: 4, truncated: false });
  });
});

describe("edges", () => {
  test("nothing but whitespace is no tokens", () => {
    expect(tokenizer.encode("")).toEqual({ ids: [], tokens: 0, truncated: false });
    expect(tokenizer.encode(" \n\t ")).toEqual({ ids: [], tokens: 0, truncated: false });
  });

  test("characters no piece covers become the unknown id, a run of them one", () => {
    expect(ids("日本語 text ☃")).toEqual([30, UNKNOWN_ID, 1515, 30, UNKNOWN_ID]);
    expect(ids("ab\u0000\u0001cd")).toEqual([2733, UNKNOWN_ID, 131, 29]);
  });

  test("a long text is cut at a piece boundary to the first maxTokens pieces, and says so", () => {
    const long = Array.from({ length: 400 }, (_, i) => `word${i}`).join(" ");
    const whole = tokenizer.encode(long);
    const cut = tokenizer.encode(long, 256);
    expect(whole.tokens).toBe(1100);
    expect(cut).toEqual({ ids: whole.ids.slice(0, 256), tokens: 256, truncated: true });
    expect(tokenizer.encode("Hello world.", 4).truncated).toBe(false);
    expect(tokenizer.encode("Hello world.", 3)).toEqual({ ids: [341, 4125, 311], tokens: 3, truncated: true });
  });

  test("a 1 MiB text costs what its first few KiB cost", () => {
    const huge = "lorem ipsum dolor sit amet ".repeat(40_000);
    const started = performance.now();
    const cut = tokenizer.encode(huge, 256);
    expect(cut.tokens).toBe(256);
    expect(cut.truncated).toBe(true);
    expect(cut.ids).toEqual(tokenizer.encode(huge.slice(0, 4000), 256).ids);
    expect(performance.now() - started).toBeLessThan(1000); // ~10 ms; the whole text would take seconds
  });
});
