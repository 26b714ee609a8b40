// The claims crew (docs/architecture.md): Claims Analyst → Decision Maker, with a Fixer on fault or stall,
// declared as plain crew-shape JSON and built on core/crew.
import * as z from "zod";
import { buildCrewGraph, graphFingerprint } from "../crew/index.ts";
import type { CrewGraph } from "../crew/index.ts";
import { isModelUnavailable } from "../llm/errors.ts";
import { ClaimSchema } from "../claim/claim.ts";
import type { Claim } from "../claim/claim.ts";
import type { CrewShapeSetting } from "../claim/crew-shape.ts";
import { containsInstructionLikeText, INSTRUCTION_NOTE } from "../extraction/signals.ts";

/** The crew's name in shapes, graphs and snapshots. */
export const CLAIMS_CREW_NAME = "CLAIMS_CREW";

/** The compact crew's name: one Claims Officer step carries the analysis and the proposal (docs/llm.md, "Crew shape"). */
export const CLAIMS_CREW_COMPACT_NAME = "CLAIMS_CREW_COMPACT";

/** Role names of the claims crews (the officer is the compact crew's one phase). */
export const CLAIMS_ROLES = {
  analyst: "claims_analyst",
  decision: "decision_maker",
  officer: "claims_officer",
  fixer: "fixer",
} as const;

/** Step timeouts of the claims crew: an LLM call with retries must fit inside. */
export interface ClaimsCrewTimeouts {
  analystMs: number;
  decisionMs: number;
  fixerMs: number;
}

/** Default step timeouts: a local model answers in seconds, a cold one in tens of seconds. */
const DEFAULT_CLAIMS_CREW_TIMEOUTS: ClaimsCrewTimeouts = { analystMs: 120_000, decisionMs: 120_000, fixerMs: 120_000 };

/** What the crew starts with: the structured claim and when it was received. */
export const ClaimsCrewInputSchema = z.object({ claim: ClaimSchema, received_at: z.string() }).strict();

/** The root input of the claims crew. */
type ClaimsCrewInput = z.infer<typeof ClaimsCrewInputSchema>;

/** What the analyst phase hands to the decision maker: its assessment plus the claim it assessed. */
export const AnalystOutputSchema = z
  .object({ analysis: z.string(), claim: ClaimSchema, received_at: z.string() })
  .strict();

/** The compact crew: one Claims Officer step (analysis and proposal in one answer), the same Fixer on fault or stall. */
function compactCrewShape(timeouts: ClaimsCrewTimeouts) {
  const noInvite = { invite: [] as string[] };
  const shape = {
    schema_version: "1.0",
    name: CLAIMS_CREW_COMPACT_NAME,
    roles: [
      {
        role: CLAIMS_ROLES.officer,
        capabilities: { thinking_allowed: true },
        system_prompt:
          "You are the Claims Officer of an e-commerce refund team. Assess the claim against the claims contract and turn it into one structured refund proposal; a deterministic kernel decides.",
        permissions: { talk_to: [], delegate_to: [], escalate_to: [CLAIMS_ROLES.fixer], ...noInvite },
        first_input: true,
        final_output: true,
        amount: 1,
        max_allowed: 1,
        // Up to two calls, like the Decision Maker's (its self-check repair round).
        timeout_ms: timeouts.decisionMs,
      },
      fixerRole([CLAIMS_ROLES.officer], timeouts),
    ],
  };
  const counts = {
    schema_version: "1.0",
    name: CLAIMS_CREW_COMPACT_NAME,
    agents: [
      { role: CLAIMS_ROLES.officer, amount: 1 },
      { role: CLAIMS_ROLES.fixer, amount: 1 },
    ],
  };
  return { shape, counts };
}

/** The Fixer of either crew shape: it stands in for a failed or stalled step of the roles it may talk to. */
function fixerRole(talkTo: string[], timeouts: ClaimsCrewTimeouts) {
  return {
    role: CLAIMS_ROLES.fixer,
    capabilities: { thinking_allowed: true },
    system_prompt:
      "You are the Fixer of an e-commerce refund team: you stand in, conservatively, for a step that failed or stalled.",
    activation: { on_fault: true, on_stall: true },
    permissions: { talk_to: talkTo, delegate_to: [], escalate_to: [], invite: [] as string[] },
    amount: 1,
    max_allowed: 1,
    timeout_ms: timeouts.fixerMs,
  };
}

/** The crew shape and counts as plain JSON (system prompts are composed by the worker from the contract). */
function claimsCrewShape(timeouts: ClaimsCrewTimeouts = DEFAULT_CLAIMS_CREW_TIMEOUTS) {
  const noInvite = { invite: [] as string[] };
  const shape = {
    schema_version: "1.0",
    name: CLAIMS_CREW_NAME,
    roles: [
      {
        role: CLAIMS_ROLES.analyst,
        capabilities: { thinking_allowed: true },
        system_prompt:
          "You are the Claims Analyst of an e-commerce refund team. Assess the claim against the claims contract; you never see order records and never decide.",
        permissions: {
          talk_to: [CLAIMS_ROLES.decision],
          delegate_to: [],
          escalate_to: [CLAIMS_ROLES.fixer],
          ...noInvite,
        },
        first_input: true,
        amount: 1,
        max_allowed: 1,
        timeout_ms: timeouts.analystMs,
      },
      {
        role: CLAIMS_ROLES.decision,
        capabilities: { thinking_allowed: true },
        system_prompt:
          "You are the Decision Maker of an e-commerce refund team. Turn the analyst's assessment into one structured refund proposal; a deterministic kernel decides.",
        permissions: {
          talk_to: [CLAIMS_ROLES.analyst],
          delegate_to: [],
          escalate_to: [CLAIMS_ROLES.fixer],
          ...noInvite,
        },
        final_output: true,
        amount: 1,
        max_allowed: 1,
        timeout_ms: timeouts.decisionMs,
      },
      fixerRole([CLAIMS_ROLES.analyst, CLAIMS_ROLES.decision], timeouts),
    ],
  };
  const counts = {
    schema_version: "1.0",
    name: CLAIMS_CREW_NAME,
    agents: [
      { role: CLAIMS_ROLES.analyst, amount: 1 },
      { role: CLAIMS_ROLES.decision, amount: 1 },
      { role: CLAIMS_ROLES.fixer, amount: 1 },
    ],
  };
  return { shape, counts };
}

const graphs = new Map<string, CrewGraph>();

/** The built (validated, linted) claims crew graph — the two agents', or the compact one by its name; built once per timeout setting. */
export function claimsCrewGraph(
  timeouts: ClaimsCrewTimeouts = DEFAULT_CLAIMS_CREW_TIMEOUTS,
  name: typeof CLAIMS_CREW_NAME | typeof CLAIMS_CREW_COMPACT_NAME = CLAIMS_CREW_NAME,
): CrewGraph {
  const key = `${name}/${timeouts.analystMs}/${timeouts.decisionMs}/${timeouts.fixerMs}`;
  let graph = graphs.get(key);
  if (!graph) {
    const { shape, counts } =
      name === CLAIMS_CREW_COMPACT_NAME ? compactCrewShape(timeouts) : claimsCrewShape(timeouts);
    graph = buildCrewGraph(shape, counts);
    graphs.set(key, graph);
  }
  return graph;
}

/**
 * The claims crew graph a stored snapshot was started on (its graph fingerprint): a claim keeps its crew whatever the
 * crew shape setting says meanwhile. An unknown fingerprint gives the two agents' graph, which then refuses it.
 */
export function claimsCrewGraphOfSnapshot(snapshot: unknown, timeouts?: ClaimsCrewTimeouts): CrewGraph {
  const compact = claimsCrewGraph(timeouts, CLAIMS_CREW_COMPACT_NAME);
  const fingerprint = (snapshot as { graph?: unknown } | null)?.graph;
  return fingerprint === graphFingerprint(compact) ? compact : claimsCrewGraph(timeouts);
}

/** Whether `name` is a claims crew's (what CREW_STARTED records, so replay re-runs the same crew). */
export function isClaimsCrewName(name: string): name is typeof CLAIMS_CREW_NAME | typeof CLAIMS_CREW_COMPACT_NAME {
  return name === CLAIMS_CREW_NAME || name === CLAIMS_CREW_COMPACT_NAME;
}

/**
 * Whether a claim's facts are plain, so one step may carry its analysis and proposal: no customer field holds
 * instruction-like text (nor intake's note that the free text did), the amount is in EUR, and it gives a reason.
 * Anything else gets the two agents, whose analyst flags it before a proposal is written.
 */
export function hasPlainFacts(claim: Claim): boolean {
  const text = [claim.reason, claim.category, claim.order_id, ...(claim.items ?? []).map((i) => i.name)];
  return (
    claim.reason.trim() !== "" &&
    !claim.reason.includes(INSTRUCTION_NOTE) &&
    !text.some((t) => containsInstructionLikeText(t)) &&
    (claim.currency === undefined || claim.currency.toUpperCase() === "EUR")
  );
}

/** The crew that decides `claim` under the crew shape setting (absent: `compact`). */
export function crewNameFor(
  claim: Claim,
  setting: CrewShapeSetting | undefined,
): typeof CLAIMS_CREW_NAME | typeof CLAIMS_CREW_COMPACT_NAME {
  return setting !== "two_agents" && hasPlainFacts(claim) ? CLAIMS_CREW_COMPACT_NAME : CLAIMS_CREW_NAME;
}

/** The crew's root input for a claim. */
export function claimsCrewInput(claim: Claim, receivedAt: string): ClaimsCrewInput {
  return { claim, received_at: receivedAt };
}

/** The error of the step whose failure ended the crew, when there was one. */
export interface CrewFailureCause {
  readonly code?: string | undefined;
  readonly message: string;
}

/**
 * The review a failed crew opens: a model that could not be used at all is named as such
 * (`LLM_UNREACHABLE`, `LLM_AUTH_FAILED`, with the endpoint's message); otherwise `CREW_FAILED` with the
 * crew's reason and the last step's error (at most 300 characters of it).
 */
export function crewFailureReview(
  crewReason: string,
  cause?: CrewFailureCause,
): { reason_code: string; reason: string } {
  if (cause !== undefined && isModelUnavailable(cause.code))
    return { reason_code: cause.code, reason: `The model could not be used: ${cause.message}` };
  const step =
    cause === undefined ? "" : `; the last step failed with ${clip(`${cause.code ?? "an error"}: ${cause.message}`)}`;
  return { reason_code: "CREW_FAILED", reason: `The crew could not produce a proposal: ${crewReason}${step}` };
}

function clip(text: string): string {
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}
