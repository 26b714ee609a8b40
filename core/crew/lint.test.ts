import { describe, expect, it } from "vitest";
import { lintCrewShape } from "./lint.ts";
import type { CrewLintCode } from "./lint.ts";
import { CrewAgentsSchema, CrewShapeSchema } from "./schema.ts";
import { counts, researchCrew, role, shape } from "./test-kit.ts";

const seed = researchCrew(4);

describe("schemas", () => {
  it("parse the seed README's Quick Start documents and apply defaults", () => {
    const parsed = CrewShapeSchema.parse(seed.shape);
    expect(parsed.roles.map((r) => r.role)).toEqual(["caller", "merc", "fixer"]);
    expect(parsed.roles[1]!.capabilities.model).toBe("claude-sonnet-4-6");
    expect(CrewAgentsSchema.parse(seed.counts).agents).toHaveLength(3);
    const minimal = CrewShapeSchema.parse(
      shape("C", [{ role: "a", capabilities: { thinking_allowed: false }, permissions: {} } as never]),
    );
    expect(minimal.roles[0]!.permissions).toEqual({ talk_to: [], delegate_to: [], escalate_to: [], invite: [] });
  });

  it("keep unknown capability keys for the worker but refuse unknown role keys", () => {
    const ok = CrewShapeSchema.parse(
      shape("C", [role("a", { first_input: true, capabilities: { thinking_allowed: true, temperature: 0.2 } })]),
    );
    expect(ok.roles[0]!.capabilities.temperature).toBe(0.2);
    const typo = CrewShapeSchema.safeParse(
      shape("C", [{ ...role("a", { first_input: true }), activaton: { on_fault: true } } as never]),
    );
    expect(typo.success).toBe(false);
  });
});

type Case = { name: string; shape: unknown; counts?: unknown; code: CrewLintCode; path: string; message?: RegExp };

const base = () => researchCrew(2);
const mutate = (f: (s: ReturnType<typeof base>["shape"]) => void) => {
  const c = base();
  f(c.shape);
  return c.shape;
};

const cyclic = shape("OUTER", [role("a", { first_input: true, final_output: true })]);
(cyclic.roles[0] as { nested_crew?: unknown }).nested_crew = {
  shape: cyclic,
  agents: counts("OUTER", { a: 1 }),
  memory_isolation: "soft",
};

const cases: Case[] = [
  {
    name: "an escalation target that is not a role",
    shape: mutate((s) => (s.roles[1]!.permissions!.escalate_to = ["fixr"])),
    code: "UNKNOWN_ROLE_REFERENCE",
    path: "roles[1].permissions.escalate_to[0]",
    message:
      /^role 'merc' escalates to 'fixr', which is not a role of crew RESEARCH_CREW; roles are: caller, merc, fixer$/,
  },
  {
    name: "a talk_to target that is not a role",
    shape: mutate((s) => (s.roles[0]!.permissions!.talk_to = ["boss"])),
    code: "UNKNOWN_ROLE_REFERENCE",
    path: "roles[0].permissions.talk_to[0]",
    message: /role 'caller' talks to 'boss'/,
  },
  {
    name: "no entry role",
    shape: mutate((s) => delete s.roles[0]!.first_input),
    code: "NO_ENTRY_ROLE",
    path: "roles",
    message: /first_input/,
  },
  {
    name: "two entry roles",
    shape: mutate((s) => (s.roles[1]!.first_input = true)),
    code: "MULTIPLE_ENTRY_ROLES",
    path: "roles[1].first_input",
    message: /caller, merc/,
  },
  {
    name: "two final roles",
    shape: mutate((s) => (s.roles[1]!.final_output = true)),
    code: "MULTIPLE_FINAL_ROLES",
    path: "roles[1].final_output",
  },
  {
    name: "a duplicated role",
    shape: mutate((s) => s.roles.push(role("merc"))),
    code: "DUPLICATE_ROLE",
    path: "roles[3].role",
    message: /declared twice/,
  },
  {
    name: "a second fixer no role routes to",
    shape: mutate((s) => s.roles.push(role("spare", { activation: { on_fault: true } }))),
    code: "FIXER_UNREACHABLE",
    path: "roles[3]",
    message:
      /fixer role 'spare' can never be invoked: no phase role of crew RESEARCH_CREW lists it in permissions.escalate_to \(phase roles: caller, merc\)/,
  },
  {
    name: "no final role",
    shape: mutate((s) => delete s.roles[0]!.final_output),
    code: "NO_FINAL_ROLE",
    path: "roles",
    message: /crew RESEARCH_CREW has no final role: mark exactly one phase role with "final_output": true/,
  },
  {
    name: "an escalation to a role that is not a fixer",
    shape: mutate((s) => (s.roles[1]!.permissions!.escalate_to = ["caller", "fixer"])),
    code: "ESCALATE_TO_NON_FIXER",
    path: "roles[1].permissions.escalate_to[0]",
    message:
      /^role 'merc' escalates to 'caller', which is not a fixer \(it has no "activation"\).*fixers of crew RESEARCH_CREW: fixer\)$/,
  },
  {
    name: "an escalation to itself",
    shape: mutate((s) => (s.roles[2]!.permissions!.escalate_to = ["fixer"])),
    code: "ESCALATE_TO_SELF",
    path: "roles[2].permissions.escalate_to[0]",
    message: /role 'fixer' escalates to itself/,
  },
  {
    name: "a delegation without talk_to",
    shape: mutate((s) => (s.roles[2]!.permissions!.talk_to = ["caller"])),
    code: "DELEGATE_WITHOUT_TALK",
    path: "roles[2].permissions.delegate_to[0]",
    message:
      /^role 'fixer' delegates to 'merc' but may not talk to it; add 'merc' to its permissions.talk_to \(talk_to: caller\)$/,
  },
  {
    name: "an activation without trigger",
    shape: mutate((s) => (s.roles[2]!.activation = {})),
    code: "ACTIVATION_WITHOUT_TRIGGER",
    path: "roles[2].activation",
  },
  {
    name: "a fixer as entry role",
    shape: mutate((s) => (s.roles[0]!.activation = { on_fault: true })),
    code: "FIXER_AS_ENTRY_OR_FINAL",
    path: "roles[0].activation",
  },
  {
    name: "a crew of fixers only",
    shape: shape("F", [role("f", { activation: { on_fault: true } })]),
    code: "NO_PHASES",
    path: "roles",
  },
  {
    name: "a count above max_allowed",
    shape: base().shape,
    counts: counts("RESEARCH_CREW", { caller: 1, merc: 2, fixer: 2 }),
    code: "COUNT_EXCEEDS_MAX_ALLOWED",
    path: "counts.agents[2].amount",
    message: /counts give role 'fixer' of crew RESEARCH_CREW 2 agents, but its max_allowed is 1/,
  },
  {
    name: "a shape amount above max_allowed",
    shape: mutate((s) => (s.roles[2]!.amount = 3)),
    code: "COUNT_EXCEEDS_MAX_ALLOWED",
    path: "roles[2].amount",
  },
  {
    name: "a count for an unknown role",
    shape: base().shape,
    counts: counts("RESEARCH_CREW", { caller: 1, merc: 2, mrc: 1 }),
    code: "COUNT_FOR_UNKNOWN_ROLE",
    path: "counts.agents[2].role",
    message: /role 'mrc', which is not a role of crew RESEARCH_CREW; roles are: caller, merc, fixer/,
  },
  {
    name: "a role counted twice",
    shape: base().shape,
    counts: {
      schema_version: "1.0",
      name: "RESEARCH_CREW",
      agents: [
        { role: "merc", amount: 1 },
        { role: "merc", amount: 2 },
        { role: "caller", amount: 1 },
      ],
    },
    code: "DUPLICATE_COUNT",
    path: "counts.agents[1].role",
  },
  {
    name: "counts of another crew",
    shape: base().shape,
    counts: counts("OTHER", { caller: 1 }),
    code: "CREW_NAME_MISMATCH",
    path: "counts.name",
  },
  {
    name: "a role with zero agents",
    shape: base().shape,
    counts: counts("RESEARCH_CREW", { caller: 1, merc: 0, fixer: 1 }),
    code: "ZERO_AGENTS",
    path: "counts.agents[1].amount",
  },
  {
    name: "a nested crew that nests its parent by name",
    shape: shape("A", [
      role("a", {
        first_input: true,
        final_output: true,
        nested_crew: {
          shape: shape("B", [
            role("b", {
              first_input: true,
              final_output: true,
              nested_crew: {
                shape: shape("A", [role("x", { first_input: true, final_output: true })]),
                agents: counts("A", { x: 1 }),
                memory_isolation: "soft",
              },
            }),
          ]),
          agents: counts("B", { b: 1 }),
          memory_isolation: "soft",
        },
      }),
    ]),
    code: "NESTED_CREW_CYCLE",
    path: "roles[0].nested_crew.shape.roles[0].nested_crew.shape",
    message: /A → B → A/,
  },
  {
    name: "a nested crew that contains itself (object cycle)",
    shape: cyclic,
    code: "NESTED_CREW_CYCLE",
    path: "roles[0].nested_crew.shape",
  },
  {
    name: "a problem inside a nested crew, with its path",
    shape: shape("A", [
      role("a", {
        first_input: true,
        final_output: true,
        nested_crew: {
          shape: shape("B", [role("b", { first_input: true, final_output: true, permissions: { talk_to: ["zz"] } })]),
          agents: counts("B", { b: 1 }),
          memory_isolation: "hard",
        },
      }),
    ]),
    code: "UNKNOWN_ROLE_REFERENCE",
    path: "roles[0].nested_crew.shape.roles[0].permissions.talk_to[0]",
    message: /crew B; roles are: b$/,
  },
  {
    name: "a timeout on a nested-crew role",
    shape: shape("A", [
      role("a", {
        first_input: true,
        final_output: true,
        timeout_ms: 5,
        nested_crew: {
          shape: shape("B", [role("b", { first_input: true, final_output: true })]),
          agents: counts("B", { b: 1 }),
          memory_isolation: "soft",
        },
      }),
    ]),
    code: "TIMEOUT_ON_NESTED_ROLE",
    path: "roles[0].timeout_ms",
  },
  {
    name: "a fixer that runs a nested crew",
    shape: mutate(
      (s) =>
        (s.roles[2]!.nested_crew = {
          shape: shape("B", [role("b", { first_input: true, final_output: true })]),
          agents: counts("B", { b: 1 }),
          memory_isolation: "soft",
        }),
    ),
    code: "FIXER_WITH_NESTED_CREW",
    path: "roles[2].nested_crew",
  },
  {
    name: "a role name with a slash",
    shape: mutate((s) => (s.roles[1]!.role = "me/rc")),
    code: "SCHEMA_INVALID",
    path: "roles[1].role",
    message: /may not contain/,
  },
  {
    name: "another schema version",
    shape: { ...base().shape, schema_version: "2.0" },
    code: "SCHEMA_INVALID",
    path: "schema_version",
  },
  {
    name: "a negative count",
    shape: base().shape,
    counts: counts("RESEARCH_CREW", { merc: -1 }),
    code: "SCHEMA_INVALID",
    path: "counts.agents[0].amount",
  },
];

describe("lintCrewShape", () => {
  it("accepts the seed crew", () => {
    expect(lintCrewShape(seed.shape, seed.counts)).toEqual({ ok: true, issues: [] });
  });

  it.each(cases)("reports $code for $name", ({ shape: s, counts: c, code, path, message }) => {
    const result = lintCrewShape(s, c);
    expect(result.ok).toBe(false);
    const issue = result.issues.find((i) => i.code === code);
    expect(issue, JSON.stringify(result.issues)).toBeDefined();
    expect(issue!.path).toBe(path);
    if (message) expect(issue!.message).toMatch(message);
  });

  it("reports every issue at once, not only the first", () => {
    const s = mutate((x) => {
      x.roles[1]!.permissions!.escalate_to = ["fixr"];
      delete x.roles[0]!.first_input;
      delete x.roles[0]!.final_output;
    });
    const codes = lintCrewShape(s).issues.map((i) => i.code);
    expect(codes).toEqual(["UNKNOWN_ROLE_REFERENCE", "NO_ENTRY_ROLE", "NO_FINAL_ROLE"]);
  });

  it("never throws on garbage", () => {
    for (const junk of [null, 3, "x", [], { roles: 5 }]) expect(lintCrewShape(junk).ok).toBe(false);
  });
});
