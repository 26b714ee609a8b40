// Reading a deployed table for `claims backtest --table` (dynalite through the real SDK and the DynamoDB
// adapters): the bundled run's claims stored as served claims come back as one history that backtests
// exactly as the recorded run's file does; a simulation's claims only when it is named.
import { describe, expect, it } from "vitest";
import { backtest } from "../core/history/backtest/index.ts";
import { configWithLimit, policyOf, recordBundledRun } from "../core/history/backtest/backtest.test-kit.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import type { AuditEvent } from "../core/integrity/audit.ts";
import { createDynamoPorts } from "../adapters/aws/dynamo-ports.ts";
import { useEmulatedAws } from "../adapters/aws/emulators.test-kit.ts";
import { SERVED_HISTORY, storedHistories, storedSimulations } from "./backtest-source.ts";

const aws = useEmulatedAws();

/**
 * The claim records and audit of a recorded run as a server stores them (`simulationId` undefined: served
 * claims). A server's clock moves: each event is restamped one millisecond after the one before it (the
 * kernel's decision time with it, the claim's listing by its receipt), where the batch run froze its clock.
 */
function asStored(events: readonly AuditEvent[], simulationId: string | undefined) {
  const base = Date.parse("2026-06-01T12:00:00Z");
  const audit = events
    .filter((e) => typeof e.details.claim_id === "string")
    .map((e, i) => {
      const at = new Date(base + i).toISOString();
      const { simulation_id: _run, ...recorded } = e.details;
      const details: Record<string, unknown> = {
        ...recorded,
        ...(simulationId ? { simulation_id: simulationId } : {}),
      };
      if (e.event_type === "KERNEL_VERDICT") details.decided_at = at;
      return { ...e, created_at: at, details };
    });
  // The kernel's recorded decision time is its verdict's (the receipt time stays: the return window counts from it).
  const decided = new Map(audit.filter((e) => e.event_type === "KERNEL_VERDICT").map((e) => [e.details.claim_id, e]));
  for (const e of audit.filter((e) => e.event_type === "PROPOSAL_SUBMITTED")) {
    const inputs = e.details.kernel_inputs as Record<string, unknown>;
    e.details.kernel_inputs = {
      ...inputs,
      decidedAt: decided.get(e.details.claim_id)!.details.decided_at,
    };
  }
  // A claim whose ACCEPT asked the item back (docs/returns.md) carries its return, as the pipeline stores it.
  const asked = new Map(audit.filter((e) => e.event_type === "RETURN_REQUESTED").map((e) => [e.details.claim_id, e]));
  const records: ClaimRecord[] = audit
    .filter((e) => e.event_type === "CLAIM_RECEIVED")
    .map((e) => ({
      claim_id: String(e.details.claim_id),
      dfid: e.dfid,
      root_dfid: e.root_dfid,
      status: "DECIDED",
      input: e.details.input as ClaimRecord["input"],
      // Listed in the order received.
      received_at: e.created_at,
      updated_at: e.created_at,
      ...(simulationId ? { simulation_id: simulationId } : {}),
      ...(asked.has(e.details.claim_id)
        ? { return: asked.get(e.details.claim_id)!.details as unknown as NonNullable<ClaimRecord["return"]> }
        : {}),
    }));
  return { audit, records };
}

describe("backtest histories from a deployed table", () => {
  it("reads the served claims as one history that backtests as the recorded run does, and a simulation's only when named", async () => {
    const bundled = await recordBundledRun();
    const tableName = await aws.newTable();
    const ports = createDynamoPorts({ client: aws.doc, tableName });
    for (const sim of [undefined, "sim_shop_a"]) {
      const { audit, records } = asStored(bundled.events, sim);
      for (const record of records) await ports.claims.createClaim(record);
      for (const event of audit) await ports.audit.append(event);
    }

    const served = await storedHistories({ ports });
    expect(served.map((h) => h.id)).toEqual([SERVED_HISTORY]);
    expect(await storedSimulations({ ports })).toEqual(["sim_shop_a"]);
    const histories = [...served, ...(await storedHistories({ ports }, "sim_shop_a"))];
    const policy = policyOf(configWithLimit(100));
    const fromFile = backtest({ histories: [{ id: "run", events: bundled.events }], policy });
    expect(fromFile.not_evaluable).toHaveLength(1);
    for (const history of histories) {
      const fromTable = backtest({ histories: [history], policy });
      expect(fromTable.flips).toEqual(fromFile.flips);
      expect(fromTable.totals).toEqual(fromFile.totals);
      // G, triaged in the recording, goes to the crew under a 100 EUR limit: not evaluable, from the table as from the file.
      expect(fromTable.not_evaluable).toEqual(fromFile.not_evaluable);
      expect(fromTable.not_evaluable.map((n) => n.claim_id)).toEqual([bundled.claimOf("G")]);
    }
    const one = await storedHistories({ ports }, "sim_shop_a");
    expect(one.map((h) => h.id)).toEqual([`${SERVED_HISTORY}:sim_shop_a`]);
    expect(backtest({ histories: one, policy }).flips).toEqual(fromFile.flips);
  }, 60_000);
});
