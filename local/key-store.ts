// The data keys of `claims serve` (docs/customer-data.md): the key files of adapters/vault/key-files.ts, each key kept
// in memory once read and checked against its file on every use — one stat, where reading it again took five system
// calls (issue 37: ~60 key reads per claim). As on AWS (adapters/aws/kms-keys.ts keeps the keys KMS unwrapped and
// reads their item once per handler invocation), an erasure holds from the next invocation on: `claims erase` and the
// retention policy, in this process or another, unlink the key file (after leaving the tombstone), so the stat fails
// and the key is forgotten; a key file is never written again in place (a new key is a new file, linked), so a file still there
// with the same identity holds the same key.
import { statSync } from "node:fs";
import { envelopeVault } from "../adapters/vault/envelope.ts";
import type { DataKeyState, DataKeyStore } from "../adapters/vault/envelope.ts";
import { keyFileBase, keyFileStore } from "../adapters/vault/key-files.ts";
import { rememberedPerInvocation } from "../adapters/vault/invocation-keys.ts";
import type { PersonalDataVault } from "../pipeline/ports.ts";

/** How many keys (and key file names) are kept; the oldest goes first. */
export const KEYS_KEPT = 1000;

type Kept = { readonly key: Buffer; readonly dev: number; readonly ino: number };

/** The key files in `dir`, each key kept once read and checked against its file (one stat) on every use. */
export function checkedKeyFileStore(dir: string): DataKeyStore {
  const files = keyFileStore(dir);
  const kept = new Map<string, Kept>();
  const paths = new Map<string, string>();
  const bounded = <V>(map: Map<string, V>, subject: string, value: V) => {
    map.delete(subject);
    map.set(subject, value);
    if (map.size > KEYS_KEPT) map.delete(map.keys().next().value as string);
  };
  const pathOf = (subject: string): string => {
    const known = paths.get(subject);
    if (known !== undefined) return known;
    const path = `${keyFileBase(dir, subject)}.key`;
    bounded(paths, subject, path);
    return path;
  };
  return {
    async key(subject, opts): Promise<DataKeyState> {
      const path = pathOf(subject);
      const known = kept.get(subject);
      if (known !== undefined) {
        const now = statSync(path, { throwIfNoEntry: false });
        if (now !== undefined && now.ino === known.ino && now.dev === known.dev)
          return { state: "key", key: known.key };
        kept.delete(subject);
      }
      const found = await files.key(subject, opts);
      if (found.state === "key") {
        const read = statSync(path, { throwIfNoEntry: false });
        if (read !== undefined) bounded(kept, subject, { key: found.key, dev: read.dev, ino: read.ino });
      }
      return found;
    },
    destroy(subject) {
      kept.delete(subject);
      return files.destroy(subject);
    },
  };
}

/**
 * The vault of `claims serve` (and its handler thread): the envelope cipher over the checked key files in `dir`, each
 * subject's key checked once per handler invocation (a request, a queue batch), as on AWS.
 */
export function servedLocalVault(dir: string): PersonalDataVault {
  return envelopeVault(rememberedPerInvocation(checkedKeyFileStore(dir)), { cacheKeys: false });
}
