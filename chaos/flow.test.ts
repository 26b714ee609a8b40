// The chaos flows: reproduced exactly from their seed, and able to see a real bug — each planted bug (a ledger
// that lets refunds pass the order, an audit that loses refunds, a sweep that finds nothing, a kernel that
// publishes an ACCEPT without reserving) makes flows fail with the violation it causes.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { PipelineDeps } from "../pipeline/deps.ts";
import { chaosEnv, chaosPlan, runChaosFlow } from "./flow.ts";
import type { FlowOptions } from "./flow.ts";

const CONFIG = new URL("../scenarios/config.yaml", import.meta.url);
const env = chaosEnv(readFileSync(CONFIG, "utf8"), "config.yaml");

/**
 * Violations of flows 0..n-1 of `seed` with a planted bug, up to the first flow whose violations match `wanted`. The
 * search starts at flow `first` (the one that last found the bug, so a search that still finds it there runs one flow
 * instead of hundreds) and, if that flow no longer finds it, goes on through the rest of 0..n-1: what the test proves
 * — one of the seed's first n flows finds the bug — is the same, whichever flow it is.
 */
// The planted-bug searches run their flows without a drawn outcome policy (chaos/outcomes.ts), as they were found: a
// flow that draws one takes another path (seed 2 flow 574, the first claim left stuck for the sweep, now draws store
// credit and has none), and what they find is not about outcomes.
async function violations(
  seed: number,
  n: number,
  mutate: FlowOptions["mutate"],
  wanted: RegExp,
  first = 0,
): Promise<string> {
  const out: string[] = [];
  const order = [
    ...Array.from({ length: n - first }, (_, i) => first + i),
    ...Array.from({ length: first }, (_, i) => i),
  ];
  for (const k of order) {
    if (wanted.test(out.join("\n"))) break;
    out.push(...(await runChaosFlow(env, seed, k, { mutate, outage: null, outcomes: null })).violations);
  }
  return out.join("\n");
}

describe("a chaos flow", { timeout: 120_000 }, () => {
  it("is reproduced exactly from its seed and number", async () => {
    for (const k of [0, 1, 2, 3]) {
      const a = await runChaosFlow(env, 42, k, { keep: true });
      const b = await runChaosFlow(env, 42, k, { keep: true });
      expect(b.counts).toEqual(a.counts);
      expect(b.simulatedMs).toBe(a.simulatedMs);
      expect(b.observation?.audit).toEqual(a.observation?.audit);
      expect(b.observation?.claims).toEqual(a.observation?.claims);
    }
  });

  it("takes the triage path under its faults: triaged claims are decided without the crew and replay IDENTICAL", async () => {
    let triaged = 0;
    for (let k = 0; k < 8; k++) {
      const flow = await runChaosFlow(env, 42, k, { keep: true });
      expect(flow.violations, `flow ${k}`).toEqual([]);
      const audit = flow.observation!.audit;
      const ids = new Set(audit.filter((e) => e.event_type === "CLAIM_TRIAGED").map((e) => String(e.details.claim_id)));
      triaged += ids.size;
      for (const id of ids)
        expect(
          audit.some((e) => e.details.claim_id === id && e.event_type === "CREW_STARTED"),
          id,
        ).toBe(false);
    }
    expect(triaged).toBeGreaterThan(0);
  });

  it("differs from flow to flow, and runs the plan drawn for it", async () => {
    const plans = [0, 1, 2, 3, 4].map((k) => chaosPlan(42, k));
    expect(new Set(plans.map((p) => JSON.stringify(p.claims))).size).toBe(5);
    expect((await runChaosFlow(env, 42, 0)).plan).toEqual(plans[0]);
  });
});

// Each case runs flows until the planted bug shows (up to a few hundred): CPU-bound searches, given room on a loaded
// machine (the default 30 s is for single flows).
describe("a planted bug is found", { timeout: 300_000 }, () => {
  it("a ledger that forgets the order's amount: refunds above the order", async () => {
    // The flows drawn from a seed change as the flows learn new faults, or as the order of a step's messages changes
    // what the chaos model draws, so a few seeds are tried in turn (each of these found it within 60 flows at some
    // point; 16 and 15 since a refund's first delivery reads no settlement, issue 37, which shifted every flow's
    // interleavings: 16 finds it at flow 14, where its search starts); the bug must be found by one of them.
    const overpay = (d: PipelineDeps) => ({
      ...d,
      ledger: {
        ...d.ledger,
        reserve: (r: Parameters<PipelineDeps["ledger"]["reserve"]>[0]) =>
          d.ledger.reserve({ ...r, orderCents: 10 ** 12 }),
      },
    });
    let found = "";
    for (const seed of [16, 15, 11, 2, 3, 10, 1, 4, 5, 6, 7, 8, 9, 12]) {
      found = await violations(seed, 60, overpay, /more than its/, seed === 16 ? 14 : 0);
      if (/more than its/.test(found)) break;
    }
    expect(found).toMatch(/more than its/);
  }, 180_000); // up to 360 flows: over the default timeout on a loaded machine

  it("an audit that loses the refunds: replay is not IDENTICAL", async () => {
    const wanted = /claims replay clm_\w+ is INCOMPLETE/;
    const lose = (d: PipelineDeps): PipelineDeps => ({
      ...d,
      audit: {
        ...d.audit,
        append: async (e) => (e.event_type === "CLAIM_REFUND_EXECUTED" ? undefined : d.audit.append(e)),
        appendAll: async (events) => d.audit.appendAll(events.filter((e) => e.event_type !== "CLAIM_REFUND_EXECUTED")),
      },
    });
    expect(await violations(1, 30, lose, wanted)).toMatch(wanted);
  });

  it("proposals that go missing every time they are sent: claims the sweep's nudges never move, ended STALLED", async () => {
    // The sweep sends a lost proposal again (pipeline/decide/timers.ts); here every third claim's proposals are all
    // lost, the sweep's too, so nothing can finish those claims.
    let n = 0;
    const lost = new Map<string, boolean>();
    const wanted = /is stuck: the sweep ended it STALLED/;
    expect(
      await violations(
        1,
        20,
        (d: PipelineDeps) => ({
          ...d,
          queues: {
            ...d.queues,
            sendProposal: async (m) => {
              if (!lost.has(m.claim_id)) lost.set(m.claim_id, ++n % 3 === 0);
              return lost.get(m.claim_id) ? undefined : d.queues.sendProposal(m);
            },
          },
        }),
        wanted,
      ),
    ).toMatch(wanted);
  });

  it("a sweep that finds no stalled claim: claims stuck after a lost timer or a crash", async () => {
    // With 5 receives before a DLQ (app/manifest.ts), SQS redelivery alone finishes more crashed work, so a claim only
    // the sweep could save takes more flows to appear; fewer with the compact crew's one step per claim (600, not 300).
    // Flow 39 is the first of seed 2 that finds it (2026-12-08; 574 on 2026-12-07, which no longer does and took the
    // search through 66 flows): the search starts there (575 flows were ~30 CPU-s).
    const wanted = /is stuck in (RECEIVED|RUNNING)/;
    expect(
      await violations(
        2,
        600,
        (d: PipelineDeps) => ({ ...d, claims: { ...d.claims, listClaims: async () => ({ items: [] }) } }),
        wanted,
        39,
      ),
    ).toMatch(wanted);
  });

  it("a publisher that drops RefundExecuted: ACCEPTs without their refund, reservations nobody announced", async () => {
    const wanted =
      /has 0 RefundExecuted[^]*no RefundExecuted announces it|no RefundExecuted announces it[^]*has 0 RefundExecuted/;
    expect(
      await violations(
        1,
        30,
        (d: PipelineDeps) => ({
          ...d,
          publisher: {
            publish: (entries) => d.publisher.publish(entries.filter((e) => e.detailType !== "RefundExecuted")),
          },
        }),
        wanted,
      ),
    ).toMatch(wanted);
  });
});

describe("a flow whose model goes down", () => {
  const MIN = 60_000;
  const unreachable = (r: Awaited<ReturnType<typeof runChaosFlow>>) =>
    (r.observation?.claims ?? []).filter((c) => c.reason_code === "LLM_UNREACHABLE").length;
  const held = (r: Awaited<ReturnType<typeof runChaosFlow>>) =>
    (r.observation?.audit ?? []).filter((e) => e.event_type === "CLAIM_HELD").length;

  it("an outage that ends within the hold: the claims wait, then are decided; no review for the outage, money invariants hold", async () => {
    let holds = 0;
    for (const k of [0, 1, 2, 3, 4, 5]) {
      const r = await runChaosFlow(env, 23, k, {
        keep: true,
        llm: "healthy",
        outage: { fromMs: 0, toMs: 25 * MIN, holdMs: 60 * MIN },
      });
      expect(r.violations, `flow ${k}`).toEqual([]);
      expect(unreachable(r), `flow ${k}`).toBe(0);
      expect(r.invariants?.money.refunds, `flow ${k}`).toBeGreaterThanOrEqual(0);
      // A flow none of whose claims needs the model (triaged, or free text the patterns read and no crew) ends sooner.
      if (held(r) > 0) expect(r.simulatedMs, `flow ${k}`).toBeGreaterThanOrEqual(25 * MIN);
      holds += held(r);
    }
    expect(holds).toBeGreaterThan(0);
  });

  it("an outage that outlasts the hold: the claims that waited go to a person LLM_UNREACHABLE, nothing is refunded twice", async () => {
    let waited = 0;
    for (const k of [0, 1, 2, 3]) {
      const r = await runChaosFlow(env, 23, k, {
        keep: true,
        llm: "healthy",
        outage: { fromMs: 0, toMs: 180 * MIN, holdMs: 30 * MIN },
      });
      expect(r.violations, `flow ${k}`).toEqual([]);
      // A flow whose claims all end without the model (triaged, refused at intake) holds none; one that held a claim
      // sends it to a person once the hold is over.
      if (held(r) > 0) expect(unreachable(r), `flow ${k}`).toBeGreaterThan(0);
      waited += held(r);
    }
    expect(waited).toBeGreaterThan(0);
  });

  it("draws an outage in some flows, the rest of the plan unchanged by it", async () => {
    const drawn = Array.from({ length: 30 }, (_, k) => chaosPlan(42, k));
    const withOutage = drawn.filter((p) => p.outage !== undefined);
    expect(withOutage.length).toBeGreaterThan(0);
    expect(withOutage.length).toBeLessThan(30);
    for (const p of withOutage.slice(0, 3)) {
      const r = await runChaosFlow(env, 42, p.flow);
      expect(r.plan).toEqual(p);
      expect(r.violations).toEqual([]);
      const without = await runChaosFlow(env, 42, p.flow, { outage: null });
      expect(without.plan.claims).toEqual(r.plan.claims);
    }
  });
});
