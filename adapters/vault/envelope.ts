// The vault's cipher, whatever keeps the keys: AES-256-GCM under a 256-bit data key per subject, the subject as
// associated data (a token moved to another subject does not open), and a synthetic 96-bit IV: the first 12 bytes
// of HMAC-SHA256(k_iv, subject ‖ 0x00 ‖ plaintext), k_iv derived from the data key by HKDF (SIV construction,
// RFC 5297's idea over GCM). The same text sealed twice under one key is the same token, so everything that compares
// or hashes what is stored — a conditional write, a FIFO queue's content-based dedup, a redelivered event's body —
// sees no change where there is none (issue 38: random IVs broke exactly-once under chaos). Two different texts
// get different IVs (a GCM IV is never reused for two plaintexts, short of a 2^-96 HMAC collision); what the
// determinism reveals is only that two fields of one claim hold the same text. The keys live in a DataKeyStore: key
// files on the local stack (key-files.ts), KMS-wrapped keys in the table on AWS (kms-keys.ts). A token is written
// `pd2:` + one base64url text (issue 37: a sealed field's bytes kept the verdict and the claim over a write unit):
// the subject packed, or left out where the item it is stored in names the claim (`implied`); pd1 tokens still open.
// A pd2 token may also hold its plaintext deflated against a dictionary its record gives (`dictionary`, issue 37: the
// verdict's personal fields as one token, deflated against its record): header 3, opened only with that dictionary.
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync } from "node:crypto";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { ERASED, isSealed, SEALED_PREFIX, SEALED_PREFIX_V2 } from "../../core/privacy/sealing.ts";
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

/**
 * The synthetic IV of a deflated token: HMAC-SHA256 under an IV key of its own (another HKDF label, so no input of
 * `syntheticIv` shares its IVs) over the subject, the dictionary's digest and the deflated bytes — what is encrypted
 * and authenticated, so one IV never covers two different (associated data, plaintext) pairs.
 */
function deflatedIv(key: Buffer, subject: string, digest: Buffer, deflated: Buffer): Buffer {
  let ivKey = DEFLATED_IV_KEYS.get(key);
  if (ivKey === undefined) {
    ivKey = Buffer.from(hkdfSync("sha256", key, Buffer.alloc(0), "pd2 deflated synthetic iv", 32));
    DEFLATED_IV_KEYS.set(key, ivKey);
  }
  const mac = createHmac("sha256", ivKey).update(subject, "utf8").update(Buffer.of(0)).update(digest).update(deflated);
  return mac.digest().subarray(0, 12);
}
const DEFLATED_IV_KEYS = new WeakMap<Buffer, Buffer>();

/** A token's parts: its subject (undefined in a pd2 token that leaves it to the record), IV, ciphertext and tag. */
type TokenParts = { subject: string | undefined; iv: Buffer; ct: Buffer; tag: Buffer; deflated?: boolean };

// pd2's packed bytes (base64url after `pd2:`): a header byte, the subject as it says, the 12-byte IV, the
// ciphertext, the 16-byte tag. The subject is a claim id of the usual form packed in 16 bytes, any other subject as
// its UTF-8 bytes after their length, or left out where the record it is stored in names it (the item's key).
const PD2_IMPLIED = 0;
const PD2_CLAIM_ID = 1;
const PD2_TEXT = 2;
/** The subject left to the record, the plaintext deflated against the record's dictionary (bound as associated data). */
const PD2_IMPLIED_DEFLATED = 3;
const CLAIM_ID = /^clm_([0-9a-f]{32})$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The packed subject header of pd2 (undefined: the record names it); none for a subject pd2 cannot hold. */
function packedSubject(subject: string | undefined): Buffer | undefined {
  if (subject === undefined) return Buffer.of(PD2_IMPLIED);
  const id = CLAIM_ID.exec(subject);
  if (id) return Buffer.concat([Buffer.of(PD2_CLAIM_ID), Buffer.from(id[1]!, "hex")]);
  const text = Buffer.from(subject, "utf8");
  return text.length === 0 || text.length > 255 ? undefined : Buffer.concat([Buffer.of(PD2_TEXT, text.length), text]);
}

/**
 * The token of `parts`: pd2, its subject packed or left out when `implied` (the record it is stored in names it); pd1
 * for a subject pd2 cannot hold (empty, or over 255 bytes: no claim id is).
 */
function sealedToken(parts: TokenParts & { subject: string }, implied: boolean): string {
  const header =
    parts.deflated === true ? Buffer.of(PD2_IMPLIED_DEFLATED) : packedSubject(implied ? undefined : parts.subject);
  if (header === undefined)
    return `${SEALED_PREFIX}${b64u(Buffer.from(parts.subject, "utf8"))}:${b64u(parts.iv)}:${b64u(parts.ct)}:${b64u(parts.tag)}`;
  return `${SEALED_PREFIX_V2}${b64u(Buffer.concat([header, parts.iv, parts.ct, parts.tag]))}`;
}

/** A pd2 token's parts (undefined when it is not of the exact form: canonical base64url, a known header, every part). */
function pd2Parts(body: string): TokenParts | undefined {
  const bytes = Buffer.from(body, "base64url");
  if (b64u(bytes) !== body || bytes.length < 1 + IV_BYTES + TAG_BYTES) return undefined;
  let at = 1;
  let subject: string | undefined;
  if (bytes[0] === PD2_CLAIM_ID) {
    if (bytes.length < 17 + IV_BYTES + TAG_BYTES) return undefined;
    subject = `clm_${bytes.subarray(1, 17).toString("hex")}`;
    at = 17;
  } else if (bytes[0] === PD2_TEXT) {
    const n = bytes[1] ?? 0;
    if (n === 0 || bytes.length < 2 + n + IV_BYTES + TAG_BYTES) return undefined;
    subject = bytes.subarray(2, 2 + n).toString("utf8");
    at = 2 + n;
  } else if (bytes[0] !== PD2_IMPLIED && bytes[0] !== PD2_IMPLIED_DEFLATED) return undefined;
  return {
    subject,
    ...(bytes[0] === PD2_IMPLIED_DEFLATED ? { deflated: true } : {}),
    iv: bytes.subarray(at, at + IV_BYTES),
    ct: bytes.subarray(at + IV_BYTES, bytes.length - TAG_BYTES),
    tag: bytes.subarray(bytes.length - TAG_BYTES),
  };
}

/** A token's parts, decoded (undefined when `token` is not of the exact form of pd1 or pd2). */
function tokenParts(token: string): TokenParts | undefined {
  if (!isSealed(token)) return undefined;
  if (token.startsWith(SEALED_PREFIX_V2)) return pd2Parts(token.slice(SEALED_PREFIX_V2.length));
  const [subject, iv, ct, tag] = token
    .slice(SEALED_PREFIX.length)
    .split(":")
    .map((p) => Buffer.from(p, "base64url")) as [Buffer, Buffer, Buffer, Buffer];
  return { subject: subject.toString("utf8"), iv, ct, tag };
}

/** A deflated token's associated data: the subject, a zero byte and the dictionary's SHA-256 (moved elsewhere, it does not open). */
const deflatedAad = (subject: string, digest: Buffer) =>
  Buffer.concat([Buffer.from(subject, "utf8"), Buffer.of(0), digest]);
const digestOf = (dictionary: Uint8Array) => createHash("sha256").update(dictionary).digest();

/**
 * The plaintext of `parts` under `key` and `subject` (a deflated token's inflated against `dictionary`), or undefined
 * when it does not authenticate (a deflated token without its dictionary, or with another, does not).
 */
function decrypt(key: Buffer, subject: string, parts: TokenParts, dictionary?: Uint8Array): string | undefined {
  if (parts.deflated === true && dictionary === undefined) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, parts.iv);
    decipher.setAAD(
      parts.deflated === true ? deflatedAad(subject, digestOf(dictionary!)) : Buffer.from(subject, "utf8"),
    );
    decipher.setAuthTag(parts.tag);
    const plain = Buffer.concat([decipher.update(parts.ct), decipher.final()]);
    return (parts.deflated === true ? inflateRawSync(plain, { dictionary: dictionary! }) : plain).toString("utf8");
  } catch {
    return undefined;
  }
}

/** `plaintext` deflated against `dictionary` and sealed under `subject`'s key: a pd2 token of header 3. */
function sealDeflated(key: Buffer, subject: string, plaintext: string, dictionary: Uint8Array): string {
  const digest = digestOf(dictionary);
  const deflated = deflateRawSync(plaintext, { dictionary, level: 9, memLevel: 9 });
  const iv = deflatedIv(key, subject, digest, deflated);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(deflatedAad(subject, digest));
  const ct = Buffer.concat([cipher.update(deflated), cipher.final()]);
  return sealedToken({ subject, iv, ct, tag: cipher.getAuthTag(), deflated: true }, true);
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
    async seal(subject, plaintext, opts = {}) {
      const k = await key(subject, true);
      if (k.state !== "key") return ERASED;
      const implied = opts.implied === true;
      // A token this vault made for this subject is kept (a record read sealed and written again) — a pd1 token as it
      // is, a pd2 token in the form asked for; any other text — a customer's reason of `pd1:…`, a token forged or
      // copied from another claim — is sealed like any text. A deflated token is kept only against its own dictionary.
      const parts = tokenParts(plaintext);
      if (
        parts !== undefined &&
        (parts.subject ?? subject) === subject &&
        decrypt(k.key, subject, parts, opts.dictionary) !== undefined
      )
        return plaintext.startsWith(SEALED_PREFIX) || parts.deflated === true
          ? plaintext
          : sealedToken({ ...parts, subject }, implied);
      if (opts.dictionary !== undefined) {
        if (!implied)
          throw new SealedFieldError("a sealed field deflated against its record must leave its claim to it");
        return sealDeflated(k.key, subject, plaintext, opts.dictionary);
      }
      const iv = syntheticIv(k.key, subject, plaintext);
      const cipher = createCipheriv("aes-256-gcm", k.key, iv);
      cipher.setAAD(Buffer.from(subject, "utf8"));
      const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return sealedToken({ subject, iv, ct, tag: cipher.getAuthTag() }, implied);
    },
    async open(token, recordSubject, opts = {}) {
      const parts = tokenParts(token);
      if (parts === undefined)
        throw new SealedFieldError("not a sealed field (pd2:<packed>, or pd1:<subject>:<iv>:<data>:<tag>)");
      const subject = parts.subject ?? recordSubject;
      if (subject === undefined)
        throw new SealedFieldError(
          "a sealed field that leaves its claim to its record was read without the record's claim",
        );
      if (parts.deflated === true && opts.dictionary === undefined)
        throw new SealedFieldError("a sealed field deflated against its record was read without the record");
      const k = await key(subject, false);
      if (k.state !== "key") return undefined;
      const text = decrypt(k.key, subject, parts, opts.dictionary);
      if (text === undefined) throw new SealedFieldError(`a sealed field of ${subject} does not open with its key`);
      return text;
    },
    destroy: (subject) => {
      keys.delete(subject);
      return store.destroy(subject);
    },
  };
}
