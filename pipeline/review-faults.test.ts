// The review path under crashes (docs/reviews.md): for ESCALATE → APPROVE (for less), ESCALATE → DENY and
// NEEDS_REVIEW → RESUBMIT, the decision crashes right after each of its side-effecting calls in turn (the
// response is lost, the work was done); it is then repaired by the reviewer repeating the request, or by the
// sweep's repairReviews when nobody does. Every time: the review is decided once, a refund is reserved and
// announced at most once, the money invariants hold, and `claims replay` reproduces the claim IDENTICAL.
import { describe, expect, it } from "vitest";
import { replayClaim } from "../core/history/replay/index.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { PipelineDeps } from "./deps.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { checkMoneyInvariants } from "./testing/money-invariants.ts";
import { decideReview, repairReviews } from "./review.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";
import { orderTotalMajor } from "../core/kernel/order-view.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);

/** The side-effecting calls a review decision can make, by port. */
const EFFECTS: Record<string, readonly string[]> = {
  reviews: ["updateReview", "openReview"],
  ledger: ["reserve", "markReviewPending", "clearReviewPending"],
  audit: ["append"],
  publisher: ["publish"],
  claims: ["createClaim", "updateClaim"],
  queues: ["sendCrewEvents", "requestExtraction", "sendAgentSteps", "sendProposal", "scheduleTimer"],
};

class InjectedCrash extends Error {}

/** `deps` whose `crashAfter`-th side-effecting call does its work and then throws (0: never). */
function crashing(deps: PipelineDeps, crashAfter: number): { deps: PipelineDeps; calls: () => number } {
  let calls = 0;
  const wrap = <T extends object>(port: T, names: readonly string[]): T =>
    new Proxy(port, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== "function" || !names.includes(String(prop))) return value;
        return async (...args: unknown[]) => {
          const out = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          calls++;
          if (calls === crashAfter) throw new InjectedCrash(`crash after ${String(prop)} (call ${calls})`);
          return out;
        };
      },
    });
  const wrapped = { ...deps } as Record<string, unknown>;
  for (const [port, names] of Object.entries(EFFECTS))
    wrapped[port] = wrap(deps[port as keyof PipelineDeps] as object, names);
  return { deps: wrapped as unknown as PipelineDeps, calls: () => calls };
}

type Flow = { name: string; claim: unknown; decision: Record<string, unknown>; status: string; refund: boolean };

const FLOWS: Flow[] = [
  {
    name: "ESCALATE → APPROVE for less",
    claim: { claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "dead" } },
    decision: { decision: "APPROVE", amount_eur: 900, reviewer: "rita", note: "300 withheld" },
    status: "APPROVED",
    refund: true,
  },
  {
    name: "ESCALATE → DENY",
    claim: { claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "dead" } },
    decision: { decision: "DENY", note: "no", reviewer: "rita" },
    status: "DENIED",
    refund: false,
  },
  {
    name: "NEEDS_REVIEW → RESUBMIT",
    claim: { claim_text: "Hi, the sofa I bought last month is falling apart, I paid 300 EUR. Please help." },
    decision: {
      decision: "RESUBMIT",
      claim: { order_id: "ord_001", amount_eur: 100, category: "electronics", reason: "screen dead" },
      reviewer: "rita",
    },
    status: "RESUBMITTED",
    refund: false,
  },
];

async function escalatedPipeline(flow: Flow) {
  const p = createInProcessPipeline({
    agent: config.agent,
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => NOW },
  });
  const { submit } = await p.decide(flow.claim, { claimId: "clm_rev" });
  if (!submit.ok) throw new Error(submit.message);
  return p;
}

/** How many side-effecting calls the decision makes when nothing crashes. */
async function callsOf(flow: Flow): Promise<number> {
  const p = await escalatedPipeline(flow);
  const c = crashing(p.deps, 0);
  const result = await decideReview("clm_rev", flow.decision, c.deps);
  expect(result.ok).toBe(true);
  return c.calls();
}

async function check(p: Awaited<ReturnType<typeof escalatedPipeline>>, flow: Flow, where: string) {
  await p.drain();
  const review = await p.deps.reviews.getReview("clm_rev");
  expect(review?.status, where).toBe(flow.status);
  expect(review?.intent, where).toBeUndefined();
  const money = checkMoneyInvariants(p.publisher.published, {
    orderAmountEur: (id) => orderTotalMajor(config.orders.find((o) => o.order_id === id)),
    limitEur: config.agent.contract.max_refund_without_escalation,
  });
  expect(money.violations, where).toEqual([]);
  expect(money.approvedRefunds, where).toBe(flow.refund ? 1 : 0);
  const decided = new Set(
    p.publisher.published.filter((e) => e.detailType === "ReviewDecided").map((e) => JSON.stringify(e.detail)),
  );
  expect(decided.size, where).toBe(1);
  const replay = replayClaim("clm_rev", p.auditEvents(), {
    review: { status: review!.status, decision: review!.decision, reviewer: review!.reviewer, note: review!.note },
  });
  expect(
    replay.status,
    `${where}: ${replay.steps
      .filter((s) => s.status !== "IDENTICAL")
      .map((s) => s.detail)
      .join(" | ")}`,
  ).toBe("IDENTICAL");
  if (flow.status === "RESUBMITTED") {
    const child = await p.claims.getClaim(review!.resubmitted_claim_id!);
    // A resubmitted claim is never refunded automatically: it waits for a person (RESUBMITTED_CLAIM).
    expect(child, where).toMatchObject({
      parent_claim_id: "clm_rev",
      status: "DECIDED",
      verdict: "ESCALATE",
      reason_code: "RESUBMITTED_CLAIM",
    });
  }
}

describe.each(FLOWS)("the review decision $name", (flow) => {
  it("is decided once whatever call it crashes after, repaired by the reviewer repeating it or by the sweep", async () => {
    const total = await callsOf(flow);
    expect(total).toBeGreaterThan(2);
    for (let n = 1; n <= total; n++) {
      for (const recovery of ["repeat", "sweep"] as const) {
        const p = await escalatedPipeline(flow);
        const c = crashing(p.deps, n);
        await expect(decideReview("clm_rev", flow.decision, c.deps), `crash after call ${n}`).rejects.toThrow(
          InjectedCrash,
        );
        if (recovery === "repeat") {
          const again = await decideReview("clm_rev", flow.decision, p.deps);
          expect(again.ok, `crash after call ${n}, repeated: ${again.ok ? "" : again.message}`).toBe(true);
        } else {
          await repairReviews(p.deps);
          // A decision that crashed before it was claimed leaves the review PENDING: the reviewer decides it then.
          const review = await p.deps.reviews.getReview("clm_rev");
          if (review?.status === "PENDING")
            expect((await decideReview("clm_rev", flow.decision, p.deps)).ok).toBe(true);
        }
        await check(p, flow, `${flow.name}, crash after call ${n}, ${recovery}`);
      }
    }
  });
});
