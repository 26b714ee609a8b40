import { describe, expect, it } from "vitest";
import { UnknownCrewError } from "./errors.ts";
import type { AgentStepRequestedEvent, OutboundCrewEvent } from "./events.ts";
import { buildCrewGraph } from "./graph.ts";
import { createInMemoryMemory } from "./memory.ts";
import { completed, counts, drive, failed, persistentSession, requestsIn, role, shape, typesOf } from "./test-kit.ts";
import type { Answer } from "./test-kit.ts";

/** OUTER: lead → team ×2 (each runs MID) → lead. MID: squad ×2 (each runs INNER). INNER: worker ×2 voting majority. */
function threeLevels(isolation: "soft" | "hard", opts: { innerTimeout?: number; teamFixer?: boolean } = {}) {
  const inner = shape("INNER", [
    role("worker", {
      first_input: true,
      final_output: true,
      voting: "majority",
      ...(opts.innerTimeout ? { timeout_ms: opts.innerTimeout } : {}),
    }),
  ]);
  const mid = shape("MID", [
    role("squad", {
      first_input: true,
      final_output: true,
      nested_crew: { shape: inner, agents: counts("INNER", { worker: 2 }), memory_isolation: isolation },
    }),
  ]);
  return buildCrewGraph(
    shape("OUTER", [
      role("lead", { first_input: true, final_output: true }),
      role("team", {
        nested_crew: { shape: mid, agents: counts("MID", { squad: 2 }), memory_isolation: isolation },
        ...(opts.teamFixer ? { permissions: { escalate_to: ["medic"] } } : {}),
      }),
      ...(opts.teamFixer ? [role("medic", { activation: { on_fault: true } })] : []),
    ]),
    counts("OUTER", { lead: 1, team: 2, ...(opts.teamFixer ? { medic: 1 } : {}) }),
  );
}

const worker = (req: AgentStepRequestedEvent): Answer => {
  if (req.role === "lead") return { output: req.phaseIndex === 0 ? "brief" : { final: req.input } };
  return { output: `${req.crewId.split("/").slice(1, 2).join("")} says ${JSON.stringify(req.input)}` };
};

describe("nested crews", () => {
  it("run three levels deep: inner requests bubble out under derived crew ids, outputs bubble back up", () => {
    const { log, session } = drive({ graph: threeLevels("soft"), worker, resumeEveryStep: true });
    const innerIds = [...new Set(requestsIn(log).map((r) => r.crewId))];
    expect(innerIds).toEqual([
      "crew-1",
      "crew-1/team#0/squad#0",
      "crew-1/team#0/squad#1",
      "crew-1/team#1/squad#0",
      "crew-1/team#1/squad#1",
    ]);
    const started = log
      .filter((e) => e.type === "nested.crew.started")
      .map((e) => (e as { innerCrewId: string }).innerCrewId);
    expect(started).toEqual([
      "crew-1/team#0",
      "crew-1/team#0/squad#0",
      "crew-1/team#0/squad#1",
      "crew-1/team#1",
      "crew-1/team#1/squad#0",
      "crew-1/team#1/squad#1",
    ]);
    // only the root emits crew.* lifecycle events
    expect(
      log.filter((e) => e.type.startsWith("crew.") && e.type !== "crew.diagnostic").map((e) => `${e.type} ${e.crewId}`),
    ).toEqual(["crew.started crew-1", "crew.completed crew-1"]);
    expect(log.filter((e) => e.type === "nested.crew.completed")).toHaveLength(6);
    expect(session.status).toBe("completed");
    expect(log.at(-1)).toEqual({ type: "crew.completed", crewId: "crew-1", output: { final: 'team#0 says "brief"' } });
  });

  it("keep inner sessions inside the outer snapshot", () => {
    const s = persistentSession(threeLevels("soft"));
    const lead = requestsIn(s.start("q"))[0]!;
    const out = s.deliver(completed(lead, "brief"));
    expect(requestsIn(out)).toHaveLength(8);
    const snap = s.snapshot() as unknown as {
      slots: { n: { crewId: string; slots: { n: { crewId: string; slots: unknown[] } }[] } }[];
    };
    expect(snap.slots[1]!.n.crewId).toBe("crew-1/team#1");
    expect(snap.slots[1]!.n.slots[0]!.n).toMatchObject({
      crewId: "crew-1/team#1/squad#0",
      status: "running",
      slots: [0, 0],
    });
  });

  it("route deliveries by crew id, report answers to finished inner crews as late, refuse crews that cannot exist", () => {
    const s = persistentSession(threeLevels("soft"));
    const lead = requestsIn(s.start("q"))[0]!;
    const reqs = requestsIn(s.deliver(completed(lead, "brief")));
    const [w0, w1] = reqs.filter((r) => r.crewId === "crew-1/team#0/squad#0");
    s.deliver(completed(w0!, "x"));
    const done = s.deliver(completed(w1!, "x"));
    expect(done).toEqual([
      expect.objectContaining({ type: "vote.resolved", crewId: "crew-1/team#0/squad#0" }),
      expect.objectContaining({
        type: "nested.crew.completed",
        crewId: "crew-1/team#0",
        innerCrewId: "crew-1/team#0/squad#0",
        agentId: "squad#0",
        output: "x",
      }),
    ]);
    expect(s.deliver(completed(w1!, "again"))).toEqual([
      expect.objectContaining({ type: "crew.diagnostic", crewId: "crew-1/team#0/squad#0", code: "LATE_DELIVERY" }),
    ]);
    expect(() => s.deliver({ ...completed(w1!, "x"), crewId: "crew-1/team#7/squad#0" })).toThrow(UnknownCrewError);
    expect(() => s.deliver({ ...completed(w1!, "x"), crewId: "crew-1/lead#0" })).toThrow(UnknownCrewError);
  });

  it("cancel the whole tree: one crew.cancelled, hard forks dropped, later inner answers reported late", () => {
    const s = persistentSession(threeLevels("hard"), { memory: createInMemoryMemory });
    const lead = requestsIn(s.start("q"))[0]!;
    const reqs = requestsIn(s.deliver(completed(lead, "brief")));
    s.deliver(completed(reqs[0]!, "x", { memoryCommands: [{ op: "set", key: "k", value: 1 }] }));
    expect(Object.keys(s.snapshot().memory as object)).toContain("crew-1/team#0/squad#0");
    expect(s.cancel("stop")).toEqual([{ type: "crew.cancelled", crewId: "crew-1", reason: "stop" }]);
    expect(Object.keys(s.snapshot().memory as object)).toEqual([]);
    expect(s.deliver(completed(reqs[1]!, "x"))).toEqual([
      expect.objectContaining({ code: "LATE_DELIVERY", crewId: reqs[1]!.crewId }),
    ]);
  });

  it("time out inner steps on the root's tick", () => {
    const g = threeLevels("soft", { innerTimeout: 1_000 });
    const s = persistentSession(g);
    const lead = requestsIn(s.start("q"))[0]!;
    const reqs = requestsIn(s.deliver(completed(lead, "brief")));
    expect(s.session.nextDeadlineMs()).toBe(reqs[0]!.deadlineMs);
    const out = s.tick(reqs[0]!.deadlineMs!);
    expect(out.filter((e) => e.type === "agent.step.timed_out")).toHaveLength(8);
    expect(out.filter((e) => e.type === "nested.crew.failed").map((e) => (e as { code: string }).code)).toEqual([
      "NO_VALID_OUTPUT",
      "NO_VALID_OUTPUT",
      "NO_VALID_OUTPUT",
      "NO_VALID_OUTPUT",
      "NO_VALID_OUTPUT",
      "NO_VALID_OUTPUT",
    ]);
    expect(out.at(-1)).toMatchObject({ type: "crew.failed", code: "NO_VALID_OUTPUT", role: "team" });
  });

  it("send a failed inner crew's slot to the outer role's fixer", () => {
    const g = threeLevels("soft", { teamFixer: true });
    const { log } = drive({
      graph: g,
      worker: (r) => (r.crewId.startsWith("crew-1/team#1") ? { error: "inner broke" } : worker(r)),
    });
    const failedInner = log.find((e) => e.type === "nested.crew.failed" && e.crewId === "crew-1");
    expect(failedInner).toMatchObject({ innerCrewId: "crew-1/team#1", agentId: "team#1" });
    expect(log.find((e) => e.type === "fixer.invoked")).toMatchObject({
      failedAgentId: "team#1",
      fixerRole: "medic",
      reason: "fault",
    });
    expect(log.at(-1)).toMatchObject({ type: "crew.completed" });
  });
});

describe("nested memory isolation", () => {
  const memoryWorker = (req: AgentStepRequestedEvent): Answer => {
    if (req.role === "lead")
      return { output: req.phaseIndex === 0 ? "brief" : { sawAtEnd: req.memoryContext ?? null } };
    const where = req.crewId.split("/").slice(1).join("/");
    return {
      output: "same",
      memoryCommands: [
        { op: "set", key: where.replace("#", "").replace("/", "-").replace("#", ""), value: req.memoryContext ?? null },
      ],
    };
  };
  const final = (log: OutboundCrewEvent[]) =>
    (log.at(-1) as unknown as { output: { sawAtEnd: Record<string, unknown> } }).output.sawAtEnd;

  it("soft: inner crews read and write the root scope directly", () => {
    const { log } = drive({
      graph: threeLevels("soft"),
      worker: memoryWorker,
      memory: createInMemoryMemory,
      resumeEveryStep: true,
    });
    const seen = final(log);
    expect(Object.keys(seen).sort()).toEqual(["team0-squad0", "team0-squad1", "team1-squad0", "team1-squad1"]);
  });

  it("hard: each inner crew works on a fork; the parent sees the changes only after the phase settles, and a failed inner crew's changes are dropped", () => {
    const g = threeLevels("hard", { teamFixer: true });
    const s = persistentSession(g, { memory: createInMemoryMemory });
    const lead = requestsIn(s.start("q"))[0]!;
    const reqs = requestsIn(s.deliver(completed(lead, "brief")));
    const team0 = reqs.filter((r) => r.crewId.startsWith("crew-1/team#0/"));
    const team1 = reqs.filter((r) => r.crewId.startsWith("crew-1/team#1/"));
    for (const r of team0) s.deliver(completed(r, "ok", { memoryCommands: [{ op: "set", key: r.crewId, value: 1 }] }));
    // team#0 finished: its changes went up to its fork (crew-1/team#0), not to the root scope
    const memory = () => s.memory as ReturnType<typeof createInMemoryMemory>;
    expect(memory().entries("crew-1")).toEqual({});
    expect(Object.keys(memory().entries("crew-1/team#0"))).toEqual(["crew-1/team#0/squad#0", "crew-1/team#0/squad#1"]);
    // in team#1 one worker of each pair writes and the other fails: no majority, so every inner crew
    // of team#1 fails, its forks are dropped with their writes, and the medic takes its slot
    let last: OutboundCrewEvent[] = [];
    for (const r of team1)
      last = s.deliver(
        r.agentId === "worker#0"
          ? completed(r, "ok", { memoryCommands: [{ op: "set", key: r.crewId, value: "lost" }] })
          : failed(r),
      );
    expect(typesOf(last).slice(-2)).toEqual(["fixer.invoked", "agent.step.requested"]);
    expect(memory().entries("crew-1")).toEqual({});
    const closing = requestsIn(
      s.deliver(
        completed(requestsIn(last)[0]!, "medic output", { memoryCommands: [{ op: "set", key: "medic", value: true }] }),
      ),
    )[0]!;
    // merged on settle: team#0's changes and the medic's command; nothing of team#1
    expect(closing.memoryContext).toEqual({ "crew-1/team#0/squad#0": 1, "crew-1/team#0/squad#1": 1, medic: true });
    expect(Object.keys(s.snapshot().memory as object)).toEqual(["crew-1"]);
  });
});
