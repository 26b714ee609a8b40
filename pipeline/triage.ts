// Triage shell (docs/kernel.md): load the claim's order and ledger entry -> decide (pipeline/decide/triage.ts) ->
// store the REJECT once under the triage key, publish it, record the claim DECIDED. The money path is any REJECT's:
// nothing to reserve, the verdict stored before it is published, published before the claim is DECIDED (which
// proves the publication), and a redelivery finishes what a crash left (the stored verdict, never a new decision).
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { KernelInputError, OrderDataError } from "../core/integrity/index.ts";
import { OrderSourceUnavailableError } from "./errors.ts";
import { verdictToStore } from "./decide/kernel-decision.ts";
import { triageDecision, triageKey } from "./decide/triage.ts";
import type { Effect } from "./effects.ts";
import { performEffects } from "./perform.ts";
import { publishAndRecordDecided } from "./kernel-service.ts";
import type { KernelDeps } from "./kernel-service.ts";

/** What triage runs with: the kernel's reads and writes, without the registry (no proposal to check). */
export type TriageDeps = Omit<KernelDeps, "registry" | "settings">;

/**
 * Triages a claim whose crew has not started: `TRIAGED` when the kernel decided it (now, or by an earlier delivery
 * whose verdict is stored), `CREW` when it goes to the crew as before — it can pass, its order data cannot be used
 * (the kernel's path sends that to a person), or the claim is no longer open.
 */
export async function triageOpenClaim(
  record: ClaimRecord,
  deps: TriageDeps,
  /** Performed first when the claim is triaged (the receipt its start carried), else left to the caller. */
  before: readonly Effect[] = [],
): Promise<"TRIAGED" | "CREW"> {
  const key = triageKey(record, deps);
  if (!key || !record.claim) return "CREW";
  let stored = await deps.verdicts.getVerdict(key);
  const foundStored = stored !== undefined;
  if (!stored) {
    if (record.status !== "RECEIVED" && record.status !== "RUNNING") return "CREW";
    const now = deps.clock.now();
    let decision;
    try {
      // The order is read the way the kernel service reads it (one port for every order reader).
      const order = await deps.orders.getOrder(record.claim.order_id);
      const ledgerEntry = order ? await deps.ledger.get(order.order_id, record.simulation_id) : undefined;
      decision = triageDecision(record, { order, ledgerEntry, decidedAt: new Date(now).toISOString(), now }, deps);
    } catch (error) {
      // Corrupt order data, or an order source that cannot answer now: the crew path and the kernel handle both as
      // before (a person for corrupt data; the kernel's bounded wait for the source, docs/orders.md).
      if (
        !(
          error instanceof OrderDataError ||
          error instanceof KernelInputError ||
          error instanceof OrderSourceUnavailableError
        )
      )
        throw error;
      return "CREW";
    }
    if (!decision) return "CREW";
    stored = await deps.verdicts.putVerdictOnce(verdictToStore(key, record.claim_id, decision));
  }
  await performEffects(before, deps);
  await publishAndRecordDecided(stored, record, deps, { foundStored });
  return "TRIAGED";
}
