import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalize } from "./canonical.ts";
import { frozenClock } from "./clock.ts";
import { InvalidCrewInputError, SnapshotMismatchError, SnapshotVersionError } from "./errors.ts";
import { createInMemoryMemory } from "./memory.ts";
import { resumeCrewSession } from "./resume.ts";
import { createCrewSession } from "./session.ts";
import {
  completed,
  configuredCrew,
  crewConfigs,
  drive,
  graphOf,
  requestsIn,
  researchCrew,
  roundTrip,
  seededOrder,
  seededWorker,
  typesOf,
} from "./test-kit.ts";
import type { CrewConfig } from "./test-kit.ts";

const graph = graphOf(researchCrew(3, { timeout_ms: 1_000 }));

/** A session in the merc phase with merc#0 answered and merc#1, merc#2 in flight; its snapshot round-tripped through JSON. */
function midPhase() {
  const clock = frozenClock(1_000);
  const s = createCrewSession({ crewId: "crew-1", graph, clock });
  const caller = requestsIn(s.start("q"))[0]!;
  const mercs = requestsIn(s.deliver(completed(caller, "plan")));
  s.deliver(completed(mercs[0]!, "A"));
  return { clock, mercs, snap: roundTrip(s.snapshot()) };
}

describe("resumeCrewSession", () => {
  it("await: emits nothing on resume and then continues exactly like the uninterrupted session", () => {
    const { clock, mercs, snap } = midPhase();
    const { session, events } = resumeCrewSession(snap, [completed(mercs[1]!, "B")], { graph, clock });
    expect(events).toEqual([]);
    expect(session.status).toBe("running");
    expect(session.deliver(completed(mercs[2]!, "C"))[0]).toMatchObject({ type: "vote.resolved", output: "A" });
  });

  it("reissue: re-emits only the steps still in flight, with the same correlationIds and fresh deadlines", () => {
    const { clock, mercs, snap } = midPhase();
    clock.set(50_000);
    const { events } = resumeCrewSession(snap, [], { graph, clock, policy: "reissue" });
    expect(requestsIn(events).map((r) => [r.agentId, r.correlationId, r.deadlineMs])).toEqual([
      ["merc#1", mercs[1]!.correlationId, 51_000],
      ["merc#2", mercs[2]!.correlationId, 51_000],
    ]);
    expect({ ...requestsIn(events)[0]!, deadlineMs: 0 }).toEqual({ ...mercs[1]!, deadlineMs: 0 });
  });

  it("fail: treats the steps in flight as failed and routes them to the fixer", () => {
    const { clock, snap } = midPhase();
    const { events } = resumeCrewSession(snap, [], { graph, clock, policy: "fail" });
    expect(typesOf(events)).toEqual(["fixer.invoked", "agent.step.requested", "fixer.invoked", "agent.step.requested"]);
    expect(events[0]).toMatchObject({ failedAgentId: "merc#1", reason: "fault", error: { code: "RESUMED_IN_FLIGHT" } });
  });

  it("reissues steps in flight inside nested crews too", () => {
    const g = configuredCrew({
      mercs: 2,
      voting: "first_valid",
      timeoutMs: undefined,
      fixer: false,
      maxAttempts: 1,
      nested: "hard",
      seed: 0,
    });
    const clock = frozenClock(0);
    const s = createCrewSession({ crewId: "c", graph: g, clock });
    const caller = requestsIn(s.start("q"))[0]!;
    const planners = requestsIn(s.deliver(completed(caller, "plan")));
    s.deliver(completed(planners[0]!, "p0"));
    const { events } = resumeCrewSession(roundTrip(s.snapshot()), [], { graph: g, clock, policy: "reissue" });
    expect(requestsIn(events).map((r) => `${r.crewId} ${r.agentId}`)).toEqual([
      "c/team#0 merc#0",
      "c/team#0 merc#1",
      "c/team#1 planner#0",
    ]);
  });

  it("refuses a snapshot of another schema version, naming both", () => {
    const { clock, snap } = midPhase();
    expect(() => resumeCrewSession({ ...snap, schema_version: "0.9" }, [], { graph, clock })).toThrow(
      SnapshotVersionError,
    );
    expect(() => resumeCrewSession({ ...snap, schema_version: "0.9" }, [], { graph, clock })).toThrow(
      'snapshot has schema_version "0.9", but this engine reads schema_version "1.0"',
    );
  });

  it("refuses a snapshot taken on another graph, a corrupt one, and an unknown policy", () => {
    const { clock, snap } = midPhase();
    const other = graphOf(researchCrew(4, { timeout_ms: 1_000 }));
    expect(() => resumeCrewSession(snap, [], { graph: other, clock })).toThrow(/taken on another graph/);
    expect(() => resumeCrewSession({ ...snap, slots: [0] }, [], { graph, clock })).toThrow(SnapshotMismatchError);
    expect(() => resumeCrewSession({ ...snap, slots: [0, { zz: 1 }, 0] }, [], { graph, clock })).toThrow(
      /slot 1 holds/,
    );
    expect(() => resumeCrewSession("nope", [], { graph, clock })).toThrow(SnapshotMismatchError);
    expect(() => resumeCrewSession(snap, [], { graph, clock, policy: "retry" as never })).toThrow(
      InvalidCrewInputError,
    );
  });

  it("restores memory from the snapshot into the adapter it is given", () => {
    const clock = frozenClock(0);
    const memory = createInMemoryMemory();
    const s = createCrewSession({ crewId: "crew-1", graph, clock, memory });
    const caller = requestsIn(s.start("q"))[0]!;
    s.deliver(completed(caller, "plan", { memoryCommands: [{ op: "set", key: "goal", value: "sleep" }] }));
    const fresh = createInMemoryMemory();
    const { events } = resumeCrewSession(roundTrip(s.snapshot()), [], {
      graph,
      clock,
      memory: fresh,
      policy: "reissue",
    });
    expect(requestsIn(events)[0]!.memoryContext).toEqual({ goal: "sleep" });
  });
});

const anyConfig: fc.Arbitrary<CrewConfig> = crewConfigs({ maxMercs: 4, nested: ["none", "soft", "hard"] });

describe("resume property", () => {
  it("resuming from a JSON round-tripped snapshot before every inbound event gives the uninterrupted log", () => {
    fc.assert(
      fc.property(anyConfig, fc.integer(), (c, orderSeed) => {
        const opts = {
          graph: configuredCrew(c),
          worker: seededWorker(c.seed),
          maxAttempts: c.maxAttempts,
          memory: createInMemoryMemory,
          order: seededOrder(orderSeed),
          tickAfterMs: 10_000,
        };
        const straight = drive(opts);
        const resumed = drive({ ...opts, resumeEveryStep: true });
        expect(resumed.inputs.length).toBe(straight.inputs.length);
        expect(canonicalize(resumed.log)).toBe(canonicalize(straight.log));
        expect(canonicalize(resumed.session.snapshot())).toBe(canonicalize(straight.session.snapshot()));
      }),
      { numRuns: 120 },
    );
  });

  it("resuming at any single point with the next event, then delivering the rest, gives the uninterrupted log", () => {
    fc.assert(
      fc.property(anyConfig, fc.nat(), (c, cut) => {
        const graph = configuredCrew(c);
        const straight = drive({ graph, worker: seededWorker(c.seed), maxAttempts: c.maxAttempts });
        const k = cut % (straight.inputs.length + 1);
        // replay the first k inputs, snapshot, resume with the rest
        const clock = frozenClock(1_000);
        const s = createCrewSession({ crewId: "crew-1", graph, clock, maxAttempts: c.maxAttempts });
        const log = [...s.start({ question: "What sleep patterns do birds have?" })];
        for (const { event, atMs } of straight.inputs.slice(0, k)) {
          clock.set(atMs);
          log.push(...s.deliver(event));
        }
        const [first, ...rest] = straight.inputs.slice(k);
        if (first !== undefined) clock.set(first.atMs);
        const resumed = resumeCrewSession(roundTrip(s.snapshot()), first === undefined ? [] : [first.event], {
          graph,
          clock,
        });
        log.push(...resumed.events);
        for (const { event, atMs } of rest) {
          clock.set(atMs);
          log.push(...resumed.session.deliver(event));
        }
        expect(canonicalize(log)).toBe(canonicalize(straight.log));
      }),
      { numRuns: 120 },
    );
  });
});
