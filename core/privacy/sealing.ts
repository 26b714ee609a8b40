// Which fields of a stored record are the customer's own words, and the walk that seals or opens them (issue 38).
// Pure: the cipher is passed in (pipeline/personal-data.ts, adapters/vault/). A sealed field is a string token, so
// every schema still parses a sealed or erased record; the decision path (order ids, amounts, categories, dates,
// reason codes, verdicts, the ledger) is never touched.

/** What an erased field reads as, wherever it was: in replay, the report, an export. */
export const ERASED = "[erased]";

/** The prefix of a sealed field of the first form: `pd1:<subject>:<iv>:<ciphertext>:<tag>`, each part base64url (still read). */
export const SEALED_PREFIX = "pd1:";

/**
 * The prefix of a sealed field as written now (issue 37): `pd2:` and one base64url text of a header byte, the subject
 * packed (or left out where the record names it: the item's key), the IV, the ciphertext and the tag
 * (adapters/vault/envelope.ts) — ~29 characters shorter than pd1 for a claim id, ~50 where the record names the claim.
 * Header 3 (i37v): the plaintext deflated against a dictionary its record gives (a verdict's fields as one token).
 */
export const SEALED_PREFIX_V2 = "pd2:";

/** Whether `text` holds a sealed field's prefix anywhere (what a reader looks at before it parses or opens anything). */
export function holdsSealedPrefix(text: string): boolean {
  return text.includes(SEALED_PREFIX) || text.includes(SEALED_PREFIX_V2);
}

/**
 * Keys whose string value is personal wherever it appears: the free text, a reviewer's note (it may quote the
 * customer), a customer's name or email when an order or claim carries one.
 */
export const PERSONAL_KEYS: readonly string[] = ["claim_text", "note", "customer_name", "customer_email"];

/**
 * `reason` is the customer's (a claim's, an extraction's) unless its object carries a `reason_code` or `code`:
 * then it is the system's explanation of that code (a verdict, a review's cause, a ledger refusal) and stays clear.
 */
export function isPersonal(key: string, parent: Readonly<Record<string, unknown>>): boolean {
  if (PERSONAL_KEYS.includes(key)) return true;
  return key === "reason" && !("reason_code" in parent) && !("code" in parent);
}

/**
 * The exact form of a sealed field. pd1: the prefix, a base64url subject, a 96-bit IV (16 characters), the ciphertext
 * and a 128-bit tag (22 characters). pd2: the prefix and base64url of at least 29 bytes (a header byte below 4, so its
 * first character is `A`; IV and tag) — the vault checks the rest when it opens it. A customer's text can take either
 * form too (issue 38: a reason of `pd1:…`), so the form alone never decides that a field is sealed: every personal
 * field is handed to the vault's `seal`, which keeps a field only when it is a token it made for that very subject
 * (it authenticates under the subject's key).
 */
const TOKEN_V1 = /^pd1:([A-Za-z0-9_-]+):[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]*:[A-Za-z0-9_-]{22}$/;
const TOKEN_V2 = /^pd2:A[A-Za-z0-9_-]{38,}$/;

/** Whether `value` has the exact form of a sealed field (not whether it is one: see TOKEN_V1). */
export function isSealed(value: unknown): value is string {
  if (typeof value !== "string") return false;
  if (TOKEN_V1.test(value)) return true;
  // base64url of n bytes is never 1 character past a multiple of 4.
  return TOKEN_V2.test(value) && (value.length - SEALED_PREFIX_V2.length) % 4 !== 1;
}

/** Every personal string field of `value` mapped through `f` (a copy; the rest as it was). */
async function mapPersonal(value: unknown, f: (text: string) => Promise<string>): Promise<unknown> {
  if (Array.isArray(value)) return Promise.all(value.map((v) => mapPersonal(v, f)));
  if (value === null || typeof value !== "object") return value;
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record))
    out[k] = typeof v === "string" && isPersonal(k, record) ? await f(v) : await mapPersonal(v, f);
  return out;
}

/**
 * `value` with every personal field handed to `seal` — whatever it holds: the vault keeps a token it made for the
 * subject as it is, reads every field of an erased subject as ERASED, and seals anything else, a customer's text in
 * the form of a token or reading `[erased]` included, so no text of theirs is ever stored in clear or taken for sealed.
 */
export function sealPersonalFields<T>(value: T, seal: (text: string) => Promise<string>): Promise<T> {
  return mapPersonal(value, seal) as Promise<T>;
}

/** `value` with every sealed field opened by `open`; a field whose key is destroyed (`undefined`) reads ERASED. */
export function openPersonalFields<T>(value: T, open: (token: string) => Promise<string | undefined>): Promise<T> {
  return mapPersonal(value, async (t) => (isSealed(t) ? ((await open(t)) ?? ERASED) : t)) as Promise<T>;
}

/**
 * `value` with every personal string field — plain, sealed or erased — read as ERASED: what any copy of it reads
 * after its claim's erasure. Hash this, not the value, where copies of one record are recognised by their content
 * (the audit's reader dropping an event stored twice): a copy opened before the erasure and one opened after
 * are then still the same record.
 */
export function withPersonalErased<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => withPersonalErased(v)) as T;
  if (value === null || typeof value !== "object") return value;
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record))
    out[k] = typeof v === "string" && isPersonal(k, record) ? ERASED : withPersonalErased(v);
  return out as T;
}

/** The paths of `value`'s personal fields that read ERASED (`details.input.claim_text`, …). */
export function erasedPaths(value: unknown, path = ""): string[] {
  if (value === null || typeof value !== "object") return [];
  const record = value as Record<string, unknown>;
  return Object.entries(record).flatMap(([k, v]) => {
    const at = path === "" ? k : `${path}.${k}`;
    return v === ERASED && isPersonal(k, record) ? [at] : erasedPaths(v, at);
  });
}

/** The personal string fields of `value`, plain or sealed, with their paths (what an export lists). */
export function personalFields(value: unknown, path = ""): { path: string; value: string }[] {
  if (value === null || typeof value !== "object") return [];
  const record = value as Record<string, unknown>;
  return Object.entries(record).flatMap(([k, v]) => {
    const at = path === "" ? k : `${path}.${k}`;
    return typeof v === "string" && isPersonal(k, record) ? [{ path: at, value: v }] : personalFields(v, at);
  });
}

/** Whether some personal field of `value` reads ERASED: the customer's words in it were erased (docs/customer-data.md). */
export function readsErased(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(readsErased);
  if (value === null || typeof value !== "object") return false;
  const record = value as Record<string, unknown>;
  return Object.entries(record).some(([k, v]) => (v === ERASED && isPersonal(k, record)) || readsErased(v));
}
