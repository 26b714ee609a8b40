// A claim that ended without its automatic refund (timed out, stalled) may still hold a reservation on the window
// of its order's customer: released unless the order's ledger holds its refund (pipeline/decide/timers.ts
// `decideRelease`, which the sweep's and the overdue path's deciders run as their last part). This shell runs it alone.
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import type { PipelineDeps } from "./deps.ts";
import { decideRelease, startRelease } from "./decide/timers.ts";
import { runDecider } from "./perform.ts";

/** Releases the claim's reservation on its customer's window unless the order's ledger holds its refund; true when one was released. */
export async function releaseUnrefundedReservation(
  record: ClaimRecord,
  deps: Pick<PipelineDeps, "agent" | "orders" | "ledger" | "claims" | "queues" | "audit" | "publisher" | "reviews">,
): Promise<boolean> {
  return runDecider(startRelease(record, deps), decideRelease, deps);
}
