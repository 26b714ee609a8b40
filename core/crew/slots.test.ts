import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { capStepError, MAX_STEP_ERROR_CHARS, MAX_STEP_ERROR_CODE_CHARS } from "./slots.ts";

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
