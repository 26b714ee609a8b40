// Replay of a claim's return (docs/returns.md): its own flow `dfid_ret_<claim>`, recorded beside the decision. The
// return events are recorded facts (no shop or carrier is asked again): each RETURN_COMPLETED is decided again by
// the pure decider over the events recorded before it, at its instant, and must say the same.
import type { AuditEvent } from "../../integrity/audit.ts";
import type { Claim } from "../../claim/claim.ts";
import type { ClaimsContract, Order } from "../../integrity/contracts.ts";
import { returnDfid } from "../../kernel/claim-record.ts";
import type { RefundExecutedDetail } from "../../kernel/events.ts";
import { decideReturn, plannedReturn, returnRequestedDetail } from "../../kernel/returns.ts";
import type { PayOn, RecordedReturnEvent } from "../../kernel/returns.ts";
import { AUDIT_EVENTS } from "../audit-events.ts";
import { scope } from "./context.ts";
import type { Ctx, Scope } from "./context.ts";

/** What an ACCEPT's reservation was decided on: the policy, the order and claim, the verdict's instant. */
export type ReturnInputs = {
  readonly contract: Pick<ClaimsContract, "returns" | "outcomes">;
  readonly order: Order | null | undefined;
  readonly claim: Pick<Claim, "category" | "lines" | "items" | "outcome">;
  readonly decidedAt: string;
};

/**
 * An ACCEPT's return, asked or not (docs/returns.md): the policy on the recorded order and claim says whether the
 * reserved refund waits for the item. When it does, the return's flow holds one RETURN_REQUESTED whose every detail
 * the replayed reservation gives (the lines, `pay_on`, `return_by`, `refund_due_days`, the execution and amount,
 * requested when the refund was reserved); when it does not, none. Returns what it found, for the step's summary.
 */
export function returnRequested(
  ctx: Ctx,
  s: Scope,
  inputs: ReturnInputs,
  refund: RefundExecutedDetail & { amount_minor: number },
  requestedAt: string,
): string | undefined {
  const planned = inputs.order
    ? plannedReturn(inputs.contract, inputs.order, inputs.claim, refund.amount_minor)
    : undefined;
  const claimEvents = ctx.all.filter((e) => e.details.claim_id === ctx.claimId);
  const asked = claimEvents.filter((e) => e.dfid === returnDfid(ctx.claimId) && e.event_type === "RETURN_REQUESTED");
  const labelOf = (e: (typeof asked)[number]) => `RETURN_REQUESTED #${claimEvents.indexOf(e) + 1}`;
  if (!planned) {
    for (const e of asked) s.expect(false, `${labelOf(e)}: the policy asks no return for this refund, it pays at once`);
    return undefined;
  }
  const [event, ...more] = asked;
  if (!event) {
    s.incomplete("RETURN_REQUESTED is missing: the policy asks the item back before this refund pays");
    return undefined;
  }
  for (const e of more) s.expect(false, `${labelOf(e)}: a second RETURN_REQUESTED for one reservation`);
  if (!AUDIT_EVENTS.RETURN_REQUESTED.safeParse(event.details).success) {
    s.incomplete(`${labelOf(event)} cannot be read`);
    return undefined;
  }
  const { amount_minor: _minor, ...detail } = refund;
  s.compare(labelOf(event), event.details, returnRequestedDetail(detail, planned, inputs.decidedAt, requestedAt));
  s.compare(`${labelOf(event)} created_at`, event.created_at, requestedAt);
  return `awaiting its return (pays on ${planned.policy.payOn})`;
}

/** Replays the return flow's events (none: nothing to replay, no step reported). */
export function replayReturn(ctx: Ctx, events: readonly AuditEvent[]): void {
  if (events.length === 0) return;
  const s = scope(ctx, "return");
  const requested = events.find((e) => e.event_type === "RETURN_REQUESTED");
  const asked = requested ? AUDIT_EVENTS.RETURN_REQUESTED.safeParse(requested.details) : undefined;
  if (!asked?.success) {
    s.incomplete("the return's flow has no readable RETURN_REQUESTED");
    return;
  }
  const recorded: RecordedReturnEvent[] = [];
  let completions = 0;
  let closed = false;
  for (const e of events) {
    if (e.event_type === "RETURN_EVENT_RECORDED") {
      const d = AUDIT_EVENTS.RETURN_EVENT_RECORDED.safeParse(e.details);
      if (!d.success) {
        s.incomplete(`RETURN_EVENT_RECORDED at ${e.created_at} cannot be read`);
        return;
      }
      const { claim_id: _c, simulation_id: _s, ...event } = d.data;
      recorded.push(event);
    }
    if (e.event_type !== "RETURN_COMPLETED") continue;
    const d = AUDIT_EVENTS.RETURN_COMPLETED.safeParse(e.details);
    if (!d.success) {
      s.incomplete(`RETURN_COMPLETED at ${e.created_at} cannot be read`);
      return;
    }
    completions++;
    const at = Date.parse(e.created_at);
    const state = { payOn: asked.data.pay_on as PayOn, deadlineAt: asked.data.return_by };
    // After a NOT_RECEIVED the claim is closed by its deadline: a late event is decided as such.
    const decision = decideReturn(closed ? { ...state, closed: "NOT_RECEIVED" } : state, recorded, at);
    const replayed =
      decision.outcome === "PAY"
        ? { outcome: "PAID", decided_by: decision.event_id }
        : decision.outcome === "REVIEW"
          ? { outcome: "REVIEW", decided_by: decision.event_id, reason_code: decision.reason_code }
          : { outcome: decision.outcome };
    const { outcome, decided_by, reason_code } = d.data;
    const recordedOutcome = {
      outcome,
      ...(decided_by === undefined ? {} : { decided_by }),
      ...(reason_code === undefined ? {} : { reason_code }),
    };
    s.compare(`RETURN_COMPLETED at ${e.created_at}`, recordedOutcome, replayed);
    if (outcome === "NOT_RECEIVED") closed = true;
    s.expect(
      d.data.execution_id === asked.data.execution_id,
      `RETURN_COMPLETED names execution ${d.data.execution_id}, the return reserved ${asked.data.execution_id}`,
    );
  }
  s.done(`${recorded.length} return event(s) recorded, ${completions} outcome(s) decided again alike`);
}
