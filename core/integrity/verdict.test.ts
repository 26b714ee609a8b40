import { describe, expect, it } from "vitest";
import { formatChecks, formatVerdict, PASS_LAYER, VerdictSchema, type Verdict } from "./verdict.ts";

const reject: Verdict = {
  verdict: "REJECT", reason_code: "OUTSIDE_RETURN_WINDOW", reason: "Order ord_005 outside return window (…)", layer: 5,
  checks: [{ layer: 1, name: "proposal_schema", passed: true }, { layer: 5, name: "return_window", passed: false, reason_code: "OUTSIDE_RETURN_WINDOW" }],
};

describe("verdict formatting", () => {
  it("formats for humans without changing the codes", () => {
    expect(formatVerdict(reject)).toBe("REJECT [OUTSIDE_RETURN_WINDOW, layer 5]: Order ord_005 outside return window (…)");
    expect(formatVerdict({ verdict: "ACCEPT", reason_code: "VALIDATION_PASSED", reason: "Validation passed", layer: PASS_LAYER, checks: [] })).toBe("ACCEPT [VALIDATION_PASSED, all layers passed]: Validation passed");
    expect(formatChecks(reject)).toEqual(["✓ L1 proposal_schema", "✗ L5 return_window (OUTSIDE_RETURN_WINDOW)"]);
  });
  it("the schema accepts a verdict and refuses an unknown outcome", () => {
    expect(VerdictSchema.parse(reject)).toEqual(reject);
    expect(VerdictSchema.safeParse({ ...reject, verdict: "MAYBE" }).success).toBe(false);
  });
});
