// The return's progress, decided (docs/returns.md): what a posted return event does to a claim awaiting its return,
// and what the deadline does to one that got none. Pure: the shell (pipeline/returns.ts) loads the claim and the
// recorded events, calls these, and performs the effects — `before` always, then the claim's one conditional move
// (`transition`), then `after` only when that move took, so two racing deliveries announce the outcome once.
import { knownAmountFields, withoutAmountEur } from "../../core/kernel/public-amount.ts";
import type { AuditEvent, AuditSeverity } from "../../core/integrity/index.ts";
import { auditEvent } from "../../core/history/audit-events.ts";
import type { ClaimAuditDetails } from "../../core/history/audit-events.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { returnDfid } from "../../core/kernel/claim-record.ts";
import { busEntry } from "../../core/kernel/events.ts";
import type { RefundExecutedDetail, ReturnRequestedDetail } from "../../core/kernel/events.ts";
import { decideReturn, distinctReturnEvents, sameReturnEvent } from "../../core/kernel/returns.ts";
import { creditFieldsOf } from "../../core/kernel/outcomes.ts";
import type {
  RecordedReturnEvent,
  ReturnDecision,
  ReturnEventBody,
  ReturnReviewCode,
} from "../../core/kernel/returns.ts";
import type { Effect } from "../effects.ts";
import type { ClaimUpdate } from "./requests.ts";
import { reviewOpenedFor } from "./needs-review.ts";

/** The return audit events, recorded under the return's own flow (`dfid_ret_<claim>`). */
type ReturnAuditType = "RETURN_REQUESTED" | "RETURN_EVENT_RECORDED" | "RETURN_COMPLETED";

/** An audit event of the claim's return flow (its root is the claim's, so a run's report finds it). */
export function returnAudit<T extends ReturnAuditType>(
  record: Pick<ClaimRecord, "root_dfid" | "simulation_id" | "claim_id">,
  type: T,
  state: string,
  at: number,
  details: ClaimAuditDetails<T>,
  severity: AuditSeverity = "INFO",
): AuditEvent {
  return auditEvent({
    dfid: returnDfid(record.claim_id),
    rootDfid: record.root_dfid,
    type,
    severity,
    state,
    details: { claim_id: record.claim_id, ...details } as never,
    at: new Date(at).toISOString(),
    ...(record.simulation_id ? { simulationId: record.simulation_id } : {}),
  });
}

/** The recorded return events of a claim, read from its return flow's audit (unreadable ones left out). */
export function recordedReturnEvents(events: readonly AuditEvent[]): RecordedReturnEvent[] {
  return events.flatMap((e) => {
    if (e.event_type !== "RETURN_EVENT_RECORDED") return [];
    const d = e.details as Partial<RecordedReturnEvent>;
    if (typeof d.event_id !== "string" || typeof d.event !== "string" || typeof d.at !== "string") return [];
    return [
      {
        event_id: d.event_id,
        event: d.event,
        at: d.at,
        ...(typeof d.carrier_ref === "string" ? { carrier_ref: d.carrier_ref } : {}),
        recorded_at: typeof d.recorded_at === "string" ? d.recorded_at : e.created_at,
      },
    ];
  });
}

/** What the shell does with a return event or a deadline: effects around the claim's one conditional move. */
export type ReturnStep = {
  readonly before: Effect[];
  readonly transition?: ClaimUpdate;
  readonly after: Effect[];
  /** The claim's status once the move took (or as it is, when there is none). */
  readonly status: ClaimRecord["status"];
  readonly decision: ReturnDecision["outcome"] | "RECORDED";
};

/** Why a posted event is refused: the claim awaits no return, or the event id was used for another event. */
export type ReturnRefusal = { readonly refused: "NOT_AWAITING_RETURN" | "EVENT_ID_REUSED"; readonly message: string };

/**
 * The `RefundExecuted` a return's `pay_on` releases: the one the kernel reserved, under the same execution id, with
 * its amount in the currency the claim's verdict counted (docs/events.md; unknown on a claim decided before it).
 */
function refundOf(r: ReturnRequestedDetail, currency: string | undefined): RefundExecutedDetail {
  const detail = refundDetailOf(r);
  if (r.amount !== undefined) return { ...detail, amount: r.amount };
  return currency === undefined
    ? detail
    : { ...withoutAmountEur(detail), ...knownAmountFields(detail.amount_eur, currency) };
}

function refundDetailOf(r: ReturnRequestedDetail): RefundExecutedDetail {
  return {
    execution_id: r.execution_id,
    claim_id: r.claim_id,
    dfid: r.dfid,
    order_id: r.order_id,
    ...(r.amount_eur === undefined ? {} : { amount_eur: r.amount_eur }),
    verdict_id: r.verdict_id,
    ...(r.simulation_id ? { simulation_id: r.simulation_id } : {}),
    ...creditFieldsOf(r),
  };
}

/**
 * `effects` with their audit events moved to the claim's return flow: the review a return opens, and its decision,
 * are audited there (docs/returns.md), so the claim's decision flow and its replay stay the ACCEPT's.
 */
export function inReturnFlow(claimId: string, effects: readonly Effect[]): Effect[] {
  const dfid = returnDfid(claimId);
  return effects.map((e) => (e.kind === "audit" ? { ...e, event: { ...e.event, dfid } } : e));
}

/** The reservation of a return's refund released on the order's ledger (idempotent). */
function releaseEffect(record: ClaimRecord, asked: ReturnRequestedDetail): Effect {
  return {
    kind: "refund_released",
    orderId: asked.order_id,
    claimId: record.claim_id,
    ...(record.simulation_id ? { scope: record.simulation_id } : {}),
  };
}

const REVIEW_REASONS: Record<ReturnReviewCode, string> = {
  RETURN_INSPECTION_FAILED:
    "The returned item failed inspection; a person decides: refund anyway (APPROVE, the amount reserved) or DENY.",
  RETURN_AFTER_DEADLINE:
    "A return event came after the return deadline closed the claim (its refund released); a person decides.",
};

/**
 * What a posted return event does (pure). Refused when the claim awaits no return and the event is not a late one
 * (a claim closed RETURN_NOT_RECEIVED takes late events: they open a review), or when its id names another event.
 * A new event is recorded first; then the recorded events decide (core/kernel/returns.ts `decideReturn`): PAY
 * publishes the reserved refund's `RefundExecuted` (same execution id: a repeat or a race announces the same refund,
 * which the executor pays once) and moves the claim DECIDED; REVIEW moves it NEEDS_REVIEW and opens its review.
 */
export function decideReturnEvent(
  record: ClaimRecord,
  recorded: readonly RecordedReturnEvent[],
  posted: ReturnEventBody,
  now: number,
): ReturnStep | ReturnRefusal {
  const asked = record.return;
  const closed = record.status === "DECIDED" && asked?.outcome === "NOT_RECEIVED";
  if (!asked || (record.status !== "AWAITING_RETURN" && !closed)) {
    const known = recorded.find((e) => e.event_id === posted.event_id);
    // A repeat of an event that was recorded (the claim moved on since, maybe by it): the same answer, nothing done.
    if (asked && known && sameReturnEvent(known, posted))
      return { before: [], after: [], status: record.status, decision: "RECORDED" };
    return {
      refused: "NOT_AWAITING_RETURN",
      message: asked
        ? `claim ${record.claim_id} is ${record.status}${asked.outcome ? ` (return ${asked.outcome})` : ""}, no longer awaiting its return`
        : `claim ${record.claim_id} is ${record.status} and awaits no return`,
    };
  }
  const known = recorded.find((e) => e.event_id === posted.event_id);
  if (known && !sameReturnEvent(known, posted))
    return {
      refused: "EVENT_ID_REUSED",
      message: `event_id ${posted.event_id} was recorded for another event (${known.event} at ${known.at})`,
    };
  const at = new Date(now).toISOString();
  const fresh: RecordedReturnEvent | undefined = known ? undefined : { ...posted, recorded_at: at };
  const record_ = fresh
    ? [
        {
          kind: "audit" as const,
          event: returnAudit(record, "RETURN_EVENT_RECORDED", record.status, now, {
            ...posted,
            recorded_at: at,
          }),
        },
      ]
    : [];
  const all = distinctReturnEvents(fresh ? [...recorded, fresh] : recorded);
  const decision = decideReturn(
    { payOn: asked.pay_on, deadlineAt: asked.return_by, ...(closed ? { closed: "NOT_RECEIVED" as const } : {}) },
    all,
    now,
  );
  const step = stepFor(record, asked, decision, now);
  // A late event finds the claim closed: its release is done again (idempotent), repairing one a crash cut off.
  const release = closed ? [releaseEffect(record, asked)] : [];
  return { ...step, before: [...record_, ...release, ...step.before] };
}

/**
 * What the deadline does to a claim awaiting its return (pure; the sweep's shell calls it with the recorded events):
 * none by `return_by` → the reservation released, the claim DECIDED `RETURN_NOT_RECEIVED`; events that decide it
 * (a pay_on a crash kept from being carried out) → as a posted event would; else nothing.
 */
export function decideReturnDeadline(
  record: ClaimRecord,
  recorded: readonly RecordedReturnEvent[],
  now: number,
): ReturnStep {
  const asked = record.return;
  if (record.status !== "AWAITING_RETURN" || !asked)
    return { before: [], after: [], status: record.status, decision: "CLOSED" };
  const decision = decideReturn({ payOn: asked.pay_on, deadlineAt: asked.return_by }, recorded, now);
  return stepFor(record, asked, decision, now);
}

/**
 * The review a return sent its claim to, opened again (pure): the claim moved to NEEDS_REVIEW first, conditionally,
 * and its review is opened after the move, so a crash between leaves the claim with no review for a person to find
 * (chaos seed 7731, flows 466 and 1085). The next event posted for the claim finds it so (the shell sees no review)
 * and carries out what the move's `after` would have: RETURN_COMPLETED, the review and its announcements — decided
 * again over the recorded events, as replay decides it. Nothing for any other claim.
 */
export function returnReviewRepair(
  record: ClaimRecord,
  recorded: readonly RecordedReturnEvent[],
  now: number,
): Effect[] {
  const asked = record.return;
  const code = record.reason_code;
  if (!asked || record.status !== "NEEDS_REVIEW" || asked.outcome !== "REVIEW") return [];
  if (code !== "RETURN_INSPECTION_FAILED" && code !== "RETURN_AFTER_DEADLINE") return [];
  const closed = code === "RETURN_AFTER_DEADLINE";
  const decision = decideReturn(
    { payOn: asked.pay_on, deadlineAt: asked.return_by, ...(closed ? { closed: "NOT_RECEIVED" as const } : {}) },
    recorded,
    now,
  );
  if (decision.outcome !== "REVIEW" || decision.reason_code !== code) return [];
  // The claim as it stood before the move, so the review records where it came from.
  return stepFor({ ...record, status: closed ? "DECIDED" : "AWAITING_RETURN" }, asked, decision, now).after;
}

/**
 * What the sweep finishes for a claim its return moved on (pure; docs/returns.md): the claim's move out of
 * AWAITING_RETURN comes first and what follows it second, so a crash between leaves a claim closed
 * RETURN_NOT_RECEIVED (or sent to a person for a late return) whose refund is still held on the order's ledger, or a
 * claim in NEEDS_REVIEW whose review never opened (chaos seed 7731, flows 1385 and 1756; seed 5, flow 233). Given
 * whether the order's ledger still holds the claim's refund and whether its review exists, the missing step: the
 * review opened as `returnReviewRepair` opens it (the release with it, for a late return), or the release alone.
 * Nothing for a claim whose steps were all done, so the sweep running it again changes nothing.
 */
export function returnOutcomeRepair(
  record: ClaimRecord,
  recorded: readonly RecordedReturnEvent[],
  found: { readonly held: boolean; readonly reviewed: boolean },
  now: number,
): Effect[] {
  const asked = record.return;
  if (!asked) return [];
  const release = found.held ? [releaseEffect(record, asked)] : [];
  if (record.status === "DECIDED" && asked.outcome === "NOT_RECEIVED") return release;
  if (record.status !== "NEEDS_REVIEW" || asked.outcome !== "REVIEW") return [];
  if (!found.reviewed) return returnReviewRepair(record, recorded, now);
  return record.reason_code === "RETURN_AFTER_DEADLINE" ? release : [];
}

/** The step of a decision on a claim awaiting its return (or closed by its deadline, for a late event). */
function stepFor(record: ClaimRecord, asked: ReturnRequestedDetail, decision: ReturnDecision, now: number): ReturnStep {
  const at = new Date(now).toISOString();
  const from: ClaimRecord["status"][] = [record.status];
  const completed = (details: Omit<ClaimAuditDetails<"RETURN_COMPLETED">, "execution_id">, state: string) => ({
    kind: "audit" as const,
    event: returnAudit(record, "RETURN_COMPLETED", state, now, { execution_id: asked.execution_id, ...details }),
  });
  switch (decision.outcome) {
    case "WAIT":
    case "CLOSED":
      return { before: [], after: [], status: record.status, decision: decision.outcome };
    case "PAY":
      return {
        // Published before the claim moves: a crash between leaves the claim awaiting, and the next delivery or the
        // sweep publishes the same refund again (the executor pays an execution id once).
        before: [{ kind: "publish", entries: [busEntry("RefundExecuted", refundOf(asked, record.amount?.currency))] }],
        transition: {
          kind: "claim_update",
          claimId: record.claim_id,
          patch: {
            status: "DECIDED",
            executed: true,
            return: { ...asked, outcome: "PAID", decided_by: decision.event_id },
            updated_at: at,
          },
          onlyFrom: from,
        },
        after: [completed({ outcome: "PAID", decided_by: decision.event_id }, "DECIDED")],
        status: "DECIDED",
        decision: "PAY",
      };
    case "REVIEW": {
      const reason = REVIEW_REASONS[decision.reason_code];
      // Audited under the return's flow: the claim's decision flow (and its replay) stays the ACCEPT's.
      const opened = inReturnFlow(
        record.claim_id,
        reviewOpenedFor(record, now, decision.reason_code, reason, { status_before: record.status }),
      );
      const reviewId = opened.flatMap((e) => (e.kind === "review_open" ? [e.review.review_id] : []))[0];
      return {
        before: [],
        transition: {
          kind: "claim_update",
          claimId: record.claim_id,
          patch: {
            status: "NEEDS_REVIEW",
            reason_code: decision.reason_code,
            reason,
            return: { ...asked, outcome: "REVIEW", decided_by: decision.event_id },
            updated_at: at,
          },
          onlyFrom: from,
        },
        after: [
          completed(
            {
              outcome: "REVIEW",
              decided_by: decision.event_id,
              reason_code: decision.reason_code,
              ...(reviewId ? { review_id: reviewId } : {}),
            },
            "NEEDS_REVIEW",
          ),
          ...opened,
          // Shipped late: the refund is released, as the deadline releases it (after the move, never before: a claim
          // still awaiting never has its refund released; idempotent, so a closed claim's release again is harmless).
          ...(decision.reason_code === "RETURN_AFTER_DEADLINE" ? [releaseEffect(record, asked)] : []),
        ],
        status: "NEEDS_REVIEW",
        decision: "REVIEW",
      };
    }
    case "NOT_RECEIVED":
      return {
        before: [],
        transition: {
          kind: "claim_update",
          claimId: record.claim_id,
          patch: {
            status: "DECIDED",
            executed: false,
            reason_code: "RETURN_NOT_RECEIVED",
            reason: `No return event came by ${asked.return_by}: the refund was released.`,
            return: { ...asked, outcome: "NOT_RECEIVED" },
            updated_at: at,
          },
          onlyFrom: from,
        },
        // Released after the claim moved, never before: a claim still awaiting with its refund released could be paid
        // by a pay_on event. A crash between leaves the refund held (never paid; the order's balance short by it)
        // until a late event for the claim releases it again (docs/returns.md).
        after: [completed({ outcome: "NOT_RECEIVED" }, "DECIDED"), releaseEffect(record, asked)],
        status: "DECIDED",
        decision: "NOT_RECEIVED",
      };
  }
}
