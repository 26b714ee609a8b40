import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalize } from "./canonical.ts";
import { frozenClock } from "./clock.ts";
import {
  InvalidCrewEventError,
  InvalidCrewInputError,
  SessionStateError,
  SnapshotMismatchError,
  UnknownCrewError,
} from "./errors.ts";
import type { OutboundCrewEvent } from "./events.ts";
import type { JsonValue } from "./json.ts";
import { createInMemoryMemory } from "./memory.ts";
import { resumeCrewSession } from "./resume.ts";
import { createCrewSession } from "./session.ts";
import type { CrewSnapshot } from "./snapshot.ts";
import { initialCrewSnapshot, stepCrew } from "./index.ts";
import {
  completed,
  configuredCrew,
  crewConfigs,
  drive,
  failed,
  graphOf,
  requestsIn,
  researchCrew,
  roundTrip,
  seededOrder,
  seededWorker,
  typesOf,
} from "./test-kit.ts";
import type { CrewConfig } from "./test-kit.ts";

const INPUT: JsonValue = { question: "What sleep patterns do birds have?" };

/** Freezes a value and everything in it, so that any write to it throws (modules are strict mode). */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

const anyConfig: fc.Arbitrary<CrewConfig> = crewConfigs({ maxMercs: 4, nested: ["none", "soft", "hard"] });

describe("stepCrew (the pure step)", () => {
  it("fed the session's events one by one, snapshot through JSON between steps, gives the session's outbound log and final snapshot", () => {
    fc.assert(
      fc.property(anyConfig, fc.integer(), (c, orderSeed) => {
        const graph = configuredCrew(c);
        const session = drive({
          graph,
          input: INPUT,
          worker: seededWorker(c.seed),
          maxAttempts: c.maxAttempts,
          memory: createInMemoryMemory,
          order: seededOrder(orderSeed),
          tickAfterMs: 10_000,
        });

        let stored = JSON.stringify(initialCrewSnapshot({ crewId: "crew-1", graph, maxAttempts: c.maxAttempts }));
        const log: OutboundCrewEvent[] = [];
        const step = (event: unknown, nowMs: number) => {
          // a fresh adapter every step: memory travels only inside the snapshot
          const [next, out] = stepCrew(JSON.parse(stored), event, { graph, nowMs, memory: createInMemoryMemory() });
          log.push(...out);
          stored = JSON.stringify(next);
        };
        step({ type: "crew.start", crewId: "crew-1", input: INPUT }, 1_000);
        for (const { event, atMs } of session.inputs) step(event, atMs);

        expect(canonicalize(log)).toBe(canonicalize(session.log));
        expect(stored).toBe(JSON.stringify(session.session.snapshot()));
      }),
      { numRuns: 120 },
    );
  });

  it("never changes the snapshot it is given and returns a new one", () => {
    const graph = graphOf(researchCrew(2, { timeout_ms: 1_000 }));
    const idle = deepFreeze(initialCrewSnapshot({ crewId: "c", graph }));
    const [running, started] = stepCrew(
      idle,
      { type: "crew.start", crewId: "c", input: "q", task: { description: "birds" } },
      { graph, nowMs: 0 },
    );
    expect(idle).toEqual({ schema_version: "1.0", status: "idle", crewId: "c", graph: expect.any(String) });
    const caller = requestsIn(started)[0]!;
    const frozen = deepFreeze(running);
    const before = JSON.stringify(frozen);
    const [afterCaller, out] = stepCrew(frozen, completed(caller, "plan"), { graph, nowMs: 10 });
    expect(JSON.stringify(frozen)).toBe(before);
    expect(afterCaller).not.toBe(frozen);
    const mercs = requestsIn(out);
    // the same snapshot stepped twice with different events: two independent futures
    const [a] = stepCrew(deepFreeze(afterCaller), failed(mercs[0]!), { graph, nowMs: 20 });
    const [b] = stepCrew(afterCaller, completed(mercs[0]!, "A"), { graph, nowMs: 20 });
    expect((a as { slots: unknown[] }).slots[0]).toEqual({ f: "fault", e: { message: "boom" } });
    expect((b as { slots: unknown[] }).slots[0]).toEqual({ ok: "A" });
  });

  it("starts from initialCrewSnapshot exactly as a created session snapshots before start", () => {
    const graph = graphOf(researchCrew(2));
    expect(initialCrewSnapshot({ crewId: "c", graph, maxAttempts: 3 })).toEqual(
      createCrewSession({ crewId: "c", graph, clock: frozenClock(0), maxAttempts: 3 }).snapshot(),
    );
    expect(initialCrewSnapshot({ crewId: "c", graph })).toEqual(
      createCrewSession({ crewId: "c", graph, clock: frozenClock(0) }).snapshot(),
    );
  });

  it("applies a resume policy as a crew.resume event, like resumeCrewSession", () => {
    const graph = graphOf(researchCrew(3, { timeout_ms: 1_000 }));
    const clock = frozenClock(1_000);
    const s = createCrewSession({ crewId: "crew-1", graph, clock });
    const caller = requestsIn(s.start("q"))[0]!;
    const mercs = requestsIn(s.deliver(completed(caller, "plan")));
    s.deliver(completed(mercs[0]!, "A"));
    const snap = roundTrip(s.snapshot());
    for (const policy of ["await", "reissue", "fail"] as const) {
      clock.set(5_000);
      const viaResume = resumeCrewSession(snap, [], { graph, clock, policy });
      const [next, out] = stepCrew(snap, { type: "crew.resume", crewId: "crew-1", policy }, { graph, nowMs: 5_000 });
      expect(out).toEqual(viaResume.events);
      expect(next).toEqual(viaResume.session.snapshot());
    }
    const [, reissued] = stepCrew(
      snap,
      { type: "crew.resume", crewId: "crew-1", policy: "reissue" },
      { graph, nowMs: 5_000 },
    );
    expect(typesOf(reissued)).toEqual(["agent.step.requested", "agent.step.requested"]);
  });

  it("refuses bad input with the session's errors", () => {
    const graph = graphOf(researchCrew(2));
    const idle = initialCrewSnapshot({ crewId: "c", graph });
    const env = { graph, nowMs: 0 };
    const [running] = stepCrew(idle, { type: "crew.start", crewId: "c", input: "q" }, env);
    expect(() => stepCrew(running, { type: "crew.start", crewId: "c", input: "q" }, env)).toThrow(SessionStateError);
    expect(() =>
      stepCrew(idle, { type: "agent.step.completed", crewId: "c", correlationId: "x", output: 1 }, env),
    ).toThrow(SessionStateError);
    expect(() => stepCrew(idle, { type: "crew.start", crewId: "other", input: "q" }, env)).toThrow(UnknownCrewError);
    expect(() => stepCrew(idle, { type: "crew.start", crewId: "c", input: () => 1 }, env)).toThrow(
      InvalidCrewInputError,
    );
    expect(() =>
      stepCrew(idle, { type: "crew.start", crewId: "c", input: "q", task: { title: "no description" } }, env),
    ).toThrow(/task of crew c/);
    expect(() => stepCrew(running, { type: "crew.resume", crewId: "c", policy: "retry" }, env)).toThrow(
      /resume policy/,
    );
    expect(() => stepCrew(running, { type: "agent.step.completed", crewId: "c" }, env)).toThrow(InvalidCrewEventError);
    expect(() => stepCrew(running, { type: "crew.tick", crewId: "c", nowMs: 1 }, { graph, nowMs: Number.NaN })).toThrow(
      InvalidCrewInputError,
    );
    expect(() =>
      stepCrew(running, { type: "crew.tick", crewId: "c", nowMs: 1 }, { graph: graphOf(researchCrew(3)), nowMs: 0 }),
    ).toThrow(SnapshotMismatchError);
    expect(() =>
      stepCrew(
        { ...(running as CrewSnapshot), schema_version: "0.9" },
        { type: "crew.tick", crewId: "c", nowMs: 1 },
        env,
      ),
    ).toThrow(/schema_version "0.9"/);
  });
});
