// The kernel's first layers, on the proposal itself (docs/kernel.md): schema (1), alignment with its claim (8, run
// second) and validity (2). Each check is a named row of KERNEL_TABLE (core/kernel/kernel.ts).
import { canonicalizeStable } from "../crew/canonical.ts";
import { PolicyKindSchema } from "../integrity/contracts.ts";
import { computeIdempotencyKey, ProposalEnvelopeSchema, proposalIdFor } from "../integrity/proposal.ts";
import { findRegisteredAgent } from "../integrity/registry.ts";
import { readsErased } from "../privacy/sealing.ts";
import { parseIsoMs } from "../integrity/time.ts";
import { check, fail, PASSED, passWith, proposalOf, show, SKIPPED } from "./kernel-state.ts";
import { proposedLinesOf } from "./claim-lines.ts";
import { formatEur, parseThousandths } from "./money.ts";

// ---- layer 1 — schema: the proposal parses, is intact, its kind is allowed, its agent registered and authorised.

export const proposalSchema = check("proposal_schema", ["SCHEMA_INVALID"], (s) => {
  const parsed = ProposalEnvelopeSchema.safeParse(s.input.proposal);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`);
    return fail("SCHEMA_INVALID", `Proposal does not parse: ${issues.join("; ")}`);
  }
  const p = parsed.data;
  const createdMs = parseIsoMs(p.created_at);
  if (createdMs === undefined)
    return fail("SCHEMA_INVALID", `Proposal does not parse: created_at: ${show(p.created_at)} is not a real date`);
  return passWith({ envelope: { p, createdMs }, orderId: p.params.order_id, amountEur: p.params.amount_eur });
});

export const idempotencyKey = check("idempotency_key", ["IDEMPOTENCY_KEY_MISMATCH"], (s) => {
  const p = proposalOf(s);
  if (computeIdempotencyKey(p, s.input.sha256) === p.idempotency_key) return PASSED;
  // A person approving an escalated claim whose customer's words were erased since (docs/customer-data.md): the key
  // hashed those words and cannot be computed again. This check passed on this very proposal when the kernel
  // escalated it (the audit holds that verdict, and the review record is the table's own copy of the proposal); the
  // approval's other checks run on what survives the erasure: the order, the amounts, the ledger.
  if (s.input.approval && readsErased(p)) return PASSED;
  return fail(
    "IDEMPOTENCY_KEY_MISMATCH",
    "Proposal idempotency_key does not match its content (SHA-256 of the DFID and the canonical proposal)",
  );
});

export const proposalId = check("proposal_id", ["PROPOSAL_ID_MISMATCH"], (s) => {
  const p = proposalOf(s);
  return p.proposal_id === proposalIdFor(p.idempotency_key)
    ? PASSED
    : fail("PROPOSAL_ID_MISMATCH", `Proposal id ${show(p.proposal_id)} is not derived from its idempotency_key`);
});

export const policyKind = check(
  "policy_kind",
  ["POLICY_KIND_MISSING", "POLICY_KIND_UNKNOWN", "POLICY_KIND_NOT_ALLOWED"],
  ({ input: { responsibility }, envelope }) => {
    const raw = envelope!.p.policy_kind;
    if (raw === undefined || raw === null || raw === "")
      return fail("POLICY_KIND_MISSING", "Proposal has no policy kind");
    const kind = PolicyKindSchema.safeParse(raw);
    if (!kind.success)
      return fail(
        "POLICY_KIND_UNKNOWN",
        `Policy kind ${show(raw)} is not one of ${PolicyKindSchema.options.join(", ")}`,
      );
    if (!responsibility.allowed_policy_types.includes(kind.data))
      return fail(
        "POLICY_KIND_NOT_ALLOWED",
        `Policy kind '${kind.data}' not in allowed_policy_types [${responsibility.allowed_policy_types.join(", ")}] of agent ${responsibility.agent_id}`,
      );
    return passWith({ policyKind: kind.data });
  },
);

export const agentRegistered = check("agent_registered", ["AGENT_NOT_REGISTERED"], (s) => {
  const { agent_id } = proposalOf(s);
  return findRegisteredAgent(s.input.registry, agent_id)
    ? PASSED
    : fail("AGENT_NOT_REGISTERED", `Agent ${show(agent_id)} is not registered`);
});

export const agentAuthorised = check("agent_authorised", ["AGENT_NOT_AUTHORISED"], (s) => {
  const { agent_id } = proposalOf(s);
  const agent = findRegisteredAgent(s.input.registry, agent_id)!;
  const unauthorised =
    agent.status !== "ACTIVE"
      ? "its registration was revoked"
      : agent_id !== s.input.responsibility.agent_id
        ? `the kernel enforces the contract of agent ${s.input.responsibility.agent_id}`
        : canonicalizeStable(agent.contract) !== canonicalizeStable(s.input.responsibility)
          ? "its registered contract differs from the contract the kernel enforces"
          : undefined;
  return unauthorised === undefined
    ? PASSED
    : fail("AGENT_NOT_AUTHORISED", `Agent ${show(agent_id)} is not authorised: ${unauthorised}`);
});

// ---- layer 8 — alignment: the proposal answers this claim — same flow, same order, no more than claimed, and a
// positive amount when the claim's is.

export const flowAlignment = check("flow_alignment", ["PROPOSAL_MISMATCH"], (s) => {
  if (s.input.dfid === undefined) return SKIPPED;
  const { dfid } = proposalOf(s);
  return dfid === s.input.dfid
    ? PASSED
    : fail("PROPOSAL_MISMATCH", `Proposal belongs to decision flow ${show(dfid)}, not ${s.input.dfid}`);
});

export const orderAlignment = check("order_alignment", ["PROPOSAL_MISMATCH"], ({ input: { claim }, orderId }) =>
  orderId === claim.order_id
    ? PASSED
    : fail(
        "PROPOSAL_MISMATCH",
        `Proposal order ${show(orderId)} differs from the claim's order ${show(claim.order_id)}`,
      ),
);

export const amountAlignment = check("amount_alignment", ["PROPOSAL_MISMATCH"], ({ input: { claim }, amountEur }) => {
  // Both count the order's currency (checked exact in it at layer 6): compared in thousandths, KWD's three decimals.
  const claimed = parseThousandths(claim.amount_eur);
  const proposed = parseThousandths(amountEur);
  const claimedText = claimed.ok ? thousandthsText(claimed.units) : String(claim.amount_eur);
  if (proposed.ok && (claimed.ok ? proposed.units > claimed.units : proposed.units / 1000 > claim.amount_eur))
    return fail(
      "PROPOSAL_MISMATCH",
      `Proposal amount ${thousandthsText(proposed.units)} EUR exceeds the claimed amount ${claimedText} EUR`,
    );
  if (claim.amount_eur > 0 && (!proposed.ok || proposed.units <= 0))
    return fail(
      "PROPOSAL_MISMATCH",
      `Proposal amount ${show(amountEur)} is not a positive amount for a claim of ${claimedText} EUR`,
    );
  return PASSED;
});

/**
 * A proposal that names lines (docs/kernel.md#orders-with-lines) names lines of its claim — the claim must name its
 * lines: a model never sees the order, so it cannot choose a line the claim did not — at most the claim's units of
 * each, each line once, their amounts adding up to the proposal's. Not run (nor traced) for a proposal without lines.
 */
export const linesAlignment = check("lines_alignment", ["PROPOSAL_MISMATCH"], (s) => {
  const raw = (s.envelope?.p.params as { lines?: unknown } | undefined)?.lines;
  if (raw === undefined) return SKIPPED;
  const mismatch = (why: string) => fail("PROPOSAL_MISMATCH", `Proposal lines ${why}`);
  const lines = proposedLinesOf(s.envelope!.p);
  if (lines === undefined) return mismatch("are not a list of { line_id, quantity, amount }");
  const { claim } = s.input;
  if (claim.lines === undefined)
    return mismatch(`name ${lines.map((l) => show(l.line_id)).join(", ")}, but the claim names no lines`);
  const seen = new Set<string>();
  let total = 0;
  for (const line of lines) {
    const own = claim.lines.find((c) => c.line_id === line.line_id);
    if (own === undefined || seen.has(line.line_id))
      return mismatch(
        own === undefined
          ? `name line ${show(line.line_id)}, which the claim does not (its lines: ${claim.lines.map((c) => c.line_id).join(", ")})`
          : `name line ${show(line.line_id)} twice`,
      );
    seen.add(line.line_id);
    if (line.quantity !== null && (!Number.isSafeInteger(line.quantity) || line.quantity <= 0))
      return mismatch(`give line ${line.line_id} ${show(line.quantity)} units, not a positive whole number`);
    if (line.quantity !== null && own.quantity !== undefined && line.quantity > own.quantity)
      return mismatch(`give line ${line.line_id} ${line.quantity} units; the claim claims ${own.quantity}`);
    const amount = parseThousandths(line.amount);
    if (!amount.ok || amount.units <= 0)
      return mismatch(`give line ${line.line_id} the amount ${show(line.amount)}, not a positive amount`);
    total += amount.units;
  }
  const proposed = parseThousandths(s.amountEur);
  return proposed.ok && proposed.units === total
    ? PASSED
    : mismatch(
        `add up to ${thousandthsText(total)}, not the proposal's amount ${proposed.ok ? thousandthsText(proposed.units) : show(s.amountEur)}`,
      );
});

/** An amount in thousandths as the reasons have always shown cent amounts ("299.9"), and a third decimal when it has one. */
function thousandthsText(units: number): string {
  return units % 10 === 0 ? formatEur(units / 10) : String(units / 1000);
}

// ---- layer 2 — validity: the proposal is not older than its validity window when the kernel sees it (exactly at
// it passes).

export const ttl = check("ttl", ["TTL_EXPIRED"], (s) => {
  const { p, createdMs } = s.envelope!;
  const ageMs = s.decidedMs - createdMs;
  return ageMs <= p.valid_for_ms
    ? PASSED
    : fail(
        "TTL_EXPIRED",
        `Proposal expired: created ${p.created_at}, seen ${s.input.decidedAt}, ${ageMs} ms old, valid for ${p.valid_for_ms} ms`,
      );
});
