// Human review (docs/reviews.md): listing reviews with what a reviewer decides on, and deciding one — the shell of
// pipeline/decide/review.ts (APPROVE: the reject checks again, then the refund reserved exactly once through the same
// ledger as an ACCEPT; DENY; RESUBMIT: a corrected claim through intake; a failed refund's RETRY / CLOSE). A decision
// is claimed on the review first (an intent, conditional on its version), so a crash anywhere is repaired by
// repeating the same decision (or by the sweep) and a different decision is refused with 409.
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { reviewFacts } from "../core/kernel/review.ts";
import { currencyFor } from "../core/kernel/public-amount.ts";
import type { ReviewContext, ReviewerIdentity, ReviewRecord, ReviewStatus } from "../core/kernel/review.ts";
import { customerLimitsCents, windowTotals } from "../core/kernel/customer-window.ts";
import { proposalOutputOf } from "../core/claim/proposal-output.ts";
import type { PipelineDeps } from "./deps.ts";
import { decideReview as decideReviewStep, startReview, startReviewRepair } from "./decide/review.ts";
import type { ReviewPolicy, ReviewResult, ReviewState } from "./decide/review.ts";
import type { Observation } from "./decide/requests.ts";
import { refundReviewListItem } from "./refund-review.ts";
import { refundRetryBlocked } from "../core/kernel/settlement.ts";
import { readOrdersBounded } from "./order-reads.ts";
import type { OrderRead } from "./order-reads.ts";
import { reviewDesk } from "./review-desk.ts";
import { runDecider } from "./perform.ts";
import { pendingReviewKey, reviewListKey } from "./ports.ts";

export type { ReviewResult } from "./decide/review.ts";

type ReviewDeps = Pick<
  PipelineDeps,
  | "claims"
  | "reviews"
  | "verdicts"
  | "orders"
  | "ledger"
  | "audit"
  | "publisher"
  | "queues"
  | "clock"
  | "ids"
  | "agent"
  | "registry"
  | "settlements"
>;

/**
 * Decides the claim's review as `by` asked (docs/reviews.md; pipeline/decide/review.ts); idempotent, and nothing is
 * written for a refused request. `by` is the authenticated reviewer; a body `reviewer` naming anyone else is refused
 * (400). Callers without a credential (a simulation's scripted review steps, tests) leave `by` out: the body's
 * `reviewer` then names the simulated person (default `reviewer`).
 */
export async function decideReview(
  claimId: string,
  body: unknown,
  deps: ReviewDeps,
  by?: ReviewerIdentity,
): Promise<ReviewResult> {
  const policy = policyOf(deps);
  const result = await runDecider(startReview(claimId, body, by, policy), decider(policy), deps);
  return result!;
}

function policyOf(deps: ReviewDeps): ReviewPolicy {
  return { agent: deps.agent, registry: deps.registry, settlements: deps.settlements !== undefined };
}

function decider(policy: ReviewPolicy) {
  return (state: ReviewState, observed: Observation) => decideReviewStep(state, observed, policy);
}

/** One listed review with what a reviewer decides on: the claim's stored record and the kernel's stored verdict. */
type ReviewListEntry = { review: ReviewRecord; context: ReviewContext };

/**
 * Lists reviews with `status` (PENDING by default), oldest first, each with its context: the claim as stored
 * (structured or extracted, the free text, the proposal) and, for an escalation, the kernel's deciding layer
 * and checks from the stored verdict. Two reads per review, in parallel. A PENDING page also holds the failed
 * refunds' pending reviews (origin REFUND_FAILED, `refundReviews`): both are read by their own key, oldest first
 * by reviewListKey, merged, and `limit` of them make the page, so one cursor pages through both.
 */
export async function listReviews(
  query: {
    status?: ReviewStatus;
    limit?: number;
    cursor?: string;
    /** The bounds of the page's order reads (default LISTING_ORDER_READS). */
    orderReads?: Parameters<typeof readOrdersBounded>[2];
  },
  deps: Pick<PipelineDeps, "reviews" | "claims" | "verdicts" | "orders" | "ledger" | "settlements" | "agent" | "clock">,
): Promise<{ items: ReviewListEntry[]; refundReviews: Record<string, unknown>[]; nextCursor?: string }> {
  const status = query.status ?? "PENDING";
  const limit = query.limit ?? 50;
  const cursor = query.cursor ? { cursor: query.cursor } : {};
  const [claimPage, refundPage] = await Promise.all([
    deps.reviews.listReviews({ status, limit, ...cursor }),
    status === "PENDING" && deps.settlements
      ? deps.settlements.listPendingReviews({ limit, ...cursor })
      : { items: [], nextCursor: undefined },
  ]);
  const merged = [
    ...claimPage.items.map((review) => ({ key: reviewListKey(review.requested_at, review.claim_id), review })),
    ...refundPage.items.map((settlement) => ({ key: pendingReviewKey(settlement)!, settlement })),
  ].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const page = merged.slice(0, limit);
  const more = merged.length > limit || claimPage.nextCursor !== undefined || refundPage.nextCursor !== undefined;
  const reviews = page.flatMap((x) => ("review" in x ? [x.review] : []));
  const settlements = page.flatMap((x) => ("settlement" in x ? [x.settlement] : []));
  // The page's orders, each read once, bounded in count and time: one the shop cannot serve shows on its own item.
  const orders = await readOrdersBounded(
    deps.orders,
    [...reviews.flatMap((r) => (r.order_id ? [r.order_id] : [])), ...settlements.map((s) => s.order_id)],
    query.orderReads ?? {},
  );
  const items = await Promise.all(
    reviews.map(async (review): Promise<ReviewListEntry> => {
      const key = proposalKey(review.proposal);
      const [record, verdict, facts] = await Promise.all([
        deps.claims.getClaim(review.claim_id),
        key ? deps.verdicts.getVerdict(key) : undefined,
        factsOf(review, review.order_id ? orders.get(review.order_id) : undefined, deps),
      ]);
      const context: ReviewContext = {
        ...(record?.claim ? { claim: record.claim } : {}),
        ...(record && "claim_text" in record.input ? { claimText: record.input.claim_text } : {}),
        ...(record?.label ? { label: record.label } : {}),
        // The claim keeps its proposal from its final update on; an escalation's review (opened just before that
        // update) carries the proposal it was decided on, so the listing shows it even in between.
        ...proposalOf(record, review),
        ...(verdict && verdict.claim_id === review.claim_id
          ? { verdict: { verdict: verdict.record.verdict, layer: verdict.layer, checks: verdict.checks } }
          : {}),
        facts,
      };
      return { review, context };
    }),
  );
  const refundReviews = settlements.map((settlement) => {
    const read = orders.get(settlement.order_id);
    const order = read && "order" in read ? read.order : undefined;
    return refundReviewListItem(
      settlement,
      reviewDesk(deps),
      refundRetryBlocked(settlement.provider, order, settlement.failure_reason),
    );
  });
  return { items, refundReviews, ...(more && page.length > 0 ? { nextCursor: page.at(-1)!.key } : {}) };
}

/** The Decision Maker's proposal a review is about: the claim's, else the one an escalation's review carries. */
function proposalOf(record: ClaimRecord | undefined, review: ReviewRecord): { proposal?: unknown } {
  const proposal = record?.proposal ?? proposalOutputOf(review.proposal);
  return proposal ? { proposal } : {};
}

/**
 * The order facts of a review (reviewFacts): the order as the listing read it, its ledger entry, and the other
 * claims the ledger knows on it (refunded or under review), each read as it stands. An order that could not be
 * read shows as `order: null` with why (`order_unread`).
 */
async function factsOf(
  review: ReviewRecord,
  read: OrderRead | undefined,
  deps: Pick<PipelineDeps, "claims" | "ledger" | "agent" | "clock">,
): Promise<Record<string, unknown>> {
  if (!review.order_id) return reviewFacts({ others: [] });
  const order = read && "order" in read ? read.order : undefined;
  const ledger = await deps.ledger.get(review.order_id, review.simulation_id);
  const ids = [...new Set([...Object.keys(ledger?.claims ?? {}), ...(ledger?.pending_reviews ?? [])])].filter(
    (id) => id !== review.claim_id,
  );
  const others = (await Promise.all(ids.slice(0, 50).map((id) => deps.claims.getClaim(id)))).flatMap((c) =>
    c
      ? [
          {
            claim_id: c.claim_id,
            status: c.status,
            verdict: c.verdict,
            reason_code: c.reason_code,
            amount_eur: c.claim?.amount_eur,
          },
        ]
      : [],
  );
  const customerWindow = order
    ? await customerWindowFacts(order.customer_id, currencyFor(order), review.simulation_id, deps)
    : undefined;
  return reviewFacts({
    ...(order ? { order } : {}),
    ...(review.currency ? { currency: review.currency } : {}),
    ...(read && "unread" in read ? { orderUnread: read.unread } : {}),
    ...(ledger ? { ledger } : {}),
    others,
    ...(customerWindow ? { customerWindow } : {}),
  });
}

/**
 * The customer's automatic refunds in the limit window now (made and in flight), when the contract has customer
 * limits and the order a customer; otherwise nothing (no such rule binds the order).
 */
async function customerWindowFacts(
  customerId: string | undefined,
  currency: string,
  scope: string | undefined,
  deps: Pick<PipelineDeps, "ledger" | "agent" | "clock">,
): Promise<{ refunds: number; refunded_cents: number } | undefined> {
  const limits = deps.agent.contract.customer_limits;
  if (!limits || customerId === undefined) return undefined;
  const window = await deps.ledger.getCustomerWindow(customerId, scope);
  // The order's currency only (a reservation without one is EUR's): minor units of two currencies are never added.
  const same = window && {
    ...window,
    reservations: window.reservations.filter((r) => (r.currency ?? "EUR") === currency),
  };
  const totals = windowTotals(same, deps.clock.now(), customerLimitsCents(limits).windowMs);
  return { refunds: totals.count, refunded_cents: totals.cents };
}

/** The idempotency key of a stored proposal (the key its verdict is stored under), if it has one. */
function proposalKey(proposal: unknown): string | undefined {
  const key =
    typeof proposal === "object" && proposal !== null
      ? (proposal as { idempotency_key?: unknown }).idempotency_key
      : undefined;
  return typeof key === "string" && key !== "" ? key : undefined;
}

/**
 * Completes decisions that were claimed but not finished (a crash between the intent and the record): the
 * sweep calls this, so a refund reserved by an approval is always announced. Returns how many it finished.
 */
export async function repairReviews(deps: ReviewDeps, limit = 50): Promise<number> {
  const decide = decider(policyOf(deps));
  let repaired = 0;
  let cursor: string | undefined;
  do {
    const page = await deps.reviews.listReviews({ status: "PENDING", limit, ...(cursor ? { cursor } : {}) });
    for (const review of page.items) {
      if (!review.intent) continue;
      if ((await runDecider(startReviewRepair(review), decide, deps)) !== undefined) repaired++;
    }
    cursor = page.nextCursor;
  } while (cursor);
  return repaired;
}
