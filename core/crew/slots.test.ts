import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { capStepError, compactSlot, MAX_STEP_ERROR_CHARS, MAX_STEP_ERROR_CODE_CHARS, readSlot } from "./slots.ts";

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe("capStepError", () => {
  it("keeps an error that fits as it is", () => {
    const e = { message: "x".repeat(MAX_STEP_ERROR_CHARS), code: "LLM_429" };
    expect(capStepError(e)).toBe(e);
  });

  it("cuts a long message to the limit, keeping its start and saying how much was cut", () => {
    const message = `Traceback: ${"frame ".repeat(20_000)}`;
    const capped = capStepError({ message, code: "WORKER_CRASH" });
    expect(capped.message.length).toBeLessThanOrEqual(MAX_STEP_ERROR_CHARS);
    expect(capped.code).toBe("WORKER_CRASH");
    const m = /^([\s\S]*)… \[(\d+) more characters cut\]$/.exec(capped.message)!;
    expect(message.startsWith(m[1]!)).toBe(true);
    expect(m[1]!.length + Number(m[2])).toBe(message.length);
  });

  it("cuts a long code too", () => {
    const capped = capStepError({ message: "boom", code: "C".repeat(1_000) });
    expect(capped.message).toBe("boom");
    expect(capped.code!.length).toBeLessThanOrEqual(MAX_STEP_ERROR_CODE_CHARS);
    expect(capped.code).toMatch(/^C+… \[\d+ more characters cut\]$/);
  });

  it("never leaves half of a surrogate pair, whatever the length", () => {
    fc.assert(
      fc.property(fc.nat({ max: 40 }), fc.nat({ max: 3_000 }), (pad, emoji) => {
        const capped = capStepError({ message: "a".repeat(pad) + "😀".repeat(emoji) });
        expect(capped.message.length).toBeLessThanOrEqual(MAX_STEP_ERROR_CHARS);
        expect(capped.message).not.toMatch(LONE_SURROGATE);
      }),
    );
  });
});

describe("readSlot and compactSlot (the snapshot boundary)", () => {
  it.each([
    [0, { kind: "agent", attempt: 1 }],
    [{ a: 3 }, { kind: "agent", attempt: 3 }],
    [
      { fx: "stall", e: { message: "slow" }, a: 2 },
      { kind: "fixer", attempt: 2, fixer: "stall", error: { message: "slow" } },
    ],
    [
      { f: "fault", e: { message: "boom", code: "C" } },
      { kind: "failing", attempt: 1, fixer: undefined, how: "fault", error: { message: "boom", code: "C" } },
    ],
    [
      { ok: { v: 1 }, a: 2, fx: "fault", m: [{ op: "delete", key: "k" }] },
      {
        kind: "ok",
        attempt: 2,
        fixer: "fault",
        output: { v: 1 },
        memory: [{ op: "delete", key: "k" }],
        messages: undefined,
        delegations: undefined,
      },
    ],
    [
      { x: { message: "no" }, fx: "stall" },
      { kind: "failed", attempt: 1, fixer: "stall", error: { message: "no" } },
    ],
  ] as const)("reads %j as a tagged slot and writes it back as it was", (stored, slot) => {
    const read = readSlot(stored);
    expect(read).toEqual({ slot });
    expect(JSON.stringify(compactSlot((read as { slot: Parameters<typeof compactSlot>[0] }).slot))).toBe(
      JSON.stringify(stored),
    );
  });

  it("reads the first key present of ok, x, f, n, fx, a, as snapshots always were", () => {
    expect(readSlot({ a: 2, ok: 1 })).toMatchObject({ slot: { kind: "ok", attempt: 2 } });
    expect(readSlot({ f: "stall", e: { message: "m" }, x: { message: "x" } })).toMatchObject({
      slot: { kind: "failed" },
    });
    expect(readSlot({ n: { status: "running" } })).toEqual({ inner: { status: "running" } });
    expect(readSlot({ n: {}, f: "fault", e: { message: "m" } })).toMatchObject({ slot: { kind: "failing" } });
  });

  it.each([
    [{}, "is not a slot state"],
    [[0], "is not a slot state"],
    [1, "is not a slot state"],
    [{ a: 0 }, "attempt"],
    [{ a: "2" }, "attempt"],
    [{ fx: "boom", e: { message: "m" } }, "fixer trigger"],
    [{ f: "crash", e: { message: "m" } }, "unknown way"],
    [{ f: "fault" }, "error that is not"],
    [{ x: "boom" }, "error that is not"],
    [{ fx: "fault", e: { message: 1 } }, "error that is not"],
    [{ n: null }, "inner crew with no snapshot"],
  ] as const)("says what is wrong with %j", (stored, problem) => {
    const read = readSlot(stored);
    expect("problem" in read && read.problem).toContain(problem);
  });
});
