// Helpers for the crew engine's tests: small shapes, answer builders, and a scripted driver that
// plays worker and can round-trip the session through a JSON snapshot between every event.
// Pure (no I/O, no real time), so it obeys the core/ rules although only tests import it.

import fc from "fast-check";
import { frozenClock } from "./clock.ts";
import type { FrozenClock } from "./clock.ts";
import type { AgentStepRequestedEvent, InboundCrewEvent, MemoryCommand, OutboundCrewEvent } from "./events.ts";
import type { CrewGraph } from "./graph.ts";
import { buildCrewGraph } from "./graph.ts";
import type { HookRegistry } from "./hooks.ts";
import type { JsonValue } from "./json.ts";
import type { CrewMemoryAdapter } from "./memory.ts";
import { resumeCrewSession } from "./resume.ts";
import type { CrewRole, CrewShapeInput } from "./schema.ts";
import { createCrewSession } from "./session.ts";
import type { CrewSession } from "./session.ts";

type RoleInput = Omit<Partial<CrewRole>, "permissions" | "nested_crew"> & {
  permissions?: Partial<CrewRole["permissions"]>;
  nested_crew?: { shape: CrewShapeInput; agents: unknown; memory_isolation: "soft" | "hard" };
};

/** A role with harmless defaults (thinking allowed, no permissions). */
export function role(name: string, extra: RoleInput = {}): CrewShapeInput["roles"][number] {
  const { permissions, ...rest } = extra;
  return {
    role: name,
    capabilities: { thinking_allowed: true },
    ...rest,
    permissions: { talk_to: [], delegate_to: [], escalate_to: [], invite: [], ...permissions },
  } as CrewShapeInput["roles"][number];
}

/** A shape document. */
export function shape(name: string, roles: CrewShapeInput["roles"]): CrewShapeInput {
  return { schema_version: "1.0", name, roles };
}

/** A counts document. */
export function counts(
  name: string,
  agents: Record<string, number>,
): { schema_version: "1.0"; name: string; agents: { role: string; amount: number }[] } {
  return { schema_version: "1.0", name, agents: Object.entries(agents).map(([r, amount]) => ({ role: r, amount })) };
}

/** The seed README's research crew: caller → merc ×n → caller, with a fixer on fault and stall. */
export function researchCrew(mercs = 4, extra: { voting?: CrewRole["voting"]; timeout_ms?: number } = {}) {
  const s = shape("RESEARCH_CREW", [
    role("caller", {
      capabilities: { thinking_allowed: false },
      permissions: { talk_to: ["fixer"] },
      first_input: true,
      final_output: true,
    }),
    role("merc", {
      capabilities: { thinking_allowed: true, model: "claude-sonnet-4-6" },
      system_prompt: "You are a research operative. Gather facts efficiently.",
      permissions: { talk_to: ["caller"], escalate_to: ["fixer"] },
      amount: mercs,
      ...extra,
    }),
    role("fixer", {
      max_allowed: 1,
      activation: { on_fault: true, on_stall: true },
      permissions: { talk_to: ["merc", "caller"], delegate_to: ["merc"], escalate_to: ["caller"] },
    }),
  ]);
  return { shape: s, counts: counts("RESEARCH_CREW", { caller: 1, merc: mercs, fixer: 1 }) };
}

/** A completed answer to a request. */
export function completed(
  req: AgentStepRequestedEvent,
  output: JsonValue,
  extra: {
    messages?: { to: string; body: JsonValue }[];
    delegations?: { to: string; task: JsonValue }[];
    memoryCommands?: MemoryCommand[];
  } = {},
): InboundCrewEvent {
  return { type: "agent.step.completed", crewId: req.crewId, correlationId: req.correlationId, output, ...extra };
}

/** A failed answer to a request. */
export function failed(req: AgentStepRequestedEvent, message = "boom", code?: string): InboundCrewEvent {
  return {
    type: "agent.step.failed",
    crewId: req.crewId,
    correlationId: req.correlationId,
    error: { message, ...(code === undefined ? {} : { code }) },
  };
}

/** The step requests among events. */
export function requestsIn(events: readonly OutboundCrewEvent[]): AgentStepRequestedEvent[] {
  return events.filter((e): e is AgentStepRequestedEvent => e.type === "agent.step.requested");
}

/** The event types, in order. */
export function typesOf(events: readonly OutboundCrewEvent[]): string[] {
  return events.map((e) => e.type);
}

/** A value after `JSON.parse(JSON.stringify(value))`. */
export function roundTrip<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** What the scripted worker does with a request: answer, fail, or stay silent (the step will time out). */
export type Answer =
  | {
      output: JsonValue;
      messages?: { to: string; body: JsonValue }[];
      delegations?: { to: string; task: JsonValue }[];
      memoryCommands?: MemoryCommand[];
    }
  | { error: string; code?: string }
  | "silent";

/** One inbound step of a scripted run (what the driver delivered), for replays. */
export type DriverInput = { event: InboundCrewEvent; atMs: number };

/** Options of `drive`. */
export type DriveOptions = {
  graph: CrewGraph;
  crewId?: string;
  input?: JsonValue;
  worker: (req: AgentStepRequestedEvent) => Answer;
  /** Reorders the answers of one round (the requests outstanding at once). */
  order?: (reqs: AgentStepRequestedEvent[]) => AgentStepRequestedEvent[];
  /** Delivers every answer twice. */
  duplicate?: boolean;
  /** Snapshot → JSON → resume (policy await) before every inbound event. */
  resumeEveryStep?: boolean;
  memory?: () => CrewMemoryAdapter;
  hooks?: HookRegistry;
  maxAttempts?: number;
  /** How far the clock moves when the driver ticks because only silent steps remain. */
  tickAfterMs?: number;
};

/** Plays worker for a session until it ends: answers each round in `order`, ticks when only silent steps remain. */
export function drive(opts: DriveOptions): {
  log: OutboundCrewEvent[];
  session: CrewSession;
  inputs: DriverInput[];
  clock: FrozenClock;
} {
  const clock = frozenClock(1_000);
  let memory = opts.memory?.();
  const crewId = opts.crewId ?? "crew-1";
  let session = createCrewSession({
    crewId,
    graph: opts.graph,
    clock,
    ...(memory ? { memory } : {}),
    ...(opts.hooks ? { hooks: opts.hooks } : {}),
    ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}),
  });
  const log: OutboundCrewEvent[] = [...session.start(opts.input ?? { question: "What sleep patterns do birds have?" })];
  const inputs: DriverInput[] = [];
  let pending = requestsIn(log);
  const send = (event: InboundCrewEvent, advance = true) => {
    if (advance) clock.advance(10);
    inputs.push({ event, atMs: clock.now() });
    if (opts.resumeEveryStep) {
      const snap = roundTrip(session.snapshot());
      memory = opts.memory?.();
      const resumed = resumeCrewSession(snap, [event], {
        graph: opts.graph,
        clock,
        ...(memory ? { memory } : {}),
        ...(opts.hooks ? { hooks: opts.hooks } : {}),
      });
      session = resumed.session;
      return resumed.events;
    }
    return event.type === "crew.tick" ? session.tick(event.nowMs) : session.deliver(event);
  };
  for (let guard = 0; guard < 10_000 && session.status === "running"; guard++) {
    const round = opts.order ? opts.order(pending) : pending;
    pending = [];
    let answeredAny = false;
    for (const req of round) {
      const a = opts.worker(req);
      if (a === "silent") continue;
      let ev: InboundCrewEvent;
      if ("error" in a) ev = failed(req, a.error, a.code);
      else {
        const { output, ...extra } = a;
        ev = completed(req, output, extra);
      }
      answeredAny = true;
      for (let k = 0; k < (opts.duplicate ? 2 : 1); k++) {
        const out = send(ev, k === 0);
        log.push(...out);
        pending.push(...requestsIn(out));
      }
    }
    if (!answeredAny && session.status === "running") {
      const nowMs = clock.now() + (opts.tickAfterMs ?? 60_000);
      clock.set(nowMs);
      const out = send({ type: "crew.tick", crewId, nowMs });
      log.push(...out);
      pending.push(...requestsIn(out));
    }
  }
  return { log, session, inputs, clock };
}

/** Builds a graph from a `{ shape, counts }` pair. */
export function graphOf(c: { shape: unknown; counts?: unknown }): CrewGraph {
  return buildCrewGraph(c.shape, c.counts);
}

/** A session that goes through `snapshot → JSON → resumeCrewSession` before every call, as a serverless shell would. */
export function persistentSession(
  graph: CrewGraph,
  opts: {
    crewId?: string;
    clock?: FrozenClock;
    memory?: () => CrewMemoryAdapter;
    hooks?: HookRegistry;
    maxAttempts?: number;
  } = {},
) {
  const clock = opts.clock ?? frozenClock(1_000);
  const crewId = opts.crewId ?? "crew-1";
  let memory = opts.memory?.();
  const extras = () => ({ ...(memory ? { memory } : {}), ...(opts.hooks ? { hooks: opts.hooks } : {}) });
  let session = createCrewSession({
    crewId,
    graph,
    clock,
    ...extras(),
    ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}),
  });
  const reload = () => {
    const snap = roundTrip(session.snapshot());
    memory = opts.memory?.();
    session = resumeCrewSession(snap, [], { graph, clock, ...extras() }).session;
    return session;
  };
  return {
    clock,
    crewId,
    get session() {
      return session;
    },
    get memory() {
      return memory;
    },
    start: (input: JsonValue, task?: { description: string }) => session.start(input, task),
    deliver: (event: unknown) => reload().deliver(event),
    tick: (nowMs: number) => reload().tick(nowMs),
    cancel: (reason?: string) => reload().cancel(reason),
    snapshot: () => roundTrip(session.snapshot()),
  };
}

/** Parameters of a generated crew for property tests. */
export type CrewConfig = {
  mercs: number;
  voting: "first_valid" | "majority" | "unanimous" | "weighted_consensus";
  timeoutMs: number | undefined;
  fixer: boolean;
  maxAttempts: number;
  /** Wrap the merc phase in a nested crew (soft or hard memory). */
  nested: "none" | "soft" | "hard";
  seed: number;
};

/** A caller → merc ×n → caller crew built from a config (optionally with the mercs inside a nested crew). */
/** Random crew configurations for property tests: up to `maxMercs` agents, nested crews as allowed. */
export function crewConfigs(opts: {
  maxMercs: number;
  nested: readonly CrewConfig["nested"][];
}): fc.Arbitrary<CrewConfig> {
  return fc.record({
    mercs: fc.integer({ min: 1, max: opts.maxMercs }),
    voting: fc.constantFrom("first_valid", "majority", "unanimous", "weighted_consensus"),
    timeoutMs: fc.option(fc.constantFrom(500, 5_000), { nil: undefined }),
    fixer: fc.boolean(),
    maxAttempts: fc.integer({ min: 1, max: 2 }),
    nested: fc.constantFrom(...opts.nested),
    seed: fc.integer({ min: 0, max: 1_000_000 }),
  });
}

export function configuredCrew(c: CrewConfig): CrewGraph {
  const timeout = c.timeoutMs === undefined ? {} : { timeout_ms: c.timeoutMs };
  const nested = c.nested !== "none";
  const head = nested ? "planner" : "caller";
  const merc = role("merc", {
    voting: c.voting,
    amount: c.mercs,
    ...timeout,
    permissions: { talk_to: [head], escalate_to: c.fixer ? ["fixer"] : [] },
  });
  const fixer = role("fixer", {
    ...timeout,
    activation: { on_fault: true, on_stall: true },
    permissions: { talk_to: [head] },
  });
  if (!nested) {
    const caller = role("caller", {
      ...timeout,
      first_input: true,
      final_output: true,
      permissions: { talk_to: ["merc"], escalate_to: c.fixer ? ["fixer"] : [] },
    });
    return buildCrewGraph(shape("GEN", [caller, merc, ...(c.fixer ? [fixer] : [])]));
  }
  const inner = shape("GEN_INNER", [
    role("planner", {
      ...timeout,
      first_input: true,
      permissions: { talk_to: ["merc"], escalate_to: c.fixer ? ["fixer"] : [] },
    }),
    { ...merc, final_output: true },
    ...(c.fixer ? [fixer] : []),
  ]);
  const caller = role("caller", {
    ...timeout,
    first_input: true,
    final_output: true,
    permissions: { talk_to: ["team"] },
  });
  const team = role("team", {
    amount: 2,
    permissions: { talk_to: ["caller"] },
    nested_crew: {
      shape: inner,
      agents: counts("GEN_INNER", { planner: 1, merc: c.mercs, ...(c.fixer ? { fixer: 1 } : {}) }),
      memory_isolation: c.nested as "soft" | "hard",
    },
  });
  return buildCrewGraph(shape("GEN", [caller, team]));
}

function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** A deterministic scripted worker: what it does with a request depends only on the seed and the request; silent only where steps time out. */
export function seededWorker(seed: number): (req: AgentStepRequestedEvent) => Answer {
  return (req) => {
    const h = fnv(`${seed}:${req.correlationId}`);
    const pick = h % 10;
    if (pick === 0) return { error: "scripted failure", code: "SCRIPTED" };
    if (pick === 1 && req.deadlineMs !== undefined) return "silent";
    const output = ["a", "b", { v: "a" }][h % 3]!;
    return {
      output,
      ...((h >> 4) % 3 === 0
        ? { memoryCommands: [{ op: "set" as const, key: `k${(h >> 6) % 3}`, value: req.agentId }] }
        : {}),
      ...((h >> 8) % 4 === 0 ? { messages: [{ to: (h >> 10) % 2 ? "caller" : "merc", body: req.agentId }] } : {}),
    };
  };
}

/** A deterministic reordering of a round's requests, keyed by a seed. */
export function seededOrder(seed: number): (reqs: AgentStepRequestedEvent[]) => AgentStepRequestedEvent[] {
  return (reqs) => [...reqs].sort((x, y) => fnv(`${seed}/${x.correlationId}`) - fnv(`${seed}/${y.correlationId}`));
}
