// Where the money of the refunds in an audit is, each state apart, so that "refunded" means paid: settled by the
// payment provider (and, apart, CLOSEd by a reviewer as paid out of band), pending with it, failed, or CLOSEd
// unpaid. Authorised is every refund the kernel or a reviewer authorised (a RETRY's failed execution left out once
// its new one exists). Pure: read from the audit events (CLAIM_REFUND_EXECUTED, REFUND_SETTLED / REFUND_FAILED,
// REVIEW_DECIDED CLOSE / RETRY), one state per execution, the last word on each winning.
import type { AuditEvent } from "../core/integrity/audit.ts";

/** A count and its sum in EUR. */
export type Tally = { count: number; eur: number };

/** The refunds of an audit by where their money is. */
export type MoneyStates = {
  authorised: Tally;
  settled: Tally;
  paidOutOfBand: Tally;
  pending: Tally;
  failed: Tally;
  closedUnpaid: Tally;
};

type State = "pending" | "settled" | "failed" | "closedUnpaid" | "paidOutOfBand";

const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);

/** The money states of the refunds the events record (see the file comment). */
export function moneyStates(events: readonly AuditEvent[]): MoneyStates {
  const executions = new Map<string, { cents: number; state: State }>();
  const retried = new Set<string>();
  for (const e of events) {
    const d = e.details;
    const id = str(d.execution_id);
    if (e.event_type === "CLAIM_REFUND_EXECUTED" && id && typeof d.amount_cents === "number") {
      if (!executions.has(id)) executions.set(id, { cents: d.amount_cents, state: "pending" });
      if (str(d.retry_of)) retried.add(String(d.retry_of));
      continue;
    }
    if (e.event_type === "REVIEW_DECIDED" && d.decision === "RETRY" && str(d.retry_of)) retried.add(String(d.retry_of));
    // An approval's (or a RETRY's) refund, should its CLAIM_REFUND_EXECUTED not be in the events.
    if (
      e.event_type === "REVIEW_DECIDED" &&
      (d.decision === "APPROVE" || d.decision === "RETRY") &&
      id &&
      typeof d.amount_eur === "number" &&
      !executions.has(id)
    ) {
      executions.set(id, { cents: Math.round(d.amount_eur * 100), state: "pending" });
      continue;
    }
    const line = id === undefined ? undefined : executions.get(id);
    if (!line) continue;
    if (e.event_type === "REVIEW_DECIDED" && d.decision === "CLOSE")
      line.state = d.paid_out_of_band === true ? "paidOutOfBand" : "closedUnpaid";
    else if (e.event_type === "REFUND_SETTLED" && line.state === "pending") line.state = "settled";
    else if (e.event_type === "REFUND_FAILED" && (line.state === "pending" || line.state === "settled"))
      line.state = "failed";
  }
  const zero = (): Tally => ({ count: 0, eur: 0 });
  const cents: Record<keyof MoneyStates, number> = {
    authorised: 0,
    settled: 0,
    paidOutOfBand: 0,
    pending: 0,
    failed: 0,
    closedUnpaid: 0,
  };
  const out: MoneyStates = {
    authorised: zero(),
    settled: zero(),
    paidOutOfBand: zero(),
    pending: zero(),
    failed: zero(),
    closedUnpaid: zero(),
  };
  for (const [id, line] of executions) {
    if (retried.has(id)) continue;
    for (const key of ["authorised", line.state] as const) {
      out[key].count++;
      cents[key] += line.cents;
    }
  }
  for (const key of Object.keys(out) as (keyof MoneyStates)[]) out[key].eur = cents[key] / 100;
  return out;
}
