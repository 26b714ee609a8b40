// The local stack's data keys: one file per subject in `<data-dir>/keys/` (0700), each 0600, named by the SHA-256 of
// the subject (no claim or customer id in a file name). Destroying overwrites the key, removes it and leaves a
// `.erased` tombstone, so a claim still in flight can never seal anew under a key made after the erasure.
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VaultUnavailableError } from "../../pipeline/errors.ts";
import type { DestroyOutcome } from "../../pipeline/ports.ts";
import { envelopeVault } from "./envelope.ts";
import type { DataKeyState, DataKeyStore } from "./envelope.ts";
import type { PersonalDataVault } from "../../pipeline/ports.ts";

/** The folder of the data keys in a data directory. */
export function keysDir(dataDir: string): string {
  return join(dataDir, "keys");
}

/** A vault over the key files in `dir`, each read on every use (no key cached); `claims serve` keeps them checked (local/key-store.ts). */
export function servedVault(dir: string): PersonalDataVault {
  return envelopeVault(keyFileStore(dir), { cacheKeys: false });
}

/** The path of `subject`'s key files in `dir`, less the extension (`.key`, `.erased`): the SHA-256 of the subject. */
export function keyFileBase(dir: string, subject: string): string {
  return join(dir, createHash("sha256").update(subject, "utf8").digest("hex"));
}

/** Data keys as owner-only files in `dir` (created 0700 on first use). */
export function keyFileStore(dir: string): DataKeyStore {
  const name = (subject: string) => keyFileBase(dir, subject);
  const ensureDir = () => {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  };
  const read = (path: string): DataKeyState => {
    if (existsSync(`${path}.erased`)) return { state: "erased" };
    try {
      const key = readFileSync(`${path}.key`);
      if (key.length !== 32) throw new VaultUnavailableError(`${path}.key is not a 256-bit key (${key.length} bytes)`);
      return { state: "key", key };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { state: "none" };
      throw error instanceof VaultUnavailableError
        ? error
        : new VaultUnavailableError(`cannot read the data key ${path}.key`, { cause: error });
    }
  };
  return {
    async key(subject, { create }) {
      const path = name(subject);
      const found = read(path);
      if (found.state !== "none" || !create) return found;
      ensureDir();
      // Written whole to a file of its own, then linked in place: another process (serve's handler thread, a
      // command) never reads a key file half written, and of two makers at once the first link wins.
      const tmp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
      try {
        writeFileSync(tmp, randomBytes(32), { flag: "wx", mode: 0o600 });
        linkSync(tmp, `${path}.key`);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST")
          throw new VaultUnavailableError(`cannot write the data key ${path}.key`, { cause: error });
      } finally {
        unlinkIfThere(tmp);
      }
      // An erasure between the read and the write leaves its tombstone: the key just made is removed again.
      if (existsSync(`${path}.erased`)) {
        unlinkIfThere(`${path}.key`);
        return { state: "erased" };
      }
      return read(path);
    },
    async destroy(subject): Promise<DestroyOutcome> {
      const path = name(subject);
      if (existsSync(`${path}.erased`)) return "already_erased";
      ensureDir();
      writeFileSync(`${path}.erased`, "", { mode: 0o600 });
      if (!existsSync(`${path}.key`)) return "unknown";
      writeFileSync(`${path}.key`, Buffer.alloc(32));
      unlinkIfThere(`${path}.key`);
      return "destroyed";
    },
  };
}

function unlinkIfThere(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
