// The refund-due alarm on the local stack (docs/returns.md#the-refund-due-alarm): a live refund left PENDING in the
// table (its settlement in the unsettled partition) is named by the sweep 14 − 4 days after it was decided, and
// `GET /health` shows it as a warning while the stack stays ok; once it settles, neither names it.
import { afterEach, describe, expect, it } from "vitest";
import { healthAnswer, startHttpFront } from "./http-front.ts";
import { startTestStack, TEST_NOW } from "./testing/stack-fixture.ts";

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack | undefined;
afterEach(async () => {
  await stack?.stop();
  stack = undefined;
});

const DAY = 86_400_000;

describe("refunds due on the local stack", () => {
  it("the sweep names an unsettled refund from refund_due_days − 4 days on, and /health warns without failing", async () => {
    stack = await startTestStack();
    const s = stack;
    const at = new Date(TEST_NOW).toISOString();
    const settlements = s.deps.settlements!;
    await settlements.create({
      claim_id: "clm_pending",
      dfid: "dfid_clm_pending",
      order_id: "ord_001",
      amount_eur: 25,
      verdict_id: "vrd_1",
      provider: "stripe",
      execution_id: "exe_1",
      status: "PENDING",
      requested_at: at,
      updated_at: at,
      attempts: [],
      version: 1,
    });
    const front = await startHttpFront({
      functions: { intakeApi: s.handlers.intakeApi, reviewApi: s.handlers.reviewApi },
      authorizers: { intake: s.handlers.authorizer, reviewer: s.handlers.reviewerAuthorizer },
      port: 0,
      health: () => healthAnswer({ llm: false, orders: false }, s.refundsDueSoon()),
    });
    try {
      const health = async () => (await fetch(`${front.url}/health`)).json();
      await s.handlers.sweep();
      expect(await health()).toEqual({ status: "ok" });

      s.clock.advance(10 * DAY);
      await s.handlers.sweep();
      const due = { claim_id: "clm_pending", due_at: new Date(TEST_NOW + 14 * DAY).toISOString(), days_left: 4 };
      expect(s.refundsDueSoon()).toEqual([due]);
      expect(await health()).toEqual({ status: "ok", refunds_due_soon: [due] });

      const stored = (await settlements.get("clm_pending"))!;
      await settlements.update({ ...stored, status: "SETTLED", version: stored.version + 1 });
      await s.handlers.sweep();
      expect(await health()).toEqual({ status: "ok" });
    } finally {
      await front.stop();
    }
  });
});
