// The aws-requests bench's data keys (issue 37): the envelope vault over keys kept in memory, each lookup counted
// against the handler invocation it ran in. On AWS the same vault runs over `kmsKeyStore` (adapters/aws/kms-keys.ts,
// `cacheKeys: false`): every lookup reads the key item, a new key is a KMS GenerateDataKey and a put, and a container
// that has not unwrapped a subject's key yet asks KMS to Decrypt it. bench/cost.ts prices those from the counts.
import { randomBytes } from "node:crypto";
import { envelopeVault } from "../../adapters/vault/envelope.ts";
import type { DataKeyState, DataKeyStore } from "../../adapters/vault/envelope.ts";
import { rememberedPerInvocation } from "../../adapters/vault/invocation-keys.ts";
import type { PersonalDataVault } from "../../pipeline/ports.ts";

/** What one lookup found: a key made now, an existing key, none (not asked to make one), or a tombstone. */
export type KeyLookupOutcome = "made" | "found" | "none" | "erased";

/** A key store in memory that tells `note` of every lookup and what it found. */
export function countedKeyStore(note: (subject: string, outcome: KeyLookupOutcome) => void): DataKeyStore {
  const keys = new Map<string, Buffer | "erased">();
  return {
    async key(subject, { create }): Promise<DataKeyState> {
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
      note(subject, "made");
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
