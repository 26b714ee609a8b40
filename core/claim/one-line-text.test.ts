// Text printed or stored as an identifier is one line: a reviewer's name or note, and a claim's ids and
// category, refuse every control character (CR/LF would forge a line of `claims list` or a log), while the
// claim's free-text reason keeps its tabs and line breaks.
import { describe, expect, it } from "vitest";
import { ClaimSchema, controlCharacterIn } from "./claim.ts";
import { ReviewDecisionSchema } from "../kernel/review.ts";

describe("one-line text", () => {
  it.each([
    ["a note with a line break", { decision: "DENY", note: "ok\nclm_1 APPROVED" }, "note"],
    ["a reviewer with a carriage return", { decision: "DENY", reviewer: "alice\r" }, "reviewer"],
    ["a note with an escape sequence", { decision: "DENY", note: "\u001b[2Jcleared" }, "note"],
  ])("refuses %s in a review decision, naming the field", (_name, body, field) => {
    const parsed = ReviewDecisionSchema.safeParse(body);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join("."))).toContain(field);
    expect(parsed.error?.issues.map((i) => i.message).join()).toMatch(/control character U\+00(0A|0D|1B)/);
  });

  it("reports a control character once per field (not once per check that refuses it)", () => {
    const parsed = ReviewDecisionSchema.safeParse({ decision: "DENY", note: "a\u0007b" });
    expect(parsed.error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`)).toEqual([
      expect.stringMatching(/^note: holds the control character U\+0007/),
    ]);
  });

  it("accepts a one-line note and keeps line breaks in a claim's reason", () => {
    expect(
      ReviewDecisionSchema.safeParse({ decision: "DENY", reviewer: "alice", note: "no — wrong order ✓" }).success,
    ).toBe(true);
    const claim = { order_id: "ord_1", amount_eur: 1, category: "electronics", reason: "line 1\nline 2\ttab" };
    expect(ClaimSchema.parse(claim).reason).toBe("line 1\nline 2\ttab");
  });

  it.each([
    ["\u0000", "U+0000"],
    ["\u007f", "U+007F"],
    ["\u0085", "U+0085"],
    ["\u2029", "U+2029"],
  ])("names %j as %s", (c, code) => {
    expect(controlCharacterIn(`a${c}b`)).toBe(code);
  });

  it("finds nothing in printable text of any plane", () => {
    expect(controlCharacterIn("ord_001 €45 😀 𠀀 \ufffe")).toBeUndefined();
  });
});
