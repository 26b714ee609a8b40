import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import type { AuditEvent } from "../core/integrity/index.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { createInMemoryAuditLog } from "./in-memory.ts";
import type { AuditLog } from "./ports.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);

/** An audit log that records each write (one list of event types per call). */
function recordingAudit(): AuditLog & { writes: string[][] } {
  const log = createInMemoryAuditLog();
  const writes: string[][] = [];
  return {
    ...log,
    writes,
    async append(event: AuditEvent) {
      writes.push([event.event_type]);
      await log.append(event);
    },
    async appendAll(events: readonly AuditEvent[]) {
      writes.push(events.map((e) => e.event_type));
      await log.appendAll(events);
    },
  };
}

function pipeline(audit: AuditLog) {
  const llm = createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });
  return createInProcessPipeline({
    agent: config.agent,
    orders: config.orders,
    llm,
    clock: { now: () => NOW },
    overrides: { audit },
  });
}

describe("a structured claim's receipt", () => {
  it("is written with the crew's first step (one write for both), first in the claim's audit, and the claim replays", async () => {
    const audit = recordingAudit();
    const p = pipeline(audit);
    const body = { claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Dead screen" } };
    const submitted = await p.submit(body, { claimId: "clm_receipt" });
    expect(submitted.ok).toBe(true);
    // Intake wrote nothing to the audit: the receipt rides in the crew start.
    expect(audit.writes).toEqual([]);
    await p.drain();
    expect(audit.writes[0]).toEqual(["CLAIM_RECEIVED", "CREW_STARTED"]);
    expect(audit.writes.flat().filter((t) => t === "CLAIM_RECEIVED")).toHaveLength(1);
    const events = await audit.byDfid("dfid_clm_receipt");
    expect(events[0]?.event_type).toBe("CLAIM_RECEIVED");
    expect((await p.claims.getClaim("clm_receipt"))?.status).toBe("DECIDED");
    const replay = replayClaim("clm_receipt", events);
    expect(replay.status, JSON.stringify(replay)).toBe("IDENTICAL");
  });

  it("is written before the verdict's events when the claim is triaged", async () => {
    const audit = recordingAudit();
    const p = pipeline(audit);
    await p.submit(
      { claim: { order_id: "ord_unknown", amount_eur: 10, category: "electronics", reason: "Never came" } },
      { claimId: "clm_receipt_triaged" },
    );
    await p.drain();
    const types = (await audit.byDfid("dfid_clm_receipt_triaged")).map((e) => e.event_type);
    expect(types[0]).toBe("CLAIM_RECEIVED");
    expect(types).toContain("CLAIM_TRIAGED");
    expect(types.filter((t) => t === "CLAIM_RECEIVED")).toHaveLength(1);
  });
});
