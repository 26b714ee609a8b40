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
import { initialCrewSnapshot, stepCrew, stepCrewMany } from "./index.ts";
import type { CrewStepResult, InboundCrewEvent } from "./index.ts";
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

/** What a label says about the events its event caused, checked against them. */
function labelAgrees(event: InboundCrewEvent, r: CrewStepResult): boolean {
  const only = r.events.length === 1 && r.events[0]!.type === "crew.diagnostic" ? r.events[0]! : undefined;
  const diag = (code: string) =>
    only?.type === "crew.diagnostic" &&
    only.code === code &&
    "correlationId" in event &&
    only.correlationId === event.correlationId;
  switch (r.label) {
    case "duplicate":
      return diag("DUPLICATE_DELIVERY");
    case "late":
      return diag("LATE_DELIVERY");
    case "unknown":
      return diag("UNKNOWN_CORRELATION");
    case "not-due":
      return event.type === "crew.tick" && r.events.length === 0;
    case "advanced":
      return event.type === "crew.tick"
        ? r.events.some((e) => e.type === "agent.step.timed_out")
        : !diag("DUPLICATE_DELIVERY") && !diag("LATE_DELIVERY") && !diag("UNKNOWN_CORRELATION");
    default:
      return false;
  }
}

describe("stepCrewMany (the batch step shells run)", () => {
  it("fed a session's events in batches, snapshot through JSON between batches, gives the session's log, snapshots and deadlines, each event labelled by what it did", () => {
    fc.assert(
      fc.property(
        anyConfig,
        fc.integer(),
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 8 }),
        (c, orderSeed, duplicate, sizes) => {
          const graph = configuredCrew(c);
          // the events of a scripted run (answers, duplicates, ticks), then fed again to a fresh session and to the batch step
          const { inputs } = drive({
            graph,
            input: INPUT,
            worker: seededWorker(c.seed),
            maxAttempts: c.maxAttempts,
            memory: createInMemoryMemory,
            order: seededOrder(orderSeed),
            duplicate,
            tickAfterMs: 10_000,
          });
          const clock = frozenClock(1_000);
          const session = createCrewSession({
            crewId: "crew-1",
            graph,
            clock,
            memory: createInMemoryMemory(),
            maxAttempts: c.maxAttempts,
          });
          const sessionLog: OutboundCrewEvent[] = [...session.start(INPUT)];

          const first = stepCrewMany(
            initialCrewSnapshot({ crewId: "crew-1", graph, maxAttempts: c.maxAttempts }),
            [{ type: "crew.start", crewId: "crew-1", input: INPUT }],
            { graph, nowMs: 1_000, memory: createInMemoryMemory() },
          );
          expect(first.results.map((r) => r.label)).toEqual(["started"]);
          const log: OutboundCrewEvent[] = [...first.results[0]!.events];
          let stored = JSON.stringify(first.snapshot);
          expect(stored).toBe(JSON.stringify(session.snapshot()));

          for (let at = 0, b = 0; at < inputs.length; b++) {
            const batch = inputs.slice(at, at + sizes[b % sizes.length]!);
            at += batch.length;
            const nowMs = batch[batch.length - 1]!.atMs;
            const events = batch.map((x) => x.event);
            const stepped = stepCrewMany(JSON.parse(stored), events, { graph, nowMs, memory: createInMemoryMemory() });
            expect(stepped.results).toHaveLength(events.length);
            clock.set(nowMs);
            events.forEach((event, k) => {
              const out = session.deliver(event);
              const r = stepped.results[k]!;
              expect(r.events).toEqual(out);
              expect(r.nextDeadlineMs).toBe(session.nextDeadlineMs());
              expect(labelAgrees(event, r), `${r.label} for ${event.type} causing ${typesOf(r.events).join()}`).toBe(
                true,
              );
              sessionLog.push(...out);
              log.push(...r.events);
            });
            expect(stepped.nextDeadlineMs).toBe(session.nextDeadlineMs());
            stored = JSON.stringify(stepped.snapshot);
            expect(stored).toBe(JSON.stringify(session.snapshot()));
          }
          expect(canonicalize(log)).toBe(canonicalize(sessionLog));
        },
      ),
      { numRuns: 120 },
    );
  });

  it("labels a start, an answer, its duplicate, a late answer, an unknown id, ticks, a chunk and cancels", () => {
    const graph = graphOf(researchCrew(2, { timeout_ms: 1_000 }));
    const idle = initialCrewSnapshot({ crewId: "c", graph });
    const started = stepCrewMany(idle, [{ type: "crew.start", crewId: "c", input: "q" }], { graph, nowMs: 0 });
    const caller = requestsIn(started.results[0]!.events)[0]!;
    expect(started.results[0]).toMatchObject({ label: "started", nextDeadlineMs: undefined }); // the caller has no timeout
    const asked = stepCrewMany(started.snapshot, [completed(caller, "plan")], { graph, nowMs: 100 });
    const mercs = requestsIn(asked.results[0]!.events);
    expect(mercs).toHaveLength(2);
    expect(asked.results[0]).toMatchObject({ label: "advanced", nextDeadlineMs: 1_100 });
    const answered = stepCrewMany(
      asked.snapshot,
      [
        completed(mercs[0]!, "A"),
        completed(mercs[0]!, "A"),
        completed(caller, "plan"),
        { type: "agent.step.completed", crewId: "c", correlationId: "0123456789abcdef01234567", output: 1 },
        { type: "crew.tick", crewId: "c", nowMs: 500 },
        { type: "agent.stream.chunk", crewId: "c", correlationId: mercs[1]!.correlationId, chunk: "x" },
      ],
      { graph, nowMs: 200 },
    );
    expect(answered.results.map((r) => r.label)).toEqual([
      "advanced",
      "duplicate",
      "late",
      "unknown",
      "not-due",
      "ignored",
    ]);
    expect(answered.nextDeadlineMs).toBe(1_100);
    const timedOut = stepCrewMany(
      answered.snapshot,
      [{ type: "crew.tick", crewId: "c", nowMs: 1_100 }, completed(mercs[1]!, "B")],
      { graph, nowMs: 1_100 },
    );
    expect(timedOut.results.map((r) => r.label)).toEqual(["advanced", "late"]);
    expect(typesOf(timedOut.results[0]!.events)[0]).toBe("agent.step.timed_out");
    const cancelled = stepCrewMany(
      timedOut.snapshot,
      [
        { type: "crew.cancel", crewId: "c" },
        { type: "crew.cancel", crewId: "c" },
      ],
      { graph, nowMs: 1_200 },
    );
    expect(cancelled.results.map((r) => r.label)).toEqual(["advanced", "ignored"]);
    expect(cancelled.nextDeadlineMs).toBeUndefined();
    expect(cancelled.snapshot.status).toBe("cancelled");
  });

  it("checks every event before it applies any, and changes nothing it is given", () => {
    const graph = graphOf(researchCrew(2));
    const idle = deepFreeze(initialCrewSnapshot({ crewId: "c", graph }));
    const events = deepFreeze([
      { type: "crew.start", crewId: "c", input: "q" },
      { type: "agent.step.completed", crewId: "c" },
    ]);
    expect(() => stepCrewMany(idle, events, { graph, nowMs: 0 })).toThrow(InvalidCrewEventError);
    const none = stepCrewMany(idle, [], { graph, nowMs: 0 });
    expect(none).toEqual({ snapshot: idle, results: [], nextDeadlineMs: undefined });
    expect(none.snapshot).not.toBe(idle);
  });
});
