// `claims replay` fails closed. Real claims are recorded through the in-process pipeline (the rules
// model and scenarios/config.yaml, as `claims batch --in-process` runs them) along every path a
// claim can take; their untouched audits replay IDENTICAL, and deleting or corrupting any one of
// their events never does. The thousands of edited audits share one replay memo (each unchanged event read once).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OrderDataError } from "../../integrity/index.ts";
import type { AuditEvent } from "../../integrity/index.ts";
import { createRulesModel } from "../../agents/rules-model.ts";
import type { LlmFailure, LlmPort } from "../../llm/index.ts";
import { createInMemoryContextStore, createInMemoryRefundLedger } from "../../../pipeline/in-memory.ts";
import { createInProcessPipeline } from "../../../pipeline/in-process.ts";
import type { PipelineDeps } from "../../../pipeline/deps.ts";
import { DEFAULT_PIPELINE_SETTINGS } from "../../../pipeline/deps.ts";
import { handleCrewMessage } from "../../../pipeline/orchestrator.ts";
import { decideReview } from "../../../pipeline/review.ts";
import { parseAuditDetails } from "../audit-events.ts";
import { parseConfig } from "../../claim/config.ts";
import { replayClaim, replayMemo } from "./index.ts";
import type { ShadowRecord } from "../../kernel/shadow.ts";
import type { ReplayResult } from "./index.ts";
import { REPLAY_DETAILS, REPLAY_PATHS, STAGE_EVENTS, UNVERIFIED_DETAILS } from "./events.ts";
import { parseScenarios, scenarioBody } from "../scenarios.ts";
import { simulationStartEvent } from "../simulation.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const SIM = "sim_replay_test";
const config = parseConfig(
  readFileSync(new URL("../../../scenarios/config.yaml", import.meta.url), "utf8"),
  "config.yaml",
  NOW,
);
const scenarios = parseScenarios(
  readFileSync(new URL("../../../scenarios/scenarios.yaml", import.meta.url), "utf8"),
  "scenarios.yaml",
);
const rules = () => createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });

/** One recorded claim: its own events plus its run's SIMULATION_START (all replay reads). */
interface Recording {
  name: string;
  claimId: string;
  events: AuditEvent[];
  expected?: { outcome: string; reasonCode?: string };
  /** The claim's review as stored, when it has one (replay checks a decision against it). */
  review?: { status: string; decision?: string | undefined; reviewer?: string | undefined; note?: string | undefined };
}

/** The stored review of a claim, as replay is given it. */
async function storedReview(p: ReturnType<typeof pipeline>, claimId: string): Promise<Recording["review"]> {
  const r = await p.deps.reviews.getReview(claimId);
  return r ? { status: r.status, decision: r.decision, reviewer: r.reviewer, note: r.note } : undefined;
}

function pipeline(llm: LlmPort = rules(), overrides: Partial<PipelineDeps> = {}, agent = config.agent) {
  return createInProcessPipeline({
    agent,
    orders: config.orders,
    llm,
    clock: { now: () => NOW },
    overrides,
  });
}

async function startRun(p: ReturnType<typeof pipeline>) {
  const start = simulationStartEvent({
    simulationId: SIM,
    nowMs: NOW,
    config,
    scenarios,
    files: { config: "config.yaml", scenarios: "scenarios.yaml" },
    stack: "in-process",
    llm: { provider: "rules", model: "rules-v1" },
  });
  await p.audit.append(start);
}

function ownEvents(all: readonly AuditEvent[], claimId: string): AuditEvent[] {
  return all.filter((e) => e.details.claim_id === claimId || e.event_type === "SIMULATION_START");
}

/** Every bundled scenario, in one run against one ledger, as `claims batch` submits them. */
async function recordScenarios(agent = config.agent): Promise<Recording[]> {
  const p = pipeline(rules(), {}, agent);
  await startRun(p);
  const ids: [string, (typeof scenarios)[number]][] = [];
  for (const s of scenarios) {
    const { submit } = await p.decide(scenarioBody(s, SIM, NOW), { claimId: `clm_${s.id}` });
    if (!submit.ok) throw new Error(`scenario ${s.id} refused: ${submit.message}`);
    ids.push([submit.claimId, s]);
  }
  const all = p.auditEvents();
  const out: Recording[] = [];
  for (const [claimId, s] of ids) {
    out.push({
      name: `scenario ${s.id}`,
      claimId,
      events: ownEvents(all, claimId),
      expected: {
        outcome: s.expected.verdict,
        ...(s.expected.reason_code ? { reasonCode: s.expected.reason_code } : {}),
      },
      review: await storedReview(p, claimId),
    });
  }
  return out;
}

/** A model that answers like the rules model, except where `change` says otherwise for a task. */
function rulesExcept(
  change: (task: string, answer: Awaited<ReturnType<LlmPort["complete"]>>) => Awaited<ReturnType<LlmPort["complete"]>>,
): LlmPort {
  const model = rules();
  return {
    ...model,
    complete: (async (req: Parameters<LlmPort["complete"]>[0]) =>
      change(req.task, await model.complete(req))) as LlmPort["complete"],
  };
}

const down: LlmFailure = {
  ok: false,
  code: "LLM_SERVER_ERROR",
  message: "the model answered 500",
  attempts: 3,
  model: "down",
  retryable: true,
};
const unreachable: LlmFailure = {
  ok: false,
  code: "LLM_UNREACHABLE",
  message: "LLM endpoint http://localhost:11434/v1 is unreachable: ECONNREFUSED",
  attempts: 3,
  model: "down",
  retryable: true,
};
const notJson: LlmFailure = {
  ok: false,
  code: "LLM_INVALID_JSON",
  message: "not JSON",
  attempts: 1,
  model: "x",
  retryable: false,
};
const CREW_TASKS = new Set(["analyze_claim", "decide_refund", "decide_claim", "fix_step"]);

/** A claim that escalates (1200 EUR on a 1200 EUR order, above the 500 EUR limit), structured and as text. */
const ESCALATING = {
  structured: {
    claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" },
  },
  text: {
    claim_text:
      "Order ord_002 - laptop for 1200 EUR, bought 27 May 2026. It does not boot at all, I want my money back.",
  },
};

/** A context store whose orders the kernel cannot use. */
function corruptOrders(): PipelineDeps["orders"] {
  const store = createInMemoryContextStore(config.orders);
  return {
    ...store,
    getOrder: async (id) => {
      throw new OrderDataError(`stored order ${id} is invalid: amount: expected number`);
    },
  };
}

/** The paths the bundled scenarios do not take, each recorded for a structured and a free-text claim (and a person's review decision where given). */
const CASES: {
  name: string;
  llm?: () => LlmPort;
  overrides?: () => Partial<PipelineDeps>;
  bodies?: { structured: object; text: object };
  review?: Record<string, unknown>;
  /** Reviews after the first (four eyes: the second approval). */
  more?: Record<string, unknown>[];
  /** The agent's four-eyes bound. */
  secondApprovalAboveEur?: number;
  /** The crew shape (docs/llm.md, "Crew shape"): the two agents unless a case says compact (the default's). */
  shape?: "compact";
  outcome: string;
  reasonCode: string;
}[] = [
  {
    name: "the compact crew: the officer's first proposal fails the self-check and its repair round passes",
    shape: "compact",
    llm: () => {
      let decisions = 0;
      return rulesExcept((task, a) =>
        task === "decide_claim" && a.ok && decisions++ === 0
          ? { ...a, value: { ...(a.value as object), confidence: 0.4 } }
          : a,
      );
    },
    outcome: "ACCEPT",
    reasonCode: "VALIDATION_PASSED",
  },
  {
    // Standing in alone, without an analysis, the rules fixer is less confident: with a purchase date it still passes.
    name: "the compact crew: the fixer stands in for a failed officer",
    shape: "compact",
    bodies: {
      structured: {
        claim: {
          order_id: "ord_006",
          amount_eur: 299.99,
          category: "electronics",
          reason: "Screen is dead on arrival",
          purchase_date: "2026-05-29",
        },
      },
      text: {
        claim_text:
          "I bought electronics order ord_006 for 299.99 EUR on 29 May 2026, the screen is dead. Please refund me.",
      },
    },
    llm: () => rulesExcept((task, a) => (task === "decide_claim" ? notJson : a)),
    outcome: "ACCEPT",
    reasonCode: "VALIDATION_PASSED",
  },
  {
    name: "the compact crew fails (the officer's and the fixer's calls fail)",
    shape: "compact",
    llm: () => rulesExcept((task, a) => (CREW_TASKS.has(task) ? down : a)),
    outcome: "NEEDS_REVIEW",
    reasonCode: "CREW_FAILED",
  },
  {
    name: "the crew fails (every step's model call fails)",
    llm: () => rulesExcept((task, a) => (CREW_TASKS.has(task) ? down : a)),
    outcome: "NEEDS_REVIEW",
    reasonCode: "CREW_FAILED",
  },
  {
    name: "the model cannot be reached (every crew call LLM_UNREACHABLE)",
    llm: () => rulesExcept((task, a) => (CREW_TASKS.has(task) ? unreachable : a)),
    outcome: "NEEDS_REVIEW",
    reasonCode: "LLM_UNREACHABLE",
  },
  {
    name: "the Decision Maker's first proposal fails the self-check and its repair round passes",
    llm: () => {
      let decisions = 0;
      return rulesExcept((task, a) =>
        task === "decide_refund" && a.ok && decisions++ === 0
          ? { ...a, value: { ...(a.value as object), confidence: 0.4 } }
          : a,
      );
    },
    outcome: "ACCEPT",
    reasonCode: "VALIDATION_PASSED",
  },
  {
    name: "the crew's output is not a proposal",
    llm: () =>
      rulesExcept((task, a) => (task === "decide_refund" && a.ok ? { ...a, value: { verdict: "refund it" } } : a)),
    outcome: "NEEDS_REVIEW",
    reasonCode: "CREW_OUTPUT_INVALID",
  },
  {
    name: "the self-check fails (confidence 0.4)",
    llm: () =>
      rulesExcept((task, a) =>
        task === "decide_refund" && a.ok ? { ...a, value: { ...(a.value as object), confidence: 0.4 } } : a,
      ),
    outcome: "NEEDS_REVIEW",
    reasonCode: "CLAIMS_SELF_CHECK_FAILED",
  },
  {
    name: "the fixer stands in for a failed decision maker",
    llm: () => rulesExcept((task, a) => (task === "decide_refund" ? notJson : a)),
    outcome: "ACCEPT",
    reasonCode: "VALIDATION_PASSED",
  },
  {
    name: "the fixer stands in for a failed analyst",
    llm: () => rulesExcept((task, a) => (task === "analyze_claim" ? down : a)),
    outcome: "ACCEPT",
    reasonCode: "VALIDATION_PASSED",
  },
  {
    // Between the kernel's decision and its reservation another claim takes the order's whole balance: the
    // reservation loses the race, and the kernel decides again on the ledger it now sees.
    name: "an ACCEPT whose reservation loses the race is decided again (REJECT)",
    overrides: () => {
      const ledger = createInMemoryRefundLedger();
      return {
        ledger: {
          ...ledger,
          reserve: async (request) => (
            await ledger.reserve({ ...request, claimId: "clm_other" }), ledger.reserve(request)
          ),
        },
      };
    },
    outcome: "REJECT",
    reasonCode: "EXCEEDS_REFUNDABLE_BALANCE",
  },
  {
    name: "an ESCALATE a person approves for less",
    bodies: ESCALATING,
    review: { decision: "APPROVE", amount_eur: 900, reviewer: "rita", note: "300 withheld" },
    outcome: "ESCALATE",
    reasonCode: "AMOUNT_ABOVE_LIMIT",
  },
  {
    name: "an ESCALATE two people approve (four eyes: a first approval, then a different reviewer's)",
    bodies: ESCALATING,
    secondApprovalAboveEur: 500,
    review: { decision: "APPROVE", amount_eur: 1000, reviewer: "rita", note: "200 withheld" },
    more: [{ decision: "APPROVE", reviewer: "sam", note: "agreed" }],
    outcome: "ESCALATE",
    reasonCode: "AMOUNT_ABOVE_LIMIT",
  },
  {
    name: "an ESCALATE a person denies",
    bodies: ESCALATING,
    review: { decision: "DENY", note: "not ours", reviewer: "rita" },
    outcome: "ESCALATE",
    reasonCode: "AMOUNT_ABOVE_LIMIT",
  },
  {
    name: "the crew fails and a person denies",
    llm: () => rulesExcept((task, a) => (CREW_TASKS.has(task) ? down : a)),
    review: { decision: "DENY", note: "not ours" },
    outcome: "NEEDS_REVIEW",
    reasonCode: "CREW_FAILED",
  },
  {
    name: "the self-check fails and a person resubmits a corrected claim",
    llm: () =>
      rulesExcept((task, a) =>
        task === "decide_refund" && a.ok ? { ...a, value: { ...(a.value as object), confidence: 0.4 } } : a,
      ),
    review: {
      decision: "RESUBMIT",
      claim: { order_id: "ord_006", amount_eur: 100, category: "electronics", reason: "corrected" },
    },
    outcome: "NEEDS_REVIEW",
    reasonCode: "CLAIMS_SELF_CHECK_FAILED",
  },
  {
    // Triage: the kernel's rules reject the claim itself (an order the store does not know), without the crew.
    name: "triage rejects a claim on an unknown order",
    bodies: {
      structured: { claim: { order_id: "ord_404", amount_eur: 40, category: "home", reason: "Lamp flickers" } },
      text: {
        claim_text: "I bought home order ord_404 for 40 EUR on 29 May 2026, the lamp flickers. Please refund me.",
      },
    },
    outcome: "REJECT",
    reasonCode: "ORDER_NOT_FOUND",
  },
  {
    name: "the order's data is corrupt",
    overrides: () => ({ orders: corruptOrders() }),
    outcome: "NEEDS_REVIEW",
    reasonCode: "ORDER_DATA_INVALID",
  },
  {
    name: "the order's data is corrupt and a person denies",
    overrides: () => ({ orders: corruptOrders() }),
    review: { decision: "DENY", note: "not ours" },
    outcome: "NEEDS_REVIEW",
    reasonCode: "ORDER_DATA_INVALID",
  },
];

const STRUCTURED = {
  claim: { order_id: "ord_006", amount_eur: 299.99, category: "electronics", reason: "Screen is dead on arrival" },
};
const TEXT = {
  claim_text: "I bought electronics order ord_006 for 299.99 EUR on 29 May 2026, the screen is dead. Please refund me.",
};

async function recordCases(): Promise<Recording[]> {
  const out: Recording[] = [];
  for (const c of CASES) {
    for (const [kind, body] of [
      ["structured", c.bodies?.structured ?? STRUCTURED],
      ["free text", c.bodies?.text ?? TEXT],
    ] as const) {
      const agent = {
        ...config.agent,
        crewShape: c.shape ?? ("two_agents" as const),
        ...(c.secondApprovalAboveEur === undefined
          ? {}
          : { review: { secondApprovalAboveEur: c.secondApprovalAboveEur } }),
      };
      const p = pipeline(c.llm?.(), c.overrides?.(), agent);
      await startRun(p);
      const { submit } = await p.decide({ ...body, simulation_id: SIM }, { claimId: "clm_case" });
      if (!submit.ok) throw new Error(`${c.name} refused: ${submit.message}`);
      if (c.review) {
        const decided = await decideReview(submit.claimId, c.review, p.deps);
        if (!decided.ok) throw new Error(`${c.name}: the review decision was refused: ${decided.message}`);
        for (const more of c.more ?? []) {
          const next = await decideReview(submit.claimId, more, p.deps);
          if (!next.ok) throw new Error(`${c.name}: a later review decision was refused: ${next.message}`);
        }
      }
      out.push({
        name: `${kind}: ${c.name}`,
        claimId: submit.claimId,
        events: ownEvents(p.auditEvents(), submit.claimId),
        expected: { outcome: c.outcome, reasonCode: c.reasonCode },
        review: await storedReview(p, submit.claimId),
      });
    }
  }
  out.push(await recordStall());
  out.push(await recordExtractionFailureDenied());
  out.push(await recordOutage("structured", STRUCTURED));
  out.push(await recordOutage("free text", TEXT));
  return out;
}

/** The model cannot be reached for the first two calls: the claim waits for it (CLAIM_HELD), then goes on (CLAIM_RESUMED). */
async function recordOutage(kind: string, body: Record<string, unknown>): Promise<Recording> {
  const inner = rules();
  let calls = 0;
  // Each failed call takes the retry interval: the copy sent again is due when it is delivered.
  let now = NOW;
  const flaky: LlmPort = {
    provider: inner.provider,
    model: inner.model,
    complete: async (request) =>
      ++calls <= 2 && (now += 30_000) > 0
        ? {
            ok: false,
            code: "LLM_UNREACHABLE",
            message: "LLM endpoint is unreachable: ECONNREFUSED",
            attempts: 1,
            model: inner.model,
            retryable: false,
          }
        : inner.complete(request),
  };
  const p = createInProcessPipeline({
    agent: config.agent,
    orders: config.orders,
    llm: flaky,
    clock: { now: () => now },
    overrides: { settings: { ...DEFAULT_PIPELINE_SETTINGS, llmOutageHoldMs: 3_600_000 } },
  });
  await startRun(p);
  const { submit } = await p.decide({ ...body, simulation_id: SIM }, { claimId: "clm_held" });
  if (!submit.ok) throw new Error("refused");
  return {
    name: `${kind}: the model is down, the claim waits for it and goes on`,
    claimId: "clm_held",
    events: ownEvents(p.auditEvents(), "clm_held"),
    expected: { outcome: "ACCEPT", reasonCode: "VALIDATION_PASSED" },
  };
}

/** Free text without an order id goes to a person, who denies it. */
async function recordExtractionFailureDenied(): Promise<Recording> {
  const p = pipeline();
  await startRun(p);
  const { submit } = await p.decide(
    {
      claim_text: "Hi, the sofa I bought last month is falling apart, I paid 300 EUR. Please help.",
      simulation_id: SIM,
    },
    { claimId: "clm_r" },
  );
  if (!submit.ok) throw new Error("refused");
  const decided = await decideReview("clm_r", { decision: "DENY", note: "no order" }, p.deps);
  if (!decided.ok) throw new Error(decided.message);
  return {
    name: "free text: extraction fails and a person denies",
    claimId: "clm_r",
    events: ownEvents(p.auditEvents(), "clm_r"),
    expected: { outcome: "NEEDS_REVIEW", reasonCode: "NO_ORDER_ID" },
    review: await storedReview(p, "clm_r"),
  };
}

/** A worker dies with the analyst's step; the timer's tick past its deadline hands the step to the fixer. */
async function recordStall(): Promise<Recording> {
  const p = pipeline(undefined, undefined, { ...config.agent, crewShape: "two_agents" });
  await startRun(p);
  const submitted = await p.submit({ ...STRUCTURED, simulation_id: SIM }, { claimId: "clm_stall" });
  if (!submitted.ok) throw new Error("refused");
  const start = p.queues.take();
  if (start?.queue !== "crew-events") throw new Error("expected the crew start");
  await handleCrewMessage(start.message, p.deps);
  p.queues.take(); // the analyst's step, lost with its worker
  await p.drain();
  await handleCrewMessage(
    { type: "crew.tick", crewId: "clm_stall", nowMs: NOW + p.deps.settings.timeouts.analystMs + 1 },
    p.deps,
  );
  await p.drain();
  return {
    name: "a stalled analyst step goes to the fixer on a tick",
    claimId: "clm_stall",
    events: ownEvents(p.auditEvents(), "clm_stall"),
    expected: { outcome: "ACCEPT", reasonCode: "VALIDATION_PASSED" },
  };
}

const recordings = [...(await recordScenarios()), ...(await recordCases())];

/** Each recorded claim event (not the run's SIMULATION_START) with where it is and how to name it. */
function* claimEvents() {
  for (const rec of recordings) {
    const mine = rec.events.filter((e) => e.details.claim_id === rec.claimId);
    for (const [i, event] of mine.entries())
      yield { rec, event, label: `${event.event_type} #${i + 1}`, where: `${rec.name}, ${event.event_type} #${i + 1}` };
  }
}

/**
 * Every replay of this file shares one memo: the tests replay thousands of edited copies of the recorded audits, each
 * edit a new object (withDetails, filter), so each unchanged event is read once (replay still checks all of it).
 */
const memo = replayMemo();

function replay(rec: Recording, events: AuditEvent[] = rec.events, shared = true): ReplayResult {
  return replayClaim(rec.claimId, events, {
    ...(rec.review ? { review: rec.review } : {}),
    ...(shared ? { memo } : {}),
  });
}

/**
 * Notes replay checks when they are there but cannot require: a hold that a late copy of an answered step records
 * is ended by no CLAIM_RESUMED (docs/audit.md), so a missing one cannot be told from that.
 */
const OPTIONAL_NOTES = new Set(["CLAIM_RESUMED"]);

const withDetails = (rec: Recording, target: AuditEvent, details: Record<string, unknown>) =>
  rec.events.map((e) => (e === target ? { ...e, details } : e));
const problems = (r: ReplayResult) =>
  r.steps.filter((s) => s.status !== "IDENTICAL").map((s) => `${s.step}: ${s.detail}`);

describe("replay of untouched audits", () => {
  it("replays every bundled scenario IDENTICAL, ending as the scenario expects", () => {
    for (const rec of recordings.filter((r) => r.name.startsWith("scenario"))) {
      const result = replay(rec);
      expect(result.status, `${rec.name}: ${problems(result).join(" | ")}`).toBe("IDENTICAL");
      expect(
        { outcome: result.outcome, reasonCode: rec.expected?.reasonCode ? result.reasonCode : undefined },
        rec.name,
      ).toEqual(rec.expected);
    }
  });

  it("replays every other path IDENTICAL: crew failure, invalid output, self-check failure, fixer stand-ins, a refused refund", () => {
    for (const rec of recordings.filter((r) => !r.name.startsWith("scenario"))) {
      const result = replay(rec);
      expect(result.status, `${rec.name}: ${problems(result).join(" | ")}`).toBe("IDENTICAL");
      expect({ outcome: result.outcome, reasonCode: result.reasonCode }, rec.name).toEqual(rec.expected);
    }
  });

  it("records every path of REPLAY_PATHS and no other, and every event kind replay reads", () => {
    const paths = recordings.map((rec) => replay(rec).path.join(" → "));
    const missing = Object.entries(REPLAY_PATHS)
      .filter(([, p]) => !paths.includes(p.join(" → ")))
      .map(([name]) => name);
    expect(missing).toEqual([]);
    expect(new Set(paths)).toEqual(new Set(Object.values(REPLAY_PATHS).map((p) => p.join(" → "))));
    const kinds = new Set(
      recordings.flatMap((rec) =>
        rec.events.filter((e) => e.details.claim_id === rec.claimId).map((e) => e.event_type),
      ),
    );
    expect([...kinds].sort()).toEqual(Object.keys(REPLAY_DETAILS).sort());
  });

  it("records on every path details that parse with their type's schema, which names every field", () => {
    for (const rec of recordings)
      for (const event of rec.events) {
        const read = parseAuditDetails(event);
        expect(read.ok ? undefined : read.problem, `${rec.name}: ${event.event_type}`).toBeUndefined();
        if (read.ok) expect(read.parsed.details, `${rec.name}: ${event.event_type}`).toEqual(event.details);
      }
  });

  it("replays alike with the shared memo and without it, untouched and with any one event removed or unreadable", () => {
    // One recording per way the claim is read (structured, free text, extraction failed, triaged, compact crew).
    const names = [
      "scenario A",
      "free text: the crew fails and a person denies",
      "free text: extraction fails and a person denies",
      "free text: triage rejects a claim on an unknown order",
      "structured: the compact crew: the officer's first proposal fails the self-check and its repair round passes",
    ];
    const chosen = recordings.filter((r) => names.includes(r.name));
    expect(chosen.map((r) => r.name).sort()).toEqual([...names].sort());
    for (const rec of chosen) {
      const edits = [rec.events];
      for (const event of rec.events.filter((e) => e.details.claim_id === rec.claimId)) {
        edits.push(rec.events.filter((e) => e !== event));
        edits.push(withDetails(rec, event, { claim_id: rec.claimId }));
      }
      for (const [i, events] of edits.entries())
        expect(replay(rec, events), `${rec.name}, edit ${i}`).toEqual(replay(rec, events, false));
    }
  });

  it("uses the run's SIMULATION_START for the self-check when no proposal was submitted, and is INCOMPLETE without it", () => {
    const rec = recordings.find((r) => r.name === "structured: the self-check fails (confidence 0.4)")!;
    const withoutStart = rec.events.filter((e) => e.event_type !== "SIMULATION_START");
    const result = replay(rec, withoutStart);
    expect(result.status).toBe("INCOMPLETE");
    expect(problems(result)).toEqual([expect.stringMatching(/^self_check: no responsibility contract/)]);
    expect(replayClaim(rec.claimId, withoutStart, { responsibility: config.agent.responsibility }).status).toBe(
      "IDENTICAL",
    );
  });
});

describe("replay of claims decided beside a shadow policy", () => {
  // A shadow policy that refunds no category: it rejects whatever the live policy would refund or escalate.
  const shadow = { ...config.agent, contract: { ...config.agent.contract, allowed_refund_categories: ["none"] } };
  const shadowed = recordScenarios({ ...config.agent, shadow });
  const verdictOf = (rec: Recording) => rec.events.find((e) => e.event_type === "KERNEL_VERDICT");
  const shadowOf = (details: Record<string, unknown> | undefined) => details?.shadow as ShadowRecord | undefined;

  it("records the shadow verdict and changes no outcome, event or other audit detail", async () => {
    const plain = recordings.filter((r) => r.name.startsWith("scenario"));
    const beside = await shadowed;
    expect(beside.map((r) => r.name)).toEqual(plain.map((r) => r.name));
    const withoutShadow = (e: AuditEvent) => {
      const { shadow: _, ...details } = e.details;
      return { ...e, details };
    };
    for (const [i, rec] of beside.entries()) {
      expect(rec.events.map(withoutShadow), rec.name).toEqual(plain[i]!.events);
      expect(rec.review, rec.name).toEqual(plain[i]!.review);
      expect(verdictOf(plain[i]!)?.details.shadow, rec.name).toBeUndefined();
    }
    const recorded = beside.map((r) => shadowOf(verdictOf(r)?.details)).filter((s) => s !== undefined);
    expect(recorded.length).toBeGreaterThan(0);
    expect(recorded.some((s) => s.agrees === false && s.verdict === "REJECT")).toBe(true);
  });

  it("replays them IDENTICAL, and not when the recorded shadow verdict or its policy is changed", async () => {
    for (const rec of await shadowed) {
      const result = replay(rec);
      expect(result.status, `${rec.name}: ${problems(result).join(" | ")}`).toBe("IDENTICAL");
      const event = verdictOf(rec);
      const recorded = shadowOf(event?.details);
      if (!event || !recorded) continue;
      const flipped = { ...event.details, shadow: { ...recorded, agrees: !recorded.agrees } };
      expect(replay(rec, withDetails(rec, event, flipped)).status, rec.name).not.toBe("IDENTICAL");
      const policy = { ...recorded.policy, contract: config.agent.contract };
      const loosened = { ...event.details, shadow: { ...recorded, policy } };
      if (!recorded.agrees)
        expect(replay(rec, withDetails(rec, event, loosened)).status, rec.name).not.toBe("IDENTICAL");
    }
  });
});

describe("replay fails closed on a missing event", () => {
  it("is never IDENTICAL without any one recorded event, and a stage's event is INCOMPLETE naming it", () => {
    const stageKinds = new Set<string>(Object.values(STAGE_EVENTS).flat());
    for (const { rec, event, where } of claimEvents()) {
      if (OPTIONAL_NOTES.has(event.event_type)) continue;
      const result = replay(
        rec,
        rec.events.filter((e) => e !== event),
      );
      expect(result.status, where).not.toBe("IDENTICAL");
      if (stageKinds.has(event.event_type)) {
        expect(result.status, where).toBe("INCOMPLETE");
        expect(problems(result).join(" | "), where).toMatch(new RegExp(`${event.event_type}( or [A-Z_]+)? is missing`));
      }
    }
  });

  it("is never IDENTICAL without every event of one kind", () => {
    for (const rec of recordings) {
      const kinds = new Set(rec.events.filter((e) => e.details.claim_id === rec.claimId).map((e) => e.event_type));
      for (const kind of [...kinds].filter((k) => !OPTIONAL_NOTES.has(k)))
        expect(
          replay(
            rec,
            rec.events.filter((e) => e.event_type !== kind || e.details.claim_id !== rec.claimId),
          ).status,
          `${rec.name} without ${kind}`,
        ).not.toBe("IDENTICAL");
    }
  });

  it("is INCOMPLETE for a claim without events, and for one whose crew has not finished", () => {
    expect(replayClaim("clm_nothing", recordings[0]!.events)).toMatchObject({
      status: "INCOMPLETE",
      steps: [{ step: "audit", detail: "no audit events for claim clm_nothing" }],
    });
    const rec = recordings.find((r) => r.name === "scenario A")!;
    const cut = rec.events.findIndex((e) => e.event_type === "AGENT_DECISION");
    // The claim as it was before the compact crew's one step (the Claims Officer's) was answered.
    const result = replay(rec, rec.events.slice(0, cut - 1));
    expect(result.status).toBe("INCOMPLETE");
    expect(problems(result).join(" | ")).toMatch(/crew: the crew does not finish from the 0 recorded steps/);
  });
});

describe("replay fails closed on a corrupted event", () => {
  it("is INCOMPLETE naming any event whose details cannot be read", () => {
    for (const { rec, event, label, where } of claimEvents()) {
      const unreadable = {
        claim_id: rec.claimId,
        ...(event.details.simulation_id ? { simulation_id: event.details.simulation_id } : {}),
      };
      const result = replay(rec, withDetails(rec, event, unreadable));
      expect(result.status, where).toBe("INCOMPLETE");
      expect(problems(result).join(" | "), where).toContain(`${label} cannot be read`);
    }
  });

  it("is never IDENTICAL when any field replay reads is removed or holds a value of another type", () => {
    const unverified: Record<string, readonly string[]> = UNVERIFIED_DETAILS;
    for (const { rec, event, where } of claimEvents()) {
      for (const key of Object.keys(event.details)) {
        if (key === "claim_id" || key === "simulation_id" || unverified[event.event_type]?.includes(key)) continue;
        const { [key]: value, ...rest } = event.details;
        expect(replay(rec, withDetails(rec, event, rest)).status, `${where} without ${key}`).not.toBe("IDENTICAL");
        expect(
          replay(rec, withDetails(rec, event, { ...rest, [key]: otherType(value) })).status,
          `${where} with ${key} = ${JSON.stringify(otherType(value))}`,
        ).not.toBe("IDENTICAL");
      }
    }
  }, 180_000);

  it("is never IDENTICAL when a value replay checks is changed, in every kind of event", () => {
    const tried = new Set<string>();
    for (const { rec, event, where } of claimEvents()) {
      for (const [name, change] of Object.entries(CHANGES[event.event_type] ?? {})) {
        const details = structuredClone(event.details);
        if (change(details, rec.claimId) === false) continue;
        tried.add(event.event_type);
        const result = replay(rec, withDetails(rec, event, details));
        expect(result.status, `${where}: ${name}`).not.toBe("IDENTICAL");
      }
    }
    expect([...tried].sort()).toEqual(Object.keys(REPLAY_DETAILS).sort());
  }, 180_000); // every value of every event of every recorded claim (91 now): 2.6–5.6 s at load 7 with the shared memo

  it("is DIFFERENT for an event the claim's path does not explain, and INCOMPLETE for a kind it cannot read", () => {
    const b = recordings.find((r) => r.name === "scenario B")!;
    const refund = recordings
      .find((r) => r.name === "scenario A")!
      .events.find((e) => e.event_type === "CLAIM_REFUND_EXECUTED")!;
    const stray = { ...refund, dfid: `dfid_${b.claimId}`, details: { ...refund.details, claim_id: b.claimId } };
    const extra = replay(b, [...b.events, stray]);
    expect(extra.status).toBe("DIFFERENT");
    expect(problems(extra)).toEqual([
      expect.stringMatching(/^audit: CLAIM_REFUND_EXECUTED #\d+ is not on this claim's path/),
    ]);

    const verdict = b.events.find((e) => e.event_type === "KERNEL_VERDICT")!;
    const twice = replay(b, [...b.events, { ...verdict, details: { ...verdict.details, reason: "another reason" } }]);
    expect(twice.status).toBe("DIFFERENT");
    expect(problems(twice).join(" | ")).toContain("KERNEL_VERDICT is recorded 2 times");

    const unknown = replay(b, [...b.events, { ...verdict, event_type: "CREW_COMPLETED" }]);
    expect(unknown.status).toBe("INCOMPLETE");
    expect(problems(unknown).join(" | ")).toMatch(/replay cannot read CREW_COMPLETED events/);
  });
});

/** A JSON value of another type than `value`. */
function otherType(value: unknown): unknown {
  if (typeof value === "string") return 42;
  if (typeof value === "number" || typeof value === "boolean") return "42";
  if (Array.isArray(value)) return { 0: value[0] ?? null };
  if (value && typeof value === "object") return ["x"];
  return "x";
}

type Change = (details: Record<string, any>, claimId: string) => void | false; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Per kind, changes to values replay checks (a change returns false where it does not apply). */
const CHANGES: Partial<Record<string, Record<string, Change>>> = {
  CLAIM_RECEIVED: {
    "another amount": (d) => (d.input.claim ? void (d.input.claim.amount_eur += 1) : false),
    // The text is the model's input: replay re-checks it only through the order id the extracted claim must quote.
    "a text without the order id": (d) =>
      d.input.claim_text?.includes("ord_") ? void (d.input.claim_text = "My order did not arrive.") : false,
    "another receipt time": (d) => void (d.received_at = "2026-05-01T12:00:00.000Z"),
    "another input kind": (d) => void (d.input_kind = d.input_kind === "claim" ? "claim_text" : "claim"),
  },
  CLAIM_EXTRACTED: {
    "the model answered another amount": (d) => void (d.extracted.amount_eur = 1),
    "another claim": (d) => void (d.claim.amount_eur = 1),
  },
  CLAIM_EXTRACTION_FAILED: {
    "another reason code": (d) => void (d.reason_code = "NO_AMOUNT"),
    "the model answered an order id": (d) => (d.extracted ? void (d.extracted.order_id = "ord_001") : false),
  },
  CREW_STARTED: {
    "another root claim": (d) => void (d.root_input.claim.amount_eur = 1),
    "another start time": (d) => void (d.now_ms += 1),
    "another crew": (d) => void (d.crew_id = "clm_other"),
    // The crew recorded is the crew replayed (docs/llm.md, "Crew shape"): the other one does not give the same steps.
    "the other crew shape": (d) =>
      void (d.crew = d.crew === "CLAIMS_CREW_COMPACT" ? "CLAIMS_CREW" : "CLAIMS_CREW_COMPACT"),
  },
  AGENT_STEP: {
    "another correlation": (d) => void (d.inbound.correlationId = "000000000000000000000000"),
    "another amount in the answer": (d) =>
      void (d.inbound.output.claim ? (d.inbound.output.claim.amount_eur = 10) : (d.inbound.output.amount_eur = 10)),
    "another time": (d) => void (d.now_ms -= 1),
    "other consequences": (d) => void d.caused.pop(),
  },
  AGENT_STEP_FAILED: {
    "another fixer reason": (d) =>
      d.fixer ? void (d.fixer.reason = d.fixer.reason === "fault" ? "stall" : "fault") : false,
    "another failed role": (d) => (d.fixer ? void (d.fixer.failedRole = "claims_analyst_2") : false),
    "another error": (d) =>
      d.inbound?.type === "agent.step.failed" ? void (d.inbound.error.message = "something else") : false,
    "an earlier tick": (d) => (d.inbound?.type === "crew.tick" ? void (d.inbound.nowMs -= 60_000) : false),
  },
  LLM_CALL: {
    "the other result": (d) => void (d.ok = !d.ok),
    "another correlation": (d) => void (d.correlation_id = "000000000000000000000000"),
    "another role": (d) => void (d.role = d.role === "fixer" ? "claims_analyst" : "fixer"),
    "another agent": (d) => void (d.agent_id = "someone#1"),
  },
  AGENT_DECISION: {
    "another output": (d) => void (d.output.amount_eur = 1),
    "another proposal time": (d) => void (d.proposal.created_at = "2026-06-01T12:00:01.000Z"),
    "another validity": (d) => void (d.proposal.valid_for_ms = 1),
  },
  CREW_FAILED: {
    "another reason code": (d) => void (d.reason_code = "CREW_TIMED_OUT"),
    "another reason": (d) => void (d.reason = "the crew went home"),
    "another code or output": (d) => (d.output ? void (d.output = { verdict: "no" }) : void (d.code = "OTHER")),
  },
  CLAIMS_SELF_CHECK_FAILED: {
    "a confident output": (d) => void (d.output.confidence = 0.9),
    "no failures": (d) => void (d.failures = []),
    "another reason": (d) => void (d.reason = "Self-check failed"),
  },
  CLAIM_TRIAGED: {
    "another claim": (d) => void (d.triage_inputs.claim.amount_eur = 1),
    "an order that passes (where none was found)": (d) =>
      d.triage_inputs.order !== null
        ? false
        : void (d.triage_inputs.order = {
            order_id: d.triage_inputs.claim.order_id,
            purchase_date: "2026-05-30T12:00:00.000Z",
            category: "home",
            amount: 400,
            currency: "EUR",
          }),
    "another decision time": (d) => void (d.triage_inputs.decidedAt = "2026-06-01T12:00:01.000Z"),
    "another flow": (d) => void (d.triage_inputs.dfid = "dfid_other"),
  },
  PROPOSAL_SUBMITTED: {
    "another claim": (d) => void (d.kernel_inputs.claim.amount_eur = 1),
    "another proposal": (d) => void (d.kernel_inputs.proposal.confidence = 0.1),
    "another decision time": (d) => void (d.kernel_inputs.decidedAt = "2026-06-01T12:00:01.000Z"),
    "another receipt time": (d) => void (d.kernel_inputs.receivedAt = "2026-05-01T12:00:00.000Z"),
    "another flow": (d) => void (d.kernel_inputs.dfid = "dfid_other"),
  },
  KERNEL_VERDICT: {
    "another verdict": (d) => void (d.verdict = d.verdict === "ACCEPT" ? "REJECT" : "ACCEPT"),
    "another verdict id": (d) => void (d.verdict_id = "vrd_00000000000000000000000000000000"),
    "another layer": (d) => void (d.layer += 1),
  },
  CLAIM_REFUND_EXECUTED: {
    "another amount": (d) => void (d.amount_cents += 1),
    "another order": (d) => void (d.order_id = "ord_zzz"),
    "another execution id": (d) => void (d.execution_id = "exe_00000000000000000000000000000000"),
    "a ledger without this claim": (d, claimId) =>
      d.ledger_after ? void delete d.ledger_after.claims[claimId] : false,
    "a ledger refunding more than the order": (d, claimId) =>
      d.ledger_after
        ? void ((d.ledger_after.claims[claimId] += 1_000_000), (d.ledger_after.refunded_cents += 1_000_000))
        : false,
    "another approver": (d) => (d.approved_by ? void (d.approved_by = "mallory") : false),
  },
  CLAIM_HELD: {
    "held since another time": (d) => void (d.since = "2026-05-01T12:00:00.000Z"),
    "held until before it began": (d) => void (d.until = "2026-05-01T12:00:00.000Z"),
  },
  CLAIM_RESUMED: {
    "ends another hold": (d) => void (d.held_since = "2026-05-01T12:00:00.000Z"),
    "waited another time": (d) => void (d.waited_ms += 1_000),
  },
  RETURN_REQUESTED: {
    "a later deadline": (d) => void (d.return_by = "2027-01-01T00:00:00.000Z"),
    "paid on another event": (d) => void (d.pay_on = d.pay_on === "in_transit" ? "delivered" : "in_transit"),
    "more days to refund": (d) => void (d.refund_due_days += 1),
    "another execution": (d) => void (d.execution_id = "exe_other"),
    "fewer units back": (d) => (d.lines[0] ? void (d.lines = []) : false),
  },
  CLAIM_REFUND_NOT_EXECUTED: {
    "another verdict id": (d) => void (d.verdict_id = "vrd_00000000000000000000000000000000"),
    "another reason": (d) => void (d.reason = "Refund not executed"),
  },
  CLAIM_NEEDS_REVIEW: {
    "another reason code": (d) => void (d.reason_code = "SOMETHING_ELSE"),
    "another reason": (d) => void (d.reason = "look at it"),
    "another review": (d) => void (d.review_id = "rev_other"),
  },
  REVIEW_REQUESTED: {
    "another review": (d) => void (d.review_id = "rev_other"),
    "another origin": (d) => void (d.origin = d.origin === "ESCALATE" ? "NEEDS_REVIEW" : "ESCALATE"),
    "another reason code": (d) => void (d.reason_code = "SOMETHING_ELSE"),
    "another amount": (d) => (d.amount_eur === undefined ? false : void (d.amount_eur += 1)),
  },
  REVIEW_DECIDED: {
    "another decision": (d) => void (d.decision = d.decision === "DENY" ? "APPROVE" : "DENY"),
    "another reviewer": (d) => void (d.reviewer = "mallory"),
    "another approved amount": (d) => (d.amount_eur === undefined ? false : void (d.amount_eur += 1)),
    "another resubmitted claim": (d) =>
      d.resubmitted_claim_id === undefined ? false : void (d.resubmitted_claim_id = "clm_other"),
    "another first approver": (d) =>
      (d.approvals?.length ?? 0) < 2 ? false : void (d.approvals[0].reviewer = "mallory"),
  },
  REVIEW_APPROVAL_RECORDED: {
    "another first approver": (d) => void (d.reviewer = "mallory"),
    "the completing reviewer as first approver": (d) => void (d.reviewer = "sam"),
    "another first amount": (d) => void (d.amount_eur += 1),
    "another review": (d) => void (d.review_id = "rev_other"),
  },
};
