// What a backtest reads of each recorded audit event, as a part of the one definition of that event's details
// (replay/events.ts REPLAY_DETAILS): the fields deciding again and counting need, and the recorded verdict's
// reason, layer and checks a flip shows. The readers here go through the schema; plain.ts reads the same values
// without it when they are already in their plain form, and is held to these readers.
import type { Claim } from "../../claim/claim.ts";
import type { Order } from "../../integrity/contracts.ts";
import type { VerdictCheck, VerdictKind } from "../../integrity/verdict.ts";
import * as z from "zod";
import { REPLAY_DETAILS } from "../replay/events.ts";

/** The audit event kinds a backtest reads. */
export type BacktestKind =
  | "CLAIM_TRIAGED"
  | "PROPOSAL_SUBMITTED"
  | "KERNEL_VERDICT"
  | "CLAIM_REFUND_EXECUTED"
  | "REVIEW_REQUESTED"
  | "REVIEW_DECIDED";

/** The fields `keys` of a recorded details schema, other fields left unread (replay verifies those). */
function fieldsOf<S extends z.ZodRawShape, K extends keyof S & string>(shape: S, keys: readonly K[]) {
  return z.object(Object.fromEntries(keys.map((k) => [k, shape[k]])) as Pick<S, K>);
}

const KERNEL_INPUTS = REPLAY_DETAILS.PROPOSAL_SUBMITTED.shape.kernel_inputs.shape;
export const VERDICT_DETAILS = REPLAY_DETAILS.KERNEL_VERDICT.shape;
const TRIAGE_INPUTS = REPLAY_DETAILS.CLAIM_TRIAGED.shape.triage_inputs.shape;

/**
 * The recorded claim as the kernel reads it: every field checked as intake checks it, except that the free-text
 * `reason` is only checked to be a string — the kernel never reads it, and its text rules are the costliest part
 * of the claim's schema (replay verifies it).
 */
const KernelClaimSchema = KERNEL_INPUTS.claim.extend({ reason: z.string() });

// Of each kind's details, only what a backtest uses: the candidate brings contracts and registry, the ledger and
// the customers' windows are simulated (the recorded `customerWindow` is not read). The proposal is read by the kernel itself (its layer 1 parses it), so it is taken as recorded.
export const SCHEMAS = {
  CLAIM_TRIAGED: z.object({
    ...fieldsOf(TRIAGE_INPUTS, ["order", "receivedAt", "decidedAt", "claimId", "dfid"]).shape,
    // Of the recorded responsibility contract, the agent it names (the candidate brings its own contract).
    responsibility: z.looseObject({ agent_id: TRIAGE_INPUTS.responsibility.shape.agent_id }),
    claim: KernelClaimSchema,
  }),
  PROPOSAL_SUBMITTED: z.object({
    ...fieldsOf(KERNEL_INPUTS, ["proposal", "order", "receivedAt", "decidedAt", "claimId", "dfid", "parentClaimId"])
      .shape,
    claim: KernelClaimSchema,
  }),
  // What deciding again and counting need; the recorded reason, layer and checks are read for the flips alone.
  KERNEL_VERDICT: fieldsOf(VERDICT_DETAILS, [
    "claim_id",
    "verdict",
    "reason_code",
    "order_id",
    "amount_eur",
    "decided_at",
  ]),
  CLAIM_REFUND_EXECUTED: fieldsOf(REPLAY_DETAILS.CLAIM_REFUND_EXECUTED.shape, [
    "claim_id",
    "order_id",
    "amount_cents",
    "approved_by",
  ]),
  REVIEW_REQUESTED: fieldsOf(REPLAY_DETAILS.REVIEW_REQUESTED.shape, ["claim_id", "origin", "order_id"]),
  REVIEW_DECIDED: fieldsOf(REPLAY_DETAILS.REVIEW_DECIDED.shape, [
    "claim_id",
    "decision",
    "reviewer",
    "note",
    "paid_out_of_band",
  ]),
};

/** What the report shows of a recorded verdict beside a flip: its reason, deciding layer and checks. */
const VERDICT_SHOWN = fieldsOf(VERDICT_DETAILS, ["reason", "layer", "checks"]);

/** The kernel facts a decision was taken on, as recorded. */
export type RecordedKernelFacts = {
  /** The proposal; `null` when triage decided the claim without one (then `triaged` is set). */
  proposal: unknown;
  /** Triage decided the claim itself (CLAIM_TRIAGED) under this agent's policy: the candidate triages it again. */
  triaged?: { agentId: string };
  claim: Claim;
  order: Order | null;
  receivedAt: string;
  decidedAt: string;
  claimId: string;
  dfid: string;
  parentClaimId?: string | undefined;
};

/** A recorded verdict, as deciding again and counting read it. */
export type RecordedVerdict = {
  verdict: VerdictKind;
  reason_code: string;
  order_id: string | null;
  amount_eur: number | null;
  decided_at: string;
};

/** A recorded verdict's reason, deciding layer and checks, as the report shows them beside a flip. */
export type ShownVerdict = { reason: string; layer: number; checks: VerdictCheck[] };

/** The details a backtest reads of an event of kind `K`. */
export type Parsed<K extends BacktestKind> = K extends "PROPOSAL_SUBMITTED"
  ? { kernel_inputs: RecordedKernelFacts }
  : K extends "CLAIM_TRIAGED"
    ? { triage_inputs: Omit<RecordedKernelFacts, "proposal" | "triaged"> & { responsibility: { agent_id: string } } }
    : K extends "KERNEL_VERDICT"
      ? RecordedVerdict & { claim_id: string }
      : K extends "CLAIM_REFUND_EXECUTED"
        ? { claim_id: string; order_id: string; amount_cents: number; approved_by?: string }
        : K extends "REVIEW_REQUESTED"
          ? { claim_id: string; origin: string; order_id?: string }
          : {
              claim_id: string;
              decision: string;
              reviewer?: string;
              amount_eur?: number;
              note?: string;
              paid_out_of_band?: boolean;
            };

/** The plain path: a recorded verdict's reason, layer and checks read by the schema (`plainShown`'s reference). */
export function shownBySchema(details: unknown): { ok: true; shown: ShownVerdict } | { ok: false; error: string } {
  const parsed = VERDICT_SHOWN.safeParse(details);
  return parsed.success ? { ok: true, shown: parsed.data } : { ok: false, error: firstIssue(parsed.error) };
}

/** The plain path: a recorded verdict's details read by the schema (`plainVerdict`'s reference). */
export function verdictBySchema(
  details: unknown,
): { ok: true; verdict: Parsed<"KERNEL_VERDICT"> } | { ok: false; error: string } {
  const parsed = SCHEMAS.KERNEL_VERDICT.safeParse(details);
  return parsed.success ? { ok: true, verdict: parsed.data } : { ok: false, error: firstIssue(parsed.error) };
}

/** The recorded inputs of the two kinds the kernel decided from. */
export type InputsKind = "PROPOSAL_SUBMITTED" | "CLAIM_TRIAGED";
/** The inputs of `K` as a backtest reads them. */
export type Inputs<K extends InputsKind> = K extends "PROPOSAL_SUBMITTED"
  ? Parsed<"PROPOSAL_SUBMITTED">["kernel_inputs"]
  : Parsed<"CLAIM_TRIAGED">["triage_inputs"];

/** The plain path: recorded kernel or triage inputs read by the schema (`plainInputs`'s reference). */
export function inputsBySchema<K extends InputsKind>(
  kind: K,
  v: unknown,
): { ok: true; inputs: Inputs<K> } | { ok: false; error: string } {
  const parsed = SCHEMAS[kind].safeParse(v);
  return parsed.success
    ? { ok: true, inputs: parsed.data as unknown as Inputs<K> }
    : { ok: false, error: firstIssue(parsed.error) };
}

/** The first issue of a schema's refusal, with its path. */
export function firstIssue(error: z.ZodError): string {
  const first = error.issues[0];
  return `${first?.path.join(".") || "(details)"}: ${first?.message ?? "invalid"}`;
}
