// The two JSON documents that describe a crew: its shape (roles, permissions, capabilities)
// and its counts (how many agents of each role). Shapes follow the seed README's Quick Start.

import * as z from "zod";
import { JsonValueSchema } from "./json.ts";

/** The only crew document (and snapshot) schema version this engine reads and writes. */
export const CREW_SCHEMA_VERSION = "1.0" as const;

/** A role name: no whitespace and none of `/`, `#`, `@` (they delimit crew and agent ids). */
export const RoleNameSchema = z
  .string()
  .min(1, "a role name may not be empty")
  .max(64, "a role name has at most 64 characters")
  .regex(/^[^\s/#@]+$/, "a role name may not contain whitespace, '/', '#' or '@' (they delimit crew and agent ids)");

/** Voting strategies a role may use to pick one output from its agents. */
export const VotingStrategySchema = z.enum(["first_valid", "majority", "unanimous", "weighted_consensus"]);

/** A voting strategy name. */
export type VotingStrategy = z.infer<typeof VotingStrategySchema>;

/** Who a role may talk to, delegate to, escalate to (fixers) and invite; every list defaults to empty. */
export const PermissionsSchema = z.strictObject({
  talk_to: z.array(RoleNameSchema).default([]),
  delegate_to: z.array(RoleNameSchema).default([]),
  escalate_to: z.array(RoleNameSchema).default([]),
  invite: z.array(RoleNameSchema).default([]),
});

/** A role's permissions after defaults. */
export type Permissions = z.infer<typeof PermissionsSchema>;

/** What a role's agents can do; unknown keys pass through (they must be JSON) for the worker to read. */
export const CapabilitiesSchema = z
  .object({ thinking_allowed: z.boolean(), model: z.string().min(1).optional() })
  .catchall(JsonValueSchema);

/** A role's capabilities. */
export type Capabilities = z.infer<typeof CapabilitiesSchema>;

/** Marks a role as a fixer: invoked on an agent's failure (`on_fault`) and/or timeout (`on_stall`), never as a phase. */
export const ActivationSchema = z.strictObject({
  on_fault: z.boolean().optional(),
  on_stall: z.boolean().optional(),
});

/** How an inner crew's memory relates to its parent's: shared (`soft`) or forked and merged on completion (`hard`). */
export const MemoryIsolationSchema = z.enum(["soft", "hard"]);

/** Memory isolation of a nested crew. */
export type MemoryIsolation = z.infer<typeof MemoryIsolationSchema>;

/** Counts of a crew: how many agents each role gets. */
export const CrewAgentsSchema = z.strictObject({
  schema_version: z.literal(CREW_SCHEMA_VERSION),
  name: z.string().min(1),
  agents: z.array(z.strictObject({ role: RoleNameSchema, amount: z.int().min(0) })),
});

/** Parsed crew counts. */
export type CrewAgents = z.infer<typeof CrewAgentsSchema>;

/** A role of a crew shape. */
export const CrewRoleSchema = z.strictObject({
  role: RoleNameSchema,
  capabilities: CapabilitiesSchema,
  system_prompt: z.string().optional(),
  permissions: PermissionsSchema,
  first_input: z.boolean().optional(),
  final_output: z.boolean().optional(),
  amount: z.int().min(0).optional(),
  max_allowed: z.int().min(0).optional(),
  activation: ActivationSchema.optional(),
  voting: VotingStrategySchema.optional(),
  timeout_ms: z.int().positive().optional(),
  get nested_crew() {
    return NestedCrewSchema.optional();
  },
});

/** A nested crew: the role's agents each run this inner crew instead of a single step. */
export const NestedCrewSchema = z.strictObject({
  get shape() {
    return CrewShapeSchema;
  },
  agents: CrewAgentsSchema,
  memory_isolation: MemoryIsolationSchema,
});

/** A crew shape: the roles in declaration order (the order phases run in). */
export const CrewShapeSchema = z.strictObject({
  schema_version: z.literal(CREW_SCHEMA_VERSION),
  name: z.string().min(1),
  description: z.string().optional(),
  get roles() {
    return z.array(CrewRoleSchema);
  },
});

/** A parsed crew shape (defaults applied). */
export type CrewShape = z.output<typeof CrewShapeSchema>;

/** A crew shape as written (before defaults). */
export type CrewShapeInput = z.input<typeof CrewShapeSchema>;

/** A parsed role. */
export type CrewRole = z.output<typeof CrewRoleSchema>;

/** A parsed nested crew declaration. */
export type NestedCrew = z.output<typeof NestedCrewSchema>;

/** Session-level metadata given to `start`: rides on `crew.started` and lives in the snapshot, never on steps. */
export const TaskSchema = z.object({ description: z.string() }).catchall(JsonValueSchema);

/** Session-level task metadata. */
export type Task = z.infer<typeof TaskSchema>;
