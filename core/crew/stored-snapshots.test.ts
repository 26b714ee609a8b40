// Snapshots stored by earlier versions of the engine still load and step the same way. The fixture
// holds snapshots of schema 1.0 written by the engine as it was before slot states were tagged in
// memory (commit ce5a068): random crews from `crewConfigs` (nested ones, retries, fixers, timeouts,
// held messages, delegations and memory commands), two with hand-set slots (failed for good, a
// failed fixer step), each with the next event, the events that engine answered and its next snapshot.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { InboundCrewEvent, OutboundCrewEvent } from "./events.ts";
import { createInMemoryMemory } from "./memory.ts";
import { stepCrew, stepCrewMany } from "./step.ts";
import { configuredCrew } from "./test-kit.ts";
import type { CrewConfig } from "./test-kit.ts";

type StoredStep = {
  config: CrewConfig;
  nowMs: number;
  snapshot: { status: string; slots?: unknown[] };
  event: InboundCrewEvent;
  events: OutboundCrewEvent[];
  next: unknown;
};

const stored = JSON.parse(
  readFileSync(new URL("./fixtures/stored-snapshots-1.0.json", import.meta.url), "utf8"),
) as StoredStep[];

/** Every compact slot form in a list of slots, inner crews' included. */
function formsIn(slots: unknown[], acc = new Set<string>()): Set<string> {
  for (const s of slots) {
    if (s === 0) acc.add("0");
    else if (typeof s === "object" && s !== null && "n" in s)
      formsIn((s.n as { slots?: unknown[] }).slots ?? [], acc.add("n"));
    else
      acc.add(
        Object.keys(s as object)
          .sort()
          .join(","),
      );
  }
  return acc;
}

describe("snapshots stored by earlier versions", () => {
  it("cover every compact slot form", () => {
    const forms = new Set<string>();
    for (const r of stored) formsIn(r.snapshot.slots ?? [], forms);
    const every = ["0", "a", "e,fx", "a,e,fx", "n", "e,f", "a,e,f", "e,f,fx", "ok", "a,m,ok", "a,fx,msg,ok", "d,ok"];
    for (const form of [...every, "m,ok", "msg,ok", "x", "a,x", "a,fx,x"]) expect(forms, form).toContain(form);
    expect(new Set(stored.map((r) => r.snapshot.status))).toEqual(
      new Set(["running", "completed", "failed", "cancelled"]),
    );
  });

  it.each(stored.map((r, i) => [i, r.event.type, r] as const))(
    "#%i loads and saves back byte for byte, and a %s steps it as the earlier engine did",
    (_i, _type, r) => {
      const graph = configuredCrew(r.config);
      const env = { graph, nowMs: r.nowMs, memory: createInMemoryMemory() };
      expect(JSON.stringify(stepCrewMany(r.snapshot, [], env).snapshot)).toBe(JSON.stringify(r.snapshot));
      const [next, events] = stepCrew(r.snapshot, r.event, { ...env, memory: createInMemoryMemory() });
      expect(events).toEqual(r.events);
      expect(JSON.stringify(next)).toBe(JSON.stringify(r.next));
    },
  );
});
