// When a stored verdict counts as published. Its events go to the bus before its claim is recorded DECIDED with
// its verdict_id, so that record proves the publication: the verdict item is not written a third time to say so.
// Only a verdict whose claim does not take it (a REFUSED execution, or a claim that moved on meanwhile) is marked
// `published` on its own item. A PENDING verdict is never published either way: execution settles first.
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { StoredVerdict } from "../ports.ts";

/** True when `stored` was published: marked so, or its claim is recorded DECIDED with its verdict_id. */
export function verdictPublished(
  stored: Pick<StoredVerdict, "published" | "execution"> & { readonly record: { readonly verdict_id: string } },
  claim: Pick<ClaimRecord, "status" | "verdict_id"> | undefined,
): boolean {
  if (stored.published) return true;
  return stored.execution !== "PENDING" && claim?.status === "DECIDED" && claim.verdict_id === stored.record.verdict_id;
}
