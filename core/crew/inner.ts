// Nested crews: each agent of a `nested_crew` role runs an inner crew of its own, kept inside
// its parent's slot; events addressed to `${crewId}/${agentId}/…` are routed down to it, and its
// end fills (or fails) the slot.

import { UnknownCrewError } from "./errors.ts";
import type { InboundCrewEvent, OutboundCrewEvent } from "./events.ts";
import type { CrewGraph, GraphRole } from "./graph.ts";
import { innerCrewId } from "./ids.ts";
import type { CrewState, MachineEnv, StepLabel } from "./machine.ts";
import { newCrewState, notStarted, phaseRole } from "./machine.ts";
import { begin, deliver } from "./entry.ts";
import { capStepError, doneSlot } from "./slots.ts";
import { settleRound } from "./rounds.ts";

/** The env of the inner crew `icid` of a nested-crew role; with hard isolation, `fork` forks its memory scope. */
export function innerEnv(st: CrewState, role: GraphRole, icid: string, fork: boolean): MachineEnv {
  const nested = role.nested!;
  const hard = nested.memory_isolation === "hard";
  if (hard && fork) st.env.memory?.fork(st.env.scope, icid);
  const { clock, hooks, memory, maxAttempts } = st.env;
  return { graph: nested.graph, clock, hooks, memory, maxAttempts, scope: hard ? icid : st.env.scope, root: false };
}

/** Starts the inner crew of slot `i` on the phase input. */
export function startInner(st: CrewState, out: OutboundCrewEvent[], role: GraphRole, i: number, now: number): void {
  const agentId = role.agents[i]!;
  const icid = innerCrewId(st.crewId, agentId);
  const inner = newCrewState(icid, innerEnv(st, role, icid, true));
  st.slots[i] = { kind: "nested", inner };
  st.inflight++;
  out.push({
    type: "nested.crew.started",
    crewId: st.crewId,
    phaseIndex: st.phase,
    role: role.role,
    agentId,
    innerCrewId: icid,
    memoryIsolation: role.nested!.memory_isolation,
  });
  begin(inner, out, st.input, undefined, now);
  checkInner(st, out, i);
}

/** After an inner crew moved: if it ended, fill (or fail) its slot. Does not settle the round. */
export function checkInner(st: CrewState, out: OutboundCrewEvent[], i: number): void {
  const s = st.slots[i]!;
  if (s.kind !== "nested" || s.inner.status === "running") return;
  const inner = s.inner;
  const role = phaseRole(st);
  const agentId = role.agents[i]!;
  const base = { crewId: st.crewId, phaseIndex: st.phase, role: role.role, agentId, innerCrewId: inner.crewId };
  if (inner.status === "completed") {
    st.slots[i] = doneSlot(inner.output, 1, undefined);
    out.push({ type: "nested.crew.completed", ...base, output: inner.output });
  } else {
    const code = inner.code || "INNER_CREW_FAILED";
    const message = `inner crew ${inner.crewId} ${inner.status}: ${inner.reason}`;
    st.slots[i] = {
      kind: "failing",
      attempt: 1,
      fixer: undefined,
      how: "fault",
      error: capStepError({ message, code }),
    };
    out.push({ type: "nested.crew.failed", ...base, reason: inner.reason, code });
    if (role.nested!.memory_isolation === "hard") st.env.memory?.discard(inner.crewId);
  }
  st.inflight--;
}

/** Delivers an event addressed below this crew to the inner crew it names (a late answer for an ended one is a diagnostic); says what it did. */
export function routeInner(st: CrewState, out: OutboundCrewEvent[], ev: InboundCrewEvent): StepLabel {
  const prefix = `${st.crewId}/`;
  if (!ev.crewId.startsWith(prefix)) throw new UnknownCrewError(ev.crewId, st.crewId);
  if (st.status === "idle") throw notStarted(st);
  const rest = ev.crewId.slice(prefix.length);
  const agentId = rest.split("/", 1)[0]!;
  if (st.status === "running") {
    const role = phaseRole(st);
    const slot = role.nested === undefined ? -1 : role.agents.indexOf(agentId);
    const s = slot < 0 ? undefined : st.slots[slot];
    if (s?.kind === "nested") {
      const label = deliver(s.inner, out, ev);
      checkInner(st, out, slot);
      if (st.status === "running" && st.inflight === 0)
        settleRound(st, out, ev.type === "crew.tick" ? ev.nowMs : st.env.clock.now());
      return label;
    }
  }
  if (!isInnerPath(st.env.graph, rest)) throw new UnknownCrewError(ev.crewId, st.crewId);
  if (ev.type === "agent.step.completed" || ev.type === "agent.step.failed") {
    out.push({
      type: "crew.diagnostic",
      crewId: ev.crewId,
      code: "LATE_DELIVERY",
      message: `inner crew ${ev.crewId} is no longer running; the answer was ignored`,
      correlationId: ev.correlationId,
    });
    return "late";
  }
  return ev.type === "crew.tick" ? "not-due" : "ignored";
}

/** Whether `path` (`agentId/agentId/…` below a crew) names an inner crew the graph can run. */
function isInnerPath(graph: CrewGraph, path: string): boolean {
  const [head, ...tail] = path.split("/");
  const hash = head!.lastIndexOf("#");
  if (hash <= 0) return false;
  const role = graph.roles.find((r) => r.role === head!.slice(0, hash));
  if (role?.nested === undefined || !role.agents.includes(head!)) return false;
  return tail.length === 0 || isInnerPath(role.nested.graph, tail.join("/"));
}
