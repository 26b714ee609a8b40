// Fault injection on the local stack (dynalite, fauxqs, the local bus; production handlers and
// adapters through the real SDK): every message redelivered, a crash right after each
// side-effecting call of each handler, two orchestrators racing on one claim, poison messages,
// and a failing LLM. After each, `assertInvariants` reads the bus journal (events.jsonl) and the
// stores: no claim lost, one verdict per proposal, no refund executed twice, no ledger above its order.
import { AsyncLocalStorage } from "node:async_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import type { SQSEvent } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { seedOrders } from "../adapters/aws/index.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import type { PipelineDeps } from "../pipeline/deps.ts";
import type { Order } from "../core/integrity/index.ts";
import type { LlmPort, LlmRequest } from "../core/llm/index.ts";
import { VersionConflictError } from "../core/errors.ts";
import { InjectedCrashError } from "./errors.ts";
import { stackPerTest } from "./testing/stack-per-test.ts";
import type { SessionRepository } from "../pipeline/ports.ts";
import { composeDeps } from "../functions/composition/compose.ts";
import { loadConfig } from "../functions/composition/config-file.ts";
import { linkedResources, restrictedReader, sstResources } from "../functions/composition/resources.ts";
import type { FunctionKey, QueueRole } from "../app/manifest.ts";
import type { SqsHandler } from "../functions/consumers/sqs-consumer.ts";
import { createOrchestratorHandler } from "../functions/orchestrator.ts";
import {
  assertInvariants,
  crashPointsOf,
  createFaultInjector,
  describePoint,
  fastQueues,
  readJournal,
  recordSends,
  tickingClock,
} from "./testing/fault-injection.ts";
import type { CrashPoint, FaultInjector, InvariantReport } from "./testing/fault-injection.ts";
import {
  CONFIG_PATH,
  TEST_NOW,
  recordingLogger,
  rulesModel,
  sqsEvent,
  startTestStack,
} from "./testing/stack-fixture.ts";
import { LOCAL_TABLE_NAME } from "./stack.ts";
import type { LocalStack, LocalStackOptions } from "./stack.ts";

const VERBOSE = process.env.FAULTS_VERBOSE === "1";
const BASE_ORDERS = loadConfig(CONFIG_PATH, TEST_NOW).orders;

/** The claims the cases submit, each on its own copy of a configured order so they never share a ledger by accident. */
const KINDS = {
  // A partial refund (120 of 299.99 EUR): reserving it twice would still fit the order, so only the ledger's per-claim condition stops it.
  accept: {
    template: "ord_001",
    body: (order: string) => ({
      claim: { order_id: order, amount_eur: 120, category: "electronics", reason: "Screen is dead" },
    }),
    expected: { status: "DECIDED", verdict: "ACCEPT", reason_code: "VALIDATION_PASSED", executed: true },
  },
  acceptWhole: {
    template: "ord_001",
    body: (order: string) => ({
      claim: { order_id: order, amount_eur: 299.99, category: "electronics", reason: "Screen is dead" },
    }),
    expected: { status: "DECIDED", verdict: "ACCEPT", reason_code: "VALIDATION_PASSED", executed: true },
  },
  text: {
    template: "ord_006",
    body: (order: string) => ({
      claim_text: `I bought electronics order ${order} for 299.99 EUR on 29 May 2026, the screen is dead.`,
    }),
    expected: { status: "DECIDED", verdict: "ACCEPT", reason_code: "VALIDATION_PASSED", executed: true },
  },
  // A REJECT the crew's proposal gets from the kernel (120 EUR on an 80 EUR order: triage lets it through, since a
  // smaller proposal could fit; the claims triage rejects are covered by the chaos flows, chaos/flow.test.ts).
  reject: {
    template: "ord_007",
    body: (order: string) => ({
      claim: { order_id: order, amount_eur: 120, category: "clothing", reason: "Jacket seams split" },
    }),
    expected: { status: "DECIDED", verdict: "REJECT", reason_code: "EXCEEDS_REFUNDABLE_BALANCE", executed: false },
  },
  escalate: {
    template: "ord_002",
    body: (order: string) => ({
      claim: { order_id: order, amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" },
    }),
    expected: { status: "DECIDED", verdict: "ESCALATE", reason_code: "AMOUNT_ABOVE_LIMIT", executed: false },
  },
} as const;
type Kind = keyof typeof KINDS;
type TestClaim = { readonly id: string; readonly kind: Kind; readonly order: string };

const claimOf = (kind: Kind, tag: string, order = `${KINDS[kind].template}_${tag}`): TestClaim => ({
  id: `clm_${kind}_${tag}`,
  kind,
  order,
});

/** Copies of the template orders under the claims' order ids. */
function ordersFor(claims: readonly TestClaim[]): Order[] {
  const byId = new Map(BASE_ORDERS.map((o) => [o.order_id, o]));
  const out = new Map<string, Order>();
  for (const c of claims) out.set(c.order, { ...byId.get(KINDS[c.kind].template)!, order_id: c.order });
  return [...out.values()];
}

/** One claim of each kind, plus two claims for a whole order competing for it (only one may be refunded). */
function mixedClaims(tag: string): TestClaim[] {
  const shared = `ord_001_${tag}_shared`;
  return [
    claimOf("accept", tag),
    claimOf("text", tag),
    claimOf("reject", tag),
    claimOf("escalate", tag),
    claimOf("acceptWhole", `${tag}_a`, shared),
    claimOf("acceptWhole", `${tag}_b`, shared),
  ];
}

const outcome = (r: ClaimRecord | undefined) => ({
  status: r?.status,
  verdict: r?.verdict,
  reason_code: r?.reason_code,
  executed: r?.executed,
});

type FaultStack = LocalStack & {
  readonly tick: ReturnType<typeof tickingClock>;
  readonly pollerErrors: Record<QueueRole, number>;
};
const perTest = stackPerTest<FaultStack>("claims-faults-");
/** The stack the running test started (its clock, for a handler the test builds). */
let current: FaultStack | undefined;

const FAST = { visibilityTimeoutS: 1, maxReceives: 10 };

/** A test stack with a moving clock, a data directory (events.jsonl), 1-second visibility timeouts and quiet pollers. */
async function startFaultStack(
  opts: { claims?: readonly TestClaim[]; injector?: FaultInjector } & Partial<LocalStackOptions> = {},
): Promise<FaultStack> {
  const dataDir = perTest.dataDir();
  const tick = tickingClock(TEST_NOW);
  const pollerErrors: Record<QueueRole, number> = {
    crewEvents: 0,
    agentSteps: 0,
    proposals: 0,
    extraction: 0,
    timers: 0,
  };
  const { claims = [], injector, ...overrides } = opts;
  const stack = await startTestStack({
    clock: tick,
    dataDir,
    orders: [...BASE_ORDERS, ...ordersFor(claims)],
    // No batching window on the timers here: a redelivered timer is handled at once, not a minute later.
    queues: fastQueues(FAST),
    onPollerError: (role) => {
      pollerErrors[role]++;
    },
    ...(injector
      ? { wrapDeps: injector.wrapDeps, wrapHandler: injector.wrapHandler, wrapRefundDelivery: injector.invoke }
      : {}),
    ...overrides,
  });
  current = perTest.keep({ ...stack, tick, pollerErrors });
  return current;
}

/** Submits through intake like a client: a crashed request is sent again with the same Idempotency-Key. */
async function submit(stack: LocalStack, claim: TestClaim, injector?: FaultInjector): Promise<void> {
  const send = () =>
    stack.runtime.submit(KINDS[claim.kind].body(claim.order), {
      claimId: claim.id,
      idempotencyKey: `idem-${claim.id}`,
    });
  for (let attempt = 1; ; attempt++) {
    try {
      const result = injector ? await injector.invoke(send) : await send();
      if (!result.ok) throw new Error(`claim ${claim.id} was refused: ${result.message}`);
      return;
    } catch (error) {
      if (!(error instanceof InjectedCrashError) || attempt === 3) throw error;
    }
  }
}

/** Polls the claim records until every one is final; fails naming the ones that are not. */
async function waitFinal(
  stack: LocalStack,
  ids: readonly string[],
  timeoutMs = 60_000,
): Promise<Map<string, ClaimRecord>> {
  const deadline = Date.now() + timeoutMs;
  const records = new Map<string, ClaimRecord>();
  for (;;) {
    const pending = ids.filter((id) => !records.has(id));
    await Promise.all(
      pending.map(async (id) => {
        const r = await stack.deps.claims.getClaim(id);
        if (r && (r.status === "DECIDED" || r.status === "NEEDS_REVIEW")) records.set(id, r);
      }),
    );
    if (records.size === ids.length) return records;
    if (Date.now() > deadline) {
      const left = await Promise.all(
        ids
          .filter((id) => !records.has(id))
          .map(async (id) => `${id}: ${(await stack.deps.claims.getClaim(id))?.status ?? "not stored"}`),
      );
      throw new Error(`claims not final after ${timeoutMs} ms: ${left.join(", ")}`);
    }
    await sleep(50);
  }
}

async function decideAll(stack: LocalStack, claims: readonly TestClaim[], injector?: FaultInjector) {
  await Promise.all(claims.map((c) => submit(stack, c, injector)));
  const records = await waitFinal(
    stack,
    claims.map((c) => c.id),
  );
  // A final claim's events may still be on their way to the bus's targets (the refund executor among them).
  await stack.bus.local.settled();
  return records;
}

/** The expected outcome of each claim; of two claims competing for one order exactly one is refunded. */
function expectOutcomes(claims: readonly TestClaim[], records: ReadonlyMap<string, ClaimRecord>) {
  const byOrder = new Map<string, TestClaim[]>();
  for (const c of claims) byOrder.set(c.order, [...(byOrder.get(c.order) ?? []), c]);
  for (const [, group] of byOrder) {
    if (group.length === 1) {
      expect({ claim: group[0]!.id, ...outcome(records.get(group[0]!.id)) }).toEqual({
        claim: group[0]!.id,
        ...KINDS[group[0]!.kind].expected,
      });
    } else {
      expect(group.filter((c) => records.get(c.id)?.executed === true)).toHaveLength(1);
      for (const c of group) expect(records.get(c.id)?.status).toBe("DECIDED");
    }
  }
}

const log = (what: string, report: InvariantReport | Record<string, unknown>) => {
  if (VERBOSE) console.log(`[faults] ${what}: ${JSON.stringify(report)}`);
};

describe("every message redelivered", () => {
  it("every send duplicated on the wire (FIFO copies under their own deduplication id) decides each claim as without duplicates", async () => {
    const claims = mixedClaims("dup");
    const s = await startFaultStack({ claims, stepTimers: "eager" }); // every queue carries a send, the timers too
    const dup = recordSends(s.clients.sqs, { duplicate: true });
    const records = await decideAll(s, claims);
    expectOutcomes(claims, records);
    const report = await assertInvariants(
      s,
      claims.map((c) => c.id),
    );
    for (const role of ["crewEvents", "agentSteps", "proposals", "extraction", "timers"] as const) {
      expect({ role, copied: (dup.copies.get(s.queues[role].url) ?? 0) > 0 }).toEqual({ role, copied: true });
    }
    const crewTypes = new Set(
      dup.sent
        .filter((m) => m.queueUrl === s.queues.crewEvents.url)
        .map((m) => (JSON.parse(m.body) as { type: string }).type),
    );
    expect([...crewTypes].sort()).toEqual(["agent.step.completed", "claim.start"]);
    // Every copy reached a consumer (FIFO: each deduplication id twice, as SQS drops repeats of one id).
    for (const role of ["crewEvents", "agentSteps", "proposals", "extraction"] as const) {
      expect({ role, received: s.pollers[role].stats.received >= dup.deliverable(s.queues[role].url) }).toEqual({
        role,
        received: true,
      });
    }
    log("duplicated sends", {
      ...report,
      copies: Object.fromEntries([...dup.copies].map(([u, n]) => [u.split("/").at(-1), n])),
    });
  }, 60_000);

  it("every recorded message sent again after the claims are decided (timers past due, dropped as the claims are settled), and each claim's crew events again as one FIFO batch with a tick, changes nothing", async () => {
    const claims = mixedClaims("late");
    const s = await startFaultStack({ claims, stepTimers: "eager" }); // the start's timers are among the resent
    const dup = recordSends(s.clients.sqs, { duplicate: true });
    const records = await decideAll(s, claims);
    const before = await assertInvariants(
      s,
      claims.map((c) => c.id),
    );
    const ledgersBefore = await Promise.all(claims.map((c) => s.deps.ledger.get(c.order)));

    s.tick.advance(30 * 60_000); // every step deadline and timer is due now
    const originals = dup.sent.length;
    expect(await dup.resendAll()).toBe(originals);
    await s.drained();
    // A due timer of a decided claim whose session has nothing left to perform is dropped by the timer function.
    const ticks = dup.sent.filter(
      (m) => m.queueUrl === s.queues.crewEvents.url && (JSON.parse(m.body) as { type: string }).type === "crew.tick",
    );
    expect(ticks).toEqual([]);
    // fauxqs hands out one message per FIFO group per receive; AWS gives up to ten of a group in order. So each
    // claim's crew-events history also goes to the orchestrator handler as batches of one group, as on AWS.
    for (const c of claims) {
      const bodies = dup.sent
        .filter((m) => m.queueUrl === s.queues.crewEvents.url && m.groupId === c.id)
        .map((m) => m.body);
      expect(bodies.length).toBeGreaterThan(2);
      bodies.push(JSON.stringify({ type: "crew.tick", crewId: c.id, nowMs: s.tick.now() })); // what a timer that raced the verdict would forward
      for (let i = 0; i < bodies.length; i += 10) {
        const answer = await s.handlers.crewEvents(
          sqsEvent(bodies.slice(i, i + 10).map((body) => ({ body, groupId: c.id }))),
          {} as never,
        );
        expect(answer.batchItemFailures).toEqual([]);
      }
    }
    const after = await assertInvariants(
      s,
      claims.map((c) => c.id),
    );
    for (const c of claims) expect(outcome(await s.deps.claims.getClaim(c.id))).toEqual(outcome(records.get(c.id)));
    expect({
      verdicts: after.verdictEvents - after.duplicateVerdictEvents,
      refunds: after.refundEvents - after.duplicateRefundEvents,
    }).toEqual({
      verdicts: before.verdictEvents - before.duplicateVerdictEvents,
      refunds: before.refundEvents - before.duplicateRefundEvents,
    });
    expect(await Promise.all(claims.map((c) => s.deps.ledger.get(c.order)))).toEqual(ledgersBefore);
    log("recorded bodies resent", { resent: originals, ticks: ticks.length, before, after });
  }, 60_000);
});

describe("a crash right after each side-effecting call", () => {
  // One traced claim gives the calls; then one claim per call crashes right after it (all at once on one stack).
  it.each(["accept", "text", "reject"] as const)(
    "%s claim: every crash point is redelivered and repaired, with the traced outcome",
    async (kind) => {
      const injector = createFaultInjector();
      const trace = claimOf(kind, "trace");
      const s = await startFaultStack({ claims: [trace], injector });
      const traced = await decideAll(s, [trace], injector);
      expect(outcome(traced.get(trace.id))).toEqual(KINDS[kind].expected);
      const points = crashPointsOf(injector.calls, trace.id);
      expect(points.length).toBeGreaterThan(10);

      const faulty = points.map((point, i) => ({ claim: claimOf(kind, `n${String(i + 1).padStart(2, "0")}`), point }));
      await seedOrders(s.clients.dynamo, LOCAL_TABLE_NAME, ordersFor(faulty.map((f) => f.claim)));
      for (const f of faulty) injector.planCrash(f.claim.id, f.point);
      const records = await decideAll(
        s,
        faulty.map((f) => f.claim),
        injector,
      );

      expect(
        faulty.filter((f) => injector.fired.get(f.claim.id) !== f.point).map((f) => describePoint(f.point)),
      ).toEqual([]);
      const wrong = faulty.filter(
        (f) => JSON.stringify(outcome(records.get(f.claim.id))) !== JSON.stringify(KINDS[kind].expected),
      );
      expect(
        wrong.map((f) => `${describePoint(f.point)} → ${JSON.stringify(outcome(records.get(f.claim.id)))}`),
      ).toEqual([]);
      const report = await assertInvariants(s, [trace.id, ...faulty.map((f) => f.claim.id)]);
      expect(report.decided).toBe(points.length + 1);
      log(`crash points (${kind})`, {
        points: points.length,
        byHandler: countBy(points),
        handlerFailures: s.pollerErrors,
        ...report,
      });
    },
    90_000,
  );

  it("the timer handler crashing right after it forwarded a tick is redelivered, and the ticks change nothing", async () => {
    const injector = createFaultInjector();
    const claim = claimOf("accept", "timer");
    const ticks: string[] = [];
    const s = await startFaultStack({
      claims: [claim],
      stepTimers: "eager", // the crew's start sends the claim's timer, which this test redelivers
      // The timer read the claim just before its verdict landed (a race): it forwards its tick instead of dropping it.
      wrapDeps: (fn: FunctionKey, deps: PipelineDeps) => {
        const d = injector.wrapDeps(fn, deps);
        return fn !== "timer"
          ? d
          : {
              ...d,
              claims: {
                ...d.claims,
                getClaim: async (id: string) => {
                  const record = await d.claims.getClaim(id);
                  return record && { ...record, status: "RUNNING" as const };
                },
              },
            };
      },
      wrapHandler: (role, handler) =>
        injector.wrapHandler(
          role,
          role !== "crewEvents"
            ? handler
            : async (event, context) => {
                ticks.push(...event.Records.map((r) => r.body).filter((b) => b.includes('"crew.tick"')));
                return handler(event, context);
              },
        ),
    });
    const sends = recordSends(s.clients.sqs, { duplicate: false });
    await decideAll(s, [claim], injector);
    const timer = sends.sent.find((m) => m.queueUrl === s.queues.timers.url);
    expect(timer).toBeDefined();
    injector.planCrash(claim.id, { fn: "timer", op: "queues.sendCrewEvents", occurrence: 1 });
    s.tick.advance(30 * 60_000); // the timer is due
    await s.clients.sqs.send(new SendMessageCommand({ QueueUrl: s.queues.timers.url, MessageBody: timer!.body }));
    await eventually(
      "the crashed timer was redelivered and both its ticks reached the orchestrator",
      async () => injector.fired.has(claim.id) && ticks.length === 2,
    );
    await s.drained();
    expect(injector.calls.filter((c) => c.fn === "timer").map((c) => c.op)).toEqual([
      "queues.sendCrewEvents",
      "queues.sendCrewEvents",
    ]);
    const report = await assertInvariants(s, [claim.id]);
    expect(report).toMatchObject({ decided: 1, verdictEvents: 1, refundEvents: 1 });
    expect(outcome(await s.deps.claims.getClaim(claim.id))).toEqual(KINDS.accept.expected);
  }, 60_000);
});

describe("two orchestrators racing on one claim", () => {
  const orchestratorDeps = (s: LocalStack): PipelineDeps =>
    composeDeps({
      clients: s.clients,
      clock: (current as FaultStack).tick,
      llm: rulesModel(),
      policy: s.config,
      resources: linkedResources(restrictedReader(sstResources, "orchestrator")),
    });

  /** Sessions whose lost races are counted. */
  const counting = (sessions: SessionRepository, conflicts: { n: number }): SessionRepository => ({
    loadSession: (id) => sessions.loadSession(id),
    clearOutbox: (id, v) => sessions.clearOutbox(id, v),
    async saveSession(session) {
      try {
        await sessions.saveSession(session);
      } catch (error) {
        if (error instanceof VersionConflictError) conflicts.n++;
        throw error;
      }
    },
  });

  it("two orchestrator instances given every crew-events batch at the same time decide each claim once", async () => {
    const claims = mixedClaims("race");
    const conflicts = { n: 0 };
    const twin: { handler?: SqsHandler } = {};
    const s = await startFaultStack({
      claims,
      wrapDeps: (fn: FunctionKey, deps: PipelineDeps) =>
        fn === "orchestrator" ? { ...deps, sessions: counting(deps.sessions, conflicts) } : deps,
      wrapHandler: (role: QueueRole, handler: SqsHandler): SqsHandler =>
        role !== "crewEvents"
          ? handler
          : async (event, context) => {
              const answers = await Promise.all([handler(event, context), twin.handler!(event, context)]);
              const failed = new Set(answers.flatMap((a) => a.batchItemFailures.map((f) => f.itemIdentifier)));
              return { batchItemFailures: [...failed].map((itemIdentifier) => ({ itemIdentifier })) };
            },
    });
    const twinDeps = orchestratorDeps(s);
    twin.handler = createOrchestratorHandler(
      () => ({ ...twinDeps, sessions: counting(twinDeps.sessions, conflicts) }),
      { logger: recordingLogger().logger },
    );
    const records = await decideAll(s, claims);
    expectOutcomes(claims, records);
    const report = await assertInvariants(
      s,
      claims.map((c) => c.id),
    );
    log("concurrent orchestrators", { conflicts: conflicts.n, ...report });
  }, 60_000);

  it("another orchestrator saving between this one's load and save makes the save conflict, and the retry decides each claim once", async () => {
    const claims = mixedClaims("conflict");
    const conflicts = { n: 0 };
    const invocation = new AsyncLocalStorage<{ event: SQSEvent; raced: Set<string> }>();
    const twin: { handler?: SqsHandler } = {};
    let races = 0;
    const racing = (sessions: SessionRepository): SessionRepository => ({
      ...counting(sessions, conflicts),
      async loadSession(claimId) {
        const loaded = await sessions.loadSession(claimId);
        const inv = invocation.getStore();
        const mine = inv?.event.Records.filter((r) => r.attributes.MessageGroupId === claimId) ?? [];
        // The other instance handles this claim's messages completely, after the load and before the save.
        if (
          inv &&
          mine.length > 0 &&
          mine.every((r) => r.attributes.ApproximateReceiveCount === "1") &&
          !inv.raced.has(claimId)
        ) {
          inv.raced.add(claimId);
          races++;
          await twin.handler!({ Records: mine }, {} as never);
        }
        return loaded;
      },
    });
    const s = await startFaultStack({
      claims,
      wrapDeps: (fn: FunctionKey, deps: PipelineDeps) =>
        fn === "orchestrator" ? { ...deps, sessions: racing(deps.sessions) } : deps,
      wrapHandler: (role: QueueRole, handler: SqsHandler): SqsHandler =>
        role !== "crewEvents"
          ? handler
          : (event, context) => invocation.run({ event, raced: new Set() }, () => handler(event, context)),
    });
    twin.handler = createOrchestratorHandler(() => orchestratorDeps(s), { logger: recordingLogger().logger });
    const records = await decideAll(s, claims);
    expectOutcomes(claims, records);
    const report = await assertInvariants(
      s,
      claims.map((c) => c.id),
    );
    // Each claim's two crew steps (the start, the compact crew's one answer: docs/llm.md, "Crew shape") race and end in a conflict: the raced message was new, so the stale instance had
    // something to save. A start or answer delivered again after its conflict made the step the twin saved, and no
    // marker says the twin performed it (the normal path writes none): it sends that step's agent step again, and
    // the second answer races too, with nothing new to save.
    expect(conflicts.n).toBeGreaterThanOrEqual(claims.length * 2);
    expect(races).toBeGreaterThanOrEqual(conflicts.n);
    log("forced version conflicts", { races, conflicts: conflicts.n, ...report });
  }, 60_000);
});

describe("poison messages", () => {
  it("poison messages in their own crew-events FIFO groups reach the DLQ and block no other claim", async () => {
    const claims = mixedClaims("poison");
    const s = await startFaultStack({
      claims,
      queues: {
        // 5 s, not 1: a claim's own crew events must not be redelivered past maxReceives while a loaded machine
        // handles them (at load 20–30 the 60 s budget ran out); the poison messages still reach the DLQ in ~10 s.
        crewEvents: { visibilityTimeoutS: 5, maxReceives: 2 },
        agentSteps: FAST,
        proposals: FAST,
        extraction: FAST,
      },
    });
    const poison = [
      { group: "clm_poison_schema", body: '{"type":"claim.start"}' },
      { group: "clm_poison_json", body: "{not json" },
    ];
    for (const [i, p] of poison.entries()) {
      await s.clients.sqs.send(
        new SendMessageCommand({
          QueueUrl: s.queues.crewEvents.url,
          MessageBody: p.body,
          MessageGroupId: p.group,
          MessageDeduplicationId: `poison-${i}`,
        }),
      );
    }
    const records = await decideAll(s, claims);
    expectOutcomes(claims, records);
    const dlq = s.queues.crewEvents.dlq!.url;
    const dead: string[] = [];
    await eventually("both poison messages are in the crew-events DLQ", async () => {
      const out = await s.clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: dlq, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
      );
      dead.splice(0, dead.length, ...(out.Messages ?? []).map((m) => m.Body ?? ""));
      return dead.length === 2;
    });
    expect(dead.sort()).toEqual(poison.map((p) => p.body).sort());
    await assertInvariants(
      s,
      claims.map((c) => c.id),
      { deadLetters: { crewEvents: 2 } },
    );
  }, 180_000);
});

describe("a failing LLM", () => {
  const failing = (fails: (request: LlmRequest<unknown>) => boolean): LlmPort => {
    const rules = rulesModel();
    return {
      provider: rules.provider,
      model: rules.model,
      async complete(request) {
        if (!fails(request as LlmRequest<unknown>)) return rules.complete(request);
        return {
          ok: false,
          code: "LLM_SERVER_ERROR",
          message: "the model answered 500",
          attempts: 3,
          model: "test",
          retryable: true,
        };
      },
    };
  };
  const fixingDecision = (r: LlmRequest<unknown>) =>
    r.facts?.task === "fix_step" && r.facts.failed_task === "decide_refund";

  it.each([
    // The free text is one the patterns read alone (docs/llm.md, "Extraction by patterns"): its crew fails, not its extraction.
    ["that always fails", () => true, { structured: "CREW_FAILED", text: "CREW_FAILED" }],
    [
      "that fails on the decision step and on the fixer standing in for it",
      // the Decision Maker's step, or the compact crew's Claims Officer's (docs/llm.md, "Crew shape")
      (r: LlmRequest<unknown>) => r.task === "decide_refund" || r.task === "decide_claim" || fixingDecision(r),
      { structured: "CREW_FAILED", text: "CREW_FAILED" },
    ],
  ] as const)(
    "an LLM %s ends every claim in NEEDS_REVIEW through the stack, with the review on the bus",
    async (_name, fails, codes) => {
      const claims = [claimOf("accept", "llm"), claimOf("text", "llm"), claimOf("reject", "llm")];
      const s = await startFaultStack({
        claims,
        llm: failing(fails),
        queues: {
          crewEvents: FAST,
          agentSteps: FAST,
          proposals: FAST,
          extraction: { visibilityTimeoutS: 1, maxReceives: 2 },
        },
      });
      const records = await decideAll(s, claims);
      for (const c of claims) {
        expect({ claim: c.id, status: records.get(c.id)?.status, reason_code: records.get(c.id)?.reason_code }).toEqual(
          { claim: c.id, status: "NEEDS_REVIEW", reason_code: c.kind === "text" ? codes.text : codes.structured },
        );
      }
      const report = await assertInvariants(
        s,
        claims.map((c) => c.id),
      );
      expect(report).toMatchObject({ needsReview: 3, verdictEvents: 0, refundEvents: 0, ledgers: 0 });
      const reviews = (await readJournal(s))
        .filter((e) => e["detail-type"] === "ClaimNeedsReview")
        .map((e) => e.detail.claim_id);
      expect([...new Set(reviews)].sort()).toEqual(claims.map((c) => c.id).sort());
    },
    60_000,
  );

  it("an LLM that fails only on the decision step is stood in for by the fixer, and every claim is decided once", async () => {
    const claims = mixedClaims("fixer");
    const s = await startFaultStack({ claims, llm: failing((r) => r.task === "decide_refund") });
    const records = await decideAll(s, claims);
    expectOutcomes(claims, records);
    const report = await assertInvariants(
      s,
      claims.map((c) => c.id),
    );
    expect(report.decided).toBe(claims.length);
    log("decision step failing", {
      outcomes: Object.fromEntries([...records].map(([id, r]) => [id, outcome(r)])),
      ...report,
    });
  }, 60_000);
});

/** Polls until `check` holds; fails with `what` after 20 s. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`never happened: ${what}`);
}

function countBy(points: readonly CrashPoint[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of points) out[`${p.fn} ${p.op}`] = (out[`${p.fn} ${p.op}`] ?? 0) + 1;
  return out;
}
