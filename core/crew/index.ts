// Public surface of the crew engine (core/crew/README.md). Everything else in this folder is internal.

export { canonicalize } from "./canonical.ts";
export { hashHex } from "./hash.ts";
export type { Sha256Hex } from "./hash.ts";
export { correlationId, fixerStepAgentId, innerCrewId, CORRELATION_ID_LENGTH } from "./ids.ts";
export { systemClock, frozenClock } from "./clock.ts";
export type { Clock, FrozenClock } from "./clock.ts";
export {
  CREW_SCHEMA_VERSION,
  CrewShapeSchema,
  CrewAgentsSchema,
  CrewRoleSchema,
  NestedCrewSchema,
  PermissionsSchema,
  CapabilitiesSchema,
  ActivationSchema,
  VotingStrategySchema,
  MemoryIsolationSchema,
  RoleNameSchema,
  TaskSchema,
} from "./schema.ts";
export type {
  CrewShape,
  CrewShapeInput,
  CrewAgents,
  CrewRole,
  NestedCrew,
  Permissions,
  Capabilities,
  VotingStrategy,
  MemoryIsolation,
  Task,
} from "./schema.ts";
export { lintCrewShape } from "./lint.ts";
export type { CrewLintCode, CrewLintIssue, CrewLintResult } from "./lint.ts";
export { buildCrewGraph, graphFingerprint } from "./graph.ts";
export type { CrewGraph, GraphRole, CrewPhase } from "./graph.ts";
export * from "./events.ts";
export { JsonValueSchema, isJsonValue } from "./json.ts";
export type { JsonValue } from "./json.ts";
export { createHookRegistry } from "./hooks.ts";
export type { HookRegistry, CrewHooks, HookName, HookContext, StepVeto } from "./hooks.ts";
export { resolveVotes } from "./voting.ts";
export type { Ballot, VoteResult, VoteFailureCode } from "./voting.ts";
export { createInMemoryMemory } from "./memory.ts";
export type { CrewMemoryAdapter } from "./memory.ts";
export { createInMemoryCheckpointStore } from "./checkpoint.ts";
export type { CheckpointStore, StoredCheckpoint } from "./checkpoint.ts";
export { createCrewSession } from "./session.ts";
export type { CrewSession, CrewSessionOptions } from "./session.ts";
export { resumeCrewSession } from "./resume.ts";
export { stepCrew, stepCrewMany, initialCrewSnapshot } from "./step.ts";
export type {
  CrewStepEvent,
  CrewStepEnv,
  CrewStartEvent,
  CrewResumeEvent,
  CrewStepResult,
  CrewBatchResult,
  StepLabel,
} from "./step.ts";
export type { ResumeOptions, ResumePolicy } from "./resume.ts";
export type {
  CrewSnapshot,
  CrewStatus,
  SlotState,
  FaultKind,
  RunningCrewSnapshot,
  IdleCrewSnapshot,
  CompletedCrewSnapshot,
  FailedCrewSnapshot,
  CancelledCrewSnapshot,
} from "./snapshot.ts";
export {
  CrewError,
  CrewShapeError,
  InvalidCrewEventError,
  InvalidCrewInputError,
  UnknownCrewError,
  SnapshotVersionError,
  SnapshotMismatchError,
  SessionStateError,
  HookError,
  InvalidClockError,
  CanonicalJsonError,
  UnknownVotingStrategyError,
} from "./errors.ts";
export type { CrewErrorCode, CrewSchemaIssue } from "./errors.ts";
