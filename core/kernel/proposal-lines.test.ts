// The crew proposes per line (docs/kernel.md#orders-with-lines): a proposal's `lines` are aligned with the claim's
// lines (PROPOSAL_MISMATCH otherwise), then judged against the order exactly as claim lines — never above what a
// line's units cost, nor its balance — and the verdict lists and the ledger reserves exactly the proposed lines.
import { describe, expect, it } from "vitest";
import type { Claim } from "../claim/claim.ts";
import type { ClaimsContract, Order } from "../integrity/contracts.ts";
import type { ProposalOutput } from "../integrity/proposal.ts";
import { DAY_MS } from "../integrity/time.ts";
import { claimAsProposed, lineReserveOf } from "./claim-lines.ts";
import { decideOnLines, isoAt, LINES_RECEIVED_MS, lineResponsibility } from "./order-lines.test-kit.ts";
import { verdictLines } from "./verdict-lines.ts";

const RECEIVED_MS = LINES_RECEIVED_MS;
const iso = isoAt;
const responsibility = lineResponsibility;
const POLICY: ClaimsContract = {
  allowed_refund_categories: ["electronics", "clothing"],
  max_refund_without_escalation: 500,
  return_window_days: 30,
  currencies: { USD: { max_refund_without_escalation: 600 } },
};
const ORDER: Order = {
  order_id: "ord_100",
  purchase_date: iso(RECEIVED_MS - 5 * DAY_MS),
  currency: "USD",
  lines: [
    { line_id: "l1", sku: "TV-55", category: "electronics", quantity: 1, amount: "499.00" },
    { line_id: "l2", sku: "TEE-M", category: "clothing", quantity: 2, amount: "40.00" },
  ],
};
/** A claim on both lines, as intake completes it: the TV's 499.00 and one shirt's 20.00. */
const CLAIM: Claim = {
  order_id: "ord_100",
  amount_eur: 519,
  category: "electronics",
  reason: "broken",
  currency: "USD",
  lines: [
    { line_id: "l1", amount: "499.00" },
    { line_id: "l2", quantity: 1, amount: "20.00" },
  ],
};

function decide(output: Partial<ProposalOutput>, claim: Claim = CLAIM) {
  const { proposal, verdict } = decideOnLines({ order: ORDER, claim, policy: POLICY, output });
  const asked = claimAsProposed(claim, proposal);
  const amountEur = output.amount_eur ?? claim.amount_eur;
  const lines = verdictLines({
    verdict,
    amountEur,
    order: ORDER,
    claim: asked,
    contract: POLICY,
    responsibility,
    receivedAt: iso(RECEIVED_MS),
  });
  const reserve = lineReserveOf(ORDER, asked, Math.round(amountEur * 100), POLICY);
  return { proposal, verdict, lines, reserve };
}

describe("a proposal that names lines", () => {
  it("without lines, the proposal is exactly what it was before proposals had lines", () => {
    const { proposal, verdict } = decide({ lines: null });
    expect(proposal.params).not.toHaveProperty("lines");
    expect(verdict).toMatchObject({ verdict: "ACCEPT" });
    expect(verdict.checks.map((c) => c.name)).not.toContain("lines_alignment");
  });

  it("refunding one of the claim's lines is decided, listed and reserved on that line alone", () => {
    const { verdict, lines, reserve } = decide({ amount_eur: 20, lines: [{ line_id: "l2", quantity: 1, amount: 20 }] });
    expect(verdict).toMatchObject({ verdict: "ACCEPT" });
    expect(verdict.checks.map((c) => c.name)).toContain("lines_alignment");
    expect(lines).toEqual([
      {
        line_id: "l2",
        verdict: "ACCEPT",
        reason_code: "VALIDATION_PASSED",
        amount: { value: "20.00", currency: "USD" },
      },
    ]);
    expect(reserve?.claimed).toEqual({ l2: 2000 });
  });

  it("a line above what its units cost is rejected on that line: the kernel's per-line reason", () => {
    const { verdict, lines } = decide({
      amount_eur: 519,
      lines: [
        { line_id: "l1", quantity: null, amount: 479 },
        { line_id: "l2", quantity: 1, amount: 40 },
      ],
    });
    expect(verdict).toMatchObject({ verdict: "REJECT", reason_code: "EXCEEDS_REFUNDABLE_BALANCE" });
    expect(verdict.reason).toMatch(/40\.0 USD asked of line l2 of order ord_100 exceeds what its 1 claimed units cost/);
    expect(lines?.map((l) => [l.line_id, l.reason_code])).toEqual([
      ["l1", "OTHER_LINE_FAILED"],
      ["l2", "EXCEEDS_REFUNDABLE_BALANCE"],
    ]);
  });

  it("a line amount not exact in the order's currency is not a line of the order", () => {
    const { verdict } = decide({ amount_eur: 19.995, lines: [{ line_id: "l2", quantity: 1, amount: 19.995 }] });
    expect(verdict).toMatchObject({ verdict: "REJECT", reason_code: "LINE_NOT_IN_ORDER" });
    expect(verdict.reason).toMatch(/"19\.995" of line l2 that is not a positive amount of order ord_100's USD/);
  });

  it.each([
    [
      "a line the claim does not name",
      { amount_eur: 20, lines: [{ line_id: "l9", quantity: null, amount: 20 }] },
      /line 'l9', which the claim does not/,
    ],
    [
      "a line named twice",
      {
        amount_eur: 20,
        lines: [
          { line_id: "l2", quantity: null, amount: 10 },
          { line_id: "l2", quantity: null, amount: 10 },
        ],
      },
      /line 'l2' twice/,
    ],
    [
      "more units than the claim claims",
      { amount_eur: 20, lines: [{ line_id: "l2", quantity: 2, amount: 20 }] },
      /2 units; the claim claims 1/,
    ],
    [
      "lines that do not add up to the amount",
      { amount_eur: 519, lines: [{ line_id: "l2", quantity: 1, amount: 20 }] },
      /add up to 20\.0, not the proposal's amount 519\.0$/,
    ],
  ] as const)("%s is a proposal that does not answer its claim: PROPOSAL_MISMATCH", (_name, output, reason) => {
    const { verdict } = decide(output as Partial<ProposalOutput>);
    expect(verdict).toMatchObject({ verdict: "ESCALATE", reason_code: "PROPOSAL_MISMATCH" });
    expect(verdict.reason).toMatch(reason);
  });

  it("on a claim that names no lines, a model (which never sees the order) cannot choose one", () => {
    const claim: Claim = { order_id: "ord_100", amount_eur: 40, category: "clothing", reason: "torn", currency: "USD" };
    const { verdict } = decide({ lines: [{ line_id: "l2", quantity: null, amount: 40 }] }, claim);
    expect(verdict).toMatchObject({ verdict: "ESCALATE", reason_code: "PROPOSAL_MISMATCH" });
    expect(verdict.reason).toMatch(/the claim names no lines/);
  });
});
