// Every reason code of the claims kernel, with its layer and verdict (SPEC §4.2), defined once.
import * as z from "zod";
import type { VerdictKind } from "../integrity/verdict.ts";

/** The kernel layers in evaluation order (SPEC §4.2), plus the pass row. */
export const KERNEL_LAYERS = {
  1: "schema",
  2: "validity",
  3: "order",
  4: "category",
  5: "window",
  6: "amount",
  7: "balance",
  8: "alignment",
  9: "uncertainty",
  10: "date_sanity",
  11: "limit",
  12: "pass",
} as const;

/** A kernel layer number, 1–11, and 12 for "all passed". */
export type KernelLayer = keyof typeof KERNEL_LAYERS;

/** Each reason code with the layer that emits it and the verdict it carries; REJECT layers precede ESCALATE layers. */
export const REASON_CODES = {
  SCHEMA_INVALID: { layer: 1, verdict: "REJECT" },
  IDEMPOTENCY_KEY_MISMATCH: { layer: 1, verdict: "REJECT" },
  PROPOSAL_ID_MISMATCH: { layer: 1, verdict: "REJECT" },
  POLICY_KIND_MISSING: { layer: 1, verdict: "REJECT" },
  POLICY_KIND_UNKNOWN: { layer: 1, verdict: "REJECT" },
  POLICY_KIND_NOT_ALLOWED: { layer: 1, verdict: "REJECT" },
  AGENT_NOT_REGISTERED: { layer: 1, verdict: "REJECT" },
  AGENT_NOT_AUTHORISED: { layer: 1, verdict: "REJECT" },
  TTL_EXPIRED: { layer: 2, verdict: "REJECT" },
  ORDER_ID_MISSING: { layer: 3, verdict: "REJECT" },
  ORDER_NOT_FOUND: { layer: 3, verdict: "REJECT" },
  CATEGORY_NOT_ALLOWED: { layer: 4, verdict: "REJECT" },
  CATEGORY_NOT_AUTHORISED: { layer: 4, verdict: "REJECT" },
  OUTSIDE_RETURN_WINDOW: { layer: 5, verdict: "REJECT" },
  INVALID_AMOUNT: { layer: 6, verdict: "REJECT" },
  EXCEEDS_REFUNDABLE_BALANCE: { layer: 7, verdict: "REJECT" },
  PROPOSAL_MISMATCH: { layer: 8, verdict: "REJECT" },
  AGENT_REQUESTED_ESCALATION: { layer: 9, verdict: "ESCALATE" },
  REPLACEMENT_REQUIRES_REVIEW: { layer: 9, verdict: "ESCALATE" },
  LOW_CONFIDENCE: { layer: 9, verdict: "ESCALATE" },
  PURCHASE_DATE_IN_FUTURE: { layer: 10, verdict: "ESCALATE" },
  AMOUNT_ABOVE_LIMIT: { layer: 11, verdict: "ESCALATE" },
  VALIDATION_PASSED: { layer: 12, verdict: "ACCEPT" },
} as const satisfies Record<string, { layer: KernelLayer; verdict: VerdictKind }>;

/** A claims kernel reason code. */
export type ClaimReasonCode = keyof typeof REASON_CODES;

/** The reason code schema, for events and stored verdicts. */
export const ClaimReasonCodeSchema = z.enum(Object.keys(REASON_CODES) as [ClaimReasonCode, ...ClaimReasonCode[]]);
