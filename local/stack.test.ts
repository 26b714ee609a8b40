// The local stack as a whole, on the real emulators through the real SDK: redelivery after a crash
// in every consumer, a poison message reaching its DLQ without blocking others, retried extraction
// ending in NEEDS_REVIEW, bus rules, the scheduled batch, least-privilege links, settle's
// error, and a clean stop.
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import type { LlmPort } from "../core/llm/index.ts";
import { createIntakeExtractHandler } from "../functions/intake-extract.ts";
import { composeDeps } from "../functions/composition/compose.ts";
import { linkedResources, restrictedReader, sstResources } from "../functions/composition/resources.ts";
import type { FunctionKey, QueueRole } from "../app/manifest.ts";
import { createSweepHandler } from "../functions/sweep.ts";
import { createTimerHandler } from "../functions/timer.ts";
import {
  TEST_NOW,
  decideOnStack,
  recordingLogger,
  rulesModel,
  sqsEvent,
  startTestStack,
} from "./testing/stack-fixture.ts";
import type { LocalStack } from "./stack.ts";

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack | undefined;
afterEach(async () => {
  await stack?.stop();
  stack = undefined;
});

/**
 * One default stack for the tests of a describe that need no fresh one: each sends claims of its own (their own
 * claim ids, orders or simulation), so they read only what they wrote. A test about the stack's own settings, a
 * crash or its stop starts its own (startTestStack above).
 */
function sharedStack(): () => Stack {
  let shared: Stack | undefined;
  beforeAll(async () => {
    shared = await startTestStack();
  });
  afterAll(async () => {
    await shared?.stop();
  });
  return () => shared!;
}

const ACCEPT_CLAIM = {
  claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead" },
};
const ESCALATE_CLAIM = {
  claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" },
};
const TEXT_CLAIM = {
  claim_text: "I bought electronics order ord_006 for 299.99 EUR on 29 May 2026, the screen is dead.",
};

const decide = decideOnStack;

async function depth(s: LocalStack, url: string): Promise<number> {
  const out = await s.clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    }),
  );
  return (
    Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) +
    Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
  );
}

/** Polls until `check` holds (the emulators move messages in real time); fails with `what` after 15 s. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`never happened: ${what}`);
}

async function delayed(s: LocalStack, url: string): Promise<number> {
  const out = await s.clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["ApproximateNumberOfMessagesDelayed"] }),
  );
  return Number(out.Attributes?.ApproximateNumberOfMessagesDelayed ?? 0);
}

const detailTypes = (s: LocalStack, claimId: string, rule: "verdicts" | "escalations" | "refunds") =>
  s.bus.received[rule].filter((e) => e.detail.claim_id === claimId).map((e) => e["detail-type"]);

describe("redelivery after a crash", () => {
  it("a crash after each consumer has done its work redelivers the message, and the claim still gets one verdict and one refund", async () => {
    const crashed = new Set<QueueRole>();
    const fast = { visibilityTimeoutS: 1 };
    stack = await startTestStack({
      queues: { crewEvents: fast, agentSteps: fast, proposals: fast, extraction: fast },
      wrapHandler: (role, handler) => async (event, context) => {
        const result = await handler(event, context);
        if (role !== "timers" && !crashed.has(role)) {
          crashed.add(role);
          throw new Error(`injected crash after ${role} (the response is lost, the work was done)`);
        }
        return result;
      },
    });
    const record = await decide(stack, TEXT_CLAIM);
    expect(record).toMatchObject({ status: "DECIDED", verdict: "ACCEPT", executed: true });
    expect([...crashed].sort()).toEqual(["agentSteps", "crewEvents", "extraction", "proposals"]);
    expect(detailTypes(stack, record.claim_id, "verdicts")).toEqual(["ClaimVerdict"]);
    expect(detailTypes(stack, record.claim_id, "refunds")).toEqual(["RefundExecuted"]);
    expect(await stack.deps.ledger.get("ord_006")).toMatchObject({ claims: { [record.claim_id]: 29_999 } });
  });
});

// The poison message and the failing model share one stack: proposals and extraction both redelivered after 1 s
// and dead after 2 receives, and a model whose extraction always times out. The poison test's claim is on lines
// (no extraction: the model's failure plays no part) and reads the proposals queue and its DLQ, which the failing
// extraction never reaches (its claim ends in review before any proposal); the extraction test counts its own
// calls and reads the extraction DLQ. One start and stop fewer.
describe("short-lived messages", () => {
  let extractions = 0;
  let s: Stack | undefined;
  beforeAll(async () => {
    const rules = rulesModel();
    const llm: LlmPort = {
      provider: rules.provider,
      model: rules.model,
      async complete(request) {
        if (request.task !== "extract_claim") return rules.complete(request);
        extractions++;
        return {
          ok: false,
          code: "LLM_TIMEOUT",
          message: "the model did not answer in time",
          attempts: 1,
          model: "test",
          retryable: true,
        };
      },
    };
    const short = { visibilityTimeoutS: 1, maxReceives: 2 };
    s = await startTestStack({ llm, queues: { proposals: short, extraction: short } });
  });
  afterAll(async () => {
    await s?.stop();
  });

  describe("poison messages", () => {
    it("a message that is not a proposal reaches the proposals DLQ after its receives, and other claims are decided meanwhile", async () => {
      const stack = s!;
      const proposals = stack.queues.proposals;
      await stack.clients.sqs.send(
        new SendMessageCommand({ QueueUrl: proposals.url, MessageBody: '{"claim_id":"clm_poison"}' }),
      );
      expect((await decide(stack, ACCEPT_CLAIM)).status).toBe("DECIDED");
      const dlqUrl = proposals.dlq!.url;
      await eventually("the poison message is in the DLQ", async () => (await depth(stack, dlqUrl)) === 1);
      const dead = await stack.clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10 }),
      );
      expect(dead.Messages?.map((m) => m.Body)).toEqual(['{"claim_id":"clm_poison"}']);
      expect(await depth(stack, proposals.url)).toBe(0);
    });
  });

  describe("a failing LLM", () => {
    it("a retryable extraction failure is retried through the queue, then ends the claim in NEEDS_REVIEW on the last receive", async () => {
      const stack = s!;
      extractions = 0;
      // No category: the patterns cannot read it alone, so the extraction asks the (failing) model.
      const record = await decide(stack, {
        claim_text: "I bought order ord_006 for 299.99 EUR on 29 May 2026, it stopped working.",
      });
      expect(record).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "EXTRACTION_FAILED" });
      expect(extractions).toBe(2);
      expect(detailTypes(stack, record.claim_id, "escalations")).toEqual([
        "ClaimNeedsReview",
        "ReviewRequested",
        "ReviewOpened",
      ]);
      expect(await depth(stack, stack.queues.extraction.dlq!.url)).toBe(0);
    });
  });
});

// The bus rules' live claims, the scheduled batch's simulation and the rehearsal's simulation share one stack.
describe("one stack for claims of their own", () => {
  const shared = sharedStack();

  describe("bus rules", () => {
    it.each([
      ["an ACCEPT", ACCEPT_CLAIM, { verdicts: ["ClaimVerdict"], escalations: [], refunds: ["RefundExecuted"] }],
      [
        "an ESCALATE",
        ESCALATE_CLAIM,
        { verdicts: ["ClaimVerdict"], escalations: ["ClaimVerdict", "ReviewRequested", "ReviewOpened"], refunds: [] },
      ],
    ])("deliver %s to the rules infra/ declares", async (_c, body, expected) => {
      const stack = shared();
      const record = await decide(stack, body);
      expect({
        verdicts: detailTypes(stack, record.claim_id, "verdicts"),
        escalations: detailTypes(stack, record.claim_id, "escalations"),
        refunds: detailTypes(stack, record.claim_id, "refunds"),
      }).toEqual(expected);
    });
  });

  describe("the scheduled batch", () => {
    it("submits every scenario under one simulation id, records SIMULATION_START, and every claim ends final", async () => {
      const stack = shared();
      const run = await stack.handlers.batch();
      expect(run.refused).toEqual([]);
      expect(run.submitted.length).toBeGreaterThan(10);
      await stack.drained();
      const statuses = new Set<string | undefined>();
      for (const id of run.submitted) {
        const record = await stack.deps.claims.getClaim(id);
        statuses.add(record?.status);
        // A return-required ACCEPT (the bundled sports gear, docs/returns.md) is decided and waits for its item.
        expect(["DECIDED", "NEEDS_REVIEW", "AWAITING_RETURN"]).toContain(record?.status);
        expect(record?.simulation_id).toBe(run.simulation_id);
      }
      expect(statuses.has("AWAITING_RETURN")).toBe(true);
      const audit = await stack.deps.audit.bySimulation(run.simulation_id ?? "");
      expect(audit.filter((e) => e.event_type === "SIMULATION_START")).toHaveLength(1);
      const again = await stack.handlers.batch();
      expect(again.simulation_id).toBe(run.simulation_id);
      expect(again.submitted).toEqual(run.submitted);
    }, 120_000); // every bundled scenario (47 claims) through the embedded stack: 27 s at load 2, more on a loaded machine
  });

  describe("a batch run's rehearsed decline (runtime.rehearseDecline)", () => {
    it("records the run's failed refund in the table and on the bus, its CLOSE binds the run's ledger only, never a provider", async () => {
      const stack = shared();
      const sim = "sim_rehearsal_1";
      const claim = (amount_eur: number) => ({
        claim: { order_id: "ord_016", amount_eur, category: "electronics", reason: "Camera body scratched" },
        simulation_id: sim,
      });
      const paid = await decide(stack, claim(300));
      expect(paid).toMatchObject({ verdict: "ACCEPT", executed: true });
      const rehearsal = await stack.runtime.rehearseDecline(paid.claim_id, "card_declined");
      expect(rehearsal).toMatchObject({
        ok: true,
        outcome: "FAILED",
        settlement: { status: "FAILED", provider: "simulated", simulation_id: sim, review: { status: "PENDING" } },
      });
      expect(await stack.deps.settlements!.get(paid.claim_id)).toMatchObject({ simulation_id: sim, status: "FAILED" });
      const opened = stack.bus.received.escalations.filter(
        (e) => e["detail-type"] === "ReviewOpened" && (e.detail as { claim_id?: string }).claim_id === paid.claim_id,
      );
      expect(
        opened.map((e) => [
          (e.detail as Record<string, unknown>).origin,
          (e.detail as Record<string, unknown>).simulation_id,
        ]),
      ).toEqual([["REFUND_FAILED", sim]]);
      const closed = await stack.runtime.decideReview(paid.claim_id, {
        decision: "CLOSE",
        paid_out_of_band: true,
        reviewer: "rita",
        note: "Bank transfer",
      });
      expect(closed.ok && closed.body.review.status).toBe("CLOSED");
      // The CLOSE binds the run's ledger of ord_016 (its scope), not the live order's.
      expect((await stack.deps.ledger.get("ord_016", sim))?.decisions).toEqual([
        { claim_id: paid.claim_id, decision: "CLOSE", paid_out_of_band: true },
      ]);
      expect(await stack.deps.ledger.get("ord_016")).toBeUndefined();
      expect(await decide(stack, claim(100))).toMatchObject({
        verdict: "ESCALATE",
        reason_code: "PRIOR_DECISION_ON_ORDER",
      });
      // A claim that is not a simulation's is never rehearsed.
      const live = await decide(stack, { claim: claim(50).claim });
      expect(await stack.runtime.rehearseDecline(live.claim_id, "card_declined")).toMatchObject({
        ok: false,
        code: "NOT_A_SIMULATION",
      });
    });
  });
});

describe("links", () => {
  // Both on one stack: the sweep examines the one claim the first test leaves for it; the second writes nothing.
  const shared = sharedStack();
  /** A handler's dependencies with exactly the links infra/ gives `fn`. */
  const strictDeps = (s: Stack, fn: FunctionKey) =>
    composeDeps({
      clients: s.clients,
      clock: s.clock,
      llm: rulesModel(),
      policy: s.config,
      resources: linkedResources(restrictedReader(sstResources, fn)),
    });

  it("the links infra/ gives are enough where a handler reaches beyond the obvious (review event, re-armed timer, restarted extraction)", async () => {
    const s = shared();
    const now = new Date(TEST_NOW - 3600_000).toISOString();
    const textClaim = (id: string): ClaimRecord => ({
      claim_id: id,
      dfid: `dfid_${id}`,
      root_dfid: `dfid_${id}`,
      status: "RECEIVED",
      input: { claim_text: "My kettle leaks, I paid 45 EUR." },
      received_at: now,
      updated_at: now,
    });

    await s.deps.claims.createClaim(textClaim("clm_link_extract"));
    const extract = createIntakeExtractHandler(() => strictDeps(s, "intakeExtract"), {
      logger: recordingLogger().logger,
      maxReceives: 1,
    });
    expect(
      (await extract(sqsEvent([{ body: '{"claim_id":"clm_link_extract"}' }]), {} as never)).batchItemFailures,
    ).toEqual([]);
    expect((await s.deps.claims.getClaim("clm_link_extract"))?.status).toBe("NEEDS_REVIEW");

    const timer = createTimerHandler(() => strictDeps(s, "timer"), { logger: recordingLogger().logger });
    const later = JSON.stringify({ claim_id: "clm_link_timer", due_ms: TEST_NOW + 20 * 60_000 });
    expect((await timer(sqsEvent([{ body: later }]), {} as never)).batchItemFailures).toEqual([]);
    expect(await delayed(s, s.queues.timers.url)).toBe(1); // re-armed: back on the timers queue, not due yet

    await s.deps.claims.createClaim(textClaim("clm_link_sweep"));
    const sweepLog = recordingLogger();
    const sweep = createSweepHandler(() => strictDeps(s, "sweep"), { logger: sweepLog.logger, env: {} });
    expect(await sweep()).toEqual({
      examined: 1,
      restarted: 1,
      ticked: 0,
      stalled: 0,
      reviewsRepaired: 0,
      refundsDue: [],
    });
    expect(sweepLog.lines.find((l) => l.message === "sweep done")?.fields).toEqual([
      expect.objectContaining({ claims: ["clm_link_sweep"] }),
    ]);
    // The restarted extraction runs on the stack: the text names no order, so the claim moves on to review.
    expect(await s.runtime.settle("clm_link_sweep")).toMatchObject({
      status: "NEEDS_REVIEW",
      reason_code: "NO_ORDER_ID",
    });
    await s.drained();
    // The extract handler reached the bus with its own links: the review event of its claim was delivered.
    expect(detailTypes(s, "clm_link_extract", "escalations")).toEqual([
      "ClaimNeedsReview",
      "ReviewRequested",
      "ReviewOpened",
    ]);
  });

  it("a handler reading a resource it is not linked to fails naming the link", async () => {
    const s = shared();
    const kernelDeps = strictDeps(s, "kernel");
    await expect(Promise.resolve().then(() => kernelDeps.queues.requestExtraction("clm_x"))).rejects.toThrow(
      /"ExtractionQueue" is not linked to functions\/kernel.handler/,
    );
  });
});

// One stack for the three: a settle limit of 0.3 s and a model that holds either crew's first step until the test
// lets it go. The first test asks after a claim never submitted (the gate plays no part); the second submits its own
// claim and releases the gate whatever happens; the stop test comes last and stops that same stack (one that has
// worked and timed a claim out, not an idle one), and the afterAll stopping it once more is harmless, as the test
// itself checks. Run alone (`-t`), each still gets the stack from beforeAll.
describe("settle and stop", () => {
  let release: () => void = () => undefined;
  let stopping: Stack | undefined;
  beforeAll(async () => {
    const rules = rulesModel();
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const llm: LlmPort = {
      provider: rules.provider,
      model: rules.model,
      async complete(request) {
        if (request.task === "analyze_claim" || request.task === "decide_claim") await gate; // either crew's first step
        return rules.complete(request);
      },
    };
    stopping = await startTestStack({ llm, settleTimeoutMs: 300 });
  });
  afterAll(async () => {
    release();
    await stopping?.stop();
  });

  it("settle gives up on a claim that was never stored, naming it, its last status and the queues", async () => {
    await expect(stopping!.runtime.settle("clm_never_submitted")).rejects.toThrow(
      /claim clm_never_submitted did not reach DECIDED or NEEDS_REVIEW within 0.3 s \(last status: not stored\); queues: crewEvents 0 queued/,
    );
  });

  it("a claim still waiting on the model when the settle limit runs out ends in NEEDS_REVIEW, and a late answer does not change that", async () => {
    const stack = stopping!;
    try {
      const record = await decide(stack, ACCEPT_CLAIM);
      expect(record).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "CLAIM_TIMED_OUT" });
      expect(record.reason).toMatch(/No decision within 0 s \(the claim was RUNNING\); a person decides/);
      await stack.bus.local.settled();
      expect(detailTypes(stack, record.claim_id, "escalations")).toEqual([
        "ClaimNeedsReview",
        "ReviewRequested",
        "ReviewOpened",
      ]);
      release();
      await stack.drained(20_000);
      expect(await stack.deps.claims.getClaim(record.claim_id)).toMatchObject({
        status: "NEEDS_REVIEW",
        reason_code: "CLAIM_TIMED_OUT",
      });
      expect(detailTypes(stack, record.claim_id, "verdicts")).toEqual([]);
      expect(detailTypes(stack, record.claim_id, "refunds")).toEqual([]);
    } finally {
      release();
    }
  });

  // Last: it stops the describe's stack.
  it("stop ends every poller and can be called twice", async () => {
    const s = stopping!;
    await s.stop();
    await s.stop();
    for (const poller of Object.values(s.pollers)) expect(poller.activity().stopped).toBe(true);
  });
});
