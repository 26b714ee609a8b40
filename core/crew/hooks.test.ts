import { describe, expect, it } from "vitest";
import { HookError } from "./errors.ts";
import { createHookRegistry } from "./hooks.ts";
import { completed, drive, failed, graphOf, persistentSession, requestsIn, researchCrew, typesOf } from "./test-kit.ts";

describe("hooks", () => {
  it("observe requests, answers, fixers, votes and the crew's end, in order", () => {
    const hooks = createHookRegistry();
    const seen: string[] = [];
    hooks.on("beforeStepRequested", ({ event }) => void seen.push(`request ${event.agentId}`));
    hooks.on("afterStepCompleted", ({ event }) => void seen.push(`answer ${event.correlationId.slice(0, 4)}`));
    hooks.on("onFixerInvoked", ({ event }) => void seen.push(`fixer for ${event.failedAgentId}`));
    hooks.on("afterVoteResolved", ({ event }) => void seen.push(`vote ${event.phaseIndex}`));
    hooks.on(
      "onCrewCompleted",
      ({ crewId, event }) => void seen.push(`completed ${crewId} ${JSON.stringify(event.output)}`),
    );
    const s = persistentSession(graphOf(researchCrew(1)), { hooks });
    const caller = requestsIn(s.start("q"))[0]!;
    const merc = requestsIn(s.deliver(completed(caller, "p")))[0]!;
    const fixer = requestsIn(s.deliver(failed(merc)))[0]!;
    const closing = requestsIn(s.deliver(completed(fixer, "f")))[0]!;
    s.deliver(completed(closing, "done"));
    expect(seen).toEqual([
      "request caller#0",
      `answer ${caller.correlationId.slice(0, 4)}`,
      "vote 0",
      "request merc#0",
      "fixer for merc#0",
      "request fixer#0",
      `answer ${fixer.correlationId.slice(0, 4)}`,
      "vote 1",
      "request caller#0",
      `answer ${closing.correlationId.slice(0, 4)}`,
      "vote 2",
      'completed crew-1 "done"',
    ]);
  });

  it("let beforeStepRequested veto a step: the slot fails without a fixer and a STEP_VETOED diagnostic says why", () => {
    const hooks = createHookRegistry();
    hooks.on("beforeStepRequested", ({ event }) =>
      event.agentId === "merc#1" ? { veto: true, reason: "budget exhausted" } : undefined,
    );
    const s = persistentSession(graphOf(researchCrew(2)), { hooks });
    const caller = requestsIn(s.start("q"))[0]!;
    const out = s.deliver(completed(caller, "p"));
    expect(typesOf(out)).toEqual(["vote.resolved", "phase.started", "agent.step.requested", "crew.diagnostic"]);
    expect(out[3]).toMatchObject({ code: "STEP_VETOED", message: expect.stringMatching(/merc#1 .*budget exhausted/) });
    const done = s.deliver(completed(requestsIn(out)[0]!, "A"));
    expect(done[0]).toMatchObject({ type: "vote.resolved", tally: { valid: 1, failed: 1 } });
    expect(typesOf(done)).not.toContain("fixer.invoked");
  });

  it("fail a crew whose every step is vetoed, and report it to onCrewFailed", () => {
    const hooks = createHookRegistry();
    const failures: string[] = [];
    hooks.on("beforeStepRequested", () => ({ veto: true, reason: "no" }));
    hooks.on("onCrewFailed", ({ event }) => void failures.push(event.code));
    const { log } = drive({ graph: graphOf(researchCrew(1)), hooks, worker: () => ({ output: 1 }) });
    expect(typesOf(log)).toEqual(["crew.started", "phase.started", "crew.diagnostic", "crew.failed"]);
    expect(failures).toEqual(["NO_VALID_OUTPUT"]);
  });

  it("can be unregistered", () => {
    const hooks = createHookRegistry();
    let calls = 0;
    const off = hooks.on("afterVoteResolved", () => void calls++);
    drive({ graph: graphOf(researchCrew(1)), hooks, worker: () => ({ output: 1 }) });
    off();
    drive({ graph: graphOf(researchCrew(1)), hooks, worker: () => ({ output: 1 }) });
    expect(calls).toBe(3);
  });

  it("turn a throwing hook into HookError with the cause kept", () => {
    const hooks = createHookRegistry();
    const cause = new Error("observer bug");
    hooks.on("afterVoteResolved", () => {
      throw cause;
    });
    const s = persistentSession(graphOf(researchCrew(1)), { hooks });
    const caller = requestsIn(s.start("q"))[0]!;
    try {
      s.deliver(completed(caller, "p"));
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(HookError);
      expect((e as HookError).cause).toBe(cause);
      expect((e as HookError).hook).toBe("afterVoteResolved");
    }
  });
});
