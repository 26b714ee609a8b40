// Resume: rebuild a session from a snapshot (no replay of history), apply a policy to the steps
// that were in flight, then deliver the events that arrived since.

import type { Clock } from "./clock.ts";
import { InvalidCrewInputError, SnapshotMismatchError, SnapshotVersionError } from "./errors.ts";
import type { OutboundCrewEvent } from "./events.ts";
import { parseInboundCrewEvent } from "./events.ts";
import type { CrewGraph } from "./graph.ts";
import { graphFingerprint } from "./graph.ts";
import type { HookRegistry } from "./hooks.ts";
import { CrewMachine } from "./machine.ts";
import type { ResumePolicy } from "./machine.ts";
import type { CrewMemoryAdapter } from "./memory.ts";
import { CREW_SCHEMA_VERSION } from "./schema.ts";
import type { CrewSession } from "./session.ts";
import { machineEnv, wrapMachine } from "./session.ts";
import type { CrewSnapshot } from "./snapshot.ts";

export type { ResumePolicy } from "./machine.ts";

/** What a resumed session runs with; `policy` says what to do with steps in flight at snapshot time (default `await`). */
export type ResumeOptions = {
  graph: CrewGraph;
  clock: Clock;
  hooks?: HookRegistry;
  /** The memory adapter; the snapshot's exported memory (if any) is imported into it. */
  memory?: CrewMemoryAdapter;
  /** `await`: keep waiting for their answers; `reissue`: emit their requests again (same correlationIds, fresh deadlines); `fail`: treat them as failed (retry/fixer routing). */
  policy?: ResumePolicy;
};

/** Rebuilds a session from a snapshot and delivers `laterEvents`; returns the session and every event caused. */
export function resumeCrewSession(snapshot: unknown, laterEvents: readonly unknown[], opts: ResumeOptions): { session: CrewSession; events: OutboundCrewEvent[] } {
  const policy = opts.policy ?? "await";
  if (policy !== "await" && policy !== "reissue" && policy !== "fail") {
    throw new InvalidCrewInputError(`resume policy must be "await", "reissue" or "fail", got ${JSON.stringify(policy)}`);
  }
  const snap = checkSnapshot(snapshot, opts.graph);
  const maxAttempts = snap.maxAttempts ?? 1;
  const env = machineEnv({ crewId: snap.crewId, graph: opts.graph, clock: opts.clock, hooks: opts.hooks, memory: opts.memory, maxAttempts });
  if (opts.memory !== undefined && snap.memory !== undefined) opts.memory.import(snap.crewId, snap.memory);
  const machine = CrewMachine.fromSnapshot(snap, snap.crewId, env);
  const events: OutboundCrewEvent[] = [];
  machine.applyPolicy(events, policy, opts.clock.now());
  for (const raw of laterEvents) machine.deliver(events, parseInboundCrewEvent(raw));
  return { session: wrapMachine(machine), events };
}

function checkSnapshot(snapshot: unknown, graph: CrewGraph): CrewSnapshot {
  if (typeof snapshot !== "object" || snapshot === null || Array.isArray(snapshot)) {
    throw new SnapshotMismatchError(`a crew snapshot is a JSON object, got ${snapshot === null ? "null" : Array.isArray(snapshot) ? "an array" : typeof snapshot}`);
  }
  const s = snapshot as Partial<CrewSnapshot> & { schema_version?: unknown };
  if (s.schema_version !== CREW_SCHEMA_VERSION) throw new SnapshotVersionError(s.schema_version, CREW_SCHEMA_VERSION);
  if (typeof s.crewId !== "string" || s.crewId === "") throw new SnapshotMismatchError("the snapshot has no crewId");
  const fp = graphFingerprint(graph);
  if (s.graph !== fp) {
    throw new SnapshotMismatchError(`snapshot of crew ${s.crewId} was taken on another graph (fingerprint ${JSON.stringify(s.graph)}, this graph of crew ${graph.name} is ${fp}); resume it with the graph it was started on`);
  }
  if (s.maxAttempts !== undefined && (!Number.isInteger(s.maxAttempts) || s.maxAttempts < 1)) {
    throw new SnapshotMismatchError(`snapshot of crew ${s.crewId} has maxAttempts ${JSON.stringify(s.maxAttempts)}`);
  }
  return s as CrewSnapshot;
}
