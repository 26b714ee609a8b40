// Racing claims through the real pipeline: every queued message handed to its service at once, round after round,
// so the kernel's read → decide → reserve steps of different claims interleave (pipeline/people-bind.test.ts and
// the dynalite run in adapters/aws/customer-limit-race.test.ts).
import type { createInProcessPipeline } from "./in-process.ts";
import { handleWork } from "./in-process.ts";

type Pipeline = ReturnType<typeof createInProcessPipeline>;

/** Submits every claim, then hands ALL queued work to its services at once, round after round, until no work is left. */
export async function raceClaims(p: Pipeline, bodies: readonly unknown[]): Promise<void> {
  await Promise.all(bodies.map((body, i) => p.submit(body, { claimId: `clm_r${i}` })));
  for (;;) {
    const batch = [];
    for (let w = p.queues.take(); w; w = p.queues.take()) batch.push(w);
    if (batch.length === 0) return;
    await Promise.all(batch.map((w) => handleWork(w, p.deps)));
  }
}

/** The outcome of a race: how many claims were accepted and escalated, and the money the customer got automatically. */
export async function raceOutcome(p: Pipeline, n: number) {
  const records = await Promise.all(Array.from({ length: n }, (_, i) => p.claims.getClaim(`clm_r${i}`)));
  const accepted = records.filter((r) => r?.verdict === "ACCEPT");
  const escalated = records.filter((r) => r?.verdict === "ESCALATE");
  const refunds = p.publisher.published.filter((e) => e.detailType === "RefundExecuted");
  const refundedCents = refunds.reduce(
    (a, e) => a + Math.round((e.detail as { amount_eur: number }).amount_eur * 100),
    0,
  );
  return { records, accepted, escalated, refunds, refundedCents };
}
