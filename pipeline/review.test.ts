// Review decisions under crashes (found by `npm run chaos`): a decision whose process died after it announced
// the decision but before it recorded it is finished by repeating it — or by the sweep's repairReviews — and
// announces exactly what the first attempt did, once.
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { createInMemoryClaimRepository, createInMemoryReviewRepository } from "./in-memory.ts";
import { handleProposal } from "./kernel-service.ts";
import type { ProposalMessage } from "./messages.ts";
import { handleCrewMessage } from "./orchestrator.ts";
import { handleAgentStep } from "./worker.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { performEffects } from "./perform.ts";
import { decideReview, listReviews, repairReviews } from "./review.ts";
import type { ClaimRepository, ReviewRepository } from "./ports.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);

/** A review repository whose process "dies" the first time a decision is recorded (the update that ends PENDING). */
function crashingOnRecord(): ReviewRepository & { crashed: number } {
  const inner = createInMemoryReviewRepository();
  const repo = {
    crashed: 0,
    openReview: inner.openReview,
    getReview: inner.getReview,
    listReviews: inner.listReviews,
    async updateReview(next: Parameters<ReviewRepository["updateReview"]>[0]) {
      if (next.status !== "PENDING" && repo.crashed === 0) {
        repo.crashed++;
        throw new Error("injected crash before the decision is recorded");
      }
      return inner.updateReview(next);
    },
  };
  return repo;
}

async function escalated() {
  let now = NOW;
  const reviews = crashingOnRecord();
  const p = createInProcessPipeline({
    agent: config.agent,
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => now },
    overrides: { reviews },
  });
  const { record } = await p.decide(
    { claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" } },
    { claimId: "clm_esc" },
  );
  expect(record?.verdict).toBe("ESCALATE");
  return { p, reviews, later: (ms: number) => (now += ms) };
}

const decidedEvents = (p: Awaited<ReturnType<typeof escalated>>["p"]) => ({
  audit: p.auditEvents().filter((e) => e.event_type === "REVIEW_DECIDED" || e.event_type === "CLAIM_REFUND_EXECUTED"),
  bus: p.publisher.published.filter((e) => e.detailType === "ReviewDecided" || e.detailType === "RefundExecuted"),
});

describe("a review decision that crashed after announcing it", () => {
  it.each([
    ["APPROVE", { decision: "APPROVE", reviewer: "alice" }],
    ["DENY", { decision: "DENY", reviewer: "alice", note: "no" }],
  ])("%s repeated later announces the same events once, and the review is recorded", async (_name, body) => {
    const { p, reviews, later } = await escalated();
    await expect(decideReview("clm_esc", body, p.deps)).rejects.toThrow(/injected crash/);
    const first = decidedEvents(p);
    later(60_000);
    const again = await decideReview("clm_esc", body, p.deps);
    expect(again.ok).toBe(true);
    const after = decidedEvents(p);
    expect(after.audit).toEqual(first.audit);
    expect(new Set(after.bus.map((e) => JSON.stringify(e))).size).toBe(first.bus.length);
    expect((await reviews.getReview("clm_esc"))?.status).toBe(body.decision === "APPROVE" ? "APPROVED" : "DENIED");
  });

  it("is finished by repairReviews with the same events, when nobody repeats it", async () => {
    const { p, reviews, later } = await escalated();
    await expect(decideReview("clm_esc", { decision: "APPROVE", reviewer: "alice" }, p.deps)).rejects.toThrow(
      /injected crash/,
    );
    const first = decidedEvents(p);
    later(10 * 60_000);
    expect(await repairReviews(p.deps)).toBe(1);
    expect(decidedEvents(p).audit).toEqual(first.audit);
    expect((await reviews.getReview("clm_esc"))?.status).toBe("APPROVED");
    expect(await repairReviews(p.deps)).toBe(0);
  });
});

describe("the ledger's review mark", () => {
  it.each([
    ["APPROVE", { decision: "APPROVE", reviewer: "alice", amount_eur: 100, note: "part" }],
    ["DENY", { decision: "DENY", reviewer: "alice", note: "not ours" }],
  ])(
    "is not set again for good by the review's opening repeated after a %s (a late redelivery of the kernel's verdict)",
    async (_name, body) => {
      const { p, reviews } = await escalated();
      const opened = (await reviews.getReview("clm_esc"))!;
      expect((await p.deps.ledger.get("ord_002"))?.pending_reviews).toEqual(["clm_esc"]);
      await decideReview("clm_esc", body, p.deps).catch(() => undefined);
      await decideReview("clm_esc", body, p.deps);
      expect((await p.deps.ledger.get("ord_002"))?.pending_reviews ?? []).toEqual([]);
      await performEffects([{ kind: "review_open", review: opened }], p.deps);
      expect((await p.deps.ledger.get("ord_002"))?.pending_reviews ?? []).toEqual([]);
      // No review waits on the order any more, but the person's decision (a DENY, an approval of 100 of 1200) binds
      // it: a small claim on it goes to a person for that reason, not for a pending review.
      const { record } = await p.decide(
        { claim: { order_id: "ord_002", amount_eur: 50, category: "electronics", reason: "Charger missing" } },
        { claimId: "clm_small" },
      );
      expect(record).toMatchObject({ verdict: "ESCALATE", reason_code: "PRIOR_DECISION_ON_ORDER" });
    },
  );
});

/** An escalation whose kernel died right after opening the review and announcing it, before recording the claim DECIDED. */
async function escalatedNotYetRecorded() {
  const claims = createInMemoryClaimRepository();
  let crashes = 1;
  const dying: ClaimRepository = {
    ...claims,
    async updateClaim(id, patch, onlyFrom) {
      if (patch.status === "DECIDED" && crashes-- > 0)
        throw new Error("injected crash before the claim is recorded DECIDED");
      return claims.updateClaim(id, patch, onlyFrom);
    },
  };
  const reviews = crashingOnRecord();
  const p = createInProcessPipeline({
    agent: config.agent,
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => NOW },
    overrides: { claims: dying, reviews },
  });
  await p.submit(
    { claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" } },
    { claimId: "clm_esc" },
  );
  let proposal: ProposalMessage | undefined;
  for (let work = p.queues.take(); work; work = p.queues.take()) {
    if (work.queue === "proposals") proposal = work.message;
    else if (work.queue === "crew-events") await handleCrewMessage(work.message, p.deps);
    else if (work.queue === "agent-steps") await handleAgentStep(work.message, p.deps);
  }
  await expect(handleProposal(proposal!, p.deps)).rejects.toThrow(/injected crash/);
  expect((await claims.getClaim("clm_esc"))?.status).toBe("RUNNING");
  expect((await reviews.getReview("clm_esc"))?.status).toBe("PENDING");
  return { p, claims, reviews, redeliver: () => handleProposal(proposal!, p.deps) };
}

describe("a review decided before the kernel recorded its escalation (the kernel died in between)", () => {
  it("an approval leaves the claim DECIDED and executed once the kernel's redelivery records it", async () => {
    const { p, claims, redeliver } = await escalatedNotYetRecorded();
    await decideReview("clm_esc", { decision: "APPROVE", reviewer: "alice" }, p.deps).catch(() => undefined);
    expect((await decideReview("clm_esc", { decision: "APPROVE", reviewer: "alice" }, p.deps)).ok).toBe(true);
    await redeliver();
    expect(await claims.getClaim("clm_esc")).toMatchObject({ status: "DECIDED", verdict: "ESCALATE", executed: true });
  });

  it("lists the review with the proposal it escalated before the claim keeps it, and the same one after", async () => {
    const { p, claims, redeliver } = await escalatedNotYetRecorded();
    expect((await claims.getClaim("clm_esc"))?.proposal).toBeUndefined();
    const [before] = (await listReviews({}, p.deps)).items;
    expect(before?.context.proposal).toEqual({
      action: "REFUND",
      order_id: "ord_002",
      amount_eur: 1200,
      category: "electronics",
      reason: expect.any(String),
      confidence: expect.any(Number),
    });
    await redeliver();
    const recorded = await claims.getClaim("clm_esc");
    expect(recorded?.proposal).toEqual(before?.context.proposal);
    expect((await listReviews({}, p.deps)).items[0]?.context.proposal).toEqual(recorded?.proposal);
  });

  it("audits the decision once, though the claim was RUNNING when it was first announced and DECIDED when repeated", async () => {
    const { p, redeliver } = await escalatedNotYetRecorded();
    await expect(
      decideReview("clm_esc", { decision: "DENY", reviewer: "alice", note: "not ours" }, p.deps),
    ).rejects.toThrow(/injected crash/);
    await redeliver();
    expect((await decideReview("clm_esc", { decision: "DENY", reviewer: "alice", note: "not ours" }, p.deps)).ok).toBe(
      true,
    );
    expect(
      p
        .auditEvents()
        .filter((e) => e.event_type === "REVIEW_DECIDED")
        .map((e) => e.state),
    ).toEqual(["DECIDED"]);
  });
});
