// The aws-requests bench's data keys (issue 37): the envelope vault over keys kept in memory, each lookup that reaches
// the store counted against the handler invocation it ran in. As on AWS (functions/composition/compose.ts), the store
// is remembered per invocation (adapters/vault/invocation-keys.ts), so a count is a read of the key item there: a
// consistent GetItem; a key made is a PutItem, wrapped under the day's branch key (adapters/aws/kms-keys.ts, no KMS call
// per claim); a fresh subject's key (a claim id its invocation drew) is that PutItem alone, no read first ("put").
// bench/cost.ts prices those from the counts. (A fresh lookup that finds a key or tombstone after all — an id drawn
// twice — would cost a failed put and a read on AWS; random ids never do, and it is counted as the read alone.)
import { randomBytes } from "node:crypto";
import { envelopeVault } from "../../adapters/vault/envelope.ts";
import type { DataKeyState, DataKeyStore } from "../../adapters/vault/envelope.ts";
import { rememberedPerInvocation } from "../../adapters/vault/invocation-keys.ts";
import type { KeyLookup } from "../../adapters/vault/invocation-keys.ts";
import type { PersonalDataVault } from "../../pipeline/ports.ts";

/**
 * What one lookup found: a key made now (after a read of its item), a key put at once for a fresh subject (one its
 * invocation drew: no read, kms-keys.ts), an existing key, none (not asked to make one), or a tombstone.
 */
export type KeyLookupOutcome = "made" | "put" | "found" | "none" | "erased";

/** A key store in memory that tells `note` of every lookup and what it found. */
export function countedKeyStore(note: (subject: string, outcome: KeyLookupOutcome) => void): DataKeyStore {
  const keys = new Map<string, Buffer | "erased">();
  return {
    async key(subject, { create, fresh }: KeyLookup): Promise<DataKeyState> {
      const kept = keys.get(subject);
      if (kept === "erased") {
        note(subject, "erased");
        return { state: "erased" };
      }
      if (kept !== undefined) {
        note(subject, "found");
        return { state: "key", key: kept };
      }
      if (!create) {
        note(subject, "none");
        return { state: "none" };
      }
      const key = randomBytes(32);
      keys.set(subject, key);
      note(subject, fresh === true ? "put" : "made");
      return { state: "key", key };
    },
    async destroy(subject) {
      const kept = keys.get(subject);
      keys.set(subject, "erased");
      return kept === undefined ? "unknown" : kept === "erased" ? "already_erased" : "destroyed";
    },
  };
}

/**
 * The vault the deployed functions compose (no keys kept by the vault itself, each subject's state remembered for
 * the rest of a handler invocation), over {@link countedKeyStore}: each counted lookup is a read of the key item.
 */
export function countedVault(note: (subject: string, outcome: KeyLookupOutcome) => void): PersonalDataVault {
  return envelopeVault(rememberedPerInvocation(countedKeyStore(note)), { cacheKeys: false });
}
