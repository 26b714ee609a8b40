// Sync hooks: observers called at fixed points of a transition. Only `beforeStepRequested` may
// veto. Hooks must be deterministic and must not mutate the events they are shown.

import { HookError } from "./errors.ts";
import type {
  AgentStepCompletedEvent,
  AgentStepRequestedEvent,
  CrewCompletedEvent,
  CrewFailedEvent,
  FixerInvokedEvent,
  VoteResolvedEvent,
} from "./events.ts";

/** What a hook is shown: the crew (root or inner) and the event at hand. */
export type HookContext<E> = { crewId: string; event: Readonly<E> };

/** Returned by `beforeStepRequested` to stop a step: the slot fails at once (no retry, no fixer) and a `STEP_VETOED` diagnostic is emitted. */
export type StepVeto = { veto: true; reason: string };

/** Every hook point and its signature. */
export type CrewHooks = {
  /** Before a step request is emitted (not for re-issued requests on resume); may veto. */
  beforeStepRequested: (ctx: HookContext<AgentStepRequestedEvent>) => StepVeto | void;
  /** After an awaited step's answer was accepted (arrival order; not for duplicates or late answers). */
  afterStepCompleted: (ctx: HookContext<AgentStepCompletedEvent>) => void;
  /** After a fixer was invoked for a slot. */
  onFixerInvoked: (ctx: HookContext<FixerInvokedEvent>) => void;
  /** After a phase's vote picked an output. */
  afterVoteResolved: (ctx: HookContext<VoteResolvedEvent>) => void;
  /** After the root crew completed. */
  onCrewCompleted: (ctx: HookContext<CrewCompletedEvent>) => void;
  /** After the root crew failed. */
  onCrewFailed: (ctx: HookContext<CrewFailedEvent>) => void;
};

/** A hook point name. */
export type HookName = keyof CrewHooks;

/** Hooks registered for a session (and its inner sessions). */
export interface HookRegistry {
  /** Registers `fn` at `name`; hooks run in registration order; returns an unregister function. */
  on<K extends HookName>(name: K, fn: CrewHooks[K]): () => void;
  /** Runs the hooks at `name`; for `beforeStepRequested` returns the first veto. A throwing hook becomes a `HookError`. */
  run<K extends HookName>(name: K, ctx: Parameters<CrewHooks[K]>[0]): StepVeto | undefined;
}

/** An empty hook registry. */
export function createHookRegistry(): HookRegistry {
  const hooks = new Map<HookName, ((ctx: unknown) => StepVeto | void)[]>();
  return {
    on(name, fn) {
      const list = hooks.get(name) ?? [];
      const f = fn as (ctx: unknown) => StepVeto | void;
      list.push(f);
      hooks.set(name, list);
      return () => {
        const i = list.indexOf(f);
        if (i >= 0) list.splice(i, 1);
      };
    },
    run(name, ctx) {
      const list = hooks.get(name);
      if (list === undefined) return undefined;
      for (const fn of [...list]) {
        let result: StepVeto | void;
        try {
          result = fn(ctx);
        } catch (cause) {
          throw new HookError(name, cause);
        }
        if (name === "beforeStepRequested" && result !== undefined && result.veto === true) return result;
      }
      return undefined;
    },
  };
}
