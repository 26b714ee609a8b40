// The kernel's process for one proposal message, without ports: the decider is walked from the loaded claim to its
// outcome, each request answered from a table of what the stores hold; the trace is what it asked (`? kind`) and
// the effects it returned, in order — the order that makes a crash safe.
import { describe, expect, it } from "vitest";
import type { ReserveResult } from "../../core/kernel/index.ts";
import type { ReviewRecord } from "../../core/kernel/review.ts";
import type { ProposalMessage } from "../messages.ts";
import { claimRecord, ESCALATED } from "./decide.test-kit.ts";
import { accept, CUSTOMER_CLAIM, entry, messageFor, PUBLISH_ACCEPT, running, walk } from "./kernel.test-kit.ts";
import type { World } from "./kernel.test-kit.ts";

describe("decideKernel: whether the message is acted on", () => {
  it.each([
    ["an unknown claim", { claim: undefined }, accept, [], "no claim clm_1 in decision flow dfid_clm_1"],
    [
      "a claim of another decision flow",
      { claim: { ...running, dfid: "dfid_other" } },
      accept,
      [],
      "no claim clm_1 in decision flow dfid_clm_1",
    ],
    [
      "a claim not awaiting a decision, with no verdict stored",
      { claim: { ...running, status: "NEEDS_REVIEW" } },
      accept,
      ["? verdict"],
      "claim clm_1 is NEEDS_REVIEW, not awaiting a decision",
    ],
  ] as const)("refuses %s, having written nothing", (_name, world, message, trace, reason) => {
    expect(walk(world as World, message)).toEqual({ trace, outcome: { outcome: "REFUSED", reason } });
  });

  it("refuses a proposal whose stored verdict belongs to another claim", () => {
    const first = walk({ claim: running }, accept).verdict!;
    const other = walk({ claim: running, verdict: { ...first, claim_id: "clm_2" } }, accept);
    expect(other.trace).toEqual(["? verdict"]);
    expect(other.outcome).toMatchObject({
      outcome: "REFUSED",
      reason: expect.stringContaining("belongs to claim clm_2"),
    });
  });
});

describe("decideKernel: deciding, executing, publishing", () => {
  it.each<[string, World, ProposalMessage, string[], Record<string, unknown>]>([
    [
      "an ACCEPT: decided at one instant, stored once, its refund reserved, published, the claim recorded DECIDED",
      { claim: running },
      accept,
      [
        "? verdict",
        "? now",
        "? order",
        "? ledger",
        "? store_verdict",
        "? now",
        "? reserve",
        "? record_execution",
        ...PUBLISH_ACCEPT,
        "publish ClaimVerdict,RefundExecuted",
        "? now",
        "? claim_update",
      ],
      { execution: "EXECUTED", published: false },
    ],
    [
      "an ACCEPT on an order with a customer: the customer's window read, reserved on first, read again after",
      { claim: claimRecord(CUSTOMER_CLAIM) },
      messageFor(claimRecord(CUSTOMER_CLAIM)),
      [
        "? verdict",
        "? now",
        "? order",
        "? ledger",
        "? customer_window",
        "? store_verdict",
        "? now",
        "? reserve_customer",
        "? reserve",
        "? customer_window",
        "? record_execution",
        ...PUBLISH_ACCEPT,
        "publish ClaimVerdict,RefundExecuted",
        "? now",
        "? claim_update",
      ],
      { execution: "EXECUTED" },
    ],
    [
      "an ESCALATE: nothing reserved, its review opened with its publication, the approval looked for",
      { claim: claimRecord(ESCALATED) },
      messageFor(claimRecord(ESCALATED)),
      [
        "? verdict",
        "? now",
        "? order",
        "? ledger",
        "? store_verdict",
        "audit PROPOSAL_SUBMITTED",
        "audit KERNEL_VERDICT",
        "audit REVIEW_REQUESTED",
        "review_open",
        "publish ClaimVerdict,ReviewRequested",
        "? now",
        "? claim_update",
        "? review",
      ],
      { execution: "NOT_APPLICABLE" },
    ],
    [
      "an ESCALATE a reviewer approved before the claim was DECIDED: the approval is the claim's refund",
      { claim: claimRecord(ESCALATED), review: { status: "APPROVED" } as ReviewRecord },
      messageFor(claimRecord(ESCALATED)),
      [
        "? verdict",
        "? now",
        "? order",
        "? ledger",
        "? store_verdict",
        "audit PROPOSAL_SUBMITTED",
        "audit KERNEL_VERDICT",
        "audit REVIEW_REQUESTED",
        "review_open",
        "publish ClaimVerdict,ReviewRequested",
        "? now",
        "? claim_update",
        "? review",
        "claim_update",
      ],
      { execution: "NOT_APPLICABLE" },
    ],
    [
      "a lost race for the balance: decided again against the ledger it saw, the REJECT replacing the ACCEPT",
      {
        claim: running,
        reserves: [
          {
            ok: false,
            code: "EXCEEDS_ORDER_AMOUNT",
            message: "m",
            entry: entry({ clm_2: 29999 }, { automatic_cents: 29999 }),
          },
        ],
      },
      accept,
      [
        "? verdict",
        "? now",
        "? order",
        "? ledger",
        "? store_verdict",
        "? now",
        "? reserve",
        "? record_execution",
        "audit CLAIM_REFUND_NOT_EXECUTED",
        "audit PROPOSAL_SUBMITTED",
        "audit KERNEL_VERDICT",
        "publish ClaimVerdict",
        "? now",
        "? claim_update",
      ],
      { execution: "NOT_APPLICABLE", record: { verdict: "REJECT" } },
    ],
    [
      "a lost race after which it is still an ACCEPT: reserved again on the order decided on, not read again",
      {
        claim: running,
        reserves: [
          { ok: false, code: "EXCEEDS_AUTOMATIC_LIMIT", message: "m", entry: entry({}) },
          { ok: true, entry: entry({ clm_1: 29999 }) },
        ],
      },
      accept,
      [
        "? verdict",
        "? now",
        "? order",
        "? ledger",
        "? store_verdict",
        "? now",
        "? reserve",
        "? reserve",
        "? record_execution",
        "audit PROPOSAL_SUBMITTED",
        "audit KERNEL_VERDICT",
        "audit CLAIM_REFUND_NOT_EXECUTED",
        "audit CLAIM_REFUND_EXECUTED",
        "publish ClaimVerdict,RefundExecuted",
        "? now",
        "? claim_update",
      ],
      { execution: "EXECUTED" },
    ],
    [
      "a refusal on the customer's window: the order's entry read, decided again (a person decides now)",
      { claim: claimRecord(CUSTOMER_CLAIM), customerRefused: true },
      messageFor(claimRecord(CUSTOMER_CLAIM)),
      [
        "? verdict",
        "? now",
        "? order",
        "? ledger",
        "? customer_window",
        "? store_verdict",
        "? now",
        "? reserve_customer",
        "? ledger",
        "? record_execution",
        "audit CLAIM_REFUND_NOT_EXECUTED",
        "audit PROPOSAL_SUBMITTED",
        "audit KERNEL_VERDICT",
        "audit REVIEW_REQUESTED",
        "review_open",
        "publish ClaimVerdict,ReviewRequested",
        "? now",
        "? claim_update",
        "? review",
      ],
      { execution: "NOT_APPLICABLE", record: { verdict: "ESCALATE" } },
    ],
    [
      "a refusal on the order after the customer's window reserved: the window's reservation released",
      {
        claim: claimRecord(CUSTOMER_CLAIM),
        reserves: [
          {
            ok: false,
            code: "EXCEEDS_ORDER_AMOUNT",
            message: "m",
            entry: { ...entry({ clm_2: 10000 }, { automatic_cents: 10000 }), order_id: "ord_021" },
          },
        ],
      },
      messageFor(claimRecord(CUSTOMER_CLAIM)),
      [
        "? verdict",
        "? now",
        "? order",
        "? ledger",
        "? customer_window",
        "? store_verdict",
        "? now",
        "? reserve_customer",
        "? reserve",
        "? release_customer",
        "? customer_window",
        "? record_execution",
        "audit CLAIM_REFUND_NOT_EXECUTED",
        "audit PROPOSAL_SUBMITTED",
        "audit KERNEL_VERDICT",
        "publish ClaimVerdict",
        "? now",
        "? claim_update",
      ],
      { execution: "NOT_APPLICABLE" },
    ],
    [
      "another proposal of the claim holding its refund: REFUSED, announcing nothing, marked published",
      {
        claim: running,
        reserves: [{ ok: false, code: "ALREADY_REFUNDED_FOR_CLAIM", message: "m", entry: entry({ clm_1: 100 }) }],
      },
      accept,
      [
        "? verdict",
        "? now",
        "? order",
        "? ledger",
        "? store_verdict",
        "? now",
        "? reserve",
        "? record_execution",
        "audit CLAIM_REFUND_NOT_EXECUTED",
        "? mark_published",
      ],
      { execution: "REFUSED", events: [] },
    ],
    [
      "a claim that moved on before the DECIDED update: the verdict marked published on its own item",
      { claim: running, taken: false },
      accept,
      [
        "? verdict",
        "? now",
        "? order",
        "? ledger",
        "? store_verdict",
        "? now",
        "? reserve",
        "? record_execution",
        ...PUBLISH_ACCEPT,
        "publish ClaimVerdict,RefundExecuted",
        "? now",
        "? claim_update",
        "? mark_published",
      ],
      { execution: "EXECUTED" },
    ],
  ])("%s", (_name, world, message, trace, verdict) => {
    const walked = walk(world, message);
    expect(walked.trace).toEqual(trace);
    expect(walked.outcome).toMatchObject({ outcome: "DECIDED", verdict });
  });

  it("retries the message when the refund keeps losing races", () => {
    const lost: ReserveResult = { ok: false, code: "EXCEEDS_AUTOMATIC_LIMIT", message: "m", entry: entry({}) };
    const walked = walk({ claim: running, reserves: [lost] }, accept);
    expect(walked.trace.filter((t) => t === "? reserve")).toHaveLength(5);
    expect(walked.outcome).toEqual({
      retry: "claim clm_1: the refund kept losing reservation races (5 decisions); the message is retried",
    });
    expect(walked.trace).not.toContain("? record_execution");
  });
});
