// The orchestrator's process for one batch of a claim's crew-queue messages, without ports: the decider walked from
// the loaded session and claim to each message's outcome, its requests answered by a table of what the stores hold
// (a save keeps the session, a marker clears its outbox). The trace is what it asked (`? kind`) and each list of
// effects it returned (one entry per list: a list's audit events are one stored item).
import { describe, expect, it } from "vitest";
import type { AuditEvent } from "../../core/integrity/index.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { claimAudit } from "./audit.ts";
import { splitSessionOutbox } from "../ports.ts";
import type { CrewQueueMessage } from "../messages.ts";
import type { StoredSession, StoredVerdict } from "../ports.ts";
import { ACCEPTABLE, claimRecord, NOW, order, policy as bundled, shape } from "./decide.test-kit.ts";
import { crewStart, decideCrew } from "./orchestrator.ts";
import type { OrchestratorOutcome } from "./orchestrator.ts";
import type { Observation, Request } from "./requests.ts";

/** What the stores hold; a walk changes it as the shell would. */
interface World {
  claim: ClaimRecord | undefined;
  /** The session as the next load gives it: the audit stored with it is not in its outbox. */
  session?: StoredSession;
  /** The session as last saved. */
  saved?: StoredSession;
  verdicts: Map<string, StoredVerdict>;
  now: number;
}

/** The seed's two-agent crew (`crew_shape: two_agents`): these tests follow a step, its answer and the next step. */
const policy = { ...bundled, agent: { ...bundled.agent, crewShape: "two_agents" as const } };

const RECEIPT: AuditEvent = claimAudit(claimRecord(ACCEPTABLE), "CLAIM_RECEIVED", "RECEIVED", NOW - 60_000, {
  input_kind: "claim",
  input: { claim: ACCEPTABLE },
  label: undefined,
  received_at: new Date(NOW - 60_000).toISOString(),
});

/** Walks one batch; `carried` is the audit each message carries. */
function walk(
  world: World,
  messages: CrewQueueMessage[],
  carried: AuditEvent[][] = messages.map(() => []),
  p: typeof policy = policy,
): { trace: string[]; outcomes: OrchestratorOutcome[] } {
  const trace: string[] = [];
  const answer = (request: Request): Observation => {
    switch (request.kind) {
      case "now":
        return { kind: "now", now: world.now };
      case "claim":
        return { kind: "claim", claim: world.claim };
      case "verdict":
        return { kind: "verdict", verdict: world.verdicts.get(request.key) };
      case "order":
        return { kind: "order", order: order(request.orderId) };
      case "ledger":
        return { kind: "ledger", entry: undefined };
      case "store_verdict":
        world.verdicts.set(request.verdict.idempotency_key, request.verdict);
        return { kind: "store_verdict", verdict: request.verdict };
      case "claim_update":
        world.claim = { ...world.claim!, ...request.update.patch };
        return { kind: "claim_update", changed: true, record: world.claim };
      case "save_session": {
        const { rest } = splitSessionOutbox(request.session.claimId, request.session.outbox);
        world.saved = request.session;
        world.session = { ...request.session, outbox: rest };
        return { kind: "save_session", rest };
      }
      case "clear_outbox":
        if (world.session?.version === request.version) world.session = { ...world.session, outbox: [] };
        return { kind: "clear_outbox" };
      default:
        throw new Error(`the orchestrator asked for ${request.kind}`);
    }
  };
  const batch = { claimId: "clm_1", messages, carried };
  let step = decideCrew(crewStart(batch), { kind: "loaded", session: world.session, claim: world.claim }, p);
  for (;;) {
    if (step.effects.length > 0) trace.push(shape(step.effects).join(" + "));
    const { next } = step;
    if ("done" in next) return { trace, outcomes: next.done };
    if ("then" in next) {
      step = next.then;
      continue;
    }
    trace.push(`? ${next.awaiting.kind}`);
    step = decideCrew(next.state, answer(next.awaiting), p);
  }
}

const start: CrewQueueMessage = { type: "claim.start", crewId: "clm_1" };
const tick = (nowMs: number): CrewQueueMessage => ({ type: "crew.tick", crewId: "clm_1", nowMs });
/** The world after intake: a RECEIVED claim, nothing else. */
const received = (claim = ACCEPTABLE): World => ({
  claim: claimRecord(claim, { status: "RECEIVED" }),
  verdicts: new Map(),
  now: NOW,
});
/** The one agent step the saved outbox sends, answered. */
function answerTo(world: World, type: "completed" | "failed" = "completed"): CrewQueueMessage {
  const step = world.session!.outbox.find((e) => e.kind === "agent_step");
  if (step?.kind !== "agent_step") throw new Error("no agent step in the outbox");
  const { correlationId } = step.message.request;
  if (type === "failed")
    return { type: "agent.step.failed", crewId: "clm_1", correlationId, error: { message: "no" } } as CrewQueueMessage;
  const output = { summary: "a dead screen", category: "electronics", risk: "low" };
  return { type: "agent.step.completed", crewId: "clm_1", correlationId, output } as CrewQueueMessage;
}

describe("decideCrew: a claim's start", () => {
  it("triages first; a claim that can pass starts its crew: RUNNING, CREW_STARTED, the first step sent last", () => {
    const world = received();
    expect(walk(world, [start], [[RECEIPT]])).toEqual({
      trace: ["? verdict", "? now", "? order", "? ledger", "? now", "? save_session", "claim_update + agent_step"],
      outcomes: ["STARTED"],
    });
    // The save keeps the receipt and CREW_STARTED with the session (one write); the witness goes last. No timer: the
    // sweep arms the first one of a claim still open after its cutoff (stepTimers lazy, the default).
    expect(world.saved).toMatchObject({ version: 1 });
    expect(shape(world.saved!.outbox)).toEqual([
      "audit CLAIM_RECEIVED",
      "claim_update",
      "audit CREW_STARTED",
      "agent_step",
    ]);
    expect(world.saved!.outbox.at(-1)).toMatchObject({ witness: "start" });
  });

  it("arms the claim's timer for its first step deadline at the start with eager step timers", () => {
    const world = received();
    const eager = { ...policy, settings: { ...policy.settings, stepTimers: "eager" as const } };
    expect(walk(world, [start], [[RECEIPT]], eager).trace.at(-1)).toBe("claim_update + timer + agent_step");
    expect(shape(world.saved!.outbox)).toEqual([
      "audit CLAIM_RECEIVED",
      "claim_update",
      "audit CREW_STARTED",
      "timer",
      "agent_step",
    ]);
    expect(world.saved!.outbox.find((e) => e.kind === "timer")).toEqual({
      kind: "timer",
      claimId: "clm_1",
      dueMs: NOW + policy.settings.timeouts.analystMs,
    });
  });

  it("decides a claim the kernel's rules reject without a crew: the receipt first, on its own, then the verdict", () => {
    const late = { ...ACCEPTABLE, order_id: "ord_005", amount_eur: 500 };
    const world = received(late);
    expect(walk(world, [start], [[RECEIPT]])).toEqual({
      trace: [
        "? verdict",
        "? now",
        "? order",
        "? ledger",
        "? store_verdict",
        "audit CLAIM_RECEIVED",
        "audit CLAIM_TRIAGED + audit KERNEL_VERDICT + publish ClaimVerdict",
        "? now",
        "? claim_update",
      ],
      outcomes: ["TRIAGED"],
    });
    expect(world.session).toBeUndefined();
    expect(world.claim).toMatchObject({ status: "DECIDED", verdict: "REJECT", reason_code: "OUTSIDE_RETURN_WINDOW" });
  });

  it("starts the crew at once when triage is off", () => {
    const off = { ...policy, settings: { ...policy.settings, triage: false } };
    expect(walk(received(), [start], [[]], off).trace).toEqual([
      "? now",
      "? save_session",
      "claim_update + agent_step",
    ]);
  });

  it("takes a second start, its step's outbox marked, as a duplicate and appends the audit it carries last", () => {
    const world = received();
    walk(world, [start]);
    world.session = { ...world.session!, outbox: [] };
    expect(walk(world, [start], [[RECEIPT]])).toEqual({
      trace: ["? now", "audit CLAIM_RECEIVED"],
      outcomes: ["DUPLICATE"],
    });
  });

  it("does nothing for a claim gone but append what its messages carry", () => {
    expect(walk({ claim: undefined, verdicts: new Map(), now: NOW }, [start], [[RECEIPT]])).toEqual({
      trace: ["audit CLAIM_RECEIVED"],
      outcomes: ["IGNORED"],
    });
  });
});

describe("decideCrew: the outbox before the step", () => {
  it("takes the answer to the witness step as proof: the next step supersedes it, no marker", () => {
    const world = received();
    walk(world, [start]);
    const answer = answerTo(world);
    expect(walk(world, [answer]).trace).toEqual(["? now", "? save_session", "agent_step"]);
    expect(world.session).toMatchObject({ version: 2 });
    expect(world.session!.outbox.at(-1)).toMatchObject({
      witness: (answer as { correlationId: string }).correlationId,
    });
  });

  it("repairs an unproven outbox on the redelivery of the message that made it: performed, marked, the claim read again", () => {
    const world = received();
    walk(world, [start]);
    const repaired = walk(world, [start]);
    expect(repaired.trace).toEqual(["? now", "claim_update + agent_step", "? clear_outbox", "? claim", "? now"]);
    expect(repaired.outcomes).toEqual(["REPAIRED"]);
    expect(world.session!.outbox).toEqual([]);
  });

  it("leaves a witness step in flight alone on a tick before its deadline, and re-arms nothing it need not", () => {
    const world = received();
    walk(world, [start]);
    const walked = walk(world, [tick(NOW)]);
    expect(walked.outcomes).toEqual(["IGNORED"]);
    expect(walked.trace.some((t) => t.includes("agent_step"))).toBe(false);
  });

  it("times a step out on a tick past its deadline: the outbox repaired without the step, the fixer asked, marked", () => {
    const world = received();
    walk(world, [start]);
    world.now = NOW + 10 * 60_000;
    const walked = walk(world, [tick(world.now)]);
    expect(walked).toEqual({
      trace: [
        "? now",
        "claim_update",
        "? clear_outbox",
        "? claim",
        "? now",
        "? save_session",
        // A tick makes no witness: the step keeps the crew's order, and
        "agent_step + timer",
        // a tick makes no witness: the outbox is marked once performed.
        "? clear_outbox",
      ],
      outcomes: ["ADVANCED"],
    });
    expect(shape(world.saved!.outbox)).toContain("audit AGENT_STEP_FAILED");
  });
});

describe("decideCrew: the outage hold", () => {
  it("tells a held claim's crew no time: a tick reaches nothing, nothing is saved", () => {
    const world = received();
    walk(world, [start]);
    world.session = { ...world.session!, outbox: [] };
    world.claim = { ...world.claim!, llm_hold: { since: new Date(NOW).toISOString(), key: "k" } };
    const held = { ...policy, settings: { ...policy.settings, llmOutageHoldMs: 3_600_000 } };
    world.now = NOW + 10 * 60_000;
    const walked = walk(world, [tick(world.now)], [[]], held);
    expect(walked.outcomes).toEqual(["IGNORED"]);
    expect(walked.trace).not.toContain("? save_session");
  });

  it("ends the hold when the model answers: the hold cleared and CLAIM_RESUMED first, the deadlines watched again", () => {
    const world = received();
    walk(world, [start]);
    world.claim = { ...world.claim!, llm_hold: { since: new Date(NOW).toISOString(), key: "k" } };
    walk(world, [answerTo(world)]);
    expect(shape(world.saved!.outbox).slice(0, 2)).toEqual(["claim_update", "audit CLAIM_RESUMED"]);
    expect(world.saved!.outbox.find((e) => e.kind === "claim_update")).toMatchObject({
      patch: { llm_hold: undefined },
    });
    expect(shape(world.saved!.outbox)).toContain("timer");
  });
});
