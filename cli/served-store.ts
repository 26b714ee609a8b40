// The store `claims serve` keeps in the data directory, read by `claims report`, `claims replay` and
// `claims backtest`: through the running server while it runs, else from its files (read-only use).
import { join } from "node:path";
import type { AuditEvent } from "../core/integrity/index.ts";
import { returnDfid } from "../core/kernel/claim-record.ts";
import { readLocalCredentials } from "../local/credentials.ts";
import { openStateStore } from "../local/state-store.ts";
import { keysDir, servedVault } from "../adapters/vault/key-files.ts";
import type { StateStore } from "../local/state-store.ts";

/** Where `claims serve` keeps its table and queue journal inside the data directory. */
export const stateDirOf = (dataDir: string) => join(dataDir, "store");

/** Runs `use` on the store `claims serve` keeps in the data directory (running or not); undefined when there is none. */
export async function withStateStore<T>(
  dataDir: string,
  use: (store: StateStore) => Promise<T>,
): Promise<T | undefined> {
  // The customer's words are sealed in the table: opened with the data directory's key files (docs/customer-data.md).
  const store = await openStateStore(stateDirOf(dataDir), readLocalCredentials(dataDir), servedVault(keysDir(dataDir)));
  if (!store) return undefined;
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/**
 * The audit of every served claim sent without a simulation_id (with `all`, of every stored claim), claim by
 * claim, oldest claim first (each claim's in append order, its return's flow merged in by time). Reads only: it lists
 * claims and queries their flows.
 */
export async function servedClaimsAudit(
  store: { ports: Pick<StateStore["ports"], "claims" | "audit"> },
  opts: { all?: boolean } = {},
): Promise<AuditEvent[]> {
  const perClaim: AuditEvent[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.ports.claims.listClaims({ limit: 200, ...(cursor ? { cursor } : {}) });
    for (const claim of page.items) {
      if (!opts.all && claim.simulation_id) continue;
      const own = await store.ports.audit.byDfid(claim.dfid);
      // A claim whose ACCEPT asked the item back has its return's flow too (docs/returns.md): its events, the review
      // it opened and a person's decision on it, in time order with the claim's.
      const returned = claim.return ? await store.ports.audit.byDfid(returnDfid(claim.claim_id)) : [];
      perClaim.push(
        returned.length === 0
          ? own
          : [...own, ...returned].sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at)),
      );
    }
    cursor = page.nextCursor;
  } while (cursor);
  return perClaim.reverse().flat();
}
