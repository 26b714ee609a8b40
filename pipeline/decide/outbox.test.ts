// A crew step's outbox is known performed without its marker only through its last effect: the answer to its one
// agent step, the claim's hold on that step, the claim's verdict on its one proposal. Anything else is pending.
import { describe, expect, it } from "vitest";
import { verdictIdFor } from "../../core/kernel/execution.ts";
import type { OutboundCrewEvent } from "../../core/crew/index.ts";
import { crewEffects } from "./crew-completion.ts";
import { ACCEPTABLE, claimRecord, NOW, policy, shape } from "./decide.test-kit.ts";
import { MADE_BY_START, outboxNeedsMarker, outboxProof, outboxRepair, witnessedOutbox } from "./outbox.ts";
import type { Effect } from "../effects.ts";
import type { CrewQueueMessage } from "../messages.ts";

const record = claimRecord(ACCEPTABLE);
const request = (correlationId: string) =>
  ({ type: "agent.step.requested", role: "analyst", correlationId }) as unknown as OutboundCrewEvent;
/** The one agent step of a step's outbox; flagged as the witness (made by `witness`), as on the normal path. */
const step = (correlationId: string, witness: string | false = MADE_BY_START, deadlineMs?: number): Effect[] =>
  crewEffects(
    [{ ...request(correlationId), ...(deadlineMs === undefined ? {} : { deadlineMs }) } as OutboundCrewEvent],
    record,
    NOW,
    policy,
  ).map((e) => (e.kind === "agent_step" && witness !== false ? { ...e, witness } : e));
const timer: Effect = { kind: "timer", claimId: "clm_1", dueMs: NOW + 120_000 };
const running: Effect = { kind: "claim_update", claimId: "clm_1", patch: { status: "RUNNING" } };
const answer = (correlationId: string, type: "completed" | "failed" = "completed") =>
  ({ type: `agent.step.${type}`, crewId: "clm_1", correlationId }) as unknown as CrewQueueMessage;
const tick: CrewQueueMessage = { type: "crew.tick", crewId: "clm_1", nowMs: NOW };

const OUTPUT = { action: "REFUND", ...ACCEPTABLE, confidence: 0.9 };
const completion = crewEffects(
  [{ type: "crew.completed", crewId: "clm_1", output: OUTPUT } as OutboundCrewEvent],
  record,
  NOW,
  policy,
);
const proposal = completion.find((e) => e.kind === "proposal")!;
const keyOf = (e: Effect) => (e.kind === "proposal" ? (e.message.proposal as { idempotency_key: string }) : undefined);

describe("outboxProof", () => {
  it("takes an answer (completed or failed) to the outbox's one agent step, its last effect, as proof", () => {
    const outbox = [running, timer, ...step("cor_a")];
    expect(outboxProof(outbox, { messages: [answer("cor_a")] })).toBe("answered");
    expect(outboxProof(outbox, { messages: [tick, answer("cor_a", "failed")] })).toBe("answered");
    expect(outboxNeedsMarker(outbox)).toBe(false);
  });

  it("proves nothing from a tick, a start, or an answer to another step", () => {
    const outbox = [running, timer, ...step("cor_a")];
    expect(outboxProof(outbox, { messages: [tick, answer("cor_b")], claim: record })).toBeUndefined();
    expect(outboxProof(outbox, { messages: [{ type: "claim.start", crewId: "clm_1" }] })).toBeUndefined();
    expect(outboxProof(outbox, {})).toBeUndefined();
  });

  it("takes the claim's hold on that agent step as proof (the worker received it), not a hold on another", () => {
    const outbox = step("cor_a");
    const held = (key: string) => ({ ...record, llm_hold: { since: new Date(NOW).toISOString(), key } });
    expect(outboxProof(outbox, { messages: [tick], claim: held("cor_a") })).toBe("held");
    expect(outboxProof(outbox, { messages: [tick], claim: held("cor_b") })).toBeUndefined();
  });

  it("proves no outbox whose agent step is not its last effect, not flagged, or not its only one", () => {
    for (const outbox of [
      [...step("cor_a"), timer],
      [running, ...step("cor_a", false)],
      [...step("cor_a", false), ...step("cor_b")],
      [...step("cor_a"), running, ...step("cor_b")],
    ]) {
      for (const id of ["cor_a", "cor_b"]) expect(outboxProof(outbox, { messages: [answer(id)] })).toBeUndefined();
      expect(outboxNeedsMarker(outbox)).toBe(true);
    }
  });

  it("takes the claim's verdict on the outbox's proposal, its last effect, as proof; not another verdict, not none", () => {
    expect(shape(completion).at(-1)).toBe("proposal");
    const decided = {
      ...record,
      status: "DECIDED" as const,
      verdict_id: verdictIdFor(keyOf(proposal)!.idempotency_key),
    };
    expect(outboxProof(completion, { claim: decided })).toBe("decided");
    expect(outboxProof(completion, { claim: { ...decided, verdict_id: verdictIdFor("another key") } })).toBeUndefined();
    expect(outboxProof(completion, { claim: { ...record, status: "NEEDS_REVIEW" } })).toBeUndefined();
    expect(outboxProof([...completion, timer], { claim: decided })).toBeUndefined();
    expect(outboxNeedsMarker(completion)).toBe(false);
  });

  it("needs a marker for an outbox no later message can prove (a review, a publish), and none for an empty one", () => {
    const review = crewEffects(
      [{ type: "crew.completed", crewId: "clm_1", output: { nonsense: true } } as OutboundCrewEvent],
      record,
      NOW,
      policy,
    );
    expect(shape(review)).toContain("review_open");
    expect(outboxNeedsMarker(review)).toBe(true);
    expect(outboxProof(review, { messages: [answer("cor_a")], claim: record })).toBeUndefined();
    expect(outboxNeedsMarker([])).toBe(false);
  });
});

describe("witnessedOutbox", () => {
  it("moves the agent steps behind every other effect and flags a single one as the witness", () => {
    const [a] = step("cor_a", false);
    const [b] = step("cor_b", false);
    expect(witnessedOutbox([running, a!, timer], MADE_BY_START)).toEqual([running, timer, { ...a!, witness: "start" }]);
    expect(witnessedOutbox([running, a!, timer, b!, proposal], "cor_0")).toEqual([running, timer, proposal, a, b]);
    expect(witnessedOutbox([running, timer], "cor_0")).toEqual([running, timer]);
  });
});

describe("outboxRepair", () => {
  const deadline = NOW + 120_000;
  it("performs it all again for the redelivery of the message that made the step: its start, or the answer to the step before", () => {
    const started = [running, timer, ...step("cor_a", MADE_BY_START, deadline)];
    expect(outboxRepair(started, [{ type: "claim.start", crewId: "clm_1" }], NOW)).toEqual(started);
    const answered = step("cor_b", "cor_a", deadline);
    expect(outboxRepair(answered, [tick, answer("cor_a")], NOW)).toEqual(answered);
    expect(outboxRepair(answered, [answer("cor_a", "failed")], NOW)).toEqual(answered);
  });

  it("sends a witnessed step in flight nothing again for anything else before its deadline; from it, the rest without the step", () => {
    const outbox = [running, timer, ...step("cor_b", "cor_a", deadline)];
    for (const other of [[tick], [answer("cor_0")], [{ type: "claim.start" as const, crewId: "clm_1" }]])
      expect(outboxRepair(outbox, other, NOW)).toBeUndefined();
    expect(outboxRepair(outbox, [{ ...tick, nowMs: deadline }], NOW)).toEqual([running, timer]);
    expect(outboxRepair(outbox, [answer("cor_0")], deadline)).toEqual([running, timer]);
    // A step without a deadline is never timed out: nothing but its maker sends it again.
    expect(outboxRepair(step("cor_b", "cor_a"), [{ ...tick, nowMs: NOW + 10 ** 9 }], NOW)).toBeUndefined();
  });

  it("performs all of any other outbox: not witnessed (a step made by a tick, or after a repair), or a proposal", () => {
    const unflagged = [...step("cor_a", false, deadline), timer];
    expect(outboxRepair(unflagged, [tick], NOW)).toEqual(unflagged);
    expect(outboxRepair(completion, [tick], NOW)).toEqual(completion);
  });
});
