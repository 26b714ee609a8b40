// The public session API: a thin shell that validates what comes in, runs the crew's transition
// (`advance`, the same one the pure step runs) on a state it keeps loaded, and returns the
// outbound events each call caused.

import type { Clock } from "./clock.ts";
import { InvalidCrewInputError, SessionStateError } from "./errors.ts";
import { parseInboundCrewEvent } from "./events.ts";
import type { OutboundCrewEvent } from "./events.ts";
import type { CrewGraph } from "./graph.ts";
import type { HookRegistry } from "./hooks.ts";
import type { JsonValue } from "./json.ts";
import { nextDeadlineMs } from "./entry.ts";
import type { CrewState } from "./machine.ts";
import { newCrewState, rootEnv } from "./machine.ts";
import type { CrewMemoryAdapter } from "./memory.ts";
import { saveState } from "./persist.ts";
import type { Task } from "./schema.ts";
import type { CrewSnapshot, CrewStatus } from "./snapshot.ts";
import { advance, startEvent } from "./step.ts";
import type { CrewStepEvent } from "./step.ts";

/** What a session runs with. */
export type CrewSessionOptions = {
  /** The root crew's id; inner crews get `${crewId}/${agentId}`. */
  crewId: string;
  graph: CrewGraph;
  clock: Clock;
  hooks?: HookRegistry;
  /** Memory adapter; the root scope is `crewId`. Without one, steps carry no memoryContext and memory commands are dropped with a diagnostic. */
  memory?: CrewMemoryAdapter;
  /** Attempts per agent step before a failure goes to a fixer (default 1: no retry). Fixer steps get one attempt. */
  maxAttempts?: number;
};

/** A running crew: every method returns the outbound events it caused, in order. */
export interface CrewSession {
  readonly crewId: string;
  /** `idle` → `running` → `completed` | `failed` | `cancelled`. */
  readonly status: CrewStatus;
  /** Starts the crew: the entry role gets `rootInput`; `task` rides on `crew.started` and in snapshots only. */
  start(rootInput: JsonValue, task?: Task): OutboundCrewEvent[];
  /** Validates and applies one inbound event (answers, chunks, `crew.tick`, `crew.cancel`), routing inner crews' events to them. */
  deliver(event: unknown): OutboundCrewEvent[];
  /** Fires the timeouts of every step whose deadline is at or before `nowMs`. */
  tick(nowMs: number): OutboundCrewEvent[];
  /** Cancels a running crew (answers still in flight will be ignored); no-op once ended. */
  cancel(reason?: string): OutboundCrewEvent[];
  /** The session state as a plain JSON value. */
  snapshot(): CrewSnapshot;
  /** The earliest deadline of a step in flight (in this crew or its inner crews): when the shell should tick next. */
  nextDeadlineMs(): number | undefined;
}

/** Creates an idle session for a built graph. */
export function createCrewSession(opts: CrewSessionOptions): CrewSession {
  return sessionOver(newCrewState(opts.crewId, rootEnv(opts)));
}

/** The public face of a loaded root crew state. */
export function sessionOver(st: CrewState): CrewSession {
  return {
    crewId: st.crewId,
    get status() {
      return st.status;
    },
    start(rootInput, task) {
      if (st.status !== "idle")
        throw new SessionStateError(`crew ${st.crewId} was already started (status ${st.status})`);
      return run(st, startEvent(st.crewId, rootInput, task));
    },
    deliver(event) {
      return run(st, parseInboundCrewEvent(event));
    },
    tick(nowMs) {
      if (!Number.isFinite(nowMs))
        throw new InvalidCrewInputError(`tick needs a finite time in milliseconds, got ${nowMs}`);
      return run(st, { type: "crew.tick", crewId: st.crewId, nowMs });
    },
    cancel(reason) {
      return run(
        st,
        reason === undefined
          ? { type: "crew.cancel", crewId: st.crewId }
          : { type: "crew.cancel", crewId: st.crewId, reason },
      );
    },
    snapshot() {
      return saveState(st);
    },
    nextDeadlineMs() {
      return nextDeadlineMs(st);
    },
  };
}

/** Runs one step event on the kept state and returns what it caused. */
function run(st: CrewState, ev: CrewStepEvent): OutboundCrewEvent[] {
  const out: OutboundCrewEvent[] = [];
  advance(st, out, ev);
  return out;
}
