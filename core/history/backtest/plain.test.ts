// The plain-form reading of a recorded PROPOSAL_SUBMITTED's kernel inputs decides exactly as the schema does:
// whenever it reads inputs itself, the schema reads them to the same value; whenever the schema refuses them, it
// leaves them to the schema (so the refusal and its reason stay the schema's).
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { plainInputs, plainShown, plainVerdict } from "./plain.ts";
import { inputsBySchema, shownBySchema, verdictBySchema } from "./schemas.ts";
import { recordedDetails } from "./timeline.ts";
import { recordBundledRun } from "./backtest.test-kit.ts";
import type { BundledRun } from "./backtest.test-kit.ts";

let run: BundledRun;
beforeAll(async () => {
  run = await recordBundledRun();
}, 60_000);

type Kind = "PROPOSAL_SUBMITTED" | "CLAIM_TRIAGED";
const KINDS: Kind[] = ["PROPOSAL_SUBMITTED", "CLAIM_TRIAGED"];
const wrapperOf = (kind: Kind) => (kind === "PROPOSAL_SUBMITTED" ? "kernel_inputs" : "triage_inputs");
const recordedInputs = (kind: Kind) =>
  run.events.filter((e) => e.event_type === kind).map((e) => e.details[wrapperOf(kind)] as object);

/** Text a field may hold: plain, padded, empty, long, with a control character, a line separator, an emoji, a lone surrogate. */
const text = fc.oneof(
  fc.constantFrom(
    "ord_001",
    "DAMAGED",
    "EUR",
    "cus_7",
    "",
    " ord_001",
    "ord_001 ",
    "a\u0000b",
    "x\u2028y",
    "é",
    "😀",
    "\uD800",
    "x".repeat(129),
    "EURO",
  ),
  fc.string({ maxLength: 6 }),
);
const value = fc.oneof(
  text,
  fc.constantFrom(0, -0, 12.5, 12.345, 1e-7, 1_000_001, -40, Number.NaN, Number.POSITIVE_INFINITY, 80),
  fc.double(),
  fc.constantFrom(null, undefined, true, [], {}, "2026-05-20", "2026-02-30", "2026-05-20T10:00:00Z", "not a date"),
);
const FIELDS = {
  top: [
    "proposal",
    "claim",
    "order",
    "receivedAt",
    "decidedAt",
    "claimId",
    "dfid",
    "parentClaimId",
    "responsibility",
    "extra",
  ],
  claim: ["order_id", "amount_eur", "category", "reason", "purchase_date", "currency", "customer_id", "extra"],
  order: ["order_id", "purchase_date", "category", "amount", "currency", "customer_id", "payment_ref", "extra"],
} as const;
/** A change to a recorded input: a field set to a value or removed, at the top, in the claim or in the order. */
type Change = { where: keyof typeof FIELDS; index: number; remove: boolean; value: unknown };
const change: fc.Arbitrary<Change> = fc.record({
  where: fc.constantFrom("top", "claim", "order") as fc.Arbitrary<keyof typeof FIELDS>,
  index: fc.nat(9),
  remove: fc.boolean(),
  value,
});

function changed(base: object, changes: Change[]): Record<string, unknown> {
  const v = structuredClone(base) as Record<string, unknown>;
  for (const c of changes) {
    const key = FIELDS[c.where][c.index];
    if (key === undefined) continue;
    const target = c.where === "top" ? v : (v[c.where] as Record<string, unknown> | null);
    if (target === null || typeof target !== "object") continue;
    if (c.remove) delete target[key];
    else target[key] = c.value;
  }
  return v;
}

describe.each(KINDS)("reading a recorded %s without the schema", (kind) => {
  it("reads every recorded decision of the bundled run itself, to what the schema reads", () => {
    const inputs = recordedInputs(kind);
    expect(inputs.length).toBeGreaterThan(kind === "CLAIM_TRIAGED" ? 5 : 20);
    let lined = 0;
    for (const k of inputs) {
      const bySchema = inputsBySchema(kind, k);
      expect(bySchema.ok).toBe(true);
      const fast = plainInputs(kind, k);
      // Claims and orders with lines or in another currency than EUR are left to the schema (plain.ts reads today's form).
      if (withLinesOrCurrency(k)) {
        lined++;
        if (fast !== undefined) expect(fast).toStrictEqual(bySchema.ok ? bySchema.inputs : undefined);
      } else expect(fast).toStrictEqual(bySchema.ok ? bySchema.inputs : undefined);
    }
    // Most decisions still take the fast path (11 of 44 with lines or another currency since LT1 and LT2).
    expect(lined).toBeLessThan(inputs.length / 3);
  });

  it("over changed inputs: reads them as the schema does, and leaves every input the schema refuses to the schema", () => {
    const inputs = recordedInputs(kind);
    let plain = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.nat(inputs.length - 1), fc.array(change, { minLength: 1, maxLength: 3 }), (i, changes) => {
        const v = changed(inputs[i]!, changes);
        const bySchema = inputsBySchema(kind, v);
        const fast = plainInputs(kind, v);
        if (!bySchema.ok) {
          refused++;
          expect(fast).toBeUndefined();
        } else if (fast !== undefined) {
          plain++;
          expect(fast).toStrictEqual(bySchema.inputs);
        }
      }),
      { numRuns: 3000 },
    );
    // Both sides were exercised: inputs read without the schema, and inputs the schema refused.
    expect(plain).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });
});

describe("reading a recorded verdict's reason, layer and checks (a flip shows them) without the schema", () => {
  const recorded = () =>
    run.events.filter((e) => e.event_type === "KERNEL_VERDICT").map((e) => e.details as Record<string, unknown>);
  const shownValue = fc.oneof(
    value,
    fc.constantFrom(1, 12, 12.5, 13, 0.5, "", "layer", { layer: 1, name: "x", passed: true }, [{}]),
  );
  /** A change: the reason, layer or checks set or removed, or one field of one check set or removed. */
  const shownChange = fc.record({
    check: fc.option(fc.nat(30), { nil: undefined }),
    key: fc.constantFrom("reason", "layer", "checks", "name", "passed", "reason_code", "extra"),
    remove: fc.boolean(),
    value: shownValue,
  });

  it("reads every recorded verdict of the bundled run itself, to what the schema reads", () => {
    for (const d of recorded()) {
      const bySchema = shownBySchema(d);
      expect(bySchema.ok).toBe(true);
      expect(plainShown(d)).toStrictEqual(bySchema.ok ? bySchema.shown : undefined);
    }
  });

  it("over changed verdicts: reads them as the schema does, and leaves every verdict the schema refuses to the schema", () => {
    const verdicts = recorded();
    let plain = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.nat(verdicts.length - 1), fc.array(shownChange, { minLength: 1, maxLength: 3 }), (i, changes) => {
        const v = structuredClone(verdicts[i]!);
        for (const c of changes) {
          const checks = v.checks as Record<string, unknown>[];
          const target =
            c.check === undefined ? v : Array.isArray(checks) ? checks[c.check % (checks.length || 1)] : undefined;
          if (target === null || typeof target !== "object") continue;
          if (c.remove) delete (target as Record<string, unknown>)[c.key];
          else (target as Record<string, unknown>)[c.key] = c.value;
        }
        const bySchema = shownBySchema(v);
        const fast = plainShown(v);
        if (!bySchema.ok) {
          refused++;
          expect(fast).toBeUndefined();
        } else if (fast !== undefined) {
          plain++;
          expect(fast).toStrictEqual(bySchema.shown);
        }
      }),
      { numRuns: 3000 },
    );
    expect(plain).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });
});

describe("reading a recorded verdict (what deciding again and counting need) without the schema", () => {
  const recorded = () =>
    run.events.filter((e) => e.event_type === "KERNEL_VERDICT").map((e) => e.details as Record<string, unknown>);
  const verdictChange = fc.record({
    key: fc.constantFrom("claim_id", "verdict", "reason_code", "order_id", "amount_eur", "decided_at", "extra"),
    remove: fc.boolean(),
    value: fc.oneof(
      value,
      fc.constantFrom("ACCEPT", "REJECT", "accept", "VALIDATION_PASSED", "NOT_A_CODE", "2026-05-20T10:00:00+02:00"),
      fc.constantFrom("", "2026-05-20T10:00:00.123Z", "2026-05-20 10:00:00Z", "2026-13-01T00:00:00Z"),
    ),
  });

  it("reads every recorded verdict of the bundled run itself, to what the schema reads", () => {
    for (const d of recorded()) {
      const bySchema = verdictBySchema(d);
      expect(bySchema.ok).toBe(true);
      expect(plainVerdict(d)).toStrictEqual(bySchema.ok ? bySchema.verdict : undefined);
    }
  });

  it("over changed verdicts: reads them as the schema does, and leaves every verdict the schema refuses to the schema", () => {
    const verdicts = recorded();
    let plain = 0;
    let refused = 0;
    fc.assert(
      fc.property(
        fc.nat(verdicts.length - 1),
        fc.array(verdictChange, { minLength: 1, maxLength: 2 }),
        (i, changes) => {
          const v = structuredClone(verdicts[i]!);
          for (const c of changes) {
            if (c.remove) delete v[c.key];
            else v[c.key] = c.value;
          }
          const bySchema = verdictBySchema(v);
          const fast = plainVerdict(v);
          if (!bySchema.ok) {
            refused++;
            expect(fast).toBeUndefined();
          } else if (fast !== undefined) {
            plain++;
            expect(fast).toStrictEqual(bySchema.verdict);
          }
        },
      ),
      { numRuns: 3000 },
    );
    expect(plain).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });
});

describe("a recorded decision whose inputs do not parse", () => {
  it("gives the schema's refusal for recorded inputs that do not parse", () => {
    const event = run.events.find((e) => e.event_type === "PROPOSAL_SUBMITTED")!;
    const k = event.details.kernel_inputs as Record<string, unknown>;
    const bad = {
      ...event,
      details: { ...event.details, kernel_inputs: { ...k, claim: { ...(k.claim as object), category: " " } } },
    };
    const read = recordedDetails("PROPOSAL_SUBMITTED", bad);
    expect(read).toEqual({ ok: false, error: expect.stringMatching(/^claim\.category: /) });
  });
});

/** Whether recorded inputs hold a claim or an order with lines, or an order in another currency than EUR. */
function withLinesOrCurrency(inputs: unknown): boolean {
  const { claim, order } = inputs as {
    claim?: { lines?: unknown; items?: unknown };
    order?: { lines?: unknown; currency?: unknown };
  };
  // Items a free text names (matched to lines by the kernel) are left to the schema as lines are.
  return (
    claim?.lines !== undefined ||
    claim?.items !== undefined ||
    order?.lines !== undefined ||
    (order?.currency ?? "EUR") !== "EUR"
  );
}
