// The served view's claims (GET /reports): the most recently received claims sent without a simulation_id,
// found through the claims' own listing (newest receipt first) and read from their audit flows. The audit log
// keeps no listing of its own for them: a served claim's receipt costs no index write beyond its claim's.
import type { AuditEvent } from "../core/integrity/index.ts";
import type { PipelineDeps } from "./deps.ts";

/** Claims read per listing page while looking for served ones (simulation claims in between are skipped). */
const SERVED_PAGE = 200;

/**
 * The audit events of the `limit` most recently received served claims (no simulation_id), each flow in its
 * append order, flows oldest receipt first; events that belong to a simulation are left out.
 */
export async function recentServedEvents(
  deps: Pick<PipelineDeps, "claims" | "audit">,
  limit: number,
): Promise<AuditEvent[]> {
  if (!Number.isInteger(limit) || limit <= 0) return [];
  const dfids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await deps.claims.listClaims({ limit: SERVED_PAGE, ...(cursor ? { cursor } : {}) });
    for (const claim of page.items) {
      if (claim.simulation_id !== undefined) continue;
      dfids.push(claim.dfid);
      if (dfids.length === limit) break;
    }
    cursor = dfids.length < limit ? page.nextCursor : undefined;
  } while (cursor);
  // A flow also holds copies of the flows rooted in it (a resubmitted claim's): each event is taken from its own flow.
  const flows = await Promise.all(
    dfids.reverse().map(async (dfid) => (await deps.audit.byDfid(dfid)).filter((e) => e.dfid === dfid)),
  );
  return flows.flat().filter((e) => e.details.simulation_id === undefined);
}
