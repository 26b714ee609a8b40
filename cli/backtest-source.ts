// Where `claims backtest` reads recorded decisions from, read-only: the batch runs of the data directory
// (each its own history) and the claims `claims serve` keeps (through it while it runs, else its files),
// or a deployed table through the DynamoDB adapters. Served claims are one history; the claims of each
// simulation sent to a server are one more each (their refunds went to a ledger of their own).
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

/** Every stored claim's audit as histories: the served claims, then each simulation's, oldest claim first. */
export async function storedHistories(store: StoredPorts, simulationId?: string): Promise<RecordedHistory[]> {
  if (simulationId !== undefined) {
    const events = await store.ports.audit.bySimulation(simulationId);
    return events.length > 0 ? [{ id: `${SERVED_HISTORY}:${simulationId}`, events }] : [];
  }
  const groups = new Map<string, AuditEvent[]>();
  for (const event of await servedClaimsAudit(store, { all: true })) {
    const sim = event.details.simulation_id;
    const id = typeof sim === "string" && sim !== "" ? `${SERVED_HISTORY}:${sim}` : SERVED_HISTORY;
    let group = groups.get(id);
    if (!group) groups.set(id, (group = []));
    group.push(event);
  }
  return [...groups].map(([id, events]) => ({ id, events }));
}

/** What a data directory holds for a backtest: its runs (oldest first) and its served store's histories. */
export async function dataDirHistories(
  dataDir: string,
  simulationId?: string,
): Promise<{ histories: RecordedHistory[]; source: string } | undefined> {
  if (simulationId !== undefined && existsSync(join(runDir(dataDir, simulationId), "audit.jsonl")))
    return {
      histories: [{ id: simulationId, events: loadRunAudit(dataDir, simulationId) }],
      source: `the recorded run in ${runDir(dataDir, simulationId)}`,
    };
  const runs =
    simulationId === undefined
      ? listRuns(dataDir)
          .reverse()
          .map((id) => ({ id, events: loadRunAudit(dataDir, id) }))
      : [];
  const served = await withStateStore(dataDir, async (store) => ({
    histories: await storedHistories(store, simulationId),
    source: store.source,
  }));
  const histories = [...runs, ...(served?.histories ?? [])];
  if (histories.length === 0) return undefined;
  const sources = [
    ...(runs.length > 0 ? [`${runs.length} recorded run(s) in ${join(dataDir, "runs")}`] : []),
    ...(served && served.histories.length > 0 ? [`the served claims (from ${served.source})`] : []),
  ];
  return { histories, source: sources.join(" and ") };
}
