// The timer handler on a large batch (its event source gathers up to 100 timers for a minute): every record is
// handled on its own (a settled claim's timer dropped, an open claim's forwarded as a tick, an early one
// re-armed, a bad one failed alone), and the records it has no time left for are reported for a redelivery,
// untouched, instead of the timeout failing the whole batch.
import type { Context } from "aws-lambda";
import { describe, expect, it } from "vitest";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { recordingLogger, sqsEvent } from "../local/testing/stack-fixture.ts";
import { bundledConfig } from "../pipeline/bundled-config.test-kit.ts";
import { createInProcessPipeline } from "../pipeline/in-process.ts";
import { createTimerHandler, TIMER_RESERVE_MS } from "./timer.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);

async function pipelineWith(claims: { id: string; status: ClaimRecord["status"] }[]) {
  const p = createInProcessPipeline({
    agent: config.agent,
    orders: [],
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => NOW },
  });
  const at = new Date(NOW - 600_000).toISOString();
  for (const { id, status } of claims)
    await p.deps.claims.createClaim({
      claim_id: id,
      dfid: `dfid_${id}`,
      root_dfid: `dfid_${id}`,
      status,
      input: { claim: { order_id: "ord_001", amount_eur: 10, category: "electronics", reason: "Broken" } },
      received_at: at,
      updated_at: at,
    });
  return p;
}

const timer = (claimId: string, dueMs = NOW - 1_000) => ({
  body: JSON.stringify({ claim_id: claimId, due_ms: dueMs }),
});

/** Ticks forwarded to the crew-events queue, by claim. */
function ticked(p: Awaited<ReturnType<typeof pipelineWith>>): string[] {
  const out: string[] = [];
  for (let w = p.queues.take(); w; w = p.queues.take())
    if (w.queue === "crew-events" && w.message.type === "crew.tick") out.push(w.claimId);
  return out;
}

/** A Lambda context whose time left shrinks by `perCallMs` each time the handler asks (no clock involved). */
function shrinkingContext(startMs: number, perCallMs: number): Context & { asked: number } {
  const context = {
    asked: 0,
    getRemainingTimeInMillis() {
      return startMs - perCallMs * context.asked++;
    },
  };
  return context as unknown as Context & { asked: number };
}

describe("the timer handler on a large batch", () => {
  it("handles each of 100 records on its own: settled dropped, open ticked, early re-armed, a bad one failed alone", async () => {
    const settled = Array.from({ length: 96 }, (_, i) => ({ id: `clm_done_${i}`, status: "DECIDED" as const }));
    const p = await pipelineWith([...settled, { id: "clm_open", status: "RUNNING" }]);
    const handler = createTimerHandler(() => p.deps, { logger: recordingLogger().logger });
    const records = [
      ...settled.slice(0, 50).map((c) => timer(c.id)),
      timer("clm_open"),
      { body: '{"claim_id":"clm_bad"}' },
      timer("clm_later", NOW + 20 * 60_000),
      ...settled.slice(50).map((c) => timer(c.id)),
      timer("clm_open"),
    ];
    expect(records).toHaveLength(100);

    const out = await handler(sqsEvent(records), shrinkingContext(10_000, 1));

    expect(out.batchItemFailures).toEqual([{ itemIdentifier: "m51" }]);
    expect(ticked(p)).toEqual(["clm_open", "clm_open"]);
    expect(p.queues.timers).toEqual([{ queue: "timers", claimId: "clm_later", dueMs: NOW + 20 * 60_000 }]);
  });

  it("starts no record with the reserve or less left, and reports those for a redelivery, untouched", async () => {
    const p = await pipelineWith([
      { id: "clm_a", status: "RUNNING" },
      { id: "clm_b", status: "RUNNING" },
      { id: "clm_c", status: "RUNNING" },
      { id: "clm_d", status: "RUNNING" },
    ]);
    const log = recordingLogger();
    const handler = createTimerHandler(() => p.deps, { logger: log.logger });
    // Asked once per record: 2 × the reserve left for the first, then one reserve less for each next record.
    const context = shrinkingContext(2 * TIMER_RESERVE_MS + 1, TIMER_RESERVE_MS);

    const out = await handler(sqsEvent(["clm_a", "clm_b", "clm_c", "clm_d"].map((id) => timer(id))), context);

    expect(context.asked).toBe(4);
    expect(ticked(p)).toEqual(["clm_a", "clm_b"]);
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: "m2" }, { itemIdentifier: "m3" }]);
    const retried = log.lines.filter((l) => l.message === "message will be retried");
    expect(retried).toHaveLength(2);
    expect(JSON.stringify(retried[0]?.fields)).toContain(`ms kept in reserve`);
  });
});
