import { describe, expect, it } from "vitest";
import { buildCrewGraph } from "./graph.ts";
import { createInMemoryMemory } from "./memory.ts";
import { completed, persistentSession, requestsIn, role, roundTrip, shape } from "./test-kit.ts";

const graph = buildCrewGraph(
  shape("MEM", [role("scout", { first_input: true, amount: 2 }), role("writer", { final_output: true })]),
);

describe("memory in a session", () => {
  it("gives steps the scope's context and applies commands when the phase settles, in slot order", () => {
    const s = persistentSession(graph, { memory: createInMemoryMemory });
    const scouts = requestsIn(s.start("q"));
    expect(scouts[0]!.memoryContext).toBeUndefined();
    // slot 1 answers first, but slot 0's commands are applied first, so slot 1's value wins
    s.deliver(
      completed(scouts[1]!, "b", {
        memoryCommands: [
          { op: "set", key: "lead", value: "from slot 1" },
          { op: "set", key: "tmp", value: 1 },
        ],
      }),
    );
    const out = s.deliver(
      completed(scouts[0]!, "a", {
        memoryCommands: [
          { op: "set", key: "lead", value: "from slot 0" },
          { op: "set", key: "seen", value: ["x"] },
        ],
      }),
    );
    const writer = requestsIn(out)[0]!;
    expect(writer.memoryContext).toEqual({ lead: "from slot 1", seen: ["x"], tmp: 1 });
    const end = s.deliver(completed(writer, "report", { memoryCommands: [{ op: "delete", key: "tmp" }] }));
    expect(end.at(-1)).toMatchObject({ type: "crew.completed" });
    // the memory lives in the snapshot and comes back on resume
    expect(s.snapshot().memory).toEqual({
      "crew-1": {
        entries: [
          ["lead", "from slot 1"],
          ["seen", ["x"]],
        ],
      },
    });
  });

  it("drops memory commands with MEMORY_UNAVAILABLE when the session has no memory adapter", () => {
    const s = persistentSession(graph);
    const scouts = requestsIn(s.start("q"));
    s.deliver(completed(scouts[0]!, "a", { memoryCommands: [{ op: "set", key: "k", value: 1 }] }));
    const out = s.deliver(completed(scouts[1]!, "b"));
    expect(out[0]).toMatchObject({
      type: "crew.diagnostic",
      code: "MEMORY_UNAVAILABLE",
      message: expect.stringMatching(/scout#0 \(scout\) sent 1 memory command/),
    });
  });
});

describe("createInMemoryMemory", () => {
  it("forks a child scope, keeps the parent untouched until merge, and replays the child's changes on merge", () => {
    const m = createInMemoryMemory();
    m.apply("root", [
      { op: "set", key: "a", value: 1 },
      { op: "set", key: "b", value: 2 },
    ]);
    m.fork("root", "root/x#0");
    m.apply("root/x#0", [
      { op: "set", key: "a", value: 10 },
      { op: "delete", key: "b" },
      { op: "set", key: "c", value: 3 },
    ]);
    expect(m.context("root", "r", "r#0")).toEqual({ a: 1, b: 2 });
    expect(m.context("root/x#0", "r", "r#0")).toEqual({ a: 10, c: 3 });
    m.merge("root/x#0", "root");
    expect(m.context("root", "r", "r#0")).toEqual({ a: 10, c: 3 });
    expect(m.context("root/x#0", "r", "r#0")).toBeUndefined();
  });

  it("discards a child scope without touching the parent", () => {
    const m = createInMemoryMemory();
    m.apply("root", [{ op: "set", key: "a", value: 1 }]);
    m.fork("root", "root/x#0");
    m.apply("root/x#0", [{ op: "set", key: "a", value: 99 }]);
    m.discard("root/x#0");
    expect(m.entries("root")).toEqual({ a: 1 });
    expect(m.entries("root/x#0")).toEqual({});
  });

  it("exports a scope with its children as JSON and imports it into a fresh adapter", () => {
    const m = createInMemoryMemory();
    m.apply("root", [{ op: "set", key: "__proto__", value: "kept as data" }]);
    m.fork("root", "root/x#0");
    m.apply("root/x#0", [{ op: "set", key: "n", value: 1 }]);
    m.apply("other", [{ op: "set", key: "z", value: 0 }]);
    const data = roundTrip(m.export("root"));
    expect(Object.keys(data as object)).toEqual(["root", "root/x#0"]);
    const fresh = createInMemoryMemory();
    fresh.import("root", data);
    fresh.merge("root/x#0", "root");
    expect(fresh.entries("root")).toEqual({ ["__proto__"]: "kept as data", n: 1 });
    expect(Object.getPrototypeOf(fresh.context("root", "r", "r#0"))).toBe(Object.prototype);
  });
});
