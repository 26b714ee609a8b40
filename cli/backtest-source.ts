// Where `claims backtest` reads recorded decisions from, read-only: the claims `claims serve` keeps (through
// it while it runs, else its files) or a deployed table through the DynamoDB adapters. By default the served
// traffic alone (claims sent without a simulation id: one history); demo runs — a batch run of the data
// directory, or the claims of a simulation sent to a server (their refunds went to a ledger of their own) —
// only when named with --simulation-id.
import type { RecordedHistory } from "../core/history/backtest/index.ts";
import type { AuditEvent } from "../core/integrity/index.ts";
import type { StateStore } from "../local/state-store.ts";
import { listRuns, loadRunAudit, runDir } from "./run-store.ts";
import { servedClaimsAudit, withStateStore } from "./served-store.ts";
import { existsSync } from "node:fs";
import { join } from "node:path";

/** The history id of the claims served without a simulation id. */
export const SERVED_HISTORY = "served";

/** The ports a backtest reads a store through (queries only). */
type StoredPorts = { ports: Pick<StateStore["ports"], "claims" | "audit"> };

/**
 * A store's recorded claims as a history: the served traffic (claims without a simulation id, oldest first), or
 * with `simulationId` that simulation's claims alone. Empty when there are none.
 */
export async function storedHistories(store: StoredPorts, simulationId?: string): Promise<RecordedHistory[]> {
  if (simulationId !== undefined) {
    const events = await store.ports.audit.bySimulation(simulationId);
    return events.length > 0 ? [{ id: `${SERVED_HISTORY}:${simulationId}`, events }] : [];
  }
  const events: AuditEvent[] = (await servedClaimsAudit(store, { all: true })).filter((e) => {
    const sim = e.details.simulation_id;
    return typeof sim !== "string" || sim === "";
  });
  return events.length > 0 ? [{ id: SERVED_HISTORY, events }] : [];
}

/** How many claims of simulations a store holds beside the served traffic (left out unless named). */
export async function storedSimulations(store: StoredPorts): Promise<string[]> {
  const sims = new Set<string>();
  for (const e of await servedClaimsAudit(store, { all: true })) {
    const sim = e.details.simulation_id;
    if (typeof sim === "string" && sim !== "") sims.add(sim);
  }
  return [...sims].sort();
}

/** What a backtest of a data directory reads: the histories and where from, or (nothing found) the demo runs it holds. */
export type DataDirHistories =
  | { found: true; histories: RecordedHistory[]; source: string }
  | { found: false; runs: string[]; simulations: string[] };

/**
 * What a data directory holds for a backtest: by default its served traffic alone; with `simulationId` that
 * recorded batch run, else the served claims of that simulation.
 */
export async function dataDirHistories(dataDir: string, simulationId?: string): Promise<DataDirHistories> {
  if (simulationId !== undefined && existsSync(join(runDir(dataDir, simulationId), "audit.jsonl")))
    return {
      found: true,
      histories: [{ id: simulationId, events: await loadRunAudit(dataDir, simulationId) }],
      source: `the recorded run in ${runDir(dataDir, simulationId)}`,
    };
  const served = await withStateStore(dataDir, async (store) => ({
    histories: await storedHistories(store, simulationId),
    simulations: simulationId === undefined ? await storedSimulations(store) : [],
    source: store.source,
  }));
  if (served && served.histories.length > 0)
    return {
      found: true,
      histories: served.histories,
      source:
        simulationId === undefined
          ? `the served claims (from ${served.source})`
          : `the served claims of simulation ${simulationId} (from ${served.source})`,
    };
  return { found: false, runs: listRuns(dataDir), simulations: served?.simulations ?? [] };
}
