// A customer's rights over the claims `claims serve` keeps (issue 38, docs/customer-data.md): the table holds their
// words only sealed under each claim's key (adapters/vault/sealed-table.ts), so erasing destroys the keys — against
// a stopped serve's files, or a running serve's table through its endpoint with the run's own credentials
// (cli/served-store.ts). A claim still in flight goes on to its decision: its words read `[erased]` from then on,
// and whatever it writes later is sealed under the destroyed key, i.e. stored `[erased]`.
import { auditEvent } from "../core/history/audit-events.ts";
import { belongsTo, claimOwners } from "../core/history/customer-claims.ts";
import type { DestroyOutcome } from "../pipeline/personal-data.ts";
import { PERSONAL_DATA_ERASURES_DFID } from "../pipeline/retention.ts";
import type { CustomerExport, ErasureTarget } from "./customer-data.ts";
import { busLines, exportedClaim, selects } from "./customer-data.ts";
import { dataDirVault } from "./run-store.ts";
import { servedClaimsAudit, withStateStore } from "./served-store.ts";
import type { StateStore } from "../local/state-store.ts";

/** The flow the served stack's erasures are recorded under (an event of the stack, not of a claim). */
export const SERVED_ERASURES_DFID = PERSONAL_DATA_ERASURES_DFID;

/** Statuses of a claim not yet at its end (or a review still pending): its erasure lets it go on, its words erased. */
const IN_FLIGHT = new Set(["RECEIVED", "RUNNING", "NEEDS_REVIEW"]);

/** What an erasure did to the served claims. */
export interface ServedErasure {
  /** Where the answers came from: "the running claims serve (pid …)" or "the files in …". */
  readonly source: string;
  readonly claims: { claim_id: string; outcome: DestroyOutcome; in_flight: boolean }[];
}

/** Erases the target's served claims (undefined when the data directory holds no served store). */
export async function eraseServed(
  dataDir: string,
  target: ErasureTarget,
  now: Date,
): Promise<ServedErasure | undefined> {
  const vault = dataDirVault(dataDir);
  return withStateStore(dataDir, (store) => eraseInStore(store, (claimId) => vault.destroy(claimId), target, now));
}

/**
 * Erases the target's claims of a table's store — `claims serve`'s, or a deployed stage's (cli/customer-data-aws.ts):
 * finds them through their audit (the decision path, in clear), destroys each claim's data key with `destroy`, and
 * records PERSONAL_DATA_ERASED under a flow of its own, so no claim's audit changes.
 */
export async function eraseInStore(
  store: { readonly ports: Pick<StateStore["ports"], "claims" | "audit" | "reviews">; readonly source: string },
  destroy: (claimId: string) => Promise<DestroyOutcome>,
  target: ErasureTarget,
  now: Date,
): Promise<ServedErasure> {
  const events = await servedClaimsAudit(store, { all: true });
  const owners = claimOwners(events).filter((o) => selects(target, o));
  const claims: ServedErasure["claims"] = [];
  for (const o of owners) {
    const record = await store.ports.claims.getClaim(o.claimId);
    const review = await store.ports.reviews.getReview(o.claimId);
    claims.push({
      claim_id: o.claimId,
      outcome: await destroy(o.claimId),
      in_flight: (record !== undefined && IN_FLIGHT.has(record.status)) || review?.status === "PENDING",
    });
  }
  const erased = claims.filter((c) => c.outcome !== "already_erased").map((c) => c.claim_id);
  if (erased.length > 0)
    await store.ports.audit.append(
      auditEvent({
        dfid: SERVED_ERASURES_DFID,
        type: "PERSONAL_DATA_ERASED",
        state: "ERASED",
        at: now.toISOString(),
        details: {
          ...("customerId" in target ? { customer_id: target.customerId } : {}),
          claim_ids: erased,
          erased_at: now.toISOString(),
          cause: "receivedBefore" in target ? "retention" : "request",
          ...("receivedBefore" in target ? { retention_days: target.retentionDays } : {}),
        },
      }),
    );
  return { source: store.source, claims };
}

/**
 * The retention policy over the served claims (`retention.customer_text_days`): erases, as `claims erase` does, every
 * served claim received more than `days` days before `now`. `claims serve`'s sweep runs it beside the runs' one.
 */
export function sweepServedRetention(dataDir: string, days: number, now: Date): Promise<ServedErasure | undefined> {
  const receivedBefore = new Date(now.getTime() - days * 86_400_000).toISOString();
  return eraseServed(dataDir, { receivedBefore, retentionDays: days }, now);
}

/** Everything the served store holds about `customerId`, opened (`[erased]` where erased), as `claims export` lists it. */
export async function exportServed(dataDir: string, customerId: string): Promise<CustomerExport["claims"]> {
  const bus = busLines(dataDir);
  const found = await withStateStore(dataDir, async (store) => {
    const events = await servedClaimsAudit(store, { all: true });
    return claimOwners(events)
      .filter((o) => belongsTo(o, customerId))
      .map((o) => exportedClaim(o, "served", events, bus));
  });
  return found ?? [];
}
