// The order of issue 32's example, shared by the tests of orders with lines: a TV (499.00) and two shirts (40.00 for
// both), 9.99 shipping, in USD; its lines alone for tests that need them in another currency or order; and the kernel
// deciding a claim on such an order as the line tests do.
import type { Claim } from "../claim/claim.ts";
import type { ClaimsContract, Order } from "../integrity/contracts.ts";
import { buildProposal, type ProposalOutput } from "../integrity/proposal.ts";
import { createAgentRegistry } from "../integrity/registry.ts";
import { testResponsibility } from "./contract.test-kit.ts";
import { decideClaim, type DecideClaimInput } from "./kernel.ts";

/** The example's two lines. */
export const TV_AND_SHIRTS = [
  { line_id: "l1", sku: "TV-55", category: "electronics", quantity: 1, amount: "499.00" },
  { line_id: "l2", sku: "TEE-M", category: "clothing", quantity: 2, amount: "40.00" },
] as const;

/** The issue's example order, as the order API would send it. */
export const ISSUE_EXAMPLE_ORDER = {
  order_id: "ord_1",
  purchase_date: "2026-11-24T09:30:00Z",
  currency: "USD",
  customer_id: "cus_1",
  payment_ref: "pi_1",
  shipping: "9.99",
  lines: TV_AND_SHIRTS.map((line) => ({ ...line })),
} satisfies Order;

/** The instant the line tests' claims were received: 2026-11-30 10:00 UTC. */
export const LINES_RECEIVED_MS = Date.parse("2026-11-30T10:00:00.000Z");
/** `ms` as an ISO timestamp. */
export const isoAt = (ms: number) => new Date(ms).toISOString();
/** The test agent's responsibility, allowed to REFUND and ESCALATE. */
export const lineResponsibility = {
  ...testResponsibility,
  allowed_policy_types: ["REFUND" as const, "ESCALATE" as const],
};
/** A registry where that agent has shaken hands at version 1.0.0. */
export const lineRegistry = (() => {
  const r = createAgentRegistry({ acceptedMajor: 1 });
  const h = r.handshake({ agent_id: lineResponsibility.agent_id, version: "1.0.0", contract: lineResponsibility });
  if (!h.ok) throw new Error(h.message);
  return r.snapshot();
})();

/**
 * The kernel's verdict on a REFUND proposal that asks what `claim` asks (`output` over it), made a second after the
 * claim was received and decided a second later, on `order` under `policy` with an empty ledger (`over` over that).
 */
export function decideOnLines(args: {
  order: Order;
  claim: Claim;
  policy: ClaimsContract;
  output?: Partial<ProposalOutput>;
  over?: Partial<DecideClaimInput>;
}) {
  const { order, claim, policy } = args;
  const proposal = buildProposal({
    dfid: "dfid_1",
    agentId: lineResponsibility.agent_id,
    output: {
      action: "REFUND",
      order_id: claim.order_id,
      amount_eur: claim.amount_eur,
      category: claim.category,
      reason: "ok",
      confidence: 0.9,
      ...args.output,
    },
    createdAt: isoAt(LINES_RECEIVED_MS + 1000),
    validForMs: 600_000,
  });
  const verdict = decideClaim({
    proposal,
    claim,
    contract: policy,
    responsibility: lineResponsibility,
    registry: lineRegistry,
    order,
    ledgerEntry: undefined,
    receivedAt: isoAt(LINES_RECEIVED_MS),
    decidedAt: isoAt(LINES_RECEIVED_MS + 2000),
    ...args.over,
  });
  return { proposal, verdict };
}
