// The crew graph: a validated shape and its counts materialised as plain, deterministic JSON —
// phases in order, agents with stable ids, resolved fixers — that sessions run on.

import { canonicalize } from "./canonical.ts";
import { CrewShapeError } from "./errors.ts";
import { hashHex } from "./hash.ts";
import { fixerFor, lintDocuments, resolveAgentCounts } from "./lint.ts";
import type { Capabilities, CrewAgents, CrewShape, MemoryIsolation, Permissions, VotingStrategy } from "./schema.ts";
import { CREW_SCHEMA_VERSION } from "./schema.ts";

/** A role of the graph with everything a session needs precomputed. */
export type GraphRole = {
  role: string;
  /** Position in the shape's declaration order. */
  index: number;
  system_prompt?: string;
  capabilities: Capabilities;
  permissions: Permissions;
  /** Voting strategy after the default (`first_valid`). */
  voting: VotingStrategy;
  timeout_ms?: number;
  /** Present on fixer roles only. */
  activation?: { on_fault: boolean; on_stall: boolean };
  /** Agent ids in slot order: `role#0`, `role#1`, … */
  agents: string[];
  /** The fixer role a failure (`fault`) or timeout (`stall`) of this role's agents goes to: the first role in `escalate_to` with that trigger, else the crew's first fixer with it (see `fixerFor`). */
  fixers: { fault?: string; stall?: string };
  /** The inner crew each agent of this role runs instead of a single step. */
  nested?: { graph: CrewGraph; memory_isolation: MemoryIsolation };
};

/** One phase: a phase role run by all its agents. */
export type CrewPhase = { index: number; role: string };

/** A built crew: JSON-serialisable and deterministic for the same shape and counts. */
export type CrewGraph = {
  schema_version: typeof CREW_SCHEMA_VERSION;
  name: string;
  entryRole: string;
  finalRole: string;
  phases: CrewPhase[];
  roles: GraphRole[];
  /** Roles with `activation`, in declaration order. */
  fixerRoles: string[];
};

/** Parses and lints a shape and its counts, then materialises the graph; throws `CrewShapeError` listing every issue. */
export function buildCrewGraph(shape: unknown, counts?: unknown): CrewGraph {
  const linted = lintDocuments(shape, counts);
  if (linted.issues.length > 0 || linted.shape === undefined) {
    const name =
      typeof (shape as { name?: unknown } | null)?.name === "string" ? (shape as { name: string }).name : "(unnamed)";
    throw new CrewShapeError(name, linted.issues);
  }
  return materialise(linted.shape, linted.counts);
}

function materialise(shape: CrewShape, counts: CrewAgents | undefined): CrewGraph {
  const amounts = resolveAgentCounts(shape, counts);
  const roles: GraphRole[] = shape.roles.map((r, index) => {
    const amount = amounts.get(r.role) ?? 1;
    const role: GraphRole = {
      role: r.role,
      index,
      capabilities: r.capabilities,
      permissions: r.permissions,
      voting: r.voting ?? "first_valid",
      agents: Array.from({ length: amount }, (_, i) => `${r.role}#${i}`),
      fixers: {},
    };
    if (r.system_prompt !== undefined) role.system_prompt = r.system_prompt;
    if (r.timeout_ms !== undefined) role.timeout_ms = r.timeout_ms;
    if (r.activation !== undefined) {
      role.activation = { on_fault: r.activation.on_fault === true, on_stall: r.activation.on_stall === true };
    } else {
      const fault = fixerFor(shape.roles, r, "on_fault");
      const stall = fixerFor(shape.roles, r, "on_stall");
      if (fault !== undefined) role.fixers.fault = fault;
      if (stall !== undefined) role.fixers.stall = stall;
    }
    if (r.nested_crew !== undefined) {
      role.nested = {
        graph: materialise(r.nested_crew.shape, r.nested_crew.agents),
        memory_isolation: r.nested_crew.memory_isolation,
      };
    }
    return role;
  });

  const phaseRoles = roles.filter((r) => r.activation === undefined);
  const entry = phaseRoles.find((r) => shape.roles[r.index]!.first_input === true)!;
  const final = phaseRoles.find((r) => shape.roles[r.index]!.final_output === true);
  const middle = phaseRoles.filter((r) => r !== entry && r !== final);
  const order = [entry, ...middle];
  // the entry role that is also final closes the crew again, on the last middle phase's output;
  // with no middle phase it runs once (a second run would only re-read its own output)
  if (final !== undefined && (final !== entry || middle.length > 0)) order.push(final);
  return {
    schema_version: CREW_SCHEMA_VERSION,
    name: shape.name,
    entryRole: entry.role,
    finalRole: order[order.length - 1]!.role,
    phases: order.map((r, index) => ({ index, role: r.role })),
    roles,
    fixerRoles: roles.filter((r) => r.activation !== undefined).map((r) => r.role),
  };
}

const fingerprints = new WeakMap<CrewGraph, string>();

/** A short hash of the graph, stored in snapshots so a session is never resumed on another crew. */
export function graphFingerprint(graph: CrewGraph): string {
  let fp = fingerprints.get(graph);
  if (fp === undefined) {
    fp = hashHex(canonicalize(graph)).slice(0, 16);
    fingerprints.set(graph, fp);
  }
  return fp;
}
