// A review decision carried out by more than one carrier (docs/reviews.md): the request that claimed its intent, a
// repeat of it, the sweep's repair. A carrier whose intent was withdrawn and claimed again meanwhile announces nothing:
// found by the chaos runs on the emulators (`ReviewDecided … was published twice with different details`), where the
// sweep's repair of an approval listed before it was withdrawn reserved "again" on the newer approval's reservation.
import { describe, expect, it } from "vitest";
import { orderTotalMajor } from "../core/kernel/order-view.ts";
import type { PipelineDeps } from "./deps.ts";
import { decideReview, repairReviews } from "./review.ts";
import { bundledConfig, bundledPipeline } from "./bundled-config.test-kit.ts";
import { checkMoneyInvariants } from "./testing/money-invariants.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);

class InjectedCrash extends Error {}

/** `deps` whose first review update is written, then the process dies (the intent is claimed, nothing else done). */
function diesAfterClaiming(deps: PipelineDeps): PipelineDeps {
  let updates = 0;
  const reviews = new Proxy(deps.reviews, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== "updateReview" || typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        const out = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        if (++updates === 1) throw new InjectedCrash("died right after claiming the intent");
        return out;
      };
    },
  });
  return { ...deps, reviews };
}

describe("a review decision carried out by a stale carrier", () => {
  it("announces one approval when the sweep repairs an intent that was withdrawn and claimed again since", async () => {
    // Each reading of the clock a second later: two intents of one reviewer differ in their instant.
    let now = NOW;
    const p = bundledPipeline(config, { now: () => (now += 1_000) });
    const claim = (amount: number) => ({
      claim: { order_id: "ord_002", amount_eur: amount, category: "electronics", reason: "dead" },
    });
    for (const [id, amount] of [
      ["clm_x", 1200],
      ["clm_y", 100],
    ] as const) {
      const { submit } = await p.decide(claim(amount), { claimId: id });
      expect(submit.ok).toBe(true);
      expect((await p.deps.reviews.getReview(id))?.status).toBe("PENDING");
    }
    const approveX = { decision: "APPROVE", amount_eur: 600, reviewer: "rita", note: "half" };

    // Rita's approval of X claims its intent on the order's approvals as they were (none), then its process dies.
    await expect(decideReview("clm_x", approveX, diesAfterClaiming(p.deps))).rejects.toThrow(InjectedCrash);
    const listed = await p.deps.reviews.getReview("clm_x");
    expect(listed?.intent?.approved_count).toBe(0);
    // Y is approved meanwhile: the order holds one approval.
    expect((await decideReview("clm_y", { decision: "APPROVE", reviewer: "sam" }, p.deps)).ok).toBe(true);
    // Rita repeats: the intent decided on no approvals is refused and withdrawn; she decides again, announced once.
    const repeated = await decideReview("clm_x", approveX, p.deps);
    expect(repeated.ok ? "ok" : repeated.code).toBe("APPROVALS_CHANGED");
    expect((await decideReview("clm_x", approveX, p.deps)).ok).toBe(true);
    const decidedAt = (await p.deps.reviews.getReview("clm_x"))?.decided_at;
    expect(decidedAt).not.toBe(listed?.intent?.decided_at);

    // The sweep carries out the intent it listed before all that: it finds X's reservation (the newer approval's).
    const stale: PipelineDeps = {
      ...p.deps,
      reviews: { ...p.deps.reviews, listReviews: async () => ({ items: [listed!] }) },
    };
    await repairReviews(stale);
    await p.drain();

    const decided = p.publisher.published
      .filter((e) => e.detailType === "ReviewDecided" && e.detail.claim_id === "clm_x")
      .map((e) => (e.detail as { decided_at?: unknown }).decided_at);
    expect(new Set(decided)).toEqual(new Set([decidedAt]));
    const review = await p.deps.reviews.getReview("clm_x");
    expect(review).toMatchObject({ status: "APPROVED", decided_at: decidedAt, approved_amount_eur: 600 });
    const money = checkMoneyInvariants(p.publisher.published, {
      orderAmountEur: (id) => orderTotalMajor(config.orders.find((o) => o.order_id === id)),
      limitEur: config.agent.contract.max_refund_without_escalation,
    });
    expect(money.violations).toEqual([]);
    expect(money.approvedRefunds).toBe(2);
  });
});
