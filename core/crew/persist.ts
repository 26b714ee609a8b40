// Snapshot and resume: a crew state to its plain-JSON snapshot and back (no replay), and the
// resume policies for steps that were in flight when the snapshot was taken.

import type { Clock } from "./clock.ts";
import { SnapshotMismatchError, SnapshotVersionError } from "./errors.ts";
import type { OutboundCrewEvent, StepError } from "./events.ts";
import type { CrewGraph } from "./graph.ts";
import { graphFingerprint } from "./graph.ts";
import { innerCrewId } from "./ids.ts";
import type { HookRegistry } from "./hooks.ts";
import type { CrewState, MachineEnv, ResumePolicy } from "./machine.ts";
import { newCrewState, phaseRole, rootEnv } from "./machine.ts";
import type { CrewMemoryAdapter } from "./memory.ts";
import { checkInner, innerEnv } from "./inner.ts";
import { request, settleRound } from "./rounds.ts";
import { CREW_SCHEMA_VERSION } from "./schema.ts";
import { compactSlot, isAwaiting, readSlot } from "./slots.ts";
import type { CrewSnapshot, SlotState } from "./snapshot.ts";

/** What a root crew is loaded with (the snapshot gives its crew id and maxAttempts). */
type LoadOptions = {
  graph: CrewGraph;
  clock: Clock;
  hooks?: HookRegistry | undefined;
  memory?: CrewMemoryAdapter | undefined;
};

/**
 * The root crew state of a stored snapshot: checks its version and graph fingerprint, imports
 * its exported memory (if any) into `opts.memory`, and rebuilds the state without replay.
 */
export function openSnapshot(snapshot: unknown, opts: LoadOptions): CrewState {
  const snap = checkSnapshot(snapshot, opts.graph);
  const env = rootEnv({
    crewId: snap.crewId,
    graph: opts.graph,
    clock: opts.clock,
    hooks: opts.hooks,
    memory: opts.memory,
    maxAttempts: snap.maxAttempts ?? 1,
  });
  if (opts.memory !== undefined && snap.memory !== undefined) opts.memory.import(snap.crewId, snap.memory);
  return loadState(snap, snap.crewId, env);
}

/** A root snapshot whose envelope fits `graph`: a JSON object of this schema version, taken on this graph. */
function checkSnapshot(snapshot: unknown, graph: CrewGraph): CrewSnapshot {
  if (typeof snapshot !== "object" || snapshot === null || Array.isArray(snapshot)) {
    throw new SnapshotMismatchError(
      `a crew snapshot is a JSON object, got ${snapshot === null ? "null" : Array.isArray(snapshot) ? "an array" : typeof snapshot}`,
    );
  }
  const s = snapshot as Partial<CrewSnapshot> & { schema_version?: unknown };
  if (s.schema_version !== CREW_SCHEMA_VERSION) throw new SnapshotVersionError(s.schema_version, CREW_SCHEMA_VERSION);
  if (typeof s.crewId !== "string" || s.crewId === "") throw new SnapshotMismatchError("the snapshot has no crewId");
  const fp = graphFingerprint(graph);
  if (s.graph !== fp) {
    throw new SnapshotMismatchError(
      `snapshot of crew ${s.crewId} was taken on another graph (fingerprint ${JSON.stringify(s.graph)}, this graph of crew ${graph.name} is ${fp}); resume it with the graph it was started on`,
    );
  }
  if (s.maxAttempts !== undefined && (!Number.isInteger(s.maxAttempts) || s.maxAttempts < 1)) {
    throw new SnapshotMismatchError(`snapshot of crew ${s.crewId} has maxAttempts ${JSON.stringify(s.maxAttempts)}`);
  }
  return s as CrewSnapshot;
}

/** The snapshot of a crew state: plain JSON, inner crews inlined into their slots. */
export function saveState(st: CrewState): CrewSnapshot {
  // Built by assignment in a fixed key order (no object spreads: V8 copies every spread after
  // the first through a slow runtime path, and this runs on every step of a serverless shell).
  const snap = { schema_version: CREW_SCHEMA_VERSION, status: st.status, crewId: st.crewId } as Record<string, unknown>;
  if (st.env.root) snap.graph = graphFingerprint(st.env.graph);
  if (st.task !== undefined) snap.task = st.task;
  if (st.env.root && st.env.maxAttempts !== 1) snap.maxAttempts = st.env.maxAttempts;
  switch (st.status) {
    case "idle":
      break;
    case "running": {
      // tagged slot states in memory, the compact form in the snapshot
      const slots = new Array<SlotState>(st.slots.length);
      for (let i = 0; i < slots.length; i++) {
        const s = st.slots[i]!;
        slots[i] = s.kind === "nested" ? { n: saveState(s.inner) } : compactSlot(s);
      }
      snap.phase = st.phase;
      snap.input = st.input;
      snap.roundMs = st.roundMs;
      snap.slots = slots;
      break;
    }
    case "completed":
      snap.phase = st.phase;
      snap.output = st.output;
      break;
    case "failed":
      snap.phase = st.phase;
      snap.reason = st.reason;
      snap.code = st.code;
      break;
    case "cancelled":
      snap.phase = st.phase;
      snap.reason = st.reason;
      break;
  }
  if (st.env.root) {
    const memory = st.env.memory?.export(st.env.scope);
    if (memory !== undefined) snap.memory = memory;
  }
  return snap as CrewSnapshot;
}

/**
 * Rebuilds a crew state from a snapshot (already version-checked): compact slot states become
 * tagged ones, inner crews are rebuilt recursively. Never changes `snap` (only reads it).
 */
function loadState(snap: CrewSnapshot, crewId: string, env: MachineEnv): CrewState {
  const st = newCrewState(crewId, env);
  if (snap.crewId !== crewId) throw misfit(crewId, env, `it belongs to crew id ${JSON.stringify(snap.crewId)}`);
  st.task = snap.task;
  switch (snap.status) {
    case "idle":
      return st;
    case "completed":
    case "failed":
    case "cancelled":
      if (!isPhaseOf(env.graph, snap.phase))
        throw misfit(crewId, env, `phase ${JSON.stringify(snap.phase)} is not a phase of the graph`);
      st.status = snap.status;
      st.phase = snap.phase;
      if (snap.status === "completed") st.output = snap.output;
      else {
        st.reason = snap.reason;
        if (snap.status === "failed") st.code = snap.code;
      }
      return st;
    case "running": {
      if (!isPhaseOf(env.graph, snap.phase))
        throw misfit(crewId, env, `phase ${JSON.stringify(snap.phase)} is not a phase of the graph`);
      st.status = "running";
      st.phase = snap.phase;
      st.input = snap.input;
      st.roundMs = snap.roundMs;
      const role = phaseRole(st);
      if (!Array.isArray(snap.slots) || snap.slots.length !== role.agents.length) {
        throw misfit(
          crewId,
          env,
          `phase ${snap.phase} (${role.role}) has ${role.agents.length} agents but the snapshot has ${Array.isArray(snap.slots) ? snap.slots.length : "no"} slots`,
        );
      }
      st.slots = new Array(snap.slots.length);
      for (let i = 0; i < snap.slots.length; i++) {
        const c = snap.slots[i];
        const read = readSlot(c);
        if ("problem" in read) throw misfit(crewId, env, `slot ${i} holds ${JSON.stringify(c)}, which ${read.problem}`);
        if ("inner" in read) {
          if (role.nested === undefined)
            throw misfit(crewId, env, `slot ${i} runs an inner crew but role ${role.role} has no nested_crew`);
          const icid = innerCrewId(crewId, role.agents[i]!);
          const inner = loadState(read.inner as CrewSnapshot, icid, innerEnv(st, role, icid, false));
          if (inner.status !== "running")
            throw misfit(crewId, env, `slot ${i} holds an inner crew that is ${inner.status}`);
          st.slots[i] = { kind: "nested", inner };
          st.inflight++;
          continue;
        }
        const s = read.slot;
        if (s.kind !== "agent" && s.fixer !== undefined && role.fixers[s.fixer] === undefined)
          throw misfit(crewId, env, `slot ${i} went to a ${s.fixer} fixer but role ${role.role} has none`);
        if (isAwaiting(s)) st.inflight++;
        st.slots[i] = s;
      }
      return st;
    }
    default:
      throw misfit(crewId, env, `status ${JSON.stringify((snap as { status?: unknown }).status)} is unknown`);
  }
}

/** Applies a resume policy to the steps in flight (recursively into inner crews). */
export function applyPolicy(st: CrewState, out: OutboundCrewEvent[], policy: ResumePolicy, now: number): void {
  if (st.status !== "running" || policy === "await") return;
  if (policy === "reissue") st.roundMs = now;
  for (let i = 0; i < st.slots.length; i++) {
    const s = st.slots[i]!;
    if (s.kind === "nested") {
      applyPolicy(s.inner, out, policy, now);
      checkInner(st, out, i);
    } else if (isAwaiting(s)) {
      if (policy === "reissue") {
        request(st, out, i, s, true);
      } else {
        const error: StepError = {
          message: `the step was in flight when crew ${st.crewId} was resumed with policy "fail"`,
          code: "RESUMED_IN_FLIGHT",
        };
        const fixer = s.kind === "fixer" ? s.fixer : undefined;
        st.slots[i] = { kind: "failing", attempt: s.attempt, fixer, how: "fault", error };
        st.byId = undefined;
        st.inflight--;
      }
    }
  }
  if (st.status === "running" && st.inflight === 0) settleRound(st, out, now);
}

/** The error for a snapshot that does not fit the crew it is resumed on. */
function misfit(crewId: string, env: MachineEnv, what: string): SnapshotMismatchError {
  return new SnapshotMismatchError(`snapshot of crew ${crewId} does not fit crew ${env.graph.name}: ${what}`);
}

/** Whether `p` is the index of a phase of `graph`. */
function isPhaseOf(graph: CrewGraph, p: unknown): p is number {
  return Number.isInteger(p) && (p as number) >= 0 && (p as number) < graph.phases.length;
}
