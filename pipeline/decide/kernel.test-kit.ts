// The kernel's decider walked without ports (decide/kernel.test.ts, kernel-redelivery.test.ts): from the loaded claim
// to its outcome, each request answered from a table of what the stores hold; the trace is what it asked
// (`? kind`) and the effects it returned, in order.
import type { OutboundCrewEvent } from "../../core/crew/index.ts";
import type { LedgerEntry, ReserveResult } from "../../core/kernel/index.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { ReviewRecord } from "../../core/kernel/review.ts";
import type { ProposalMessage } from "../messages.ts";
import type { StoredVerdict } from "../ports.ts";
import { crewEffects } from "./crew-completion.ts";
import { ACCEPTABLE, claimRecord, NOW, order, policy, shape } from "./decide.test-kit.ts";
import { decideKernel, kernelStart } from "./kernel.ts";
import type { KernelOutcome } from "./kernel-protocol.ts";
import type { Observation, Request } from "./requests.ts";

/** The proposal the crew completion sends to the kernel for `record`. */
export function messageFor(record: ClaimRecord): ProposalMessage {
  const { order_id, amount_eur, category, reason } = record.claim!;
  const output = { action: "REFUND", order_id, amount_eur, category, reason, confidence: 0.9 };
  const sent = crewEffects(
    [{ type: "crew.completed", crewId: record.claim_id, output } as OutboundCrewEvent],
    record,
    NOW,
    policy,
  ).find((e) => e.kind === "proposal");
  if (sent?.kind !== "proposal") throw new Error("no proposal");
  return sent.message;
}

export const CUSTOMER_CLAIM = {
  order_id: "ord_021",
  amount_eur: 100,
  category: "electronics",
  reason: "Broken on arrival",
  customer_id: "cus_0100",
};

/** What the stores hold, and how they answer; each case overrides what it is about. */
export interface World {
  claim: ClaimRecord | undefined;
  verdict?: StoredVerdict;
  ledger?: LedgerEntry;
  /** Answers to the order's reservations, in turn (the last one repeats); default: reserved. */
  reserves?: ReserveResult[];
  customerRefused?: boolean;
  /** Whether the claim takes the DECIDED update (default: yes). */
  taken?: boolean;
  review?: ReviewRecord;
  /** The order source or its data fails on the first order read. */
  orderFails?: "ORDER_SOURCE_UNAVAILABLE" | "ORDER_DATA_INVALID";
  now?: number;
}

export const entry = (claims: Record<string, number>, extra: Partial<LedgerEntry> = {}): LedgerEntry => ({
  order_id: "ord_001",
  refunded_cents: Object.values(claims).reduce((a, b) => a + b, 0),
  claims,
  ...extra,
});

/** Walks the decider from the loaded claim to its outcome, answering from `world`; what it asked and did, in order. */
export function walk(
  world: World,
  message: ProposalMessage,
  delivery: { finalAttempt?: boolean } = {},
  p = policy,
): { trace: string[]; outcome: KernelOutcome | { retry: string }; verdict?: StoredVerdict } {
  const trace: string[] = [];
  let stored = world.verdict;
  let reserves = 0;
  const answer = (request: Request): Observation => {
    switch (request.kind) {
      case "claim":
        return { kind: "claim", claim: world.claim };
      case "now":
        return { kind: "now", now: world.now ?? NOW };
      case "verdict":
        return { kind: "verdict", verdict: stored };
      case "store_verdict":
        stored ??= request.verdict;
        return { kind: "store_verdict", verdict: stored };
      case "order":
        if (world.orderFails) return { kind: "failed", code: world.orderFails, message: "the shop said no" };
        return { kind: "order", order: order(request.orderId) };
      case "ledger":
        return { kind: "ledger", entry: world.ledger };
      case "customer_window":
        return { kind: "customer_window", window: undefined };
      case "reserve_customer": {
        const at = new Date(NOW - 86_400_000).toISOString();
        // Refused: the customer had their two automatic refunds of the window already.
        const reservations = world.customerRefused
          ? ["clm_8", "clm_9"].map((claim_id) => ({ claim_id, order_id: "ord_022", cents: 10000, at }))
          : [];
        const window = { customer_id: request.request.customerId, reservations, version: 1 };
        return world.customerRefused
          ? {
              kind: "reserve_customer",
              result: { ok: false, code: "CUSTOMER_LIMIT_EXCEEDED", message: "over the limit", window },
            }
          : { kind: "reserve_customer", result: { ok: true, window, repeat: false } };
      }
      case "reserve": {
        const all = world.reserves ?? [{ ok: true, entry: entry({ clm_1: request.request.cents }) }];
        return { kind: "reserve", result: all[Math.min(reserves++, all.length - 1)]! };
      }
      case "release_customer":
        return { kind: "release_customer" };
      case "record_execution":
        if (stored?.execution === "PENDING") stored = { ...stored, ...request.outcome };
        return { kind: "record_execution", verdict: stored! };
      case "claim_update":
        return { kind: "claim_update", changed: world.taken ?? true, record: world.claim };
      case "mark_published":
        return { kind: "mark_published" };
      case "review":
        return { kind: "review", review: world.review };
      default:
        throw new Error(`the kernel asked for ${request.kind}`);
    }
  };
  let step = decideKernel(kernelStart(message, delivery), { kind: "claim", claim: world.claim }, p);
  for (;;) {
    trace.push(...shape(step.effects));
    const { next } = step;
    if ("done" in next) return { trace, outcome: next.done, ...(stored ? { verdict: stored } : {}) };
    if ("then" in next) {
      step = next.then;
      continue;
    }
    trace.push(`? ${next.awaiting.kind}`);
    const answered = answer(next.awaiting);
    // The shell answers `failed` only to a request asked with failureObserved.
    if (answered.kind === "failed" && !next.failureObserved) throw new Error(`${next.awaiting.kind} cannot fail here`);
    step = decideKernel(next.state, answered, p);
  }
}

export const running = claimRecord(ACCEPTABLE);
export const accept = messageFor(running);
export const PUBLISH_ACCEPT = ["audit PROPOSAL_SUBMITTED", "audit KERNEL_VERDICT", "audit CLAIM_REFUND_EXECUTED"];
