import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ResponsibilityContractSchema,
  type ClaimsContract,
  type PolicyKind,
  type Order,
  type ResponsibilityContract,
} from "../integrity/contracts.ts";
import { KernelInputError } from "../integrity/errors.ts";
import { emptyLedgerEntry, type LedgerEntry } from "./ledger.ts";
import { hashHex } from "../crew/hash.ts";
import { buildProposal, computeIdempotencyKey, proposalIdFor, type PolicyProposal } from "../integrity/proposal.ts";
import { createAgentRegistry, type RegistryView } from "../integrity/registry.ts";
import { DAY_MS } from "../integrity/time.ts";
import { PASS_LAYER } from "../integrity/verdict.ts";
import type { Claim } from "../claim/claim.ts";
import {
  decideClaim,
  EVALUATION_ORDER,
  KERNEL_TABLE,
  TRIAGE_TABLE,
  triageClaim,
  type DecideClaimInput,
} from "./kernel.ts";
import { KERNEL_LAYERS, REASON_CODES, type ClaimReasonCode } from "./reason-codes.ts";

// ---- fixtures: a frozen clock, the seed's contracts and orders --------------------------------------------

const RECEIVED_MS = Date.parse("2026-03-16T10:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();
const RECEIVED_AT = iso(RECEIVED_MS);
const CREATED_AT = iso(RECEIVED_MS + 60_000);
const DECIDED_AT = iso(RECEIVED_MS + 120_000);
const VALID_FOR_MS = 600_000;
const DFID = "dfid_claim_1";
const AGENT = "claims_agent_v1";

const contract: ClaimsContract = {
  allowed_refund_categories: ["electronics", "clothing", "home"],
  max_refund_without_escalation: 500,
  return_window_days: 14,
};
const responsibilityOf = (over: Partial<ResponsibilityContract> = {}): ResponsibilityContract =>
  ResponsibilityContractSchema.parse({
    agent_id: AGENT,
    role: "EXECUTOR",
    allowed_policy_types: ["REFUND", "REPLACE", "ESCALATE"],
    escalate_on_uncertainty: 0.7,
    ...over,
  });
const responsibility = responsibilityOf();

function registryWith(...contracts: ResponsibilityContract[]): RegistryView {
  const registry = createAgentRegistry({ acceptedMajor: 1 });
  for (const c of contracts) {
    const r = registry.handshake({ agent_id: c.agent_id, version: "1.0.0", contract: c });
    if (!r.ok) throw new Error(r.message);
  }
  return registry.snapshot();
}
const registry = registryWith(responsibility);

const daysBefore = (days: number) => iso(RECEIVED_MS - days * DAY_MS);
const order = (order_id: string, amount: number, over: Partial<Order> = {}): Order => ({
  order_id,
  purchase_date: daysBefore(3),
  category: "electronics",
  amount,
  currency: "EUR",
  ...over,
});
const ORDERS = {
  ord_001: order("ord_001", 299.99),
  ord_002: order("ord_002", 1200),
  ord_004: order("ord_004", 50, { category: "prohibited_category" }),
  ord_005: order("ord_005", 500, { purchase_date: "2026-01-01" }),
  ord_600: order("ord_600", 600),
};

const claimFor = (order_id: string, amount_eur: number, category = "electronics"): Claim => ({
  order_id,
  amount_eur,
  category,
  reason: "screen is dead",
});

type ProposalSpec = {
  order_id?: string;
  amount_eur?: number;
  action?: PolicyKind;
  confidence?: number;
  agentId?: string;
  dfid?: string;
  createdAt?: string;
};
function proposal(spec: ProposalSpec = {}): PolicyProposal {
  return buildProposal({
    dfid: spec.dfid ?? DFID,
    agentId: spec.agentId ?? AGENT,
    output: {
      action: spec.action ?? "REFUND",
      order_id: spec.order_id ?? "ord_001",
      amount_eur: spec.amount_eur ?? 299.99,
      category: "electronics",
      reason: "defective",
      confidence: spec.confidence ?? 0.9,
    },
    createdAt: spec.createdAt ?? CREATED_AT,
    validForMs: VALID_FOR_MS,
  });
}

/** A proposal changed after building, with key and id re-derived so it stays intact (as a bad producer would send it). */
function rekeyed(
  base: PolicyProposal,
  change: (p: Record<string, unknown> & { params: Record<string, unknown> }) => void,
): Record<string, unknown> {
  const p = structuredClone(base) as unknown as Record<string, unknown> & { params: Record<string, unknown> };
  change(p);
  const key = computeIdempotencyKey(p as unknown as Parameters<typeof computeIdempotencyKey>[0]);
  return { ...p, idempotency_key: key, proposal_id: proposalIdFor(key) };
}
const withAmount = (amount: unknown) =>
  rekeyed(proposal(), (p) => {
    if (amount === "<missing>") delete p.params.amount_eur;
    else p.params.amount_eur = amount;
  });

/** The seed's scenario A as the base: every other row changes what it needs. */
function input(over: Partial<DecideClaimInput> = {}): DecideClaimInput {
  return {
    proposal: proposal(),
    claim: claimFor("ord_001", 299.99),
    contract,
    responsibility,
    registry,
    order: ORDERS.ord_001,
    ledgerEntry: undefined,
    receivedAt: RECEIVED_AT,
    decidedAt: DECIDED_AT,
    ...over,
  };
}

/** Proposal, claim and order for one order and one amount. */
const scenario = (o: Order, amount: number, spec: ProposalSpec = {}): Partial<DecideClaimInput> => ({
  proposal: proposal({ order_id: o.order_id, amount_eur: amount, ...spec }),
  claim: claimFor(o.order_id, amount),
  order: o,
});

// ---- layer 11b fixtures: the customer cus_1's window of automatic refunds on other orders

const DECIDED_MS = Date.parse(DECIDED_AT);
const LIMITED: ClaimsContract = {
  ...contract,
  customer_limits: { window_days: 30, max_automatic_refunds: 3, max_automatic_eur: 500 },
};
const CUSTOMER_ORDER = order("ord_c1", 299.99, { customer_id: "cus_1" });
const CUSTOMER_ORDER_BIG = order("ord_c2", 900, { customer_id: "cus_1" });
const scenarioOf = (o: Order, amount: number): Partial<DecideClaimInput> => ({
  proposal: proposal({ order_id: o.order_id, amount_eur: amount }),
  claim: { ...claimFor(o.order_id, amount), customer_id: "cus_1" },
  order: o,
});
/** A claim of `amount` EUR by cus_1 after `count` automatic refunds of `cents` in total on other orders (at `atMs`). */
function customerCase(
  count: number,
  cents: number,
  amount: number,
  opts: { atMs?: number; ownClaim?: boolean } = {},
): Partial<DecideClaimInput> {
  const per = Math.floor(cents / Math.max(count, 1));
  const reservations = Array.from({ length: count }, (_, i) => ({
    claim_id: opts.ownClaim && i === 0 ? "claim_A" : `claim_${i + 1}`,
    order_id: `ord_x${i}`,
    cents: i === count - 1 ? cents - per * (count - 1) : per,
    at: iso(opts.atMs ?? DECIDED_MS - DAY_MS),
  }));
  return {
    ...scenarioOf(CUSTOMER_ORDER, amount),
    contract: LIMITED,
    customerWindow: { customer_id: "cus_1", reservations, version: count },
    claimId: "claim_A",
  };
}

// ---- orders with lines and other currencies (docs/kernel.md "Orders with lines")

/** Two lines of one category and one of another, in EUR: a claim naming "clothing" cannot tell its line. */
const TWO_SHIRTS: Order = {
  order_id: "ord_l1",
  purchase_date: daysBefore(3),
  currency: "EUR",
  lines: [
    { line_id: "l1", category: "electronics", quantity: 1, amount: "200.00" },
    { line_id: "l2", category: "clothing", quantity: 1, amount: "20.00" },
    { line_id: "l3", category: "clothing", quantity: 1, amount: "25.00" },
  ],
};
const USD_ORDER = order("ord_u1", 120, { currency: "USD" });

type Row = [name: string, over: () => Partial<DecideClaimInput>, code: ClaimReasonCode];

// ---- the kernel table (docs/kernel.md), row by row, with its boundaries ------------------------------------------------------

const rows: Row[] = [
  ["seed A: within window and limit", () => ({}), "VALIDATION_PASSED"],
  ["seed B: 1200 EUR above the 500 EUR limit", () => scenario(ORDERS.ord_002, 1200), "AMOUNT_ABOVE_LIMIT"],
  ["seed C: purchased 2026-01-01, outside the window", () => scenario(ORDERS.ord_005, 500), "OUTSIDE_RETURN_WINDOW"],
  ["seed D: prohibited category", () => scenario(ORDERS.ord_004, 50), "CATEGORY_NOT_ALLOWED"],

  // layer 1 — schema
  ["L1 proposal is null", () => ({ proposal: null }), "SCHEMA_INVALID"],
  ["L1 proposal is a string", () => ({ proposal: "REFUND ord_001 299.99" }), "SCHEMA_INVALID"],
  [
    "L1 proposal lacks confidence",
    () => ({
      proposal: rekeyed(proposal(), (p) => {
        delete p.confidence;
      }),
    }),
    "SCHEMA_INVALID",
  ],
  [
    "L1 confidence above 1",
    () => ({
      proposal: rekeyed(proposal(), (p) => {
        p.confidence = 1.5;
      }),
    }),
    "SCHEMA_INVALID",
  ],
  ["L1 unknown top-level field", () => ({ proposal: { ...proposal(), execute_now: true } }), "SCHEMA_INVALID"],
  [
    "L1 unknown params field",
    () => ({
      proposal: rekeyed(proposal(), (p) => {
        p.params.bank_account = "DE00";
      }),
    }),
    "SCHEMA_INVALID",
  ],
  [
    "L1 created_at without offset",
    () => ({ proposal: { ...proposal(), created_at: "2026-03-16T10:01:00" } }),
    "SCHEMA_INVALID",
  ],
  [
    "L1 created_at is not a real date",
    () => ({ proposal: { ...proposal(), created_at: "2026-02-30T10:01:00Z" } }),
    "SCHEMA_INVALID",
  ],
  [
    "L1 amount changed after the key was computed",
    () => ({ proposal: { ...proposal(), params: { ...proposal().params, amount_eur: 29.99 } } }),
    "IDEMPOTENCY_KEY_MISMATCH",
  ],
  [
    "L1 proposal_id not derived from the key",
    () => ({ proposal: { ...proposal(), proposal_id: "prop_mine" } }),
    "PROPOSAL_ID_MISMATCH",
  ],
  [
    "L1 policy kind missing",
    () => ({
      proposal: rekeyed(proposal(), (p) => {
        delete p.policy_kind;
      }),
    }),
    "POLICY_KIND_MISSING",
  ],
  [
    "L1 policy kind unknown",
    () => ({
      proposal: rekeyed(proposal(), (p) => {
        p.policy_kind = "REFUND_ALL";
      }),
    }),
    "POLICY_KIND_UNKNOWN",
  ],
  [
    "L1 policy kind lowercase",
    () => ({
      proposal: rekeyed(proposal(), (p) => {
        p.policy_kind = "refund";
      }),
    }),
    "POLICY_KIND_UNKNOWN",
  ],
  [
    "L1 REPLACE not in allowed_policy_types",
    () => {
      const refundOnly = responsibilityOf({ allowed_policy_types: ["REFUND", "ESCALATE"] });
      return {
        proposal: proposal({ action: "REPLACE" }),
        responsibility: refundOnly,
        registry: registryWith(refundOnly),
      };
    },
    "POLICY_KIND_NOT_ALLOWED",
  ],
  ["L1 unregistered agent", () => ({ proposal: proposal({ agentId: "rogue_agent" }) }), "AGENT_NOT_REGISTERED"],
  [
    "L1 agent id 'constructor' is not registered",
    () => ({ proposal: proposal({ agentId: "constructor" }) }),
    "AGENT_NOT_REGISTERED",
  ],
  [
    "L1 revoked agent",
    () => {
      const r = createAgentRegistry({ acceptedMajor: 1, snapshot: registry as never });
      r.revoke(AGENT);
      return { registry: r };
    },
    "AGENT_NOT_AUTHORISED",
  ],
  [
    "L1 registered agent judged under another agent's contract",
    () => {
      const other = responsibilityOf({ agent_id: "other_agent" });
      return { proposal: proposal({ agentId: "other_agent" }), registry: registryWith(responsibility, other) };
    },
    "AGENT_NOT_AUTHORISED",
  ],
  [
    "L1 kernel enforces a contract that differs from the registered one",
    () => ({ responsibility: responsibilityOf({ escalate_on_uncertainty: 0.1 }) }),
    "AGENT_NOT_AUTHORISED",
  ],

  // layer 2 — validity
  [
    "L2 seen exactly at the end of the validity window",
    () => ({ decidedAt: iso(Date.parse(CREATED_AT) + VALID_FOR_MS) }),
    "VALIDATION_PASSED",
  ],
  [
    "L2 seen 1 ms after the validity window",
    () => ({ decidedAt: iso(Date.parse(CREATED_AT) + VALID_FOR_MS + 1) }),
    "TTL_EXPIRED",
  ],

  // layer 3 — order
  // (intake never stores a claim without an order id; the kernel still refuses one handed to it directly)
  [
    "L3 order id missing",
    () => ({
      proposal: rekeyed(proposal(), (p) => {
        delete p.params.order_id;
      }),
      claim: { ...claimFor("ord_001", 299.99), order_id: undefined as never },
      order: undefined,
    }),
    "ORDER_ID_MISSING",
  ],
  [
    "L3 order id empty",
    () => ({
      proposal: rekeyed(proposal(), (p) => {
        p.params.order_id = " ";
      }),
      claim: claimFor(" ", 299.99),
      order: undefined,
    }),
    "ORDER_ID_MISSING",
  ],
  [
    "L3 order id not a string",
    () => ({
      proposal: rekeyed(proposal(), (p) => {
        p.params.order_id = 1;
      }),
      claim: { ...claimFor("ord_001", 299.99), order_id: 1 as never },
      order: undefined,
    }),
    "ORDER_ID_MISSING",
  ],
  [
    "L3 order unknown to the context store",
    () => ({ proposal: proposal({ order_id: "ord_999" }), claim: claimFor("ord_999", 299.99), order: undefined }),
    "ORDER_NOT_FOUND",
  ],

  // layer 4 — category (the order's, never the claim's)
  [
    "L4 claim says electronics but the order is prohibited_category",
    () => ({ ...scenario(ORDERS.ord_004, 50), claim: claimFor("ord_004", 50, "electronics") }),
    "CATEGORY_NOT_ALLOWED",
  ],
  [
    "L4 claim says prohibited_category but the order is electronics",
    () => ({ claim: claimFor("ord_001", 299.99, "prohibited_category") }),
    "VALIDATION_PASSED",
  ],
  [
    "L4 category allowed by the contract but not authorised for this agent",
    () => {
      const narrow = responsibilityOf({ authorized_categories: ["clothing"] });
      return { responsibility: narrow, registry: registryWith(narrow) };
    },
    "CATEGORY_NOT_AUTHORISED",
  ],

  // layer 5 — window
  [
    "L5 purchased exactly 14 × 24 h before receipt",
    () => ({ order: { ...ORDERS.ord_001, purchase_date: daysBefore(14) } }),
    "VALIDATION_PASSED",
  ],
  [
    "L5 purchased 14 × 24 h + 1 s before receipt",
    () => ({ order: { ...ORDERS.ord_001, purchase_date: iso(RECEIVED_MS - 14 * DAY_MS - 1000) } }),
    "OUTSIDE_RETURN_WINDOW",
  ],
  [
    "L5 the window counts from receipt, not from the (later) decision",
    () => ({
      order: { ...ORDERS.ord_001, purchase_date: daysBefore(14) },
      decidedAt: iso(Date.parse(CREATED_AT) + VALID_FOR_MS),
    }),
    "VALIDATION_PASSED",
  ],

  // layer 6 — amount (reached when the claim itself is not positive: a proposal that answers it goes on and is rejected, as in the seed)
  [
    "L6 amount 0 for a claim of 0",
    () => ({ proposal: withAmount(0), claim: claimFor("ord_001", 0) }),
    "INVALID_AMOUNT",
  ],
  [
    "L6 amount -0 for a claim of 0",
    () => ({ proposal: withAmount(-0), claim: claimFor("ord_001", 0) }),
    "INVALID_AMOUNT",
  ],
  [
    "L6 negative amount for the same negative claim",
    () => ({ proposal: withAmount(-10), claim: claimFor("ord_001", -10) }),
    "INVALID_AMOUNT",
  ],
  [
    "L6 NaN amount for a negative claim",
    () => ({ proposal: withAmount(Number.NaN), claim: claimFor("ord_001", -10) }),
    "INVALID_AMOUNT",
  ],
  [
    "L6 numeric string '299.99' for a claim of 0",
    () => ({ proposal: withAmount("299.99"), claim: claimFor("ord_001", 0) }),
    "INVALID_AMOUNT",
  ],
  [
    "L6 null amount for a claim of 0",
    () => ({ proposal: withAmount(null), claim: claimFor("ord_001", 0) }),
    "INVALID_AMOUNT",
  ],
  [
    "L6 missing amount for a claim of 0",
    () => ({ proposal: withAmount("<missing>"), claim: claimFor("ord_001", 0) }),
    "INVALID_AMOUNT",
  ],

  // layer 7 — balance
  [
    "L7 amount above the order amount",
    () => ({ proposal: proposal({ amount_eur: 300 }), claim: claimFor("ord_001", 300) }),
    "EXCEEDS_REFUNDABLE_BALANCE",
  ],
  [
    "L7 second claim on a fully refunded order",
    () => ({
      ledgerEntry: { order_id: "ord_001", refunded_cents: 29999, claims: { claim_A: 29999 }, automatic_cents: 29999 },
      claimId: "claim_E",
    }),
    "EXCEEDS_REFUNDABLE_BALANCE",
  ],
  [
    "L7 second claim fits the rest of a partly refunded order",
    () => ({
      ...scenario(ORDERS.ord_001, 99.99),
      ledgerEntry: { order_id: "ord_001", refunded_cents: 20000, claims: { claim_A: 20000 }, approved: ["claim_A"] },
    }),
    "VALIDATION_PASSED",
  ],
  [
    "L7 second claim one cent above the rest",
    () => ({
      ...scenario(ORDERS.ord_001, 100),
      ledgerEntry: { order_id: "ord_001", refunded_cents: 20000, claims: { claim_A: 20000 }, approved: ["claim_A"] },
    }),
    "EXCEEDS_REFUNDABLE_BALANCE",
  ],
  [
    "L7 a claim's own reservation does not count against it (replay after execution)",
    () => ({
      ledgerEntry: { order_id: "ord_001", refunded_cents: 29999, claims: { claim_A: 29999 }, automatic_cents: 29999 },
      claimId: "claim_A",
    }),
    "VALIDATION_PASSED",
  ],

  // layer 8 — alignment (checked right after layer 1: a model failure escalates, it never becomes a customer REJECT)
  ["L8 proposal order differs from the claim's", () => ({ claim: claimFor("ord_002", 299.99) }), "PROPOSAL_MISMATCH"],
  ["L8 proposal amount above the claimed amount", () => ({ claim: claimFor("ord_001", 200) }), "PROPOSAL_MISMATCH"],
  [
    "L8 proposal amount below the claimed amount",
    () => ({ ...scenario(ORDERS.ord_001, 100), claim: claimFor("ord_001", 299.99) }),
    "VALIDATION_PASSED",
  ],
  [
    "L8 proposal of another decision flow",
    () => ({ proposal: proposal({ dfid: "dfid_other" }), dfid: DFID }),
    "PROPOSAL_MISMATCH",
  ],
  ["L8 proposal of this decision flow", () => ({ dfid: DFID }), "VALIDATION_PASSED"],
  [
    "L8 a garbled order id escalates instead of ORDER_NOT_FOUND",
    () => ({ proposal: proposal({ order_id: ")" }), order: undefined }),
    "PROPOSAL_MISMATCH",
  ],
  ["L8 amount 0 for a positive claim", () => ({ proposal: withAmount(0) }), "PROPOSAL_MISMATCH"],
  ["L8 negative amount for a positive claim", () => ({ proposal: withAmount(-9) }), "PROPOSAL_MISMATCH"],
  [
    "L8 infinite amount for a positive claim",
    () => ({ proposal: withAmount(Number.POSITIVE_INFINITY) }),
    "PROPOSAL_MISMATCH",
  ],
  ["L8 numeric string amount for a positive claim", () => ({ proposal: withAmount("299.99") }), "PROPOSAL_MISMATCH"],
  [
    "L8 a fourth decimal 299.9891 for a positive claim",
    () => ({ proposal: withAmount(299.9891) }),
    "PROPOSAL_MISMATCH",
  ],
  // Three decimals align with the claim (KWD has them); on an EUR order the amount is not exact in cents: layer 6.
  ["L6 a third decimal 299.989 on an EUR order", () => ({ proposal: withAmount(299.989) }), "INVALID_AMOUNT"],
  ["L8 missing amount for a positive claim", () => ({ proposal: withAmount("<missing>") }), "PROPOSAL_MISMATCH"],

  // layer 8b — customer
  [
    "L8b the claim names another customer than the order's",
    () => ({
      order: { ...ORDERS.ord_001, customer_id: "cus_1" },
      claim: { ...claimFor("ord_001", 299.99), customer_id: "cus_2" },
    }),
    "CUSTOMER_MISMATCH",
  ],
  [
    "L8b the claim names the order's customer",
    () => ({
      order: { ...ORDERS.ord_001, customer_id: "cus_1" },
      claim: { ...claimFor("ord_001", 299.99), customer_id: "cus_1" },
    }),
    "VALIDATION_PASSED",
  ],
  [
    "L8b an order bound to nobody takes any customer",
    () => ({ claim: { ...claimFor("ord_001", 299.99), customer_id: "cus_2" } }),
    "VALIDATION_PASSED",
  ],

  // layer 9 — uncertainty
  ["L9 agent proposes ESCALATE", () => ({ proposal: proposal({ action: "ESCALATE" }) }), "AGENT_REQUESTED_ESCALATION"],
  ["L9 agent proposes REPLACE", () => ({ proposal: proposal({ action: "REPLACE" }) }), "REPLACEMENT_REQUIRES_REVIEW"],
  ["L9 confidence 0.69 below 0.7", () => ({ proposal: proposal({ confidence: 0.69 }) }), "LOW_CONFIDENCE"],
  ["L9 confidence exactly 0.7", () => ({ proposal: proposal({ confidence: 0.7 }) }), "VALIDATION_PASSED"],

  // layer 9b — customer unknown
  [
    "L9b an order bound to a customer, a claim that names none",
    () => ({ order: { ...ORDERS.ord_001, customer_id: "cus_1" } }),
    "CUSTOMER_UNVERIFIED",
  ],

  // layer 10 — date sanity
  [
    "L10 purchase date after the claim's receipt",
    () => ({ order: { ...ORDERS.ord_001, purchase_date: iso(RECEIVED_MS + DAY_MS) } }),
    "PURCHASE_DATE_IN_FUTURE",
  ],
  [
    "L10 purchase at the very moment of receipt",
    () => ({ order: { ...ORDERS.ord_001, purchase_date: RECEIVED_AT } }),
    "VALIDATION_PASSED",
  ],

  // layer 10b — open review on the order
  [
    "L10b another claim on the order awaits a review",
    () => ({
      ledgerEntry: { order_id: "ord_001", refunded_cents: 0, claims: {}, pending_reviews: ["claim_B"] },
      claimId: "claim_A",
    }),
    "REVIEW_PENDING_ON_ORDER",
  ],
  [
    "L10b the claim's own pending review does not count",
    () => ({
      ledgerEntry: { order_id: "ord_001", refunded_cents: 0, claims: {}, pending_reviews: ["claim_A"] },
      claimId: "claim_A",
    }),
    "VALIDATION_PASSED",
  ],

  // layer 10c — a person's decision binds the order
  [
    "L10c a person denied another claim on the order",
    () => ({
      ledgerEntry: {
        order_id: "ord_001",
        refunded_cents: 0,
        claims: {},
        decisions: [{ claim_id: "claim_B", decision: "DENY" }],
      },
      claimId: "claim_A",
    }),
    "PRIOR_DECISION_ON_ORDER",
  ],
  [
    "L10c a person approved another claim for 1 cent less than proposed",
    () => ({
      ...scenario(ORDERS.ord_002, 100),
      ledgerEntry: {
        order_id: "ord_002",
        refunded_cents: 119999,
        claims: { claim_B: 119999 },
        approved: ["claim_B"],
        decisions: [{ claim_id: "claim_B", decision: "APPROVE", approved_cents: 119999, proposed_cents: 120000 }],
      },
      claimId: "claim_A",
    }),
    "EXCEEDS_REFUNDABLE_BALANCE",
  ],
  [
    "L10c a reduced approval binds the order for the withheld amount",
    () => ({
      ...scenario(ORDERS.ord_002, 300),
      ledgerEntry: {
        order_id: "ord_002",
        refunded_cents: 90000,
        claims: { claim_B: 90000 },
        approved: ["claim_B"],
        decisions: [{ claim_id: "claim_B", decision: "APPROVE", approved_cents: 90000, proposed_cents: 120000 }],
      },
      claimId: "claim_A",
    }),
    "PRIOR_DECISION_ON_ORDER",
  ],
  [
    "L10c an approval of the whole proposal binds nothing",
    () => ({
      ...scenario(ORDERS.ord_002, 300),
      ledgerEntry: { order_id: "ord_002", refunded_cents: 90000, claims: { claim_B: 90000 }, approved: ["claim_B"] },
      claimId: "claim_A",
    }),
    "VALIDATION_PASSED",
  ],
  [
    "L10c the claim's own recorded decision does not count against it (a replay after the decision)",
    () => ({
      ledgerEntry: {
        order_id: "ord_001",
        refunded_cents: 0,
        claims: {},
        decisions: [{ claim_id: "claim_A", decision: "DENY" }],
      },
      claimId: "claim_A",
    }),
    "VALIDATION_PASSED",
  ],

  // layer 10d — resubmitted by a reviewer
  ["L10d a claim resubmitted by a reviewer", () => ({ parentClaimId: "claim_0" }), "RESUBMITTED_CLAIM"],
  [
    "L10d a resubmitted claim that would be rejected is rejected",
    () => ({ ...scenario(ORDERS.ord_005, 500), parentClaimId: "claim_0" }),
    "OUTSIDE_RETURN_WINDOW",
  ],

  // layer 11 — limit, cumulative over the order's automatic refunds
  ["L11 exactly 500.00", () => scenario(ORDERS.ord_600, 500), "VALIDATION_PASSED"],
  ["L11 500.01", () => scenario(ORDERS.ord_600, 500.01), "AMOUNT_ABOVE_LIMIT"],
  [
    "L11 split claim: 200 after 400 refunded automatically",
    () => ({
      ...scenario(ORDERS.ord_002, 200),
      ledgerEntry: { order_id: "ord_002", refunded_cents: 40000, claims: { claim_0: 40000 }, automatic_cents: 40000 },
      claimId: "claim_1",
    }),
    "AMOUNT_ABOVE_LIMIT",
  ],
  [
    "L11 split claim: 100 after 400 refunded automatically reaches exactly the limit",
    () => ({
      ...scenario(ORDERS.ord_002, 100),
      ledgerEntry: { order_id: "ord_002", refunded_cents: 40000, claims: { claim_0: 40000 }, automatic_cents: 40000 },
      claimId: "claim_1",
    }),
    "VALIDATION_PASSED",
  ],
  [
    "L11 what a reviewer approved does not count against the limit",
    () => ({
      ...scenario(ORDERS.ord_002, 500),
      ledgerEntry: { order_id: "ord_002", refunded_cents: 70000, claims: { claim_0: 70000 }, approved: ["claim_0"] },
      claimId: "claim_1",
    }),
    "VALIDATION_PASSED",
  ],

  // layer 11b — the ORDER's customer within claims_bounds.customer_limits (3 refunds, 500 EUR, 30 days)
  ["L11b exactly the third refund and exactly 500 EUR pass", () => customerCase(2, 30000, 200), "VALIDATION_PASSED"],
  ["L11b a fourth refund in the window", () => customerCase(3, 30000, 10), "CUSTOMER_LIMIT_EXCEEDED"],
  ["L11b 1 cent over max_automatic_eur", () => customerCase(1, 30000, 200.01), "CUSTOMER_LIMIT_EXCEEDED"],
  [
    "L9c a claim naming a category two lines share",
    () => ({ ...scenario(TWO_SHIRTS, 20), claim: claimFor("ord_l1", 20, "clothing") }),
    "LINE_AMBIGUOUS",
  ],
  ["L10e an order in USD, the policy has EUR bounds only", () => scenario(USD_ORDER, 100), "CURRENCY_NOT_IN_POLICY"],
  [
    "L11b a refund exactly window_days old still counts",
    () => customerCase(3, 30000, 10, { atMs: DECIDED_MS - 30 * DAY_MS }),
    "CUSTOMER_LIMIT_EXCEEDED",
  ],
  [
    "L11b a refund 1 ms older than the window no longer counts",
    () => customerCase(3, 30000, 10, { atMs: DECIDED_MS - 30 * DAY_MS - 1 }),
    "VALIDATION_PASSED",
  ],
  [
    "L11b the claim's own reservation does not count against it",
    () => customerCase(3, 30000, 10, { ownClaim: true }),
    "VALIDATION_PASSED",
  ],
  [
    "L11b an order without a customer is not bound",
    () => ({ ...customerCase(3, 30000, 10), ...scenario(ORDERS.ord_001, 10), customerWindow: undefined }),
    "VALIDATION_PASSED",
  ],
  [
    "L11b without customer_limits in the contract nothing is counted",
    () => ({ ...customerCase(5, 90000, 10), contract }),
    "VALIDATION_PASSED",
  ],
  [
    "order: the order's limit (11) is reported before the customer's (11b)",
    () => ({ ...customerCase(3, 30000, 500.01), ...scenarioOf(CUSTOMER_ORDER_BIG, 500.01) }),
    "AMOUNT_ABOVE_LIMIT",
  ],

  // ordering: the first failing check wins, every REJECT before any ESCALATE
  [
    "order: low confidence and outside the window REJECTs",
    () => ({ ...scenario(ORDERS.ord_005, 500, { confidence: 0.3 }) }),
    "OUTSIDE_RETURN_WINDOW",
  ],
  [
    "order: ESCALATE kind and a string amount for a claim of 0 REJECTs",
    () => ({
      proposal: rekeyed(proposal({ action: "ESCALATE" }), (p) => {
        p.params.amount_eur = "299.99";
      }),
      claim: claimFor("ord_001", 0),
    }),
    "INVALID_AMOUNT",
  ],
  [
    "order: a mismatched proposal escalates before the window would reject",
    () => ({ ...scenario(ORDERS.ord_005, 500), claim: claimFor("ord_005", 400) }),
    "PROPOSAL_MISMATCH",
  ],
  [
    "order: a customer mismatch rejects before low confidence escalates",
    () => ({
      proposal: proposal({ confidence: 0.2 }),
      order: { ...ORDERS.ord_001, customer_id: "cus_1" },
      claim: { ...claimFor("ord_001", 299.99), customer_id: "cus_2" },
    }),
    "CUSTOMER_MISMATCH",
  ],
  [
    "order: a claim naming a line the order does not have rejects before the category would",
    () => ({
      ...scenario({ ...ORDERS.ord_001, category: "gift_cards" }, 100),
      claim: { ...claimFor("ord_001", 100), lines: [{ line_id: "l9" }] },
    }),
    "LINE_NOT_IN_ORDER",
  ],
  [
    "order: a claim in another currency than the order's rejects before low confidence escalates",
    () => ({
      proposal: proposal({ confidence: 0.2 }),
      claim: { ...claimFor("ord_001", 299.99), currency: "USD" },
    }),
    "CURRENCY_MISMATCH",
  ],
  [
    "order: above the limit and purchased in the future reports the date first",
    () => ({
      ...scenario(ORDERS.ord_002, 1200),
      order: { ...ORDERS.ord_002, purchase_date: iso(RECEIVED_MS + DAY_MS) },
    }),
    "PURCHASE_DATE_IN_FUTURE",
  ],
  [
    "order: low confidence and above the limit reports low confidence",
    () => scenario(ORDERS.ord_002, 1200, { confidence: 0.5 }),
    "LOW_CONFIDENCE",
  ],
  [
    "order: unregistered agent and expired beats everything later",
    () => ({ proposal: proposal({ agentId: "rogue", amount_eur: 1200 }), decidedAt: iso(RECEIVED_MS + DAY_MS) }),
    "AGENT_NOT_REGISTERED",
  ],
  [
    "order: expired and unknown order reports the TTL",
    () => ({
      proposal: proposal({ order_id: "ord_999" }),
      claim: claimFor("ord_999", 299.99),
      order: undefined,
      decidedAt: iso(RECEIVED_MS + DAY_MS),
    }),
    "TTL_EXPIRED",
  ],
];

describe("decideClaim — docs/kernel.md table", () => {
  it.each(rows.map(([name, over, code]) => [name, code, over] as const))("%s → %s", (_name, code, over) => {
    const verdict = decideClaim(input(over()));
    expect(verdict.reason_code).toBe(code);
    expect(verdict.verdict).toBe(REASON_CODES[code].verdict);
    expect(verdict.layer).toBe(REASON_CODES[code].layer);
    expect(verdict.reason.length).toBeGreaterThan(0);
    // The checks are the run up to the decision: all passed but the deciding one, layers never going back.
    const last = verdict.checks.at(-1);
    if (code === "VALIDATION_PASSED") expect(verdict.checks.every((c) => c.passed)).toBe(true);
    else expect(last).toMatchObject({ passed: false, reason_code: code, layer: verdict.layer });
    expect(
      verdict.checks
        .slice(0, code === "VALIDATION_PASSED" ? undefined : -1)
        .every((c) => c.passed && c.reason_code === undefined),
    ).toBe(true);
    // Layers run in evaluation order (alignment right after the schema), never going back.
    const rank = (layer: number) => EVALUATION_ORDER.indexOf(layer as (typeof EVALUATION_ORDER)[number]);
    const ranks = verdict.checks.map((c) => rank(c.layer));
    expect(ranks.every((r) => r >= 0)).toBe(true);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  });

  it("covers every reason code of the table", () => {
    expect(new Set(rows.map((r) => r[2]))).toEqual(new Set(Object.keys(REASON_CODES)));
  });
});

describe("the kernel table", () => {
  it("lists the layers in the order they run: alignment (8) right after the schema (1), then by number", () => {
    expect(EVALUATION_ORDER).toEqual([
      1,
      8,
      2,
      3,
      4,
      5,
      6,
      7,
      8.5,
      8.6,
      9,
      9.5,
      9.7,
      10,
      10.5,
      10.6,
      10.7,
      10.8,
      11,
      11.5,
      PASS_LAYER,
    ]);
    for (const row of KERNEL_TABLE) expect(row.name).toBe(KERNEL_LAYERS[row.layer]);
  });

  it("gives each check the reason codes of its own layer, and every code of the kernel to some check", () => {
    const declared = KERNEL_TABLE.flatMap((row) =>
      row.checks.flatMap((c) => c.codes.map((code) => [row, code] as const)),
    );
    for (const [row, code] of declared) expect(REASON_CODES[code].layer, code).toBe(row.layer);
    expect(new Set(declared.map(([, code]) => code))).toEqual(
      new Set(Object.keys(REASON_CODES).filter((code) => code !== "VALIDATION_PASSED")),
    );
  });

  it("runs every REJECT layer before the layers an approval lifts, which escalate only", () => {
    const verdictsOf = (row: (typeof KERNEL_TABLE)[number]) =>
      new Set(row.checks.flatMap((c) => c.codes.map((code) => REASON_CODES[code].verdict)));
    const lifted = KERNEL_TABLE.filter((row) => row.liftedByApproval).map((row) => row.layer);
    expect(lifted).toEqual([9, 9.5, 9.7, 10, 10.5, 10.6, 10.7, 10.8, 11, 11.5]);
    const firstLifted = KERNEL_TABLE.findIndex((row) => row.liftedByApproval);
    for (const row of KERNEL_TABLE.slice(firstLifted)) expect([...verdictsOf(row)]).toEqual(["ESCALATE"]);
    for (const row of KERNEL_TABLE.slice(0, firstLifted).filter((r) => r.layer !== 8))
      expect([...verdictsOf(row)]).toEqual(["REJECT"]);
  });

  it("traces every check of the table by name, in order, when all pass (the names recorded audits carry)", () => {
    const v = decideClaim(input({ dfid: DFID }));
    const names = [
      ["proposal_schema", "idempotency_key", "proposal_id", "policy_kind", "agent_registered", "agent_authorised"],
      ["flow_alignment", "order_alignment", "amount_alignment", "lines_alignment"],
      ["ttl"],
      ["order_id_present", "order_exists", "lines_in_order"],
      ["category_allowed", "category_authorised"],
      ["return_window"],
      ["amount_valid"],
      ["refundable_balance"],
      ["customer_match"],
      ["currency_match"],
      ["policy_kind_escalation", "confidence"],
      ["customer_verified"],
      ["line_known"],
      ["purchase_date_sanity"],
      ["open_review"],
      ["prior_decision"],
      ["resubmitted"],
      ["currency_in_policy"],
      ["amount_limit"],
      ["customer_limit"],
    ];
    expect(KERNEL_TABLE.map((row) => row.checks.map((c) => c.name))).toEqual(names);
    // On an order of one line in EUR (every order recorded before lines), line_known and currency_in_policy are not
    // run and not traced: recorded traces stay as they were; nor is currency_match for a claim naming no currency, nor
    // lines_alignment for a proposal naming no lines.
    const lineChecks = new Set([
      "line_known",
      "currency_in_policy",
      "currency_match",
      "lines_in_order",
      "lines_alignment",
    ]);
    // With a customer limit and an order bound to a customer every other check runs.
    const bound = decideClaim(input({ ...customerCase(0, 0, 299.99), dfid: DFID }));
    expect(bound.checks).toEqual(
      KERNEL_TABLE.flatMap((row) =>
        row.checks
          .filter((c) => !lineChecks.has(c.name))
          .map((c) => ({ layer: row.layer, name: c.name, passed: true })),
      ),
    );
    // Without a customer limit, customer_limit is not run and not traced.
    expect(v.checks.map((c) => c.name)).toEqual(
      names.flat().filter((n) => n !== "customer_limit" && !lineChecks.has(n)),
    );
    // Without a flow id to hold it against, flow_alignment is not run and not traced.
    expect(decideClaim(input()).checks.map((c) => c.name)).toEqual(
      names.flat().filter((n) => n !== "flow_alignment" && n !== "customer_limit" && !lineChecks.has(n)),
    );
  });
});

describe("decideClaim — a person's decision, a resubmission and the customer's window", () => {
  const denied: LedgerEntry = {
    order_id: "ord_001",
    refunded_cents: 0,
    claims: {},
    decisions: [{ claim_id: "claim_B", decision: "DENY" }],
  };
  const partial: LedgerEntry = {
    order_id: "ord_002",
    refunded_cents: 90000,
    claims: { claim_B: 90000 },
    approved: ["claim_B"],
    decisions: [{ claim_id: "claim_B", decision: "APPROVE", approved_cents: 90000, proposed_cents: 120000 }],
  };
  it("say who had no such order: the shop's order API when it answered so, else the context store", () => {
    const unknown = {
      proposal: proposal({ order_id: "ord_999" }),
      claim: claimFor("ord_999", 299.99),
      order: undefined,
    };
    expect(decideClaim(input({ ...unknown, orderAbsentFrom: "shop_api" })).reason).toBe(
      "Order 'ord_999' not found: the shop's order API has no such order (it answered 404)",
    );
    expect(decideClaim(input(unknown)).reason).toBe("Order 'ord_999' not found in the context store");
  });

  it("name the decision, the resubmission and the customer's figures", () => {
    expect(decideClaim(input({ ledgerEntry: denied, claimId: "claim_A" })).reason).toBe(
      "On order ord_001 a person denied claim claim_B. Human review required.",
    );
    expect(
      decideClaim(input({ ...scenario(ORDERS.ord_002, 300), ledgerEntry: partial, claimId: "claim_A" })).reason,
    ).toBe(
      "On order ord_002 a person approved claim claim_B for 900.0 of the 1200.0 EUR proposed. Human review required.",
    );
    expect(decideClaim(input({ parentClaimId: "claim_0" })).reason).toContain(
      "resubmitted by a reviewer from claim claim_0",
    );
    expect(decideClaim(input(customerCase(3, 30000, 10))).reason).toBe(
      "Customer cus_1 already has 3 automatic refunds (300.0 EUR) in the last 30 days; max_automatic_refunds is 3. Human approval required.",
    );
    expect(decideClaim(input(customerCase(1, 30000, 200.01))).reason).toBe(
      "Amount 200.01 EUR plus 300.0 EUR refunded automatically to customer cus_1 in the last 30 days exceeds max_automatic_eur (500.0 EUR). Human approval required.",
    );
  });
  it("an approval lifts 10c, 10d and 11b, and nothing that rejects", () => {
    const approval = { amountEur: 299.99 };
    expect(decideClaim(input({ ledgerEntry: denied, claimId: "claim_A", approval })).verdict).toBe("ACCEPT");
    expect(decideClaim(input({ parentClaimId: "claim_0", approval })).verdict).toBe("ACCEPT");
    expect(decideClaim(input({ ...customerCase(3, 30000, 10), approval: { amountEur: 10 } })).verdict).toBe("ACCEPT");
    expect(
      decideClaim(
        input({
          ...scenario(ORDERS.ord_002, 300),
          ledgerEntry: partial,
          claimId: "claim_A",
          approval: { amountEur: 300.01 },
        }),
      ).reason_code,
    ).toBe("EXCEEDS_REFUNDABLE_BALANCE");
  });
  it("a window of another customer, or a corrupt one, is a wiring error", () => {
    const c = customerCase(1, 100, 10);
    expect(() => decideClaim(input({ ...c, customerWindow: { ...c.customerWindow!, customer_id: "cus_2" } }))).toThrow(
      KernelInputError,
    );
    expect(() =>
      decideClaim(
        input({
          ...c,
          customerWindow: {
            ...c.customerWindow!,
            reservations: [...c.customerWindow!.reservations, ...c.customerWindow!.reservations],
          },
        }),
      ),
    ).toThrow(KernelInputError);
  });
});

describe("decideClaim — human reasons follow the seed", () => {
  it("ACCEPT says Validation passed and runs every layer", () => {
    const v = decideClaim(input());
    expect(v).toMatchObject({ verdict: "ACCEPT", reason: "Validation passed", layer: PASS_LAYER });
    expect(new Set(v.checks.map((c) => c.layer))).toEqual(
      new Set([1, 2, 3, 4, 5, 6, 7, 8, 8.5, 9, 9.5, 10, 10.5, 10.6, 10.7, 11]),
    );
  });
  it("the limit text is the seed's, byte for byte", () => {
    expect(decideClaim(input(scenario(ORDERS.ord_002, 1200))).reason).toBe(
      "Amount 1200.0 EUR exceeds max_refund_without_escalation (500.0 EUR). Human approval required.",
    );
    expect(decideClaim(input(scenario(ORDERS.ord_600, 500.01))).reason).toBe(
      "Amount 500.01 EUR exceeds max_refund_without_escalation (500.0 EUR). Human approval required.",
    );
  });
  it("the window text names the order, the purchase and the elapsed time", () => {
    expect(decideClaim(input(scenario(ORDERS.ord_005, 500))).reason).toBe(
      "Order ord_005 outside return window (purchased 2026-01-01, 74 days 10 h before the claim was received; return_window_days: 14)",
    );
  });
  it("the category text names the order's category and the allowed list", () => {
    expect(decideClaim(input(scenario(ORDERS.ord_004, 50))).reason).toBe(
      "Category 'prohibited_category' not in allowed_refund_categories [electronics, clothing, home]",
    );
  });
  it.each([
    [withAmount("299.99"), 'Invalid refund amount: amount must be a number, got the string "299.99"'],
    [withAmount("<missing>"), "Invalid refund amount: amount is missing"],
    [withAmount(-10), "Invalid refund amount: -10.0 EUR is not positive"],
    [withAmount(-0.0001), "Invalid refund amount: amount -0.0001 has more than two decimals"],
  ])("the amount text says what is wrong (%#)", (p, reason) => {
    expect(decideClaim(input({ proposal: p, claim: claimFor("ord_001", -10) })).reason).toBe(reason);
  });
  it("the cumulative limit text names what was already refunded automatically", () => {
    const ledgerEntry = {
      order_id: "ord_002",
      refunded_cents: 100000,
      claims: { a: 50000, b: 50000 },
      automatic_cents: 50000,
      approved: ["b"],
    };
    expect(decideClaim(input({ ...scenario(ORDERS.ord_002, 200), ledgerEntry, claimId: "c" })).reason).toBe(
      "Amount 200.0 EUR plus 500.0 EUR already refunded automatically on order ord_002 exceeds max_refund_without_escalation (500.0 EUR). Human approval required.",
    );
  });
  it("a reviewer's approval lifts layers 9–11 and nothing else", () => {
    const escalating = [
      input(scenario(ORDERS.ord_002, 1200)),
      input({ proposal: proposal({ confidence: 0.2 }) }),
      input({ order: { ...ORDERS.ord_001, customer_id: "cus_1" } }),
      input({
        ledgerEntry: { order_id: "ord_001", refunded_cents: 0, claims: {}, pending_reviews: ["other"] },
        claimId: "me",
      }),
    ];
    for (const given of escalating) {
      expect(decideClaim(given).verdict).toBe("ESCALATE");
      expect(decideClaim({ ...given, approval: {} })).toMatchObject({
        verdict: "ACCEPT",
        reason_code: "VALIDATION_PASSED",
      });
    }
    const rejecting = [
      input({
        ledgerEntry: { order_id: "ord_001", refunded_cents: 29999, claims: { x: 29999 }, automatic_cents: 29999 },
        claimId: "me",
      }),
      input({ ...scenario(ORDERS.ord_005, 500) }),
      input({
        order: { ...ORDERS.ord_001, customer_id: "cus_1" },
        claim: { ...claimFor("ord_001", 299.99), customer_id: "cus_2" },
      }),
    ];
    for (const given of rejecting) expect(decideClaim({ ...given, approval: {} }).verdict).toBe("REJECT");
    // A lower approved amount is what the balance check judges.
    const partly = input({
      ledgerEntry: { order_id: "ord_001", refunded_cents: 20000, claims: { x: 20000 }, automatic_cents: 20000 },
      claimId: "me",
    });
    expect(decideClaim({ ...partly, approval: {} }).reason_code).toBe("EXCEEDS_REFUNDABLE_BALANCE");
    expect(decideClaim({ ...partly, approval: { amountEur: 99.99 } }).reason_code).toBe("VALIDATION_PASSED");
  });
  it("the balance text shows order, refunded and rest", () => {
    const v = decideClaim(
      input({
        ledgerEntry: { order_id: "ord_001", refunded_cents: 29999, claims: { claim_A: 29999 }, automatic_cents: 29999 },
      }),
    );
    expect(v.reason).toBe(
      "Amount 299.99 EUR exceeds the refundable balance of order ord_001 (0.0 EUR: order 299.99 EUR, already refunded 299.99 EUR)",
    );
  });
  it("the confidence text names both numbers", () => {
    expect(decideClaim(input({ proposal: proposal({ confidence: 0.69 }) })).reason).toBe(
      "Confidence 0.69 below escalate_on_uncertainty (0.7). Human approval required.",
    );
  });
  it("a schema failure names the field", () => {
    expect(
      decideClaim(
        input({
          proposal: rekeyed(proposal(), (p) => {
            delete p.confidence;
          }),
        }),
      ).reason,
    ).toMatch(/^Proposal does not parse: confidence: /);
  });
});

describe("decideClaim — wiring errors throw, business outcomes never do", () => {
  it.each([
    ["decidedAt is not a timestamp", { decidedAt: "yesterday" }],
    ["receivedAt is not a timestamp", { receivedAt: "" }],
    ["the order is not the one the proposal names", { order: ORDERS.ord_002 }],
    ["the ledger entry belongs to another order", { ledgerEntry: emptyLedgerEntry("ord_002") }],
    [
      "the ledger entry is inconsistent",
      { ledgerEntry: { order_id: "ord_001", refunded_cents: 5, claims: {} } as LedgerEntry },
    ],
    ["the order's purchase date is not a date", { order: { ...ORDERS.ord_001, purchase_date: "last week" } }],
  ] as const)("%s → KernelInputError", (_name, over) => {
    expect(() => decideClaim(input(over as Partial<DecideClaimInput>))).toThrow(KernelInputError);
  });
  it("returns a verdict for any JSON value as a proposal", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (junk) => {
        expect(decideClaim(input({ proposal: junk })).reason_code).toBe("SCHEMA_INVALID");
      }),
      { numRuns: 200 },
    );
  });
});

// ---- properties: REJECT before ESCALATE, purity -----------------------------------------------------------

type Faults = {
  outsideWindow: boolean;
  badAmount: boolean;
  overBalance: boolean;
  mismatch: boolean;
  lowConfidence: boolean;
  escalateKind: boolean;
  future: boolean;
  aboveLimit: boolean;
};

function faultyInput(f: Faults): DecideClaimInput {
  const amount = f.aboveLimit ? 700 : 100;
  const o = order("ord_x", f.overBalance ? amount - 1 : 1000, {
    purchase_date: f.outsideWindow ? daysBefore(30) : f.future ? iso(RECEIVED_MS + DAY_MS) : daysBefore(1),
  });
  let p: unknown = proposal({
    order_id: "ord_x",
    amount_eur: amount,
    confidence: f.lowConfidence ? 0.2 : 0.95,
    action: f.escalateKind ? "ESCALATE" : "REFUND",
  });
  if (f.badAmount)
    p = rekeyed(p as PolicyProposal, (q) => {
      q.params.amount_eur = String(amount);
    });
  return input({ proposal: p, order: o, claim: claimFor(f.mismatch ? "ord_y" : "ord_x", amount) });
}

describe("decideClaim — properties", () => {
  const faults = fc.record({
    outsideWindow: fc.boolean(),
    badAmount: fc.boolean(),
    overBalance: fc.boolean(),
    mismatch: fc.boolean(),
    lowConfidence: fc.boolean(),
    escalateKind: fc.boolean(),
    future: fc.boolean(),
    aboveLimit: fc.boolean(),
  });

  it("escalates only when nothing would reject, and reports the first failing layer", () => {
    fc.assert(
      fc.property(faults, (f) => {
        const v = decideClaim(faultyInput(f));
        // A proposal that does not answer its claim (another order, a non-numeric amount for a positive claim) is a
        // model failure: it escalates before anything else; then every REJECT before any ESCALATE.
        const misaligned = f.mismatch || f.badAmount;
        const rejects = !misaligned && (f.outsideWindow || f.overBalance);
        const escalates =
          misaligned || f.lowConfidence || f.escalateKind || (f.future && !f.outsideWindow) || f.aboveLimit;
        expect(v.verdict).toBe(rejects ? "REJECT" : escalates ? "ESCALATE" : "ACCEPT");
        const expected: ClaimReasonCode = misaligned
          ? "PROPOSAL_MISMATCH"
          : f.outsideWindow
            ? "OUTSIDE_RETURN_WINDOW"
            : f.overBalance
              ? "EXCEEDS_REFUNDABLE_BALANCE"
              : f.escalateKind
                ? "AGENT_REQUESTED_ESCALATION"
                : f.lowConfidence
                  ? "LOW_CONFIDENCE"
                  : f.future
                    ? "PURCHASE_DATE_IN_FUTURE"
                    : f.aboveLimit
                      ? "AMOUNT_ABOVE_LIMIT"
                      : "VALIDATION_PASSED";
        expect(v.reason_code).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("is a pure function: same inputs, deep-equal verdicts, inputs untouched (deep-frozen)", () => {
    const arbInput = fc
      .record({
        cents: fc.integer({ min: -100, max: 200_000 }),
        confidence: fc.double({ min: 0, max: 1, noNaN: true }),
        purchaseOffsetMs: fc.integer({ min: -30 * DAY_MS, max: 2 * DAY_MS }),
        kind: fc.constantFrom<PolicyKind>("REFUND", "REPLACE", "ESCALATE"),
        refunded: fc.integer({ min: 0, max: 150_000 }),
        decidedOffsetMs: fc.integer({ min: 0, max: 2 * VALID_FOR_MS }),
        claimedCents: fc.integer({ min: 1, max: 200_000 }),
      })
      .map(
        (r): DecideClaimInput =>
          input({
            proposal: rekeyed(proposal({ order_id: "ord_002", action: r.kind }), (p) => {
              p.params.amount_eur = r.cents / 100;
              p.confidence = r.confidence;
            }),
            claim: claimFor("ord_002", r.claimedCents / 100),
            order: { ...ORDERS.ord_002, purchase_date: iso(RECEIVED_MS - r.purchaseOffsetMs) },
            ledgerEntry: r.refunded
              ? {
                  order_id: "ord_002",
                  refunded_cents: r.refunded,
                  claims: { other: r.refunded },
                  automatic_cents: r.refunded,
                }
              : undefined,
            decidedAt: iso(Date.parse(CREATED_AT) + r.decidedOffsetMs),
            claimId: "claim_1",
          }),
      );
    fc.assert(
      fc.property(arbInput, (given) => {
        const before = structuredClone(given);
        const frozen = deepFreeze(structuredClone(given));
        const a = decideClaim(frozen);
        const b = decideClaim(JSON.parse(JSON.stringify(given)) as DecideClaimInput);
        expect(a).toEqual(b);
        expect(frozen).toEqual(before);
        // The verdict is plain data and survives JSON.
        expect(JSON.parse(JSON.stringify(a))).toEqual(a);
      }),
      { numRuns: 300 },
    );
  });
});

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

describe("the injected SHA-256", () => {
  it("decides every case as the pure one does, and is the one the idempotency check uses", () => {
    const calls: string[] = [];
    const counting = (text: string) => {
      calls.push(text);
      return hashHex(text);
    };
    for (const over of [
      {},
      { proposal: withAmount(1e9) },
      { order: undefined },
      { decidedAt: iso(RECEIVED_MS + VALID_FOR_MS + 61_000) },
    ]) {
      calls.length = 0;
      expect(decideClaim(input({ ...over, sha256: counting }))).toEqual(decideClaim(input(over)));
      expect(calls).toHaveLength(1);
    }
    expect(decideClaim(input({ sha256: () => "0".repeat(64) }))).toMatchObject({
      verdict: "REJECT",
      reason_code: "IDEMPOTENCY_KEY_MISMATCH",
    });
  });
});

describe("triage: the kernel's layers 3–7 and 8b on the claim itself", () => {
  const triage = (claim: Claim, o: Order | undefined, ledgerEntry?: LedgerEntry) =>
    triageClaim({
      claim,
      contract,
      responsibility,
      order: o,
      ledgerEntry,
      receivedAt: RECEIVED_AT,
      decidedAt: DECIDED_AT,
    });

  it("runs exactly the order, category, window, amount, balance and customer rows of KERNEL_TABLE, in their order", () => {
    expect(TRIAGE_TABLE.map((row) => row.layer)).toEqual([3, 4, 5, 6, 7, 8.5]);
    for (const row of TRIAGE_TABLE)
      for (const code of row.checks.flatMap((c) => c.codes)) expect(REASON_CODES[code].verdict, code).toBe("REJECT");
  });

  it.each([
    ["an unknown order", claimFor("ord_999", 40), undefined, "ORDER_NOT_FOUND"],
    ["the order's category", claimFor("ord_004", 50), ORDERS.ord_004, "CATEGORY_NOT_ALLOWED"],
    ["the order's window", claimFor("ord_005", 500), ORDERS.ord_005, "OUTSIDE_RETURN_WINDOW"],
    ["a negative amount", claimFor("ord_001", -20), ORDERS.ord_001, "INVALID_AMOUNT"],
    [
      "another customer's order",
      { ...claimFor("ord_001", 10), customer_id: "cus_b" },
      order("ord_001", 299.99, { customer_id: "cus_a" }),
      "CUSTOMER_MISMATCH",
    ],
  ] as const)("rejects %s as the kernel would", (_name, claim, o, code) => {
    const verdict = triage(claim, o);
    expect(verdict).toMatchObject({ verdict: "REJECT", reason_code: code, layer: REASON_CODES[code].layer });
  });

  it("rejects on the balance only when nothing is left: a smaller proposal could still fit", () => {
    const full: LedgerEntry = {
      order_id: "ord_001",
      refunded_cents: 29_999,
      automatic_cents: 29_999,
      claims: { clm_a: 29_999 },
    };
    const part: LedgerEntry = {
      order_id: "ord_001",
      refunded_cents: 20_000,
      automatic_cents: 20_000,
      claims: { clm_a: 20_000 },
    };
    expect(triage(claimFor("ord_001", 10), ORDERS.ord_001, full)?.reason_code).toBe("EXCEEDS_REFUNDABLE_BALANCE");
    expect(triage(claimFor("ord_001", 299.99), ORDERS.ord_001, part)).toBeUndefined();
    // Another customer's order with only part of the claim left: a proposal within the balance is refused for the
    // customer, one above it for the balance, so the crew's proposal decides which.
    const theirs = order("ord_001", 299.99, { customer_id: "cus_a" });
    const mine = { ...claimFor("ord_001", 299.99), customer_id: "cus_b" };
    expect(triage(mine, theirs, part)).toBeUndefined();
    expect(triage({ ...mine, amount_eur: 99.99 }, theirs, part)?.reason_code).toBe("CUSTOMER_MISMATCH");
  });

  it("lets through what the crew and the kernel must decide: escalations, a claim naming no customer, a valid claim", () => {
    expect(triage(claimFor("ord_001", 299.99), ORDERS.ord_001)).toBeUndefined();
    expect(triage(claimFor("ord_002", 1200), ORDERS.ord_002)).toBeUndefined();
    expect(triage(claimFor("ord_001", 10), order("ord_001", 299.99, { customer_id: "cus_a" }))).toBeUndefined();
  });

  it("never rejects a claim some self-checked proposal gets through, and rejects only what every one is rejected for", () => {
    const arb = fc.record({
      category: fc.constantFrom("electronics", "home", "prohibited_category"),
      ageDays: fc.integer({ min: 0, max: 20 }),
      orderCents: fc.integer({ min: 1, max: 200_000 }),
      refundedShare: fc.constantFrom(0, 0.5, 1),
      claimedCents: fc.integer({ min: -5_000, max: 250_000 }),
      proposedShare: fc.double({ min: 0, max: 1, noNaN: true }),
      known: fc.boolean(),
      orderCustomer: fc.constantFrom(undefined, "cus_a"),
      claimCustomer: fc.constantFrom(undefined, "cus_a", "cus_b"),
    });
    fc.assert(
      fc.property(arb, (a) => {
        const o = order("ord_x", a.orderCents / 100, {
          category: a.category,
          purchase_date: daysBefore(a.ageDays),
          ...(a.orderCustomer ? { customer_id: a.orderCustomer } : {}),
        });
        const refunded = Math.round(a.orderCents * a.refundedShare);
        const ledgerEntry: LedgerEntry | undefined =
          refunded > 0
            ? {
                order_id: "ord_x",
                refunded_cents: refunded,
                automatic_cents: refunded,
                claims: { clm_other: refunded },
              }
            : undefined;
        const claim: Claim = {
          ...claimFor("ord_x", a.claimedCents / 100),
          ...(a.claimCustomer ? { customer_id: a.claimCustomer } : {}),
        };
        // A proposal that passes the self-check: the claim's order, positive and at most the claimed amount.
        const proposedCents =
          a.claimedCents > 0 ? Math.max(1, Math.floor(a.claimedCents * a.proposedShare)) : a.claimedCents;
        const kernel = decideClaim(
          input({
            claim,
            order: a.known ? o : undefined,
            ledgerEntry: a.known ? ledgerEntry : undefined,
            proposal: proposal({ order_id: "ord_x", amount_eur: proposedCents / 100 }),
          }),
        );
        const triaged = triage(claim, a.known ? o : undefined, a.known ? ledgerEntry : undefined);
        if (triaged) {
          expect(kernel.verdict).toBe("REJECT");
          expect(kernel.reason_code).toBe(triaged.reason_code);
          expect(kernel.reason).toBe(a.claimedCents === proposedCents ? triaged.reason : kernel.reason);
        } else if (kernel.verdict === "REJECT") {
          // Only what the proposal's own amount decides can reject a claim triage let through: more than is left,
          // or, when the claim asks for more than is left, a later reject row (which reason wins is the proposal's).
          const asksMoreThanLeft = a.claimedCents > a.orderCents - refunded;
          expect(
            kernel.reason_code === "EXCEEDS_REFUNDABLE_BALANCE" ||
              (asksMoreThanLeft && kernel.reason_code === "CUSTOMER_MISMATCH"),
            `${kernel.reason_code} for a claim triage let through`,
          ).toBe(true);
        }
      }),
      { numRuns: 400 },
    );
  });
});
