import { describe, expect, it } from "vitest";
import { VerdictSchema, type Verdict } from "./verdict.ts";

const reject: Verdict = {
  verdict: "REJECT",
  reason_code: "OUTSIDE_RETURN_WINDOW",
  reason: "Order ord_005 outside return window (…)",
  layer: 5,
  checks: [
    { layer: 1, name: "proposal_schema", passed: true },
    { layer: 5, name: "return_window", passed: false, reason_code: "OUTSIDE_RETURN_WINDOW" },
  ],
};

describe("the verdict schema", () => {
  it("the schema accepts a verdict and refuses an unknown outcome", () => {
    expect(VerdictSchema.parse(reject)).toEqual(reject);
    expect(VerdictSchema.safeParse({ ...reject, verdict: "MAYBE" }).success).toBe(false);
  });
});
