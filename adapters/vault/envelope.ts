// The vault's cipher, whatever keeps the keys: AES-256-GCM under a 256-bit data key per subject, the subject as
// associated data (a token moved to another subject does not open), and a synthetic 96-bit IV: the first 12 bytes
// of HMAC-SHA256(k_iv, subject ‖ 0x00 ‖ plaintext), k_iv derived from the data key by HKDF (SIV construction,
// RFC 5297's idea over GCM). The same text sealed twice under one key is the same token, so everything that compares
// or hashes what is stored — a conditional write, a FIFO queue's content-based dedup, a redelivered event's body —
// sees no change where there is none (issue 38: random IVs broke exactly-once under chaos). Two different texts
// get different IVs (a GCM IV is never reused for two plaintexts, short of a 2^-96 HMAC collision); what the
// determinism reveals is only that two fields of one claim hold the same text. The keys live in a DataKeyStore: key
// files on the local stack (key-files.ts), KMS-wrapped keys in the table on AWS (kms-keys.ts).
import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from "node:crypto";
import { ERASED, isSealed, SEALED_PREFIX } from "../../core/privacy/sealing.ts";
import { SealedFieldError } from "../../pipeline/errors.ts";
import type { DestroyOutcome, PersonalDataVault } from "../../pipeline/ports.ts";

/** A subject's data key as the store holds it: the key, a tombstone where it was destroyed, or nothing yet. */
export type DataKeyState = { state: "key"; key: Buffer } | { state: "erased" } | { state: "none" };

/** Where data keys are kept: made once per subject, destroyed for good (a tombstone stays so none is made again). */
export interface DataKeyStore {
  /** The subject's key; with `create`, made now when it has none (never after a tombstone). */
  key(subject: string, opts: { create: boolean }): Promise<DataKeyState>;
  /** Destroys the subject's key and leaves a tombstone. */
  destroy(subject: string): Promise<DestroyOutcome>;
}

const b64u = (b: Buffer): string => b.toString("base64url");

/**
 * The IV keys derived from the data keys a store hands out, by the key's own buffer: a store that keeps a key
 * (`claims serve`'s checked key files, the KMS store's unwrapped keys) derives its IV key once, and the IV key lives
 * no longer than the data key it came from (issue 37: an HKDF per seal).
 */
const IV_KEYS = new WeakMap<Buffer, Buffer>();

/** The synthetic IV of `plaintext` under `subject`'s data key: deterministic, distinct for distinct texts. */
export function syntheticIv(key: Buffer, subject: string, plaintext: string): Buffer {
  let ivKey = IV_KEYS.get(key);
  if (ivKey === undefined) {
    ivKey = Buffer.from(hkdfSync("sha256", key, Buffer.alloc(0), "pd1 synthetic iv", 32));
    IV_KEYS.set(key, ivKey);
  }
  const mac = createHmac("sha256", ivKey).update(subject, "utf8").update(Buffer.of(0)).update(plaintext, "utf8");
  return mac.digest().subarray(0, 12);
}

/** A token's parts, decoded: its subject, IV, ciphertext and tag (undefined when `token` is not of the exact form). */
function tokenParts(token: string): { subject: Buffer; iv: Buffer; ct: Buffer; tag: Buffer } | undefined {
  if (!isSealed(token)) return undefined;
  const [subject, iv, ct, tag] = token
    .slice(SEALED_PREFIX.length)
    .split(":")
    .map((p) => Buffer.from(p, "base64url")) as [Buffer, Buffer, Buffer, Buffer];
  return { subject, iv, ct, tag };
}

/** The plaintext of `parts` under `key`, or undefined when it does not authenticate. */
function decrypt(key: Buffer, parts: { subject: Buffer; iv: Buffer; ct: Buffer; tag: Buffer }): string | undefined {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, parts.iv);
    decipher.setAAD(parts.subject);
    decipher.setAuthTag(parts.tag);
    return Buffer.concat([decipher.update(parts.ct), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}

/**
 * The envelope vault over `store`. It keeps the keys it read for its own lifetime (one command, one saved run): make
 * a vault per unit of work, so a key destroyed elsewhere is not used from memory afterwards. A process that stays up
 * (`claims serve`) passes `cacheKeys: false` and reads the key on every use, so another process's erasure holds at once.
 */
export function envelopeVault(store: DataKeyStore, opts: { cacheKeys?: boolean } = {}): PersonalDataVault {
  const keys = new Map<string, Buffer>();
  const cache = opts.cacheKeys ?? true;
  const key = async (subject: string, create: boolean): Promise<DataKeyState> => {
    const known = keys.get(subject);
    if (known) return { state: "key", key: known };
    const k = await store.key(subject, { create });
    if (k.state === "key" && cache) keys.set(subject, k.key);
    return k;
  };
  return {
    async seal(subject, plaintext) {
      const k = await key(subject, true);
      if (k.state !== "key") return ERASED;
      // A token this vault made for this subject is kept (a record read sealed and written again); any other text —
      // a customer's reason of `pd1:…`, a token forged or copied from another claim — is sealed like any text.
      const parts = tokenParts(plaintext);
      if (parts !== undefined && parts.subject.toString("utf8") === subject && decrypt(k.key, parts) !== undefined)
        return plaintext;
      const iv = syntheticIv(k.key, subject, plaintext);
      const cipher = createCipheriv("aes-256-gcm", k.key, iv);
      cipher.setAAD(Buffer.from(subject, "utf8"));
      const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return `${SEALED_PREFIX}${b64u(Buffer.from(subject, "utf8"))}:${b64u(iv)}:${b64u(ct)}:${b64u(cipher.getAuthTag())}`;
    },
    async open(token) {
      const parts = tokenParts(token);
      if (parts === undefined) throw new SealedFieldError("not a sealed field (pd1:<subject>:<iv>:<data>:<tag>)");
      const subject = parts.subject.toString("utf8");
      const k = await key(subject, false);
      if (k.state !== "key") return undefined;
      const text = decrypt(k.key, parts);
      if (text === undefined) throw new SealedFieldError(`a sealed field of ${subject} does not open with its key`);
      return text;
    },
    destroy: (subject) => {
      keys.delete(subject);
      return store.destroy(subject);
    },
  };
}
