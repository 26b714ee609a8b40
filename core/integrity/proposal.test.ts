import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ProposalOutput } from "./proposal.ts";
import { ProposalInputError } from "./errors.ts";
import { canonicalize } from "../crew/canonical.ts";
import {
  buildProposal,
  canonicalHashable,
  computeIdempotencyKey,
  hashable,
  idempotencyKeyOf,
  PolicyProposalSchema,
  ProposalEnvelopeSchema,
  proposalIdFor,
} from "./proposal.ts";

const output: ProposalOutput = {
  action: "REFUND",
  order_id: "ord_001",
  amount_eur: 299.99,
  category: "electronics",
  reason: "screen dead",
  confidence: 0.9,
};
const base = {
  dfid: "dfid_1",
  agentId: "claims_agent_v1",
  output,
  createdAt: "2026-03-16T10:00:00.000Z",
  validForMs: 600_000,
};

describe("buildProposal", () => {
  it("builds a proposal that parses, with the id derived from the key", () => {
    const p = buildProposal(base);
    expect(PolicyProposalSchema.parse(p)).toEqual(p);
    expect(p).toMatchObject({
      dfid: "dfid_1",
      agent_id: "claims_agent_v1",
      policy_kind: "REFUND",
      params: { order_id: "ord_001", amount_eur: 299.99 },
      confidence: 0.9,
      valid_for_ms: 600_000,
    });
    expect(p.idempotency_key).toMatch(/^[0-9a-f]{64}$/);
    expect(p.proposal_id).toBe(proposalIdFor(p.idempotency_key));
    expect(computeIdempotencyKey(p)).toBe(p.idempotency_key);
  });

  it("gives the same key whenever it is rebuilt, and a different key for any other content or flow", () => {
    const a = buildProposal(base);
    expect(buildProposal({ ...base, createdAt: "2026-03-17T00:00:00Z" }).idempotency_key).toBe(a.idempotency_key);
    const others = [
      buildProposal({ ...base, dfid: "dfid_2" }),
      buildProposal({ ...base, agentId: "other" }),
      buildProposal({ ...base, validForMs: 1 }),
      buildProposal({ ...base, output: { ...output, amount_eur: 299.98 } }),
      buildProposal({ ...base, output: { ...output, action: "ESCALATE" } }),
      buildProposal({ ...base, output: { ...output, confidence: 0.91 } }),
      buildProposal({ ...base, output: { ...output, reason: "other" } }),
    ];
    expect(new Set([a, ...others].map((p) => p.idempotency_key)).size).toBe(others.length + 1);
  });

  it("the key does not depend on key order, and survives JSON", () => {
    fc.assert(
      fc.property(fc.double({ min: 0.01, max: 10_000, noNaN: true }), fc.string(), (amount, reason) => {
        const p = buildProposal({ ...base, output: { ...output, amount_eur: amount, reason } });
        const reordered = Object.fromEntries(Object.entries(JSON.parse(JSON.stringify(p))).reverse());
        expect(computeIdempotencyKey(reordered as never)).toBe(p.idempotency_key);
      }),
    );
  });

  it.each([
    ["createdAt is not a timestamp", { createdAt: "now" }],
    ["validForMs is zero", { validForMs: 0 }],
    ["dfid is empty", { dfid: "" }],
    ["the amount is NaN", { output: { ...output, amount_eur: Number.NaN } }],
  ])("throws ProposalInputError when %s", (_name, over) => {
    expect(() => buildProposal({ ...base, ...over })).toThrow(ProposalInputError);
  });
});

describe("idempotencyKeyOf", () => {
  it("is the content key of a parsed proposal, ignoring the key it claims", () => {
    const p = buildProposal(base);
    expect(idempotencyKeyOf(p, "x")).toBe(p.idempotency_key);
    expect(idempotencyKeyOf({ ...p, idempotency_key: "0".repeat(64) }, "x")).toBe(p.idempotency_key);
  });
  it("hashes anything else under the fallback flow, deterministically, even with NaN", () => {
    expect(idempotencyKeyOf("junk", "dfid_1")).toBe(idempotencyKeyOf("junk", "dfid_1"));
    expect(idempotencyKeyOf("junk", "dfid_1")).not.toBe(idempotencyKeyOf("junk", "dfid_2"));
    expect(idempotencyKeyOf({ a: Number.NaN }, "d")).not.toBe(idempotencyKeyOf({ a: null }, "d"));
    expect(idempotencyKeyOf(undefined, "d")).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("ProposalEnvelopeSchema", () => {
  it("leaves the kind and params values to the kernel layers", () => {
    const p = buildProposal(base);
    expect(ProposalEnvelopeSchema.safeParse({ ...p, policy_kind: 7, params: { amount_eur: "299.99" } }).success).toBe(
      true,
    );
    expect(ProposalEnvelopeSchema.safeParse({ ...p, params: { amount_eur: 1, iban: "x" } }).success).toBe(false);
  });
});

describe("canonicalHashable", () => {
  it("writes what canonicalize(hashable(value)) writes, for any value", () => {
    const anything = fc.anything({
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withSparseArray: true,
      withTypedArray: true,
      withUnicodeString: true,
      maxDepth: 6,
    });
    const outcome = (f: () => string) => {
      try {
        return f();
      } catch (error) {
        return `threw ${(error as Error).name}: ${(error as Error).message}`;
      }
    };
    fc.assert(
      fc.property(anything, (v) => {
        expect(outcome(() => canonicalHashable(v))).toBe(outcome(() => canonicalize(hashable(v))));
      }),
      { numRuns: 1000 },
    );
    expect(outcome(() => canonicalHashable(undefined))).toMatch(/^threw CanonicalJsonError/);
  });

  it("tags what JSON cannot carry and what is nested too deep, as hashable does", () => {
    let deep: unknown = "x";
    for (let i = 0; i < 40; i++) deep = { d: deep, u: undefined };
    const sparse = [1, undefined, 2, 3];
    delete sparse[2];
    for (const v of [
      NaN,
      -Infinity,
      10n,
      () => 1,
      Symbol("s"),
      sparse,
      { a: undefined, b: -0, __proto__: null },
      deep,
    ]) {
      expect(canonicalHashable(v)).toBe(canonicalize(hashable(v)));
    }
  });
});
