import { describe, expect, it } from "vitest";
import { canonicalize } from "./canonical.ts";
import { CrewShapeError } from "./errors.ts";
import { buildCrewGraph, graphFingerprint } from "./graph.ts";
import { counts, researchCrew, role, roundTrip, shape } from "./test-kit.ts";

describe("buildCrewGraph", () => {
  it("runs the seed crew as caller → merc → caller with stable agent ids and the fixer resolved", () => {
    const { shape: s, counts: c } = researchCrew(4);
    const g = buildCrewGraph(s, c);
    expect(g.phases).toEqual([
      { index: 0, role: "caller" },
      { index: 1, role: "merc" },
      { index: 2, role: "caller" },
    ]);
    expect(g.entryRole).toBe("caller");
    expect(g.finalRole).toBe("caller");
    expect(g.fixerRoles).toEqual(["fixer"]);
    const merc = g.roles.find((r) => r.role === "merc")!;
    expect(merc.agents).toEqual(["merc#0", "merc#1", "merc#2", "merc#3"]);
    expect(merc.fixers).toEqual({ fault: "fixer", stall: "fixer" });
    // the caller lists no escalate_to: it falls back to the crew's first fixer with each trigger
    expect(g.roles.find((r) => r.role === "caller")!.fixers).toEqual({ fault: "fixer", stall: "fixer" });
    expect(g.roles.find((r) => r.role === "fixer")!.fixers).toEqual({});
    expect(merc.voting).toBe("first_valid");
    expect(merc.system_prompt).toMatch(/research operative/);
  });

  it("puts the entry role first and a separate final role last, whatever their declaration order", () => {
    const g = buildCrewGraph(
      shape("C", [role("report", { final_output: true }), role("b"), role("intake", { first_input: true }), role("c")]),
    );
    expect(g.phases.map((p) => p.role)).toEqual(["intake", "b", "c", "report"]);
  });

  it("runs an entry role that is also final once when no other phase runs between", () => {
    expect(buildCrewGraph(shape("C", [role("judge", { first_input: true, final_output: true })])).phases).toEqual([
      { index: 0, role: "judge" },
    ]);
    expect(
      buildCrewGraph(shape("C", [role("a", { first_input: true, final_output: true }), role("b")])).phases.map(
        (p) => p.role,
      ),
    ).toEqual(["a", "b", "a"]);
  });

  it("takes counts over the shape's amount, and 1 when neither says", () => {
    const g = buildCrewGraph(
      shape("C", [
        role("a", { first_input: true, amount: 3 }),
        role("b", { amount: 2 }),
        role("c", { final_output: true }),
      ]),
      counts("C", { a: 5 }),
    );
    expect(g.roles.map((r) => r.agents.length)).toEqual([5, 2, 1]);
  });

  it("escalates each role to the first fixer in its escalate_to with the right trigger", () => {
    const g = buildCrewGraph(
      shape("C", [
        role("a", {
          first_input: true,
          final_output: true,
          permissions: { escalate_to: ["stallfix", "faultfix", "both"] },
        }),
        role("faultfix", { activation: { on_fault: true } }),
        role("stallfix", { activation: { on_stall: true } }),
        role("both", { activation: { on_fault: true, on_stall: true } }),
      ]),
    );
    expect(g.roles[0]!.fixers).toEqual({ fault: "faultfix", stall: "stallfix" });
  });

  it("is plain JSON and identical for the same documents", () => {
    const c = researchCrew(3);
    const g = buildCrewGraph(c.shape, c.counts);
    expect(roundTrip(g)).toEqual(g);
    expect(canonicalize(buildCrewGraph(researchCrew(3).shape, researchCrew(3).counts))).toBe(canonicalize(g));
    expect(graphFingerprint(roundTrip(g))).toBe(graphFingerprint(g));
    expect(graphFingerprint(buildCrewGraph(researchCrew(2).shape, researchCrew(2).counts))).not.toBe(
      graphFingerprint(g),
    );
  });

  it("throws CrewShapeError carrying every lint issue", () => {
    const c = researchCrew(2);
    c.shape.roles[1]!.permissions!.escalate_to = ["fixr"];
    delete c.shape.roles[0]!.final_output;
    try {
      buildCrewGraph(c.shape, c.counts);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(CrewShapeError);
      const err = e as CrewShapeError;
      expect(err.code).toBe("CREW_SHAPE_INVALID");
      expect(err.issues.map((i) => i.code)).toEqual(["UNKNOWN_ROLE_REFERENCE", "NO_FINAL_ROLE"]);
      expect(err.message).toMatch(/role 'merc' escalates to 'fixr'/);
    }
  });

  it("materialises nested crews recursively", () => {
    const inner = shape("INNER", [role("x", { first_input: true, final_output: true })]);
    const g = buildCrewGraph(
      shape("OUTER", [
        role("a", {
          first_input: true,
          final_output: true,
          nested_crew: { shape: inner, agents: counts("INNER", { x: 2 }), memory_isolation: "hard" },
        }),
      ]),
    );
    expect(g.roles[0]!.nested?.memory_isolation).toBe("hard");
    expect(g.roles[0]!.nested?.graph.roles[0]!.agents).toEqual(["x#0", "x#1"]);
  });
});
