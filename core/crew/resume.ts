// Resume: rebuild a session from a snapshot (no replay of history), apply a policy to the steps
// that were in flight, then deliver the events that arrived since.

import type { Clock } from "./clock.ts";
import type { OutboundCrewEvent } from "./events.ts";
import { parseInboundCrewEvent } from "./events.ts";
import type { CrewGraph } from "./graph.ts";
import type { HookRegistry } from "./hooks.ts";
import type { ResumePolicy } from "./machine.ts";
import type { CrewMemoryAdapter } from "./memory.ts";
import { openSnapshot } from "./persist.ts";
import type { CrewSession } from "./session.ts";
import { sessionOver } from "./session.ts";
import { advance, checkResumePolicy } from "./step.ts";

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
export function resumeCrewSession(
  snapshot: unknown,
  laterEvents: readonly unknown[],
  opts: ResumeOptions,
): { session: CrewSession; events: OutboundCrewEvent[] } {
  const policy = checkResumePolicy(opts.policy ?? "await");
  const st = openSnapshot(snapshot, opts);
  const events: OutboundCrewEvent[] = [];
  advance(st, events, { type: "crew.resume", crewId: st.crewId, policy });
  for (const raw of laterEvents) advance(st, events, parseInboundCrewEvent(raw));
  return { session: sessionOver(st), events };
}
