// `claims serve`'s handler thread on the real emulators through the real SDK: the queue consumers, their pollers and
// the refund executor run in the thread and decide claims end to end; the stack's hooks cannot go there.
//
// One stack with its thread for the file (a thread's start is ~4.5 s at load 4, most of this file's time): the
// first test decides claims of its own and reads only what it wrote; the stop test comes last and stops that same
// stack (a stack that has worked, not an idle one), and the file's afterAll stopping it once more is harmless, as
// the test itself checks. Run alone (`-t`), either test still gets the stack from beforeAll.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadClaimView } from "../functions/http/intake-routes.ts";
import { decideOnStack, startTestStack } from "./testing/stack-fixture.ts";

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack({ handlerThread: true });
});
afterAll(async () => {
  await stack?.stop();
});

const decide = decideOnStack;

describe("the handler thread", () => {
  it("decides claims end to end: its pollers take the work, its refund executor pays the refund", async () => {
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

  it("refuses the test hooks, which cannot cross to a thread", async () => {
    await expect(startTestStack({ handlerThread: true, wrapHandler: (_role, handler) => handler })).rejects.toThrow(
      /handlerThread .*wrapHandler/,
    );
  });

  // Last: it stops the file's stack.
  it("stops with the stack, twice without harm", async () => {
    await stack.stop();
    await stack.stop();
    await expect(stack.handlerThread!.refresh()).rejects.toThrow(/handler thread/);
  });
});
