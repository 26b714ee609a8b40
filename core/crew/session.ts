// The public session API: a thin shell over the crew machine that validates what comes in and
// returns the outbound events each call caused.

import type { Clock } from "./clock.ts";
import { InvalidCrewInputError, SessionStateError } from "./errors.ts";
import { parseInboundCrewEvent } from "./events.ts";
import type { OutboundCrewEvent } from "./events.ts";
import type { CrewGraph } from "./graph.ts";
import type { HookRegistry } from "./hooks.ts";
import { isJsonValue } from "./json.ts";
import type { JsonValue } from "./json.ts";
import { CrewMachine } from "./machine.ts";
import type { CrewMemoryAdapter } from "./memory.ts";
import { TaskSchema } from "./schema.ts";
import type { Task } from "./schema.ts";
import type { CrewSnapshot, CrewStatus } from "./snapshot.ts";

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

/** Normalised options shared by create and resume. */
export function machineEnv(opts: CrewSessionOptions) {
  if (typeof opts.crewId !== "string" || opts.crewId === "") throw new InvalidCrewInputError("crewId must be a non-empty string");
  const maxAttempts = opts.maxAttempts ?? 1;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new InvalidCrewInputError(`maxAttempts must be an integer ≥ 1, got ${maxAttempts}`);
  return { graph: opts.graph, clock: opts.clock, hooks: opts.hooks, memory: opts.memory, maxAttempts, scope: opts.crewId, root: true };
}

/** Creates an idle session for a built graph. */
export function createCrewSession(opts: CrewSessionOptions): CrewSession {
  return wrapMachine(new CrewMachine(opts.crewId, machineEnv(opts)));
}

/** The public face of a machine. */
export function wrapMachine(machine: CrewMachine): CrewSession {
  const clock = machine.env.clock;
  return {
    crewId: machine.crewId,
    get status() {
      return machine.status;
    },
    start(rootInput, task) {
      if (machine.status !== "idle") throw new SessionStateError(`crew ${machine.crewId} was already started (status ${machine.status})`);
      if (!isJsonValue(rootInput)) throw new InvalidCrewInputError(`the root input of crew ${machine.crewId} must be a plain JSON value`);
      let parsedTask: Task | undefined;
      if (task !== undefined) {
        const t = TaskSchema.safeParse(task);
        if (!t.success) throw new InvalidCrewInputError(`the task of crew ${machine.crewId} must be { description: string, … } with JSON values: ${t.error.issues.map((i) => i.message).join("; ")}`);
        parsedTask = t.data;
      }
      const out: OutboundCrewEvent[] = [];
      machine.begin(out, rootInput, parsedTask, clock.now());
      return out;
    },
    deliver(event) {
      const ev = parseInboundCrewEvent(event);
      const out: OutboundCrewEvent[] = [];
      machine.deliver(out, ev);
      return out;
    },
    tick(nowMs) {
      if (!Number.isFinite(nowMs)) throw new InvalidCrewInputError(`tick needs a finite time in milliseconds, got ${nowMs}`);
      const out: OutboundCrewEvent[] = [];
      machine.tick(out, nowMs);
      return out;
    },
    cancel(reason) {
      const out: OutboundCrewEvent[] = [];
      machine.cancel(out, reason);
      return out;
    },
    snapshot() {
      return machine.snapshot();
    },
    nextDeadlineMs() {
      return machine.nextDeadlineMs();
    },
  };
}
