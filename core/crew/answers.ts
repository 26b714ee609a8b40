// Answers: an agent's completed or failed step fills its slot; an answer nobody awaits is
// classified (duplicate, late, unknown) and reported as a diagnostic, never a state change.

import type {
  AgentStepCompletedEvent,
  AgentStepFailedEvent,
  CrewDiagnosticEvent,
  OutboundCrewEvent,
} from "./events.ts";
import { correlationId, fixerStepAgentId } from "./ids.ts";
import type { CrewState, HistoryEntry, StepLabel } from "./machine.ts";
import { diagnostic, notStarted, phaseRole, stepOf } from "./machine.ts";
import { settleRound } from "./rounds.ts";
import { attemptOf, capStepError, doneSlot, fixerOf, isAwaiting, isTimeout } from "./slots.ts";

/**
 * Fills the slot awaiting the answer's correlation id and settles the round once nothing is in
 * flight (`advanced`); an answer nobody awaits becomes a diagnostic and is labelled by it.
 */
export function answer(
  st: CrewState,
  out: OutboundCrewEvent[],
  ev: AgentStepCompletedEvent | AgentStepFailedEvent,
): StepLabel {
  if (st.status === "idle") throw notStarted(st);
  const slot = st.status === "running" ? lookup(st, ev.correlationId) : undefined;
  if (slot === undefined) {
    const d = classify(st, ev.correlationId);
    out.push(d);
    return d.code === "DUPLICATE_DELIVERY" ? "duplicate" : d.code === "LATE_DELIVERY" ? "late" : "unknown";
  }
  const s = st.slots[slot]!;
  const attempt = attemptOf(s);
  const fixer = fixerOf(s);
  if (ev.type === "agent.step.completed") {
    st.slots[slot] = doneSlot(ev.output, attempt, fixer, ev);
  } else {
    st.slots[slot] = { kind: "failing", attempt, fixer, how: "fault", error: capStepError(ev.error) };
  }
  st.byId!.delete(ev.correlationId);
  st.inflight--;
  if (ev.type === "agent.step.completed") st.env.hooks?.run("afterStepCompleted", { crewId: st.crewId, event: ev });
  if (st.inflight === 0) settleRound(st, out, st.env.clock.now());
  return "advanced";
}

/**
 * The slot awaiting `cid`, via a map that is never stored: filled as requests are emitted, and
 * after a load filled lazily, slot by slot, only as far as needed to find `cid`.
 */
function lookup(st: CrewState, cid: string): number | undefined {
  if (st.byId === undefined) {
    st.byId = new Map();
    st.scanned = 0;
  }
  const hit = st.byId.get(cid);
  if (hit !== undefined || st.scanned >= st.slots.length) return hit;
  while (st.scanned < st.slots.length) {
    const i = st.scanned++;
    const s = st.slots[i]!;
    if (!isAwaiting(s)) continue;
    const id = stepOf(st, i, s).correlationId;
    st.byId.set(id, i);
    if (id === cid) return i;
  }
  return undefined;
}

/** Why an answer is not awaited: a duplicate, a late answer, or an id this crew never issued. */
function classify(st: CrewState, cid: string): CrewDiagnosticEvent {
  const entry = historyIndex(st).get(cid);
  if (entry === undefined) {
    return diagnostic(
      st,
      "UNKNOWN_CORRELATION",
      `crew ${st.crewId} never requested a step with correlationId ${cid}; the answer was ignored`,
      cid,
    );
  }
  const role = phaseRole(st, entry.phase);
  const who = `${role.agents[entry.slot]}${entry.fixer === undefined ? ` attempt ${entry.attempt}` : ` (${entry.fixer} fixer step)`} in phase ${entry.phase} (${role.role})`;
  if (st.status !== "running")
    return diagnostic(st, "LATE_DELIVERY", `crew ${st.crewId} is ${st.status}; the answer for ${who} was ignored`, cid);
  if (entry.phase < st.phase)
    return diagnostic(
      st,
      "LATE_DELIVERY",
      `phase ${entry.phase} (${role.role}) has already resolved; the answer for ${who} was ignored`,
      cid,
    );
  const s = st.slots[entry.slot]!;
  const same = fixerOf(s) === entry.fixer && (entry.fixer !== undefined || attemptOf(s) === entry.attempt);
  if (same && s.kind === "ok")
    return diagnostic(st, "DUPLICATE_DELIVERY", `${who} was already answered; the duplicate was ignored`, cid);
  if (same && (s.kind === "failing" || s.kind === "failed")) {
    if (isTimeout(s.error))
      return diagnostic(st, "LATE_DELIVERY", `${who} had already timed out; the answer was ignored`, cid);
    return diagnostic(st, "DUPLICATE_DELIVERY", `${who} was already answered (failed); the duplicate was ignored`, cid);
  }
  const fx = fixerOf(s);
  if (entry.fixer === undefined && fx !== undefined && attemptOf(s) === entry.attempt) {
    // the agent step whose failure or timeout sent this slot to a fixer
    if (fx === "stall")
      return diagnostic(
        st,
        "LATE_DELIVERY",
        `${who} had already timed out and was handed to a fixer; the answer was ignored`,
        cid,
      );
    return diagnostic(
      st,
      "DUPLICATE_DELIVERY",
      `${who} was already answered (failed) and handed to a fixer; the duplicate was ignored`,
      cid,
    );
  }
  return diagnostic(st, "LATE_DELIVERY", `${who} was superseded by a retry; the answer was ignored`, cid);
}

/** Every correlation id this crew may have issued up to the current phase (built only when an answer is not awaited). */
function historyIndex(st: CrewState): Map<string, HistoryEntry> {
  if (st.history !== undefined) return st.history;
  const map = new Map<string, HistoryEntry>();
  for (let p = 0; p <= st.phase; p++) {
    const role = phaseRole(st, p);
    role.agents.forEach((agentId, slot) => {
      if (role.nested === undefined) {
        for (let attempt = 1; attempt <= st.env.maxAttempts; attempt++) {
          map.set(correlationId(st.crewId, p, agentId, attempt), { phase: p, slot, fixer: undefined, attempt });
        }
      }
      for (const fx of ["fault", "stall"] as const) {
        const fixerName = role.fixers[fx];
        if (fixerName === undefined) continue;
        const fixer = st.ix.roles.get(fixerName)!;
        const fixerAgentId = fixer.agents[slot % fixer.agents.length]!;
        const cid = correlationId(st.crewId, p, fixerStepAgentId(fixerAgentId, agentId), 1);
        if (!map.has(cid)) map.set(cid, { phase: p, slot, fixer: fx, attempt: 1 });
      }
    });
  }
  st.history = map;
  return map;
}
