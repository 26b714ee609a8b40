// A recorded proposal whose customer's reason is erased (claims erase, docs/customer-data.md) still carries the id
// and idempotency key hashed over the reason it no longer has, so the kernel's first layer, which checks the key
// against the content, would refuse it. Replay and backtest give the kernel the erased proposal with the key of its
// own erased content instead; what the kernel decides on (order, amount, category, confidence) is unchanged.
import { buildProposal } from "../integrity/proposal.ts";
import type { PolicyProposal } from "../integrity/proposal.ts";
import { proposalOutputOf } from "../claim/proposal-output.ts";
import { erasedPaths } from "../privacy/sealing.ts";

/** Whether a recorded proposal has an erased field. */
export function isErasedProposal(proposal: unknown): boolean {
  return erasedPaths(proposal).length > 0;
}

/** The proposal as the kernel can check it: an erased one with the id and key of its erased content, else as is. */
export function kernelReadyProposal<T>(proposal: T): T | PolicyProposal {
  if (!isErasedProposal(proposal)) return proposal;
  const p = proposal as unknown as PolicyProposal;
  const output = proposalOutputOf(p);
  if (!output) return proposal;
  return buildProposal({
    dfid: p.dfid,
    agentId: p.agent_id,
    output,
    createdAt: p.created_at,
    validForMs: p.valid_for_ms,
  });
}
