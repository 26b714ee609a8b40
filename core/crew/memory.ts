// The memory port of the crew engine and an in-memory implementation. A scope is a string
// (the root crew's id, or an inner crew's id when it was forked for hard isolation).

import type { MemoryCommand } from "./events.ts";
import type { JsonValue } from "./json.ts";

/**
 * Scoped memory the engine reads into `memoryContext` and writes from `memoryCommands`.
 * All methods are synchronous and must be deterministic for the same calls.
 */
export interface CrewMemoryAdapter {
  /** What an agent of `role` sees in `scope`, or undefined for nothing (omitted from the step request). */
  context(scope: string, role: string, agentId: string): JsonValue | undefined;
  /** Applies commands to `scope`, in order. */
  apply(scope: string, commands: readonly MemoryCommand[]): void;
  /** Creates `childScope` (the engine names it: the inner crew's id) as a copy of `parentScope`, for hard isolation. */
  fork(parentScope: string, childScope: string): void;
  /** Replays the child's changes onto `parentScope` and drops the child (an inner crew completed). */
  merge(childScope: string, parentScope: string): void;
  /** Drops a forked child without merging (its inner crew failed or was cancelled). */
  discard(childScope: string): void;
  /** The state of `scope` and every scope under it (`scope/…`) as JSON for a snapshot, or undefined if the adapter keeps it elsewhere. */
  export(scope: string): JsonValue | undefined;
  /** Replaces `scope` and every scope under it with exported state (undefined: leave the adapter as it is). */
  import(scope: string, data: JsonValue | undefined): void;
}

type ScopeState = {
  entries: Map<string, JsonValue>;
  log: MemoryCommand[] | undefined;
  view: { [key: string]: JsonValue } | undefined;
};

type ExportedScope = { entries: [string, JsonValue][]; log?: MemoryCommand[] };

/** A key–value memory per scope, held in this process (exported whole into snapshots); every agent of every role sees the whole scope. */
export function createInMemoryMemory(): CrewMemoryAdapter & { entries(scope: string): Record<string, JsonValue> } {
  const scopes = new Map<string, ScopeState>();
  const get = (scope: string): ScopeState => {
    let s = scopes.get(scope);
    if (s === undefined) {
      s = { entries: new Map(), log: undefined, view: undefined };
      scopes.set(scope, s);
    }
    return s;
  };
  const under = (scope: string) => [...scopes.keys()].filter((k) => k === scope || k.startsWith(`${scope}/`)).sort();
  const view = (s: ScopeState): { [key: string]: JsonValue } => {
    if (s.view === undefined) {
      // fromEntries defines own properties, so even a key named "__proto__" stays data
      s.view = Object.fromEntries([...s.entries.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return s.view;
  };
  const apply = (scope: string, commands: readonly MemoryCommand[]) => {
    const s = get(scope);
    for (const c of commands) {
      if (c.op === "set") s.entries.set(c.key, c.value);
      else s.entries.delete(c.key);
      s.log?.push(c);
    }
    if (commands.length > 0) s.view = undefined;
  };
  return {
    context(scope) {
      const s = scopes.get(scope);
      return s === undefined || s.entries.size === 0 ? undefined : view(s);
    },
    apply,
    fork(parentScope, childScope) {
      const parent = get(parentScope);
      scopes.set(childScope, { entries: new Map(parent.entries), log: [], view: undefined });
    },
    merge(childScope, parentScope) {
      const child = scopes.get(childScope);
      scopes.delete(childScope);
      if (child?.log !== undefined) apply(parentScope, child.log);
    },
    discard(childScope) {
      scopes.delete(childScope);
    },
    export(scope) {
      const out: [string, JsonValue][] = [];
      for (const name of under(scope)) {
        const s = scopes.get(name)!;
        if (s.entries.size === 0 && s.log === undefined) continue;
        const e: ExportedScope = { entries: [...s.entries.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) };
        if (s.log !== undefined) e.log = s.log;
        out.push([name, e as unknown as JsonValue]);
      }
      return Object.fromEntries(out);
    },
    import(scope, data) {
      if (data === undefined) return;
      for (const name of under(scope)) scopes.delete(name);
      for (const [name, raw] of Object.entries(data as { [name: string]: ExportedScope })) {
        scopes.set(name, {
          entries: new Map(raw.entries),
          log: raw.log === undefined ? undefined : [...raw.log],
          view: undefined,
        });
      }
    },
    entries(scope) {
      const s = scopes.get(scope);
      return s === undefined ? {} : { ...view(s) };
    },
  };
}
