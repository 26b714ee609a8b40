// The working state of one crew (root or inner) and the helpers every transition shares. The
// transitions sit beside it, one module per section: entry points (`entry.ts`), snapshot and
// resume (`persist.ts`), phases and rounds (`rounds.ts`), answers (`answers.ts`) and nested
// crews (`inner.ts`). `step.ts` puts them together as one pure step over snapshots, and the
// session (`session.ts`) runs the same transitions on a state it keeps loaded.
//
// Rounds: a phase asks all its agents at once (round 1). Answers only change slot states; when
// every slot of the round has settled, failed slots are retried, handed to a fixer, or failed
// for good — together, in slot order (the next round). When nothing is in flight any more the
// phase settles: held messages are relayed, memory commands applied, and the vote is taken.
// That is why the arrival order of answers within a round never changes the outbound log.

import type { Clock } from "./clock.ts";
import { InvalidCrewInputError, SessionStateError } from "./errors.ts";
import type { CrewDiagnosticEvent, DiagnosticCode, RoleSnapshot } from "./events.ts";
import type { CrewGraph, GraphRole } from "./graph.ts";
import type { HookRegistry } from "./hooks.ts";
import { correlationId, fixerStepAgentId } from "./ids.ts";
import type { JsonValue } from "./json.ts";
import type { CrewMemoryAdapter } from "./memory.ts";
import type { Task } from "./schema.ts";
import { attemptOf, fixerOf } from "./slots.ts";
import type { Slot } from "./slots.ts";
import type { CrewStatus, FaultKind } from "./snapshot.ts";

/** What a crew runs with; inner crews share everything but the graph, scope and root flag. */
export type MachineEnv = {
  graph: CrewGraph;
  clock: Clock;
  hooks: HookRegistry | undefined;
  memory: CrewMemoryAdapter | undefined;
  maxAttempts: number;
  scope: string;
  root: boolean;
};

/** What a root crew is given: the session options that `rootEnv` normalises. */
type RootEnvOptions = {
  crewId: string;
  graph: CrewGraph;
  clock: Clock;
  hooks?: HookRegistry | undefined;
  memory?: CrewMemoryAdapter | undefined;
  maxAttempts?: number | undefined;
};

/** The env of a root crew, with its options checked (shared by create, resume and the pure step). */
export function rootEnv(opts: RootEnvOptions): MachineEnv {
  if (typeof opts.crewId !== "string" || opts.crewId === "")
    throw new InvalidCrewInputError("crewId must be a non-empty string");
  const maxAttempts = opts.maxAttempts ?? 1;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new InvalidCrewInputError(`maxAttempts must be an integer ≥ 1, got ${maxAttempts}`);
  return {
    graph: opts.graph,
    clock: opts.clock,
    hooks: opts.hooks,
    memory: opts.memory,
    maxAttempts,
    scope: opts.crewId,
    root: true,
  };
}

/**
 * What one event did to a crew: `started` it, `resumed` it, `advanced` it (an answer filled its
 * slot, a tick timed steps out, a cancel cancelled), or changed nothing: a `duplicate` or `late`
 * answer, an answer to an `unknown` correlation id (each reported by a diagnostic), a tick with
 * nothing due (`not-due`), or an `ignored` event (a stream chunk, a cancel of an ended crew).
 */
export type StepLabel = "started" | "resumed" | "advanced" | "duplicate" | "late" | "unknown" | "not-due" | "ignored";

/** What to do on resume with steps that were in flight when the snapshot was taken. */
export type ResumePolicy = "await" | "reissue" | "fail";

/** Roles by name and their role snapshots, computed once per graph. */
type GraphIndex = { roles: Map<string, GraphRole>; snapshots: Map<string, RoleSnapshot> };

/** Where a correlation id this crew may have issued points: phase, slot, fixer trigger, attempt. */
export type HistoryEntry = { phase: number; slot: number; fixer: FaultKind | undefined; attempt: number };

/**
 * The working state of one crew: what its snapshot holds, in a form the transitions change in
 * place (slots tagged by kind, an inner crew as a state of its own inside its slot), plus caches
 * that are never stored (`byId`, `scanned`, `history`). Only the transition modules change it.
 */
export type CrewState = {
  readonly crewId: string;
  readonly env: MachineEnv;
  readonly ix: GraphIndex;
  status: CrewStatus;
  task: Task | undefined;
  phase: number;
  input: JsonValue;
  roundMs: number;
  slots: Slot[];
  /** How many slots await an answer or run an inner crew. */
  inflight: number;
  output: JsonValue;
  reason: string;
  code: string;
  /** Slot by awaited correlation id; filled as requests are emitted, or lazily after a load. */
  byId: Map<string, number> | undefined;
  /** How many slots the lazy `byId` has looked at. */
  scanned: number;
  /** Every correlation id the crew may have issued, built only when an answer is not awaited. */
  history: Map<string, HistoryEntry> | undefined;
};

const graphIndexes = new WeakMap<CrewGraph, GraphIndex>();

function indexGraph(graph: CrewGraph): GraphIndex {
  let ix = graphIndexes.get(graph);
  if (ix === undefined) {
    const roles = new Map(graph.roles.map((r) => [r.role, r]));
    const snapshots = new Map<string, RoleSnapshot>();
    for (const r of graph.roles) {
      const snap: RoleSnapshot = { role: r.role, capabilities: r.capabilities, permissions: r.permissions };
      if (r.system_prompt !== undefined) snap.system_prompt = r.system_prompt;
      snapshots.set(r.role, snap);
    }
    ix = { roles, snapshots };
    graphIndexes.set(graph, ix);
  }
  return ix;
}

/** A fresh, idle crew state. */
export function newCrewState(crewId: string, env: MachineEnv): CrewState {
  return {
    crewId,
    env,
    ix: indexGraph(env.graph),
    status: "idle",
    task: undefined,
    phase: 0,
    input: null,
    roundMs: 0,
    slots: [],
    inflight: 0,
    output: null,
    reason: "",
    code: "",
    byId: undefined,
    scanned: 0,
    history: undefined,
  };
}

/** The role of phase `phase` (default: the current phase). */
export function phaseRole(st: CrewState, phase = st.phase): GraphRole {
  return st.ix.roles.get(st.env.graph.phases[phase]!.role)!;
}

/** The role whose step slot `i` awaits: the phase role, or the fixer the slot went to. */
export function stepRole(st: CrewState, s: Slot): GraphRole {
  const fx = fixerOf(s);
  const role = phaseRole(st);
  return fx === undefined ? role : st.ix.roles.get(role.fixers[fx]!)!;
}

/** The step a slot is awaiting (or that produced its result): role, agent, correlation id. */
export function stepOf(
  st: CrewState,
  i: number,
  s: Slot,
): { role: GraphRole; agentId: string; correlationId: string; fixer: FaultKind | undefined } {
  const role = phaseRole(st);
  const agentId = role.agents[i]!;
  const fx = fixerOf(s);
  if (fx === undefined)
    return {
      role,
      agentId,
      correlationId: correlationId(st.crewId, st.phase, agentId, attemptOf(s)),
      fixer: undefined,
    };
  const fixer = st.ix.roles.get(role.fixers[fx]!)!;
  const fixerAgentId = fixer.agents[i % fixer.agents.length]!;
  return {
    role: fixer,
    agentId: fixerAgentId,
    correlationId: correlationId(st.crewId, st.phase, fixerStepAgentId(fixerAgentId, agentId), 1),
    fixer: fx,
  };
}

/** A `crew.diagnostic` event of this crew. */
export function diagnostic(st: CrewState, code: DiagnosticCode, message: string, cid?: string): CrewDiagnosticEvent {
  return {
    type: "crew.diagnostic",
    crewId: st.crewId,
    code,
    message,
    ...(cid === undefined ? {} : { correlationId: cid }),
  };
}

/** The error for an event delivered before `start`. */
export function notStarted(st: CrewState): SessionStateError {
  return new SessionStateError(
    `crew ${st.crewId} has not been started: call start(rootInput) before delivering events`,
  );
}
