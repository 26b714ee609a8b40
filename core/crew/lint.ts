// The crew linter: structural problems of a shape and its counts, each with a stable code,
// a path into the documents, and a message a person can act on.

import { formatPath } from "./json.ts";
import { CrewAgentsSchema, CrewShapeSchema } from "./schema.ts";
import type { CrewAgents, CrewShape } from "./schema.ts";

/** Stable codes of lint issues. */
export type CrewLintCode =
  | "SCHEMA_INVALID"
  | "DUPLICATE_ROLE"
  | "UNKNOWN_ROLE_REFERENCE"
  | "NO_ENTRY_ROLE"
  | "MULTIPLE_ENTRY_ROLES"
  | "MULTIPLE_FINAL_ROLES"
  | "NO_FINAL_ROLE"
  | "NO_PHASES"
  | "ACTIVATION_WITHOUT_TRIGGER"
  | "FIXER_AS_ENTRY_OR_FINAL"
  | "FIXER_WITH_NESTED_CREW"
  | "FIXER_UNREACHABLE"
  | "ESCALATE_TO_NON_FIXER"
  | "ESCALATE_TO_SELF"
  | "DELEGATE_WITHOUT_TALK"
  | "TIMEOUT_ON_NESTED_ROLE"
  | "NESTED_CREW_CYCLE"
  | "CREW_NAME_MISMATCH"
  | "DUPLICATE_COUNT"
  | "COUNT_FOR_UNKNOWN_ROLE"
  | "COUNT_EXCEEDS_MAX_ALLOWED"
  | "ZERO_AGENTS";

/** One problem found by the linter; `path` points into the shape (`roles[1]…`) or the counts (`counts.agents[0]…`). */
export type CrewLintIssue = { code: CrewLintCode; path: string; message: string };

/** The linter's verdict: `ok` is true when there are no issues. */
export type CrewLintResult = { ok: boolean; issues: CrewLintIssue[] };

/** Lints a crew shape and (optionally) its counts; accepts raw or parsed documents and never throws for bad input. */
export function lintCrewShape(shape: unknown, counts?: unknown): CrewLintResult {
  const issues = lintDocuments(shape, counts).issues;
  return { ok: issues.length === 0, issues };
}

/** Parses and lints; returns the parsed documents when they parsed (used by `buildCrewGraph`). */
export function lintDocuments(
  shape: unknown,
  counts?: unknown,
): { issues: CrewLintIssue[]; shape?: CrewShape; counts?: CrewAgents } {
  const issues: CrewLintIssue[] = [];
  const cyclic = findNestingCycles(shape, "", [], [], issues);
  if (cyclic) return { issues }; // an object cycle would make the schema parser recurse forever
  const parsedShape = CrewShapeSchema.safeParse(shape);
  if (!parsedShape.success) {
    for (const i of parsedShape.error.issues)
      issues.push({ code: "SCHEMA_INVALID", path: formatPath(i.path), message: i.message });
  }
  let parsedCounts: CrewAgents | undefined;
  if (counts !== undefined) {
    const pc = CrewAgentsSchema.safeParse(counts);
    if (pc.success) parsedCounts = pc.data;
    else
      for (const i of pc.error.issues)
        issues.push({ code: "SCHEMA_INVALID", path: formatPath(i.path, "counts"), message: i.message });
  }
  if (!parsedShape.success || (counts !== undefined && parsedCounts === undefined)) return { issues };
  lintStructure(parsedShape.data, parsedCounts, "", "counts.", issues);
  return { issues, shape: parsedShape.data, ...(parsedCounts ? { counts: parsedCounts } : {}) };
}

/** Agents per role: the counts document wins, then the role's `amount`, then 1. */
export function resolveAgentCounts(shape: CrewShape, counts?: CrewAgents): Map<string, number> {
  const fromCounts = new Map<string, number>();
  for (const a of counts?.agents ?? []) if (!fromCounts.has(a.role)) fromCounts.set(a.role, a.amount);
  const out = new Map<string, number>();
  for (const r of shape.roles) if (!out.has(r.role)) out.set(r.role, fromCounts.get(r.role) ?? r.amount ?? 1);
  return out;
}

/** A role as routing sees it: its name, its escalate_to list and (on fixers) its activation. */
type RoutedRole = {
  role: string;
  activation?: { on_fault?: boolean; on_stall?: boolean };
  permissions: { escalate_to: readonly string[] };
};

/**
 * The fixer role a failure (`on_fault`) or timeout (`on_stall`) of `role`'s agents goes to: the
 * first role in its `escalate_to` whose activation has the trigger (preferred), else the first
 * role of the crew, in declaration order, whose activation has it; undefined when none has it.
 * Fixers themselves are never routed (a fixer step that fails fails its slot for good).
 */
export function fixerFor(
  roles: readonly RoutedRole[],
  role: RoutedRole,
  trigger: "on_fault" | "on_stall",
): string | undefined {
  if (role.activation !== undefined) return undefined;
  const has = (r: RoutedRole | undefined) => r?.activation?.[trigger] === true;
  for (const target of role.permissions.escalate_to) if (has(roles.find((r) => r.role === target))) return target;
  return roles.find(has)?.role;
}

const VERBS = {
  talk_to: "talks to",
  delegate_to: "delegates to",
  escalate_to: "escalates to",
  invite: "invites",
} as const;
const LISTS = ["talk_to", "delegate_to", "escalate_to", "invite"] as const;

function quoteList(names: readonly string[]): string {
  return names.length === 0 ? "(none)" : names.join(", ");
}

// Walks raw `roles[].nested_crew.shape` links looking for a crew that contains itself, by object
// identity (a real cycle) or by name (a crew nesting a crew of an enclosing crew's name).
function findNestingCycles(
  raw: unknown,
  prefix: string,
  objects: object[],
  names: string[],
  issues: CrewLintIssue[],
): boolean {
  if (typeof raw !== "object" || raw === null) return false;
  const name = typeof (raw as { name?: unknown }).name === "string" ? (raw as { name: string }).name : "(unnamed)";
  const roles = (raw as { roles?: unknown }).roles;
  if (!Array.isArray(roles)) return false;
  let objectCycle = false;
  const chainObjects = [...objects, raw];
  const chainNames = [...names, name];
  roles.forEach((role: unknown, i) => {
    if (typeof role !== "object" || role === null) return;
    const nested = (role as { nested_crew?: unknown }).nested_crew;
    if (typeof nested !== "object" || nested === null) return;
    const inner = (nested as { shape?: unknown }).shape;
    if (typeof inner !== "object" || inner === null) return;
    const innerName =
      typeof (inner as { name?: unknown }).name === "string" ? (inner as { name: string }).name : "(unnamed)";
    const path = `${prefix}roles[${i}].nested_crew.shape`;
    const sameObject = chainObjects.includes(inner);
    if (sameObject || chainNames.includes(innerName)) {
      objectCycle ||= sameObject;
      issues.push({
        code: "NESTED_CREW_CYCLE",
        path,
        message: `crew ${name} nests crew ${innerName}, which already encloses it (${[...chainNames, innerName].join(" → ")}); nested crews must form a tree with distinct names`,
      });
      return;
    }
    objectCycle = findNestingCycles(inner, `${path}.`, chainObjects, chainNames, issues) || objectCycle;
  });
  return objectCycle;
}

function lintStructure(
  shape: CrewShape,
  counts: CrewAgents | undefined,
  p: string,
  cp: string,
  issues: CrewLintIssue[],
): void {
  const crew = shape.name;
  const names = shape.roles.map((r) => r.role);
  const nameSet = new Set(names);
  const roleList = quoteList([...nameSet]);
  const add = (code: CrewLintCode, path: string, message: string) => issues.push({ code, path, message });

  const firstIndex = new Map<string, number>();
  shape.roles.forEach((r, i) => {
    const first = firstIndex.get(r.role);
    if (first === undefined) firstIndex.set(r.role, i);
    else
      add(
        "DUPLICATE_ROLE",
        `${p}roles[${i}].role`,
        `role '${r.role}' is declared twice in crew ${crew} (roles[${first}] and roles[${i}]); role names must be unique`,
      );
  });

  shape.roles.forEach((r, i) => {
    for (const list of LISTS) {
      r.permissions[list].forEach((target, j) => {
        if (!nameSet.has(target)) {
          add(
            "UNKNOWN_ROLE_REFERENCE",
            `${p}roles[${i}].permissions.${list}[${j}]`,
            `role '${r.role}' ${VERBS[list]} '${target}', which is not a role of crew ${crew}; roles are: ${roleList}`,
          );
        }
      });
    }
  });

  const byName = new Map(shape.roles.map((r) => [r.role, r]));
  shape.roles.forEach((r, i) => {
    r.permissions.escalate_to.forEach((target, j) => {
      const path = `${p}roles[${i}].permissions.escalate_to[${j}]`;
      if (target === r.role) {
        add(
          "ESCALATE_TO_SELF",
          path,
          `role '${r.role}' escalates to itself; escalate_to names the fixer role that stands in for a failed or stalled agent, so name a fixer (a role with "activation")`,
        );
      } else if (r.activation === undefined && byName.has(target) && byName.get(target)!.activation === undefined) {
        add(
          "ESCALATE_TO_NON_FIXER",
          path,
          `role '${r.role}' escalates to '${target}', which is not a fixer (it has no "activation"), so it can never stand in for a failed agent; name a fixer role (fixers of crew ${crew}: ${quoteList(shape.roles.filter((x) => x.activation !== undefined).map((x) => x.role))})`,
        );
      }
    });
    r.permissions.delegate_to.forEach((target, j) => {
      if (!r.permissions.talk_to.includes(target)) {
        add(
          "DELEGATE_WITHOUT_TALK",
          `${p}roles[${i}].permissions.delegate_to[${j}]`,
          `role '${r.role}' delegates to '${target}' but may not talk to it; add '${target}' to its permissions.talk_to (talk_to: ${quoteList(r.permissions.talk_to)})`,
        );
      }
    });
  });

  const entries = shape.roles.map((r, i) => ({ r, i })).filter(({ r }) => r.first_input === true);
  if (entries.length === 0) {
    add(
      "NO_ENTRY_ROLE",
      `${p}roles`,
      `crew ${crew} has no entry role: mark exactly one role with "first_input": true (roles are: ${roleList})`,
    );
  } else if (entries.length > 1) {
    add(
      "MULTIPLE_ENTRY_ROLES",
      `${p}roles[${entries[1]!.i}].first_input`,
      `crew ${crew} marks ${entries.length} roles as first_input (${entries.map((e) => e.r.role).join(", ")}); exactly one role receives the root input`,
    );
  }
  const finals = shape.roles.map((r, i) => ({ r, i })).filter(({ r }) => r.final_output === true);
  if (finals.length === 0) {
    add(
      "NO_FINAL_ROLE",
      `${p}roles`,
      `crew ${crew} has no final role: mark exactly one phase role with "final_output": true (it may be the entry role, which then runs again last; roles are: ${roleList})`,
    );
  } else if (finals.length > 1) {
    add(
      "MULTIPLE_FINAL_ROLES",
      `${p}roles[${finals[1]!.i}].final_output`,
      `crew ${crew} marks ${finals.length} roles as final_output (${finals.map((e) => e.r.role).join(", ")}); at most one role produces the crew's output`,
    );
  }

  const phaseRoles = shape.roles.filter((r) => r.activation === undefined);
  if (phaseRoles.length === 0) {
    add(
      "NO_PHASES",
      `${p}roles`,
      `crew ${crew} has no phase roles: every role has "activation" (fixers run only when a phase agent fails); add a role without "activation"`,
    );
  }
  const phaseNames = quoteList(phaseRoles.map((r) => r.role));
  shape.roles.forEach((r, i) => {
    if (r.activation !== undefined) {
      if (r.activation.on_fault !== true && r.activation.on_stall !== true) {
        add(
          "ACTIVATION_WITHOUT_TRIGGER",
          `${p}roles[${i}].activation`,
          `role '${r.role}' has "activation" but neither on_fault nor on_stall is true, so it never runs; set one of them or remove "activation"`,
        );
      }
      if (r.first_input === true || r.final_output === true) {
        add(
          "FIXER_AS_ENTRY_OR_FINAL",
          `${p}roles[${i}].activation`,
          `role '${r.role}' has "activation" (a fixer, never a phase) but is marked ${r.first_input === true ? "first_input" : "final_output"}; a fixer cannot open or close crew ${crew}`,
        );
      }
      if (r.nested_crew !== undefined) {
        add(
          "FIXER_WITH_NESTED_CREW",
          `${p}roles[${i}].nested_crew`,
          `fixer role '${r.role}' declares a nested_crew; a fixer runs a single step, so move the nested crew to a phase role`,
        );
      }
      const triggered = r.activation.on_fault === true || r.activation.on_stall === true;
      const reached = phaseRoles.some(
        (ph) =>
          ph.permissions.escalate_to.includes(r.role) ||
          fixerFor(shape.roles, ph, "on_fault") === r.role ||
          fixerFor(shape.roles, ph, "on_stall") === r.role,
      );
      if (triggered && !reached) {
        add(
          "FIXER_UNREACHABLE",
          `${p}roles[${i}]`,
          `fixer role '${r.role}' can never be invoked: no phase role of crew ${crew} lists it in permissions.escalate_to (phase roles: ${phaseNames}), and roles that list no fixer fall back to the crew's first fixer with the trigger, which is another role`,
        );
      }
    }
    if (r.nested_crew !== undefined && r.timeout_ms !== undefined) {
      add(
        "TIMEOUT_ON_NESTED_ROLE",
        `${p}roles[${i}].timeout_ms`,
        `role '${r.role}' runs nested crew ${r.nested_crew.shape.name}, so its own timeout_ms is never applied; set timeout_ms on the nested crew's roles instead`,
      );
    }
  });

  const countIndex = new Map<string, number>();
  if (counts !== undefined) {
    if (counts.name !== shape.name) {
      add(
        "CREW_NAME_MISMATCH",
        `${cp}name`,
        `the counts are for crew ${counts.name} but the shape is crew ${crew}; use counts written for this crew`,
      );
    }
    counts.agents.forEach((a, j) => {
      const first = countIndex.get(a.role);
      if (first !== undefined) {
        add(
          "DUPLICATE_COUNT",
          `${cp}agents[${j}].role`,
          `the counts of crew ${crew} name role '${a.role}' twice (agents[${first}] and agents[${j}]); give each role one entry`,
        );
        return;
      }
      countIndex.set(a.role, j);
      if (!nameSet.has(a.role)) {
        add(
          "COUNT_FOR_UNKNOWN_ROLE",
          `${cp}agents[${j}].role`,
          `the counts give ${a.amount} agent${a.amount === 1 ? "" : "s"} to role '${a.role}', which is not a role of crew ${crew}; roles are: ${roleList}`,
        );
      }
    });
  }

  const seen = new Set<string>();
  shape.roles.forEach((r, i) => {
    if (seen.has(r.role)) return;
    seen.add(r.role);
    const j = countIndex.get(r.role);
    const fromCounts = j === undefined ? undefined : counts!.agents[j]!.amount;
    if (r.max_allowed !== undefined) {
      if (r.amount !== undefined && r.amount > r.max_allowed) {
        add(
          "COUNT_EXCEEDS_MAX_ALLOWED",
          `${p}roles[${i}].amount`,
          `role '${r.role}' of crew ${crew} asks for ${r.amount} agents, but its max_allowed is ${r.max_allowed}`,
        );
      }
      if (fromCounts !== undefined && fromCounts > r.max_allowed) {
        add(
          "COUNT_EXCEEDS_MAX_ALLOWED",
          `${cp}agents[${j}].amount`,
          `the counts give role '${r.role}' of crew ${crew} ${fromCounts} agents, but its max_allowed is ${r.max_allowed}`,
        );
      }
    }
    const resolved = fromCounts ?? r.amount ?? 1;
    if (resolved === 0) {
      const where = fromCounts !== undefined ? `${cp}agents[${j}].amount` : `${p}roles[${i}].amount`;
      add(
        "ZERO_AGENTS",
        where,
        `role '${r.role}' of crew ${crew} has 0 agents; give it at least 1 (at ${where}) or remove the role`,
      );
    }
    if (r.nested_crew !== undefined) {
      lintStructure(
        r.nested_crew.shape,
        r.nested_crew.agents,
        `${p}roles[${i}].nested_crew.shape.`,
        `${p}roles[${i}].nested_crew.agents.`,
        issues,
      );
    }
  });
}
