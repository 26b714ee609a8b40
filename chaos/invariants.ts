// The invariants every chaos flow must leave intact (docs/guarantees.md), checked on what the stores hold and the bus
// carried once the flow has drained, with its sweeps: no claim lost or stuck, one verdict per proposal, the money
// invariants (pipeline/money-invariants.ts, ledgers included), the review marks on the ledger, and the audit
// complete — `claims replay` IDENTICAL for every final claim.
import type { ClaimRecord } from "../core/claims/claim-record.ts";
import { isFinal } from "../core/claims/claim-record.ts";
import { replayClaim } from "../core/claims/replay.ts";
import type { ReviewRecord } from "../core/claims/review.ts";
import type {
  AuditEvent,
  CustomerLimits,
  LedgerEntry,
  Order,
  ResponsibilityContract,
} from "../core/integrity/index.ts";
import { checkMoneyInvariants } from "../pipeline/money-invariants.ts";
import type { MoneySummary, PublishedEvent } from "../pipeline/money-invariants.ts";
import type { StoredVerdict } from "../pipeline/ports.ts";

/** What a flow left behind. */
export interface FlowObservation {
  claims: readonly ClaimRecord[];
  verdicts: readonly StoredVerdict[];
  reviews: readonly ReviewRecord[];
  /** Every ledger entry of the flow's orders (scope: a simulation's ledger). */
  ledgers: readonly { scope?: string | undefined; entry: LedgerEntry }[];
  /** Everything published, repeats included. */
  events: readonly PublishedEvent[];
  /** Every audit event appended. */
  audit: readonly AuditEvent[];
  orders: readonly Order[];
  limitEur: number;
  /** The contract's customer limits, when it has them: automatic refunds per customer (the order's) stay within. */
  customerLimits?: CustomerLimits | undefined;
  responsibility: ResponsibilityContract;
}

/** The outcome of the checks: every violation, and the money totals. */
export interface InvariantResult {
  violations: string[];
  money: MoneySummary;
  replayed: number;
}

const group = <T>(items: readonly T[], key: (t: T) => string) => {
  const map = new Map<string, T[]>();
  for (const item of items) map.set(key(item), [...(map.get(key(item)) ?? []), item]);
  return map;
};

/** Checks every invariant on `o`; returns the violations (empty when all hold). */
export function checkFlowInvariants(o: FlowObservation): InvariantResult {
  const violations: string[] = [];
  const reviews = new Map(o.reviews.map((r) => [r.claim_id, r]));
  const events = o.events.filter((e) => typeof e.detail.claim_id === "string");
  const verdictIds = group(
    events.filter((e) => e.detailType === "ClaimVerdict"),
    (e) => String(e.detail.claim_id),
  );
  const stored = group(o.verdicts, (v) => v.claim_id);
  const claimIds = new Set(o.claims.map((c) => c.claim_id));

  // No claim lost or stuck.
  for (const c of o.claims) {
    if (!isFinal(c.status)) violations.push(`claim ${c.claim_id} is stuck in ${c.status}`);
    // The sweep's last resort (docs/local-stack.md): in a flow whose faults all pass, no nudge should ever fail to move a claim.
    if (c.status === "NEEDS_REVIEW" && c.reason_code === "STALLED")
      violations.push(`claim ${c.claim_id} is stuck: the sweep ended it STALLED (${c.reason ?? ""})`);
  }
  for (const e of events)
    if (!claimIds.has(String(e.detail.claim_id)))
      violations.push(`the bus carries ${e.detailType} for ${String(e.detail.claim_id)}, which is not stored`);

  // One verdict per proposal, and the published one is the claim's.
  for (const c of o.claims) {
    const ids = [...new Set((verdictIds.get(c.claim_id) ?? []).map((e) => String(e.detail.verdict_id)))];
    const mine = stored.get(c.claim_id) ?? [];
    for (const v of mine) {
      if (v.execution === "PENDING")
        violations.push(`claim ${c.claim_id}: stored verdict ${v.record.verdict_id} is still PENDING execution`);
      if (!v.published && isFinal(c.status))
        violations.push(`claim ${c.claim_id}: stored verdict ${v.record.verdict_id} was never published`);
    }
    if (c.status === "DECIDED") {
      if (ids.length !== 1 || ids[0] !== c.verdict_id)
        violations.push(
          `claim ${c.claim_id} (DECIDED ${c.verdict ?? "?"} ${c.verdict_id ?? "no id"}) has ClaimVerdict ids [${ids.join(", ")}] on the bus`,
        );
      const live = mine.filter((v) => v.execution !== "REFUSED");
      if (live.length !== 1 || live[0]!.record.verdict_id !== c.verdict_id)
        violations.push(
          `claim ${c.claim_id}: ${live.length} stored verdict(s) not superseded (${live.map((v) => v.record.verdict_id).join(", ")}), the claim records ${c.verdict_id ?? "none"}`,
        );
    } else if (c.status === "NEEDS_REVIEW" && ids.length > 0) {
      violations.push(`claim ${c.claim_id} is NEEDS_REVIEW but the bus carries ClaimVerdict ${ids.join(", ")}`);
    }
  }

  // Reviews: one for every escalation and every NEEDS_REVIEW, none left half decided, and the ledger's marks match.
  for (const c of o.claims) {
    const review = reviews.get(c.claim_id);
    const needsOne = c.status === "NEEDS_REVIEW" || (c.status === "DECIDED" && c.verdict === "ESCALATE");
    if (needsOne && !review)
      violations.push(`claim ${c.claim_id} (${c.status}${c.verdict ? ` ${c.verdict}` : ""}) has no review`);
    if (review?.intent)
      violations.push(
        `review of claim ${c.claim_id} is stuck with an unfinished ${review.intent.decision} (the decision was claimed, never carried out)`,
      );
    if (review && review.status === "APPROVED" && c.executed !== true)
      violations.push(`claim ${c.claim_id}: its review is APPROVED but the claim says executed=${String(c.executed)}`);
  }
  const marked = new Map<string, string>();
  for (const { scope, entry } of o.ledgers)
    for (const claimId of entry.pending_reviews ?? [])
      marked.set(claimId, `${scope ? `${scope}|` : ""}${entry.order_id}`);
  for (const [claimId, where] of marked) {
    const review = reviews.get(claimId);
    if (review?.status !== "PENDING")
      violations.push(
        `the ledger of ${where} still marks claim ${claimId} as awaiting review, but its review is ${review?.status ?? "absent"}: automatic refunds on the order are blocked for good`,
      );
  }
  const holds = new Set(o.ledgers.flatMap(({ entry }) => Object.keys(entry.claims)));
  for (const r of o.reviews) {
    if (r.status === "PENDING" && r.order_id && !marked.has(r.claim_id) && !holds.has(r.claim_id))
      violations.push(
        `claim ${r.claim_id}'s review is PENDING but the ledger of ${r.order_id} does not mark it: automatic refunds on the order would go on`,
      );
  }

  // Money, over the bus and the ledgers.
  const orderAmount = new Map(o.orders.map((x) => [x.order_id, x.amount]));
  const money = checkMoneyInvariants(o.events, {
    orderAmountEur: (id) => orderAmount.get(id),
    limitEur: o.limitEur,
    ledgers: o.ledgers.map(({ scope, entry }) => ({ orderId: entry.order_id, scope, claims: entry.claims })),
    ...(o.customerLimits
      ? {
          customers: {
            customerOf: (id: string) => o.orders.find((x) => x.order_id === id)?.customer_id,
            limits: o.customerLimits,
          },
        }
      : {}),
  });
  violations.push(...money.violations);
  for (const c of o.claims) {
    if (holds.has(c.claim_id) !== (c.executed === true))
      violations.push(
        `claim ${c.claim_id} says executed=${String(c.executed)} but the ledger ${holds.has(c.claim_id) ? "holds" : "does not hold"} its refund`,
      );
  }

  // The audit is complete: every final claim replays IDENTICAL, to the outcome its record shows.
  let replayed = 0;
  for (const c of o.claims) {
    if (!isFinal(c.status)) continue;
    const review = reviews.get(c.claim_id);
    const result = replayClaim(c.claim_id, o.audit, {
      responsibility: o.responsibility,
      ...(review ? { review } : {}),
    });
    replayed++;
    const expected = c.status === "NEEDS_REVIEW" ? "NEEDS_REVIEW" : c.verdict;
    if (result.status !== "IDENTICAL") {
      const bad = result.steps.filter((s) => s.status !== "IDENTICAL").map((s) => `${s.step}: ${s.detail}`);
      violations.push(`claims replay ${c.claim_id} is ${result.status}: ${bad.slice(0, 3).join(" | ")}`);
    } else if (result.outcome !== expected) {
      violations.push(`claims replay ${c.claim_id} ends ${result.outcome ?? "nowhere"}, the claim ${expected ?? "?"}`);
    }
  }
  return { violations, money, replayed };
}
