// What the pipeline's services run with: ports, the agent's contracts and the settings, passed in at the edge.
import type { ClaimsContract, RegistryView, ResponsibilityContract } from "../core/integrity/index.ts";
import type { RefundLedger } from "./ports.ts";
import type { AuditLog } from "./ports.ts";
import type { ContextStore } from "./ports.ts";
import type { LlmPort } from "../core/llm/index.ts";
import type { ClaimRepository, Clock, EventPublisher, IdSource, ReviewRepository, SessionRepository, VerdictRepository, WorkQueues } from "./ports.ts";
import type { ClaimsCrewTimeouts } from "../core/claims/crew.ts";

/** The proposing agent as configured and registered. */
export interface AgentSettings {
  agentId: string;
  version: string;
  responsibility: ResponsibilityContract;
  contract: ClaimsContract;
}

/** Tunables of the pipeline. */
export interface PipelineSettings {
  /** How long a proposal stays valid for the kernel (layer 2). */
  proposalValidityMs: number;
  timeouts: ClaimsCrewTimeouts;
}

/** Default settings: a proposal is valid for 15 minutes; LLM steps time out after 2 minutes. */
export const DEFAULT_PIPELINE_SETTINGS: PipelineSettings = {
  proposalValidityMs: 15 * 60_000,
  timeouts: { analystMs: 120_000, decisionMs: 120_000, fixerMs: 120_000 },
};

/** Every port and setting; each service takes the subset it needs. */
export interface PipelineDeps {
  claims: ClaimRepository;
  sessions: SessionRepository;
  verdicts: VerdictRepository;
  queues: WorkQueues;
  publisher: EventPublisher;
  audit: AuditLog;
  ledger: RefundLedger;
  reviews: ReviewRepository;
  orders: ContextStore;
  llm: LlmPort;
  clock: Clock;
  ids: IdSource;
  agent: AgentSettings;
  registry: RegistryView;
  settings: PipelineSettings;
}

/** The ports effects are performed through. */
export type EffectPorts = Pick<PipelineDeps, "queues" | "audit" | "claims" | "publisher" | "reviews" | "ledger">;
