// `claims serve`'s handler thread on the real emulators through the real SDK: the queue consumers, their pollers and
// the refund executor run in the thread and decide claims end to end; the stack's hooks cannot go there.
import { afterEach, describe, expect, it } from "vitest";
import { loadClaimView } from "../functions/http/intake-routes.ts";
import { decideOnStack, startTestStack } from "./testing/stack-fixture.ts";

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack | undefined;
afterEach(async () => {
  await stack?.stop();
  stack = undefined;
});

const decide = decideOnStack;

describe("the handler thread", () => {
  it("decides claims end to end: its pollers take the work, its refund executor pays the refund", async () => {
    stack = await startTestStack({ handlerThread: true });
    const thread = stack.handlerThread!;
    expect(thread).toBeDefined();
    const accepted = await decide(stack, {
      claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead" },
    });
    expect(accepted).toMatchObject({ status: "DECIDED", verdict: "ACCEPT", executed: true });
    expect((await stack.deps.settlements?.get(accepted.claim_id))?.status).toBe("SETTLED");
    const escalated = await decide(stack, {
      claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" },
    });
    expect(escalated).toMatchObject({ status: "DECIDED", verdict: "ESCALATE" });
    expect(await loadClaimView(escalated, stack.deps)).toMatchObject({ review: { status: "PENDING" } });
    // settle() drained the thread's pollers and brought back their counters.
    for (const role of ["crewEvents", "agentSteps", "proposals"] as const) {
      expect(thread.pollers[role].stats.received, role).toBeGreaterThan(0);
      expect(thread.pollers[role].stats.handlerErrors, role).toBe(0);
    }
    expect(thread.llmUnreachable()).toBe(false);
  });

  it("stops with the stack, twice without harm", async () => {
    stack = await startTestStack({ handlerThread: true });
    const s = stack;
    stack = undefined;
    await s.stop();
    await s.stop();
    await expect(s.handlerThread!.refresh()).rejects.toThrow(/handler thread/);
  });

  it("refuses the test hooks, which cannot cross to a thread", async () => {
    await expect(startTestStack({ handlerThread: true, wrapHandler: (_role, handler) => handler })).rejects.toThrow(
      /handlerThread .*wrapHandler/,
    );
  });
});
