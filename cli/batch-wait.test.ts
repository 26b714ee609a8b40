// The held work of a batch run with LLM_BATCH_MODE=batch (cli/batch-wait.ts): a delayed send (a hold's re-try) is kept
// until the runner releases it, then sent with the run's clock at its due instant, as SQS would deliver it.
import { describe, expect, it } from "vitest";
import { frozenClock } from "../core/crew/index.ts";
import type { AgentStepMessage } from "../pipeline/messages.ts";
import type { WorkQueues } from "../pipeline/ports.ts";
import { batchIdsIn, createHeldWork } from "./batch-wait.ts";

const T0 = Date.parse("2026-06-01T12:00:00Z");

/** Queues that record what reaches them and the clock's instant when it did. */
function recording(clock: { now: () => number }) {
  const sent: string[] = [];
  const note = (what: string) => void sent.push(`${what}@${clock.now() - T0}`);
  const queues: WorkQueues = {
    sendAgentSteps: async (messages, opts) => note(`step ${messages[0]!.claim_id} delay ${opts?.delayMs ?? 0}`),
    sendProposal: async () => note("proposal"),
    sendCrewEvents: async (claimId) => note(`crew ${claimId}`),
    scheduleTimer: async (claimId) => note(`timer ${claimId}`),
    requestExtraction: async (claimId, opts) => note(`extraction ${claimId} delay ${opts?.delayMs ?? 0}`),
  };
  return { sent, queues };
}

const step = (claimId: string) => ({ claim_id: claimId }) as unknown as AgentStepMessage;

describe("held work", () => {
  it("passes undelayed sends through and keeps delayed ones until released, due in whole seconds", async () => {
    const clock = frozenClock(T0);
    const held = createHeldWork(clock);
    const { sent, queues } = recording(clock);
    const q = held.wrap(queues);
    await q.sendAgentSteps([step("clm_a")]);
    await q.sendCrewEvents("clm_a", []);
    await q.sendAgentSteps([step("clm_a")], { delayMs: 29_500 });
    await q.requestExtraction("clm_b", { delayMs: 45_000 });
    expect(sent).toEqual(["step clm_a delay 0@0", "crew clm_a@0"]);
    expect(held.claims()).toEqual(["clm_a", "clm_b"]);
    expect([held.holds("clm_a"), held.holds("clm_c")]).toEqual([true, false]);

    expect(await held.releaseNext()).toBe(1);
    expect(clock.now() - T0).toBe(30_000);
    expect(await held.releaseNext()).toBe(1);
    expect(clock.now() - T0).toBe(45_000);
    expect(sent.slice(2)).toEqual(["step clm_a delay 0@30000", "extraction clm_b delay 0@45000"]);
    expect(held.claims()).toEqual([]);
    expect(await held.releaseNext()).toBe(0);
    expect(clock.now() - T0).toBe(45_000);
  });

  it("releases every message due at the same instant together and never moves the clock back", async () => {
    const clock = frozenClock(T0);
    const held = createHeldWork(clock);
    const { sent, queues } = recording(clock);
    const q = held.wrap(queues);
    await q.sendAgentSteps([step("clm_a")], { delayMs: 30_000 });
    await q.sendAgentSteps([step("clm_b")], { delayMs: 30_000 });
    clock.set(T0 + 60_000);
    expect(await held.releaseNext()).toBe(2);
    expect(clock.now() - T0).toBe(60_000);
    expect(sent).toEqual(["step clm_a delay 0@60000", "step clm_b delay 0@60000"]);
  });
});

describe("the batch ids of a hold's problem", () => {
  it.each([
    ["sent to the Batch API as batch batch_6756a1b2c3; the answer is read once it completes", ["batch_6756a1b2c3"]],
    ["batch batch-scripted-2 is in_progress", ["batch-scripted-2"]],
    ["batch endpoint http://x/v1 answered GET /batches/b with 500: boom", []],
    [undefined, []],
  ])("%s", (problem, ids) => {
    expect(batchIdsIn(problem)).toEqual(ids);
  });
});
