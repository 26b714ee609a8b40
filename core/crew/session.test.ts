import { describe, expect, it } from "vitest";
import { frozenClock } from "./clock.ts";
import { InvalidCrewEventError, InvalidCrewInputError, SessionStateError, UnknownCrewError } from "./errors.ts";
import type { CrewDiagnosticEvent, OutboundCrewEvent } from "./events.ts";
import { CrewEventSchema, OutboundCrewEventSchema } from "./events.ts";
import { buildCrewGraph } from "./graph.ts";
import { correlationId } from "./ids.ts";
import { createCrewSession } from "./session.ts";
import {
  completed,
  counts,
  drive,
  failed,
  graphOf,
  persistentSession,
  requestsIn,
  researchCrew,
  role,
  shape,
  typesOf,
} from "./test-kit.ts";

const diagnostics = (events: OutboundCrewEvent[]) =>
  events.filter((e): e is CrewDiagnosticEvent => e.type === "crew.diagnostic");

describe("phases", () => {
  it("cascade: the entry role gets the root input, each later phase only the previous vote, the caller opens and closes", () => {
    const graph = graphOf(researchCrew(2, { timeout_ms: 30_000 }));
    const s = persistentSession(graph);
    const started = s.start({ q: "birds?" }, { description: "Research bird sleep" });
    expect(typesOf(started)).toEqual(["crew.started", "phase.started", "agent.step.requested"]);
    expect(started[0]).toEqual({
      type: "crew.started",
      crewId: "crew-1",
      crewName: "RESEARCH_CREW",
      phaseCount: 3,
      task: { description: "Research bird sleep" },
    });
    const caller = requestsIn(started)[0]!;
    expect(caller).toMatchObject({
      phaseIndex: 0,
      role: "caller",
      agentId: "caller#0",
      attempt: 1,
      input: { q: "birds?" },
    });
    expect(caller.correlationId).toBe(correlationId("crew-1", 0, "caller#0", 1));
    expect(caller.deadlineMs).toBeUndefined();

    s.clock.set(5_000);
    const afterCaller = s.deliver(completed(caller, { plan: "ask mercs" }));
    expect(typesOf(afterCaller)).toEqual([
      "vote.resolved",
      "phase.started",
      "agent.step.requested",
      "agent.step.requested",
    ]);
    const mercs = requestsIn(afterCaller);
    for (const m of mercs) {
      expect(m).toMatchObject({ phaseIndex: 1, role: "merc", input: { plan: "ask mercs" }, deadlineMs: 35_000 });
      expect(m.roleSnapshot).toEqual({
        role: "merc",
        system_prompt: "You are a research operative. Gather facts efficiently.",
        capabilities: { thinking_allowed: true, model: "claude-sonnet-4-6" },
        permissions: { talk_to: ["caller"], delegate_to: [], escalate_to: ["fixer"], invite: [] },
      });
    }
    expect(mercs.map((m) => m.agentId)).toEqual(["merc#0", "merc#1"]);

    expect(s.deliver(completed(mercs[1]!, "fact B"))).toEqual([]);
    const afterMercs = s.deliver(completed(mercs[0]!, "fact A"));
    expect(afterMercs[0]).toMatchObject({
      type: "vote.resolved",
      phaseIndex: 1,
      role: "merc",
      strategy: "first_valid",
      output: "fact A",
    });
    const closing = requestsIn(afterMercs)[0]!;
    expect(closing).toMatchObject({ phaseIndex: 2, role: "caller", agentId: "caller#0", input: "fact A" });
    expect(closing.correlationId).not.toBe(caller.correlationId);

    const end = s.deliver(completed(closing, { answer: "unihemispheric sleep" }));
    expect(typesOf(end)).toEqual(["vote.resolved", "crew.completed"]);
    expect(end[1]).toEqual({ type: "crew.completed", crewId: "crew-1", output: { answer: "unihemispheric sleep" } });
    expect(s.session.status).toBe("completed");
    expect(s.snapshot()).toMatchObject({
      status: "completed",
      output: { answer: "unihemispheric sleep" },
      task: { description: "Research bird sleep" },
    });
  });

  it("emits only events that match the vocabulary's schemas", () => {
    const { log } = drive({
      graph: graphOf(researchCrew(3, { timeout_ms: 1_000 })),
      resumeEveryStep: true,
      worker: (r) =>
        r.agentId === "merc#1"
          ? { error: "x" }
          : r.agentId === "merc#2"
            ? "silent"
            : {
                output: { r: r.role },
                messages: [
                  { to: "caller", body: "hi" },
                  { to: "fixer", body: "no" },
                ],
              },
    });
    for (const e of log) {
      expect(OutboundCrewEventSchema.safeParse(e).success, JSON.stringify(e)).toBe(true);
      expect(CrewEventSchema.safeParse(e).success).toBe(true);
    }
    expect(new Set(typesOf(log))).toEqual(
      new Set([
        "crew.started",
        "phase.started",
        "agent.step.requested",
        "vote.resolved",
        "agent.step.timed_out",
        "fixer.invoked",
        "agent.message.relayed",
        "crew.diagnostic",
        "crew.completed",
      ]),
    );
  });
});

describe("voting inside a session", () => {
  const crew = (voting: "majority" | "unanimous" | "weighted_consensus") =>
    buildCrewGraph(shape("V", [role("judge", { first_input: true, final_output: true, voting, amount: 3 })]));
  const run = (voting: "majority" | "unanimous" | "weighted_consensus", outputs: string[]) =>
    drive({
      graph: crew(voting),
      resumeEveryStep: true,
      worker: (r) => ({ output: outputs[Number(r.agentId.split("#")[1])]! }),
    }).log;

  it("majority picks the output most slots agree on", () => {
    expect(run("majority", ["x", "y", "y"]).at(-1)).toEqual({ type: "crew.completed", crewId: "crew-1", output: "y" });
  });
  it("majority without a majority fails the crew with the vote's code", () => {
    const last = run("majority", ["x", "y", "z"]).at(-1);
    expect(last).toMatchObject({
      type: "crew.failed",
      code: "NO_MAJORITY",
      phaseIndex: 0,
      role: "judge",
      tally: { total: 3, distinct: 3 },
    });
  });
  it("unanimous fails on any disagreement", () => {
    expect(run("unanimous", ["x", "x", "y"]).at(-1)).toMatchObject({ type: "crew.failed", code: "NOT_UNANIMOUS" });
    expect(run("unanimous", ["x", "x", "x"]).at(-1)).toMatchObject({ type: "crew.completed", output: "x" });
  });
  it("weighted_consensus breaks a tie by slot order", () => {
    const g = buildCrewGraph(
      shape("V", [role("judge", { first_input: true, final_output: true, voting: "weighted_consensus", amount: 4 })]),
    );
    const outs = ["b", "a", "a", "b"];
    const log = drive({ graph: g, worker: (r) => ({ output: outs[Number(r.agentId.split("#")[1])]! }) }).log;
    expect(log.at(-1)).toMatchObject({ type: "crew.completed", output: "b" });
  });
});

describe("faults", () => {
  const graph = graphOf(researchCrew(3, { timeout_ms: 1_000 }));
  const toMercs = (s: ReturnType<typeof persistentSession>) => {
    const caller = requestsIn(s.start("q"))[0]!;
    return requestsIn(s.deliver(completed(caller, "plan")));
  };

  it("a failure waits for its round, then goes to the fixer whose answer fills the slot", () => {
    const s = persistentSession(graph);
    const mercs = toMercs(s);
    expect(s.deliver(failed(mercs[0]!, "rate limited", "LLM_429"))).toEqual([]);
    expect(s.deliver(completed(mercs[1]!, "B"))).toEqual([]);
    const out = s.deliver(completed(mercs[2]!, "C"));
    expect(typesOf(out)).toEqual(["fixer.invoked", "agent.step.requested"]);
    const fixerReq = requestsIn(out)[0]!;
    expect(out[0]).toMatchObject({
      reason: "fault",
      failedRole: "merc",
      failedAgentId: "merc#0",
      fixerRole: "fixer",
      fixerAgentId: "fixer#0",
      correlationId: fixerReq.correlationId,
      error: { message: "rate limited", code: "LLM_429" },
    });
    expect(fixerReq).toMatchObject({
      role: "fixer",
      agentId: "fixer#0",
      attempt: 1,
      input: {
        failed: { agentId: "merc#0", role: "merc", error: { message: "rate limited", code: "LLM_429" } },
        input: "plan",
      },
    });
    const done = s.deliver(completed(fixerReq, "A (fixed)"));
    // first_valid in slot order: slot 0 now holds the fixer's output
    expect(done[0]).toMatchObject({ type: "vote.resolved", output: "A (fixed)", tally: { valid: 3, failed: 0 } });
  });

  it("a step past its deadline times out at tick and goes to the stall fixer", () => {
    const s = persistentSession(graph);
    const mercs = toMercs(s);
    const deadline = mercs[0]!.deadlineMs!;
    s.deliver(completed(mercs[0]!, "A"));
    s.deliver(completed(mercs[1]!, "B"));
    expect(s.tick(deadline - 1)).toEqual([]);
    expect(s.session.nextDeadlineMs()).toBe(deadline);
    s.clock.set(deadline);
    const out = s.tick(deadline);
    expect(typesOf(out)).toEqual(["agent.step.timed_out", "fixer.invoked", "agent.step.requested"]);
    expect(out[0]).toMatchObject({ agentId: "merc#2", correlationId: mercs[2]!.correlationId, deadlineMs: deadline });
    expect(out[1]).toMatchObject({ reason: "stall", failedAgentId: "merc#2", error: { code: "STEP_TIMEOUT" } });
    const fixerReq = requestsIn(out)[0]!;
    expect(fixerReq.deadlineMs).toBeUndefined(); // the fixer role has no timeout
    expect(typesOf(s.deliver(completed(fixerReq, "C (fixed)")))).toEqual([
      "vote.resolved",
      "phase.started",
      "agent.step.requested",
    ]);
  });

  it("in the seed's Quick Start crew a failing caller (no escalate_to) reaches the fixer, in its opening and its closing phase", () => {
    const s = persistentSession(graph);
    const caller = requestsIn(s.start("q"))[0]!;
    const out = s.deliver(failed(caller, "model down", "LLM_503"));
    expect(typesOf(out)).toEqual(["fixer.invoked", "agent.step.requested"]);
    expect(out[0]).toMatchObject({
      reason: "fault",
      failedRole: "caller",
      failedAgentId: "caller#0",
      fixerRole: "fixer",
      fixerAgentId: "fixer#0",
      error: { message: "model down", code: "LLM_503" },
    });
    const fixerReq = requestsIn(out)[0]!;
    expect(fixerReq).toMatchObject({
      role: "fixer",
      input: { failed: { agentId: "caller#0", role: "caller" }, input: "q" },
    });
    const mercs = requestsIn(s.deliver(completed(fixerReq, "plan (fixed)")));
    expect(mercs.map((m) => m.input)).toEqual(["plan (fixed)", "plan (fixed)", "plan (fixed)"]);
    s.deliver(completed(mercs[0]!, "A"));
    s.deliver(completed(mercs[1]!, "B"));
    const closing = requestsIn(s.deliver(completed(mercs[2]!, "C")))[0]!;
    const again = s.deliver(failed(closing));
    expect(again[0]).toMatchObject({ type: "fixer.invoked", phaseIndex: 2, failedRole: "caller" });
    expect(s.deliver(completed(requestsIn(again)[0]!, "answer (fixed)")).at(-1)).toEqual({
      type: "crew.completed",
      crewId: "crew-1",
      output: "answer (fixed)",
    });
  });

  it("in the seed's Quick Start crew a timed-out caller reaches the fixer on stall", () => {
    const c = researchCrew(2);
    c.shape.roles[0]!.timeout_ms = 5_000;
    const s = persistentSession(graphOf(c));
    const caller = requestsIn(s.start("q"))[0]!;
    expect(caller.deadlineMs).toBe(6_000);
    const out = s.tick(6_000);
    expect(typesOf(out)).toEqual(["agent.step.timed_out", "fixer.invoked", "agent.step.requested"]);
    expect(out[1]).toMatchObject({
      reason: "stall",
      failedRole: "caller",
      fixerRole: "fixer",
      error: { code: "STEP_TIMEOUT" },
    });
    expect(s.session.status).toBe("running");
  });

  it("prefers the fixer named in escalate_to over the crew's first fixer, and fails the slot when no fixer has the trigger", () => {
    const g = buildCrewGraph(
      shape("PREF", [
        role("intake", { first_input: true, timeout_ms: 1_000, permissions: { escalate_to: ["fixB"] } }),
        role("report", { final_output: true }),
        role("fixA", { activation: { on_fault: true } }),
        role("fixB", { activation: { on_fault: true } }),
      ]),
    );
    const s = persistentSession(g);
    const intake = requestsIn(s.start("q"))[0]!;
    const toFixB = s.deliver(failed(intake));
    expect(toFixB[0]).toMatchObject({ type: "fixer.invoked", failedRole: "intake", fixerRole: "fixB" });
    const report = requestsIn(s.deliver(completed(requestsIn(toFixB)[0]!, "fixed")))[0]!;
    expect(s.deliver(failed(report))[0]).toMatchObject({
      type: "fixer.invoked",
      failedRole: "report",
      fixerRole: "fixA",
    });
    // no role has on_stall: a timeout fails the slot for good and, with first_valid, the crew
    const s2 = persistentSession(g);
    s2.start("q");
    expect(typesOf(s2.tick(2_000))).toEqual(["agent.step.timed_out", "crew.failed"]);
  });

  it("stores at most 2 KB of a failed step's error text in the snapshot, and hands the fixer the same capped error", () => {
    const s = persistentSession(graph);
    const mercs = toMercs(s);
    const huge = `upstream said: ${"x".repeat(200_000)}`;
    s.deliver(failed(mercs[0]!, huge, "UPSTREAM"));
    const slot = (s.snapshot() as { slots: { e?: { message: string; code?: string } }[] }).slots[0]!;
    expect(slot.e!.message.length).toBeLessThanOrEqual(2048);
    expect(slot.e!.message).toMatch(/^upstream said: x+… \[\d+ more characters cut\]$/);
    expect(slot.e!.code).toBe("UPSTREAM");
    expect(JSON.stringify(s.snapshot()).length).toBeLessThan(4_000);
    s.deliver(completed(mercs[1]!, "B"));
    const out = s.deliver(completed(mercs[2]!, "C"));
    expect(out[0]).toMatchObject({ type: "fixer.invoked", error: slot.e });
    expect(requestsIn(out)[0]!.input).toMatchObject({ failed: { error: slot.e } });
  });

  it("a failed fixer leaves the slot failed and the phase resolves by its voting rule", () => {
    const s = persistentSession(graph);
    const mercs = toMercs(s);
    s.deliver(failed(mercs[0]!));
    s.deliver(completed(mercs[1]!, "B"));
    const fixerReq = requestsIn(s.deliver(completed(mercs[2]!, "C")))[0]!;
    const out = s.deliver(failed(fixerReq, "fixer also broke"));
    expect(out[0]).toMatchObject({ type: "vote.resolved", output: "B", tally: { total: 3, valid: 2, failed: 1 } });
  });

  it("without a fixer, a phase with no valid output fails the crew", () => {
    const g = buildCrewGraph(shape("SOLO", [role("a", { first_input: true, final_output: true, amount: 2 })]));
    const s = persistentSession(g);
    const reqs = requestsIn(s.start("q"));
    s.deliver(failed(reqs[0]!));
    const out = s.deliver(failed(reqs[1]!));
    expect(out).toEqual([
      {
        type: "crew.failed",
        crewId: "crew-1",
        reason: "phase 0 (a) could not pick an output by first_valid: none of the 2 slots produced an output",
        code: "NO_VALID_OUTPUT",
        phaseIndex: 0,
        role: "a",
        tally: { total: 2, valid: 0, failed: 2, winnerVotes: 0, distinct: 0 },
      },
    ]);
    expect(s.session.status).toBe("failed");
  });

  it("retries a failed step up to maxAttempts with a new correlationId before escalating", () => {
    const s = persistentSession(graph, { maxAttempts: 2 });
    const mercs = toMercs(s);
    s.deliver(failed(mercs[0]!));
    s.deliver(completed(mercs[1]!, "B"));
    const retry = requestsIn(s.deliver(completed(mercs[2]!, "C")))[0]!;
    expect(retry).toMatchObject({ agentId: "merc#0", attempt: 2 });
    expect(retry.correlationId).toBe(correlationId("crew-1", 1, "merc#0", 2));
    expect(s.snapshot()).toMatchObject({ maxAttempts: 2 });
    const out = s.deliver(failed(retry));
    expect(out[0]).toMatchObject({ type: "fixer.invoked", failedAgentId: "merc#0" });
  });
});

describe("duplicates and late answers", () => {
  const graph = graphOf(researchCrew(2, { timeout_ms: 1_000 }));

  it("ignores a duplicate answer with DUPLICATE_DELIVERY and keeps the first one", () => {
    const s = persistentSession(graph);
    const caller = requestsIn(s.start("q"))[0]!;
    const mercs = requestsIn(s.deliver(completed(caller, "plan")));
    s.deliver(completed(mercs[0]!, "first"));
    const dup = s.deliver(completed(mercs[0]!, "second"));
    expect(dup).toEqual([
      expect.objectContaining({
        type: "crew.diagnostic",
        code: "DUPLICATE_DELIVERY",
        correlationId: mercs[0]!.correlationId,
      }),
    ]);
    const out = s.deliver(completed(mercs[1]!, "other"));
    expect(out[0]).toMatchObject({ type: "vote.resolved", output: "first" });
    // the same duplicate after its phase resolved is late
    expect(diagnostics(s.deliver(completed(mercs[0]!, "third")))[0]).toMatchObject({
      code: "LATE_DELIVERY",
      message: expect.stringMatching(/phase 1 \(merc\) has already resolved/),
    });
  });

  it("ignores an answer that arrives after its step timed out", () => {
    const s = persistentSession(graph);
    const caller = requestsIn(s.start("q"))[0]!;
    const mercs = requestsIn(s.deliver(completed(caller, "plan")));
    s.deliver(completed(mercs[0]!, "A"));
    s.tick(mercs[1]!.deadlineMs!);
    const late = s.deliver(completed(mercs[1]!, "too late"));
    expect(late).toEqual([
      expect.objectContaining({ code: "LATE_DELIVERY", message: expect.stringMatching(/timed out/) }),
    ]);
  });

  it("ignores answers after cancel and after completion", () => {
    const s = persistentSession(graph);
    const caller = requestsIn(s.start("q"))[0]!;
    const mercs = requestsIn(s.deliver(completed(caller, "plan")));
    expect(s.cancel("operator stop")).toEqual([{ type: "crew.cancelled", crewId: "crew-1", reason: "operator stop" }]);
    expect(s.cancel()).toEqual([]);
    expect(diagnostics(s.deliver(completed(mercs[0]!, "A")))[0]).toMatchObject({
      code: "LATE_DELIVERY",
      message: expect.stringMatching(/is cancelled/),
    });
    expect(s.tick(10_000_000)).toEqual([]);
    expect(s.snapshot()).toMatchObject({ status: "cancelled", reason: "operator stop", phase: 1 });

    const { session, log } = drive({ graph, worker: () => ({ output: 1 }) });
    const first = requestsIn(log)[0]!;
    expect(session.deliver(completed(first, 2))).toEqual([
      expect.objectContaining({ code: "LATE_DELIVERY", message: expect.stringMatching(/is completed/) }),
    ]);
  });

  it("reports an answer with a correlationId it never issued", () => {
    const s = persistentSession(graph);
    s.start("q");
    const out = s.deliver({
      type: "agent.step.completed",
      crewId: "crew-1",
      correlationId: "feedfacefeedfacefeedface",
      output: 1,
    });
    expect(out).toEqual([
      expect.objectContaining({ code: "UNKNOWN_CORRELATION", correlationId: "feedfacefeedfacefeedface" }),
    ]);
  });

  it("accepts stream chunks and inbound ticks and cancels", () => {
    const s = persistentSession(graph);
    const caller = requestsIn(s.start("q"))[0]!;
    expect(
      s.deliver({
        type: "agent.stream.chunk",
        crewId: "crew-1",
        correlationId: caller.correlationId,
        chunk: "thinking…",
      }),
    ).toEqual([]);
    const mercs = requestsIn(s.deliver(completed(caller, "plan")));
    const viaEvent = s.deliver({ type: "crew.tick", crewId: "crew-1", nowMs: mercs[0]!.deadlineMs! });
    expect(typesOf(viaEvent)).toEqual([
      "agent.step.timed_out",
      "agent.step.timed_out",
      "fixer.invoked",
      "agent.step.requested",
      "fixer.invoked",
      "agent.step.requested",
    ]);
    expect(s.deliver({ type: "crew.cancel", crewId: "crew-1" })).toEqual([
      { type: "crew.cancelled", crewId: "crew-1", reason: "cancelled" },
    ]);
  });
});

describe("errors", () => {
  const graph = graphOf(researchCrew(1));

  it("throws UnknownCrewError for an event of another crew", () => {
    const s = createCrewSession({ crewId: "crew-1", graph, clock: frozenClock(0) });
    const req = requestsIn(s.start("q"))[0]!;
    expect(() => s.deliver({ ...completed(req, 1), crewId: "crew-2" })).toThrow(UnknownCrewError);
    expect(() => s.deliver({ ...completed(req, 1), crewId: "crew-1/nobody#0" })).toThrow(/crew-1\/nobody#0/);
  });

  it("throws InvalidCrewEventError with zod's issues for a malformed event", () => {
    const s = createCrewSession({ crewId: "crew-1", graph, clock: frozenClock(0) });
    s.start("q");
    try {
      s.deliver({ type: "agent.step.failed", crewId: "crew-1", correlationId: "x", error: { code: 5 } });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidCrewEventError);
      expect((e as InvalidCrewEventError).issues.map((i) => i.path)).toEqual(["error.message", "error.code"]);
    }
    expect(() => s.deliver({ type: "agent.step.done", crewId: "crew-1" })).toThrow(
      /expected one of agent.step.completed/,
    );
    expect(() =>
      s.deliver({ type: "agent.step.completed", crewId: "crew-1", correlationId: "x", output: { n: Number.NaN } }),
    ).toThrow(InvalidCrewEventError);
  });

  it("throws SessionStateError for start twice or an answer before start, InvalidCrewInputError for a non-JSON input", () => {
    const s = createCrewSession({ crewId: "crew-1", graph, clock: frozenClock(0) });
    expect(() => s.deliver({ type: "agent.step.completed", crewId: "crew-1", correlationId: "x", output: 1 })).toThrow(
      SessionStateError,
    );
    expect(() => s.start({ when: new Date(0) } as never)).toThrow(InvalidCrewInputError);
    s.start("q");
    expect(() => s.start("q")).toThrow(SessionStateError);
    expect(() => createCrewSession({ crewId: "", graph, clock: frozenClock(0) })).toThrow(InvalidCrewInputError);
    expect(() => createCrewSession({ crewId: "c", graph, clock: frozenClock(0), maxAttempts: 0 })).toThrow(
      /maxAttempts/,
    );
  });
});

describe("snapshots", () => {
  it("stay small: a 64-agent majority phase with ~200-byte outputs is under 16 KB with 63 answers in", () => {
    const g = buildCrewGraph(
      shape("BIG", [
        role("lead", { first_input: true }),
        role("voter", { final_output: true, voting: "majority", timeout_ms: 60_000 }),
      ]),
      counts("BIG", { lead: 1, voter: 64 }),
    );
    const s = createCrewSession({ crewId: "claim-0001", graph: g, clock: frozenClock(1_700_000_000_000) });
    const lead = requestsIn(s.start({ claim: "x".repeat(150) }))[0]!;
    const voters = requestsIn(s.deliver(completed(lead, { brief: "y".repeat(180) })));
    expect(voters).toHaveLength(64);
    voters.forEach((v, i) => {
      if (i < 63) s.deliver(completed(v, { verdict: i % 2 ? "accept" : "reject", note: "z".repeat(160), n: i }));
    });
    const bytes = JSON.stringify(s.snapshot()).length;
    expect(bytes).toBeLessThanOrEqual(16 * 1024);
    // bookkeeping beyond the outputs themselves stays under ~50 bytes per agent
    const outputs = voters
      .slice(0, 63)
      .reduce(
        (n, _, i) => n + JSON.stringify({ verdict: i % 2 ? "accept" : "reject", note: "z".repeat(160), n: i }).length,
        0,
      );
    expect((bytes - outputs) / 64).toBeLessThan(50);
  });

  it("never alias the session's state: changing a snapshot does not change the session", () => {
    const s = createCrewSession({ crewId: "crew-1", graph: graphOf(researchCrew(2)), clock: frozenClock(0) });
    const caller = requestsIn(s.start("q"))[0]!;
    s.deliver(completed(caller, "plan"));
    const snap = s.snapshot() as { slots: unknown[] };
    snap.slots[0] = { ok: "forged" };
    expect((s.snapshot() as { slots: unknown[] }).slots[0]).toBe(0);
  });
});
