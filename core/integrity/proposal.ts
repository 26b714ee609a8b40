// The DIR PolicyProposal: what crosses "the wall" from the crew (user space) to the kernel.
import * as z from "zod";
import { PolicyKindSchema, type PolicyKind } from "./contracts.ts";
import { canonicalize } from "../crew/canonical.ts";
import { CanonicalJsonError } from "../crew/errors.ts";
import { hashHex } from "../crew/hash.ts";
import type { Sha256Hex } from "../crew/hash.ts";
import { ProposalInputError } from "./errors.ts";

const HEX64 = /^[0-9a-f]{64}$/;

/** A line a proposal refunds: the kernel checks it against the claim and the order (docs/kernel.md#orders-with-lines). */
const ProposalLineSchema = z
  .object({ line_id: z.string().min(1), quantity: z.number().nullable(), amount: z.number() })
  .strict();

/** The refund parameters a proposal carries; `lines` only when the Decision Maker proposed per line. */
const ProposalParamsSchema = z
  .object({
    order_id: z.string().min(1),
    amount_eur: z.number(),
    category: z.string(),
    reason: z.string(),
    lines: z.array(ProposalLineSchema).min(1).max(50).optional(),
  })
  .strict();

/** A DIR policy proposal as built by `buildProposal`: a claim about what should happen, never a fact. */
export const PolicyProposalSchema = z
  .object({
    proposal_id: z.string().min(1),
    dfid: z.string().min(1),
    agent_id: z.string().min(1),
    policy_kind: PolicyKindSchema,
    params: ProposalParamsSchema,
    confidence: z.number().min(0).max(1),
    created_at: z.iso.datetime({ offset: true }),
    valid_for_ms: z.number().int().positive(),
    idempotency_key: z.string().regex(HEX64, "idempotency_key must be 64 lowercase hex characters"),
  })
  .strict();

/** A well-formed policy proposal. */
export type PolicyProposal = z.infer<typeof PolicyProposalSchema>;

/**
 * What the kernel's layer 1 ("proposal parses") demands: the envelope is strict, but the policy kind
 * and the params' values stay unknown so that later layers can name what is wrong with them
 * (a missing order id is `ORDER_ID_MISSING`, a string amount is `INVALID_AMOUNT`, not a schema error).
 */
export const ProposalEnvelopeSchema = z
  .object({
    proposal_id: z.string().min(1),
    dfid: z.string().min(1),
    agent_id: z.string().min(1),
    policy_kind: z.unknown().optional(),
    params: z
      .object({
        order_id: z.unknown().optional(),
        amount_eur: z.unknown().optional(),
        category: z.unknown().optional(),
        reason: z.unknown().optional(),
        lines: z.unknown().optional(),
      })
      .strict(),
    confidence: z.number().min(0).max(1),
    created_at: z.iso.datetime({ offset: true }),
    valid_for_ms: z.number().int().positive(),
    idempotency_key: z.string().regex(HEX64, "idempotency_key must be 64 lowercase hex characters"),
  })
  .strict();

/** The fields the idempotency key covers: everything but `proposal_id`, `created_at` and the key itself. */
type ProposalKeyMaterial = {
  dfid: string;
  agent_id: string;
  policy_kind?: unknown;
  params?: unknown;
  confidence?: unknown;
  valid_for_ms?: unknown;
};

/**
 * The idempotency key: SHA-256 hex of the canonical JSON of the key material, so a proposal rebuilt
 * later for the same flow with the same content gets the same key. Values JSON cannot carry
 * (NaN, Infinity) are hashed under a tagged form instead of failing.
 */
export function computeIdempotencyKey(material: ProposalKeyMaterial, sha256: Sha256Hex = hashHex): string {
  return sha256(
    canonicalHashable({
      dfid: material.dfid,
      agent_id: material.agent_id,
      policy_kind: material.policy_kind,
      params: material.params,
      confidence: material.confidence,
      valid_for_ms: material.valid_for_ms,
    }),
  );
}

/** The proposal id derived from an idempotency key (`prop_` + its first 24 hex characters). */
export function proposalIdFor(idempotencyKey: string): string {
  return `prop_${idempotencyKey.slice(0, 24)}`;
}

/**
 * What a proposal is built from: the Decision Maker's output (core/agents validates it with
 * `RefundProposalOutputSchema`, whose output is this type).
 */
export type ProposalOutput = {
  action: PolicyKind;
  order_id: string;
  amount_eur: number;
  category: string;
  reason: string;
  confidence: number;
  /** Per line; null, absent or empty: for the claim as a whole (the params then are exactly what they were before lines). */
  lines?: readonly { line_id: string; quantity: number | null; amount: number }[] | null | undefined;
};

/** The envelope without the derived fields, built once (zod schema construction is not free). */
const ProposalMaterialSchema = ProposalEnvelopeSchema.omit({ proposal_id: true, idempotency_key: true });

/** What `buildProposal` needs: the flow, the agent, the Decision Maker's output, and the injected clock value. */
type BuildProposalInput = {
  dfid: string;
  agentId: string;
  output: ProposalOutput;
  createdAt: string;
  validForMs: number;
  /** The SHA-256 to key it with (any implementation gives the same key); default the pure one. */
  sha256?: Sha256Hex;
};

/** Builds the policy proposal for a Decision Maker output; throws `ProposalInputError` naming any bad input. */
export function buildProposal(input: BuildProposalInput): PolicyProposal {
  const { dfid, agentId, output, createdAt, validForMs } = input;
  const policy_kind: PolicyKind = output.action;
  const params = {
    order_id: output.order_id,
    amount_eur: output.amount_eur,
    category: output.category,
    reason: output.reason,
    ...(output.lines && output.lines.length > 0 ? { lines: output.lines.map((l) => ({ ...l })) } : {}),
  };
  const material = {
    dfid,
    agent_id: agentId,
    policy_kind,
    params,
    confidence: output.confidence,
    valid_for_ms: validForMs,
  };
  const shape = ProposalMaterialSchema.safeParse({ ...material, created_at: createdAt });
  if (!shape.success)
    throw new ProposalInputError(`buildProposal: ${z.prettifyError(shape.error)}`, { cause: shape.error });
  let idempotency_key: string;
  try {
    idempotency_key = computeIdempotencyKey(material, input.sha256);
  } catch (cause) {
    throw new ProposalInputError("buildProposal: the proposal content cannot be canonicalized", { cause });
  }
  const proposal = { proposal_id: proposalIdFor(idempotency_key), ...material, created_at: createdAt, idempotency_key };
  const parsed = PolicyProposalSchema.safeParse(proposal);
  if (!parsed.success)
    throw new ProposalInputError(`buildProposal: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  return parsed.data;
}

/**
 * The idempotency key the verdict store should use for any kernel input, even one that did not parse:
 * the content-derived key of a parsed envelope (never the key the proposal merely claims), or a hash of
 * the raw input under `fallbackDfid` for an input that is not a proposal at all.
 */
export function idempotencyKeyOf(proposal: unknown, fallbackDfid: string, sha256: Sha256Hex = hashHex): string {
  const envelope = ProposalEnvelopeSchema.safeParse(proposal);
  if (envelope.success) return computeIdempotencyKey(envelope.data, sha256);
  return sha256(`unparsed-proposal|${canonicalize(hashable({ dfid: fallbackDfid, raw: proposal }))}`);
}

/**
 * `canonicalize(hashable(value))` in one pass, without building the intermediate copy (the kernel keys every
 * proposal it decides): the same string for every value, which core/integrity/proposal.test.ts checks on
 * arbitrary values against the two-step form.
 */
export function canonicalHashable(value: unknown): string {
  const text = writeHashable(value, 0);
  if (text === undefined) throw new CanonicalJsonError("canonicalize: cannot encode a undefined");
  return text;
}

// A string JSON.stringify would write as is between quotes: no quote, backslash, control character or surrogate.
// eslint-disable-next-line no-control-regex -- the control characters are exactly what JSON escapes
const PLAIN_STRING = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;
const jsonString = (s: string) => (PLAIN_STRING.test(s) ? `"${s}"` : JSON.stringify(s));

function writeHashable(value: unknown, depth: number): string | undefined {
  if (depth > 32) return '{"$unhashable":"depth"}';
  switch (typeof value) {
    case "string":
      return jsonString(value);
    case "boolean":
      return value ? "true" : "false";
    case "undefined":
      return undefined;
    case "number":
      // String() writes a finite number exactly as JSON.stringify does (both are Number::toString).
      return Number.isFinite(value) ? String(value) : `{"$number":${JSON.stringify(String(value))}}`;
    case "bigint":
      return `{"$bigint":${JSON.stringify(value.toString())}}`;
    case "object":
      break;
    default:
      return `{"$unhashable":${JSON.stringify(typeof value)}}`;
  }
  if (value === null) return "null";
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (i > 0) out += ",";
      out += v === undefined ? "null" : writeHashable(v, depth + 1)!;
    }
    return out + "]";
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  if (keys.length > 1) keys.sort();
  let out = "{";
  let first = true;
  for (const key of keys) {
    const text = writeHashable(obj[key], depth + 1);
    if (text === undefined) continue;
    if (!first) out += ",";
    first = false;
    out += `${jsonString(key)}:${text}`;
  }
  return out + "}";
}

/** Maps a value to plain JSON data for hashing: non-finite numbers and non-JSON values become tagged objects. */
export function hashable(value: unknown, depth = 0): unknown {
  if (depth > 32) return { $unhashable: "depth" };
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (value === undefined) return undefined;
  if (typeof value === "number") return Number.isFinite(value) ? value : { $number: String(value) };
  if (typeof value === "bigint") return { $bigint: value.toString() };
  if (typeof value !== "object") return { $unhashable: typeof value };
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : hashable(v, depth + 1)));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    // defineProperty, not assignment: a key named "__proto__" must stay an ordinary member.
    Object.defineProperty(out, key, {
      value: hashable((value as Record<string, unknown>)[key], depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
