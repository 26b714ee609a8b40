// The pure step of a crew, in the spirit of XState v5's `transition`: (snapshot, event, env) →
// [next snapshot, outbound events], and its batch form (snapshot, events, env) → next snapshot
// and one labelled result per event, which is what shells run: load → step → save. It runs
// nothing and does no I/O: time is a number in `env`, and the only code it calls is what `env`
// hands it (sync hooks, a memory adapter). The session runs the same transition (`advance`) on a
// state it keeps loaded instead of a snapshot.

import type { Clock } from "./clock.ts";
import { InvalidCrewInputError, UnknownCrewError } from "./errors.ts";
import { parseInboundCrewEvent } from "./events.ts";
import type { InboundCrewEvent, OutboundCrewEvent } from "./events.ts";
import type { CrewGraph } from "./graph.ts";
import { graphFingerprint } from "./graph.ts";
import type { HookRegistry } from "./hooks.ts";
import { isJsonValue } from "./json.ts";
import type { JsonValue } from "./json.ts";
import type { CrewState, ResumePolicy, StepLabel } from "./machine.ts";
import { rootEnv } from "./machine.ts";
import type { CrewMemoryAdapter } from "./memory.ts";
import { begin, deliver, nextDeadlineMs } from "./entry.ts";
import { applyPolicy, openSnapshot, saveState } from "./persist.ts";
import { CREW_SCHEMA_VERSION, TaskSchema } from "./schema.ts";
import type { Task } from "./schema.ts";
import type { CrewSnapshot, IdleCrewSnapshot } from "./snapshot.ts";

export type { StepLabel } from "./machine.ts";

/** Starts an idle crew: the entry role gets `input`; `task` rides on `crew.started` and in snapshots only. */
export type CrewStartEvent = { type: "crew.start"; crewId: string; input: JsonValue; task?: Task };

/** Applies a resume policy to the steps that were in flight when the snapshot was taken. */
export type CrewResumeEvent = { type: "crew.resume"; crewId: string; policy: ResumePolicy };

/** Every event the step takes: the inbound events of `deliver`, plus start and resume. */
export type CrewStepEvent = InboundCrewEvent | CrewStartEvent | CrewResumeEvent;

/** What a step runs with: the graph the snapshot was taken on, the time of the event, and optional sync ports. */
export type CrewStepEnv = {
  graph: CrewGraph;
  /** The time of this step (a `crew.tick` carries its own). */
  nowMs: number;
  hooks?: HookRegistry;
  /** Memory the step reads and writes; the snapshot's exported memory (if any) is imported into it first. */
  memory?: CrewMemoryAdapter;
};

/** The idle snapshot a crew starts from (what `createCrewSession(…).snapshot()` returns before `start`). */
export function initialCrewSnapshot(opts: {
  crewId: string;
  graph: CrewGraph;
  maxAttempts?: number;
}): IdleCrewSnapshot {
  const env = rootEnv({
    crewId: opts.crewId,
    graph: opts.graph,
    clock: { now: () => 0 },
    maxAttempts: opts.maxAttempts,
  });
  const snap: IdleCrewSnapshot = {
    schema_version: CREW_SCHEMA_VERSION,
    status: "idle",
    crewId: opts.crewId,
    graph: graphFingerprint(opts.graph),
  };
  if (env.maxAttempts !== 1) snap.maxAttempts = env.maxAttempts;
  return snap;
}

/**
 * One step of a crew: validates the event, rebuilds the crew from `snapshot` (never changing
 * it), applies the event and returns the next snapshot with the outbound events it caused.
 * Stepping snapshot after snapshot — through JSON or not — gives the same outbound log as one
 * session fed the same events.
 */
export function stepCrew(snapshot: unknown, event: unknown, env: CrewStepEnv): [CrewSnapshot, OutboundCrewEvent[]] {
  const { snapshot: next, results } = stepCrewMany(snapshot, [event], env);
  return [next, results[0]!.events];
}

/** What one event of a batch did: its label, the outbound events it caused, and when the shell should tick next after it. */
export type CrewStepResult = {
  label: StepLabel;
  events: OutboundCrewEvent[];
  /** The earliest deadline of a step in flight once this event was applied (undefined: none). */
  nextDeadlineMs: number | undefined;
};

/** The next snapshot of a batch step, one result per event (in order), and when the shell should tick next. */
export type CrewBatchResult = {
  snapshot: CrewSnapshot;
  results: CrewStepResult[];
  /** The earliest deadline of a step in flight after the last event (undefined: none). */
  nextDeadlineMs: number | undefined;
};

/**
 * Several steps of a crew in one: validates every event first, rebuilds the crew from `snapshot`
 * once (never changing it), applies the events in order at `env.nowMs` and saves once. Each
 * result is labelled with what its event did (`started`, `advanced`, `duplicate`, `late`,
 * `not-due`…). Gives the outbound log, and the snapshot, of `stepCrew` called event by event.
 */
export function stepCrewMany(snapshot: unknown, events: readonly unknown[], env: CrewStepEnv): CrewBatchResult {
  if (!Number.isFinite(env.nowMs))
    throw new InvalidCrewInputError(`a crew step needs a finite time in milliseconds (env.nowMs), got ${env.nowMs}`);
  const nowMs = env.nowMs;
  const clock: Clock = { now: () => nowMs };
  const evs = events.map(parseStepEvent);
  const st = openSnapshot(snapshot, { graph: env.graph, clock, hooks: env.hooks, memory: env.memory });
  const results: CrewStepResult[] = [];
  for (const ev of evs) {
    const out: OutboundCrewEvent[] = [];
    const label = advance(st, out, ev);
    results.push({ label, events: out, nextDeadlineMs: nextDeadlineMs(st) });
  }
  const last = results.length === 0 ? nextDeadlineMs(st) : results[results.length - 1]!.nextDeadlineMs;
  return { snapshot: saveState(st), results, nextDeadlineMs: last };
}

/** Applies one validated step event to a crew state in place, appending what it causes to `out`; says what it did. */
export function advance(st: CrewState, out: OutboundCrewEvent[], ev: CrewStepEvent): StepLabel {
  switch (ev.type) {
    case "crew.start":
      if (ev.crewId !== st.crewId) throw new UnknownCrewError(ev.crewId, st.crewId);
      begin(st, out, ev.input, ev.task, st.env.clock.now());
      return "started";
    case "crew.resume":
      if (ev.crewId !== st.crewId) throw new UnknownCrewError(ev.crewId, st.crewId);
      applyPolicy(st, out, ev.policy, st.env.clock.now());
      return "resumed";
    default:
      return deliver(st, out, ev);
  }
}

/** A start event for crew `crewId`, with the root input and task checked. */
export function startEvent(crewId: string, input: unknown, task: unknown): CrewStartEvent {
  if (!isJsonValue(input))
    throw new InvalidCrewInputError(`the root input of crew ${crewId} must be a plain JSON value`);
  const ev: CrewStartEvent = { type: "crew.start", crewId, input };
  if (task !== undefined) {
    const t = TaskSchema.safeParse(task);
    if (!t.success)
      throw new InvalidCrewInputError(
        `the task of crew ${crewId} must be { description: string, … } with JSON values: ${t.error.issues.map((i) => i.message).join("; ")}`,
      );
    ev.task = t.data;
  }
  return ev;
}

/** `policy` if it is a resume policy; a clear error otherwise. */
export function checkResumePolicy(policy: unknown): ResumePolicy {
  if (policy !== "await" && policy !== "reissue" && policy !== "fail") {
    throw new InvalidCrewInputError(
      `resume policy must be "await", "reissue" or "fail", got ${JSON.stringify(policy)}`,
    );
  }
  return policy;
}

function parseStepEvent(raw: unknown): CrewStepEvent {
  const type = typeof raw === "object" && raw !== null ? (raw as { type?: unknown }).type : undefined;
  if (type !== "crew.start" && type !== "crew.resume") return parseInboundCrewEvent(raw);
  const ev = raw as { crewId?: unknown; input?: unknown; task?: unknown; policy?: unknown };
  if (typeof ev.crewId !== "string" || ev.crewId === "")
    throw new InvalidCrewInputError(`a ${type} event needs a non-empty crewId`);
  if (type === "crew.resume") return { type, crewId: ev.crewId, policy: checkResumePolicy(ev.policy) };
  return startEvent(ev.crewId, ev.input, ev.task);
}
