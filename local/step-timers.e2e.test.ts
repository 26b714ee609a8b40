// Who arms a claim's step-deadline timer, on the emulators through the real SDK (CLAIMS_STEP_TIMERS): with `lazy`, the
// default, a structured claim decided end to end sends nothing to the timers queue, and a claim whose first step
// message was lost is moved on by the sweep, whose tick times the step out and arms the timer; with `eager` the
// crew's start sends the claim's one timer, as before.
import { describe, expect, it } from "vitest";
import type { FunctionKey } from "../app/manifest.ts";
import type { PipelineDeps } from "../pipeline/deps.ts";
import { assertInvariants, recordSends } from "./testing/fault-injection.ts";
import { stackPerTest } from "./testing/stack-per-test.ts";
import { decideOnStack, startTestStack, TEST_NOW } from "./testing/stack-fixture.ts";
import type { LocalStack, LocalStackOptions } from "./stack.ts";

/** The bundled config's first order: a structured claim the crew decides (scenarios/config.yaml). */
const CLAIM = { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead" };

const perTest = stackPerTest<LocalStack>("claims-step-timers-");

/** A test stack (frozen clock, rules model, no sweep of its own) with a data directory for the bus journal. */
async function start(overrides: Partial<LocalStackOptions> = {}) {
  const s = perTest.keep(await startTestStack({ dataDir: perTest.dataDir(), ...overrides }));
  return { s, sends: recordSends(s.clients.sqs, { duplicate: false }) };
}

const timerBodies = (s: LocalStack, sends: ReturnType<typeof recordSends>) =>
  sends.sent.filter((m) => m.queueUrl === s.queues.timers.url).map((m) => JSON.parse(m.body) as unknown);

describe("step timers on the local stack", () => {
  it("lazy (the default): a structured claim decided end to end sends no timer message", async () => {
    const { s, sends } = await start();
    const record = await decideOnStack(s, { claim: CLAIM });
    await s.drained();
    expect(record.status === "DECIDED" || record.status === "NEEDS_REVIEW").toBe(true);
    expect(sends.sent.some((m) => m.queueUrl === s.queues.agentSteps.url)).toBe(true); // the crew did run
    expect(timerBodies(s, sends)).toEqual([]);
  }, 60_000);

  it("eager: the crew's start sends the claim's one timer, for its first step deadline", async () => {
    const { s, sends } = await start({ stepTimers: "eager" });
    const record = await decideOnStack(s, { claim: CLAIM });
    await s.drained();
    // The bundled crew shape is compact: its one step (the claims officer) has the Decision Maker's deadline.
    const dueMs = TEST_NOW + s.deps.settings.timeouts.decisionMs;
    expect(timerBodies(s, sends)).toEqual([{ claim_id: record.claim_id, due_ms: dueMs }]);
  }, 60_000);

  it("lazy: a claim whose first step message is lost is moved on by the sweep's tick, which arms the timer; money once", async () => {
    let dropped = 0;
    // The orchestrator's first agent-step send is lost: SQS never gets it, so no worker ever sees the step.
    const losing = (fn: FunctionKey, deps: PipelineDeps): PipelineDeps =>
      fn !== "orchestrator"
        ? deps
        : {
            ...deps,
            queues: {
              ...deps.queues,
              sendAgentSteps: async (messages, options) => {
                if (dropped++ === 0) return;
                await deps.queues.sendAgentSteps(messages, options);
              },
            },
          };
    const { s, sends } = await start({ stepTimers: "lazy", wrapDeps: losing });
    const submitted = await s.runtime.submit({ claim: CLAIM });
    if (!submitted.ok) throw new Error(submitted.message);
    const { claimId } = submitted;
    await s.drained();
    expect(dropped).toBe(1);
    expect((await s.deps.claims.getClaim(claimId))?.status).toBe("RUNNING");
    expect(timerBodies(s, sends)).toEqual([]);
    // The sweep's cutoff (CLAIMS_SWEEP_STALLED_AFTER_MS, 5 minutes by default) passes: it ticks the claim.
    s.clock.advance(5 * 60_000 + 1_000);
    expect(await s.handlers.sweep()).toMatchObject({ ticked: 1 });
    await s.drained();
    const record = await s.deps.claims.getClaim(claimId);
    expect(record?.status === "DECIDED" || record?.status === "NEEDS_REVIEW").toBe(true);
    // The tick timed the lost step out (the fixer stood in) and armed the claim's timer for the fixer's deadline.
    const audit = await s.deps.audit.byDfid(record!.root_dfid);
    expect(
      audit.some(
        (e) =>
          e.event_type === "AGENT_STEP_FAILED" &&
          (e.details.fixer as { error?: { code?: string } } | undefined)?.error?.code === "STEP_TIMEOUT",
      ),
    ).toBe(true);
    expect(timerBodies(s, sends)).toEqual([{ claim_id: claimId, due_ms: expect.any(Number) as number }]);
    const report = await assertInvariants(s, [claimId]);
    expect(report.refundEvents - report.duplicateRefundEvents).toBe(record?.status === "DECIDED" ? 1 : 0);
  }, 90_000);
});
