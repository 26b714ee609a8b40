// The table's personal data sealed at the client (issue 38, docs/customer-data.md): a middleware on the DynamoDB
// document client seals every personal field (core/privacy/sealing.ts) of what is written under its claim's key and
// opens every sealed field of what is read. Every store of `claims serve` that lives in the table — the claims, the
// audit (its events kept as JSON strings), crew sessions, reviews — then holds the customer's words only sealed,
// so destroying a claim's key erases them from every item and every old copy the table's files still hold.
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import {
  ERASED,
  holdsSealedPrefix,
  isPersonal,
  isSealed,
  PERSONAL_KEYS,
  personalFields,
} from "../../core/privacy/sealing.ts";
import { SealedFieldError } from "../../pipeline/errors.ts";
import type { PersonalDataVault } from "../../pipeline/ports.ts";
import { keyInvocationHandler } from "./invocation-keys.ts";

type Json = Record<string, unknown>;

/** A plain object (an item, a map): binary values, sets and class instances are left as they are. */
const isObject = (v: unknown): v is Json => {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/** The vault a sealing client seals with (the table's ports seal what they compress themselves: sealText). */
const VAULTS = new WeakMap<object, PersonalDataVault>();

/** The vault `client` seals with, if it seals. */
export function tableVault(client: object): PersonalDataVault | undefined {
  return VAULTS.get(client);
}

/**
 * A JSON text with its personal fields sealed (under `subject`, else the claim it names) before a port compresses
 * it — a compressed attribute is binary, which the client's middleware does not read. As it is without a vault.
 * With `implied`, the tokens leave `subject` out (issue 37): the port keeps it beside the text (an attribute of the
 * item) and hands it to `openText` again.
 */
export async function sealText(
  vault: PersonalDataVault | undefined,
  text: string,
  subject?: string,
  opts: { implied?: boolean } = {},
): Promise<string> {
  if (vault === undefined) return text;
  const parsed = parsedJson(text);
  if (parsed === undefined) return text;
  const claim = subject ?? claimOfItem(parsed) ?? "unattributed";
  const implied = subject !== undefined && opts.implied === true;
  return JSON.stringify(await sealDeep(parsed, (t) => vault.seal(claim, t, { implied })));
}

/**
 * A JSON text a port decompressed, with its sealed fields opened; as it is without a vault or a sealed field.
 * `recordSubject` is the subject a text sealed `implied` was sealed under.
 */
export async function openText(
  vault: PersonalDataVault | undefined,
  text: string,
  recordSubject?: string,
): Promise<string> {
  return vault === undefined ? text : ((await openDeep(text, vault, false, recordSubject)) as string);
}

/**
 * A JSON text with all its personal fields sealed as one token (issue 37): the fields read `""` in the text, and their
 * plaintexts, a JSON array in the order of {@link mapPersonalInOrder}, are deflated against `dictionary` (what the
 * record beside it gives) and sealed under `subject`, left out of the token (the port keeps it beside the text). One
 * IV and tag instead of one per field, and what the record repeats costs next to nothing. Nothing personal in the
 * text, or no vault: the text as it is; an erased subject: its fields `[erased]`. A field that holds a token this
 * vault made for `subject` (a record read sealed) is opened first, as `seal` keeps such a token.
 */
export async function sealFieldsAsOne(
  vault: PersonalDataVault | undefined,
  text: string,
  subject: string,
  dictionary: Uint8Array,
): Promise<{ text: string; sealed?: string }> {
  const parsed = vault === undefined ? undefined : parsedJson(text);
  if (vault === undefined || parsed === undefined) return { text };
  const found: string[] = [];
  const skeleton = JSON.stringify(mapPersonalInOrder(parsed, (t) => (found.push(t), "")));
  if (found.length === 0) return { text };
  const values = await Promise.all(found.map((t) => (isSealed(t) ? ownText(vault, t, subject) : t)));
  const token = values.includes(undefined)
    ? ERASED
    : await vault.seal(subject, JSON.stringify(values), { implied: true, dictionary });
  if (token === ERASED) return { text: JSON.stringify(mapPersonalInOrder(parsed, () => ERASED)) };
  return { text: skeleton, sealed: token };
}

/** The text of a token of `subject` (undefined: erased); any other text in the form of a token as it is. */
async function ownText(vault: PersonalDataVault, token: string, subject: string): Promise<string | undefined> {
  try {
    return await vault.open(token, subject);
  } catch {
    return token;
  }
}

/**
 * The text {@link sealFieldsAsOne} stored, its personal fields filled from `sealed` (read `[erased]` once the subject's
 * key is destroyed; without a vault, the token itself, as a reader without one sees any sealed field). Without
 * `sealed`, a text whose fields were sealed one by one: opened as {@link openText} does. A token that does not open
 * with `dictionary`, or holds other fields than the text, is refused with a clear error.
 */
export async function openFieldsAsOne(
  vault: PersonalDataVault | undefined,
  text: string,
  sealed: string | undefined,
  subject: string,
  dictionary: Uint8Array,
): Promise<string> {
  if (sealed === undefined) return openText(vault, text, subject);
  const parsed = parsedJson(text);
  if (parsed === undefined) throw new SealedFieldError("sealed fields beside a text that is not JSON");
  const opened = vault === undefined ? sealed : await vault.open(sealed, subject, { dictionary });
  let values: readonly string[] | undefined;
  if (vault !== undefined && opened !== undefined) {
    const list = parsedJson(opened);
    if (!Array.isArray(list) || !list.every((v) => typeof v === "string"))
      throw new SealedFieldError(`the sealed fields of ${subject} are not a list of texts`);
    values = list as string[];
  }
  let at = 0;
  const filled = mapPersonalInOrder(parsed, () => {
    at++;
    return values === undefined ? (opened ?? ERASED) : (values[at - 1] ?? "");
  });
  if (values !== undefined && at !== values.length)
    throw new SealedFieldError(`the sealed fields of ${subject} are ${values.length}, its text has ${at}`);
  return JSON.stringify(filled);
}

/**
 * `value` with each personal field (a personal key's string, inside JSON strings too: the rule of `sealWalk`) mapped
 * through `f`, depth first in key order — synchronous, so a reader walking the same shape meets the fields in the
 * same order as the writer did.
 */
function mapPersonalInOrder(value: unknown, f: (t: string) => string): unknown {
  if (typeof value === "string") {
    const inner = parsedJson(value);
    return inner === undefined || personalFields(inner).length === 0
      ? value
      : JSON.stringify(mapPersonalInOrder(inner, f));
  }
  if (Array.isArray(value)) return value.map((v) => mapPersonalInOrder(v, f));
  if (!isObject(value)) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value))
    out[k] = typeof v === "string" && personalKey(k, value) ? f(v) : mapPersonalInOrder(v, f);
  return out;
}

/** A string that holds a JSON object or array (an audit event kept as text). */
function parsedJson(s: string): unknown {
  const t = s.trimStart();
  if (!t.startsWith("{") && !t.startsWith("[")) return undefined;
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/**
 * The claim an item (or an update's values) belongs to: its `claim_id` wherever it is, else its key
 * (`CLAIM#<id>`, `DFID#dfid_<id>`). Undefined for an item of no claim.
 */
export function claimOfItem(value: unknown): string | undefined {
  let fromKey: string | undefined;
  const visit = (v: unknown, key: string): string | undefined => {
    if (typeof v === "string") {
      if (key === "claim_id" || key === ":claim_id") return v;
      if (key === "pk" && fromKey === undefined) {
        const m = /^(?:CLAIM#|DFID#dfid_)(.+)$/.exec(v);
        if (m) fromKey = m[1];
      }
      const inner = v.includes("claim_id") ? parsedJson(v) : undefined;
      return inner === undefined ? undefined : visit(inner, "");
    }
    if (Array.isArray(v)) {
      for (const x of v) {
        const found = visit(x, "");
        if (found !== undefined) return found;
      }
      return undefined;
    }
    if (!isObject(v)) return undefined;
    for (const [k, x] of Object.entries(v)) {
      const found = visit(x, k);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return visit(value, "") ?? fromKey;
}

/**
 * `value` with its personal fields sealed by `seal`, inside JSON strings too; `:name` values read as `name`. Every
 * personal field goes to `seal`, whatever it holds: the vault keeps only a token it made for the claim, so a
 * customer's text in the form of a token is sealed like any other (issue 38). A JSON string whose personal fields
 * all come back as they were is kept byte for byte (a conditional write comparing it sees no change).
 */
async function sealDeep(value: unknown, seal: (t: string) => Promise<string>): Promise<unknown> {
  return sealWalk(seal)(value);
}

/**
 * The walk of `sealDeep` for one unit. Only what holds a personal field is walked with the vault (issue 37: every
 * field of every item read and written went through an awaited call, the larger part of the sealing's CPU); the
 * rest is kept as it is, which is what the walk made of it. A JSON string is parsed once per unit.
 */
function sealWalk(seal: (t: string) => Promise<string>): (value: unknown) => Promise<unknown> {
  const parsed = new Map<string, unknown>();
  /** The parsed JSON of `s` when it holds a personal field (the rule of a JSON string), else undefined. */
  const personalJson = (s: string): unknown => {
    if (!parsed.has(s)) {
      const inner = parsedJson(s);
      parsed.set(s, inner !== undefined && personalFields(inner).length > 0 ? inner : undefined);
    }
    return parsed.get(s);
  };
  /** Whether sealing `value` hands anything to `seal`; remembered per object for the unit (the walk asks again below). */
  const holds = new WeakMap<object, boolean>();
  const holdsPersonal = (value: unknown): boolean => {
    if (typeof value === "string") return personalJson(value) !== undefined;
    if (value === null || typeof value !== "object") return false;
    const known = holds.get(value);
    if (known !== undefined) return known;
    let found = false;
    if (Array.isArray(value)) found = value.some(holdsPersonal);
    else if (isObject(value))
      for (const k in value) {
        const v = value[k];
        if ((typeof v === "string" && personalKey(k, value)) || holdsPersonal(v)) {
          found = true;
          break;
        }
      }
    holds.set(value, found);
    return found;
  };
  const walk = async (value: unknown): Promise<unknown> => {
    if (typeof value === "string") {
      const inner = personalJson(value);
      if (inner === undefined) return value;
      const sealed = JSON.stringify(await walk(inner));
      return sealed === JSON.stringify(inner) ? value : sealed;
    }
    if (!holdsPersonal(value)) return value;
    if (Array.isArray(value)) return Promise.all(value.map(walk));
    const record = value as Json;
    const out: Json = {};
    for (const [k, v] of Object.entries(record))
      out[k] = typeof v === "string" && personalKey(k, record) ? await seal(v) : holdsPersonal(v) ? await walk(v) : v;
    return out;
  };
  return walk;
}

/**
 * Whether the string under `key` of `record` is personal (core/privacy/sealing.ts `isPersonal`), where an update's
 * expression values are named `:name`: the rule reads `name`, and a sibling `:reason_code` counts as `reason_code`.
 */
function personalKey(key: string, record: Json): boolean {
  const name = key.charCodeAt(0) === 58 /* ":" */ ? key.slice(1) : key;
  if (name !== "reason") return isPersonal(name, record);
  return !("reason_code" in record || ":reason_code" in record || "code" in record || ":code" in record);
}

/** Whether some string in `value` holds the sealed prefix (what openDeep could open). */
function holdsToken(value: unknown): boolean {
  if (typeof value === "string") return holdsSealedPrefix(value);
  if (Array.isArray(value)) return value.some(holdsToken);
  if (!isObject(value)) return false;
  for (const v of Object.values(value)) if (holdsToken(v)) return true;
  return false;
}

/** Whether a field named `key` may hold a sealed field: only personal keys are ever sealed (a `reason` of a code too). */
const mayBeSealed = (key: string): boolean => key === "reason" || PERSONAL_KEYS.includes(key);

/** The claim an item's key names (`CLAIM#<id>`, `DFID#dfid_<id>`), or undefined. */
function claimOfKey(pk: unknown): string | undefined {
  return typeof pk === "string" ? /^(?:CLAIM#|DFID#dfid_)(.+)$/.exec(pk)?.[1] : undefined;
}

/** The claim the key of a written unit names: a put's item, an update's key, a transaction's or a batch's entry. */
function claimOfUnitKey(unit: unknown): string | undefined {
  if (!isObject(unit)) return undefined;
  for (const holder of [unit, unit.Put, unit.Update, unit.PutRequest]) {
    if (!isObject(holder)) continue;
    const pk = isObject(holder.Item) ? holder.Item.pk : isObject(holder.Key) ? holder.Key.pk : undefined;
    if (pk !== undefined) return claimOfKey(pk);
  }
  return undefined;
}

/**
 * `value` with every sealed field opened (inside JSON strings too); an erased claim's read `[erased]`. Only a field
 * under a personal key is opened, and only in the exact form of a token: any other text that looks like one (an
 * order id a customer chose) is a customer's text and reads as written, never as another claim's words nor erased.
 * A token that leaves its claim to its item opens with the claim the item's key names: the outermost object with a `pk`
 * (an item read, as sealUnit took the key of the item written; `null` inside an item whose key names no claim).
 */
async function openDeep(
  value: unknown,
  vault: PersonalDataVault,
  personal = false,
  recordSubject: string | null | undefined = undefined,
): Promise<unknown> {
  if (typeof value === "string") {
    if (!holdsSealedPrefix(value)) return value;
    if (personal) return isSealed(value) ? ((await vault.open(value, recordSubject ?? undefined)) ?? ERASED) : value;
    const inner = parsedJson(value);
    return inner === undefined ? value : JSON.stringify(await openDeep(inner, vault, false, recordSubject));
  }
  // Nothing that reads like a token below: as it is (issue 37: the walk awaited every field of every item read).
  if (!holdsToken(value)) return value;
  if (Array.isArray(value)) return Promise.all(value.map((v) => openDeep(v, vault, false, recordSubject)));
  if (!isObject(value)) return value;
  const subject =
    recordSubject !== undefined || value.pk === undefined ? recordSubject : (claimOfKey(value.pk) ?? null);
  const out: Json = {};
  for (const [k, v] of Object.entries(value))
    out[k] = holdsToken(v) ? await openDeep(v, vault, mayBeSealed(k), subject) : v;
  return out;
}

/**
 * One unit of a write (an item, an update, a message) sealed under its claim's key; one of no claim under
 * `unattributed`. Where the unit's key names that very claim, its tokens leave the claim out (issue 37: ~50 bytes a
 * field): a reader opens them with the claim of the item's key, and a token moved to another item does not open.
 */
async function sealUnit(unit: unknown, vault: PersonalDataVault): Promise<unknown> {
  let subject: string | undefined;
  let implied: boolean | undefined;
  return sealWalk((t) => {
    subject ??= claimOfItem(unit) ?? "unattributed";
    implied ??= claimOfUnitKey(unit) === subject;
    return vault.seal(subject, t, { implied });
  })(unit);
}

/** A command's input with every written unit sealed: TransactWrite's items one by one, BatchWrite's puts, or the whole input. */
async function sealInput(input: Json, vault: PersonalDataVault): Promise<Json> {
  if (Array.isArray(input.TransactItems))
    return { ...input, TransactItems: await Promise.all(input.TransactItems.map((t) => sealUnit(t, vault))) };
  if (isObject(input.RequestItems)) {
    const tables: Json = {};
    for (const [table, requests] of Object.entries(input.RequestItems))
      tables[table] = Array.isArray(requests) ? await Promise.all(requests.map((r) => sealUnit(r, vault))) : requests;
    return { ...input, RequestItems: tables };
  }
  return (await sealUnit(input, vault)) as Json;
}

/** Installs the sealing middleware on `client` (the same client object, returned for chaining). */
export function sealTableClient(client: DynamoDBDocumentClient, vault: PersonalDataVault): DynamoDBDocumentClient {
  client.middlewareStack.add(
    (next) => async (args) => {
      const input = await sealInput(args.input as Json, vault);
      const result = await next({ ...args, input });
      return { ...result, output: (await openDeep(result.output, vault)) as typeof result.output };
    },
    { step: "initialize", name: "personalDataSealing", priority: "high" },
  );
  VAULTS.set(client, vault);
  return client;
}

/** A message body (JSON) with its personal fields sealed under its claim's key; a body that is not JSON as it is. */
async function sealBody(body: unknown, vault: PersonalDataVault): Promise<unknown> {
  if (typeof body !== "string" || parsedJson(body) === undefined) return body;
  return sealUnit(body, vault);
}

/**
 * Installs the same sealing on an SQS client: every message body sent (SendMessage, SendMessageBatch) holds the
 * personal fields sealed, every body received (ReceiveMessage) is opened — so a queue's persisted messages (the local
 * stack's journal) never hold a customer's words in clear.
 */
export function sealQueueClient(client: SQSClient, vault: PersonalDataVault): SQSClient {
  client.middlewareStack.add(
    (next) => async (args) => {
      const input = { ...(args.input as Json) };
      if (input.MessageBody !== undefined) input.MessageBody = await sealBody(input.MessageBody, vault);
      if (Array.isArray(input.Entries))
        input.Entries = await Promise.all(
          input.Entries.map(async (e: unknown) =>
            isObject(e) && e.MessageBody !== undefined
              ? { ...e, MessageBody: await sealBody(e.MessageBody, vault) }
              : e,
          ),
        );
      const result = await next({ ...args, input });
      const output = result.output as unknown as Json;
      if (!Array.isArray(output.Messages)) return result;
      const messages = await Promise.all(
        output.Messages.map(async (m: unknown) =>
          isObject(m) && typeof m.Body === "string" ? { ...m, Body: await openDeep(m.Body, vault) } : m,
        ),
      );
      return { ...result, output: { ...output, Messages: messages } as unknown as typeof result.output };
    },
    { step: "initialize", name: "personalDataSealing", priority: "high" },
  );
  return client;
}

/**
 * `handler` (a Lambda SQS handler) opening each record's body before it reads it. The event source hands a function
 * the bodies as they were sent — sealed — whoever delivers them (Lambda's poller, a second consumer racing it, a
 * redelivery), so the function opens them itself: a proposal read sealed hashed to another idempotency key, and the
 * kernel refused it (IDEMPOTENCY_KEY_MISMATCH), a second verdict for one claim (issue 38, chaos on the emulators).
 */
export function openingSqsHandler<E extends { Records: readonly { body: string }[] }, C, R>(
  handler: (event: E, context: C) => Promise<R>,
  vault: PersonalDataVault | undefined | (() => PersonalDataVault | undefined),
): (event: E, context: C) => Promise<R> {
  if (vault === undefined) return handler;
  // A deployed handler passes how to get its vault: built on the first invocation (the cold start), not at import.
  const vaultNow = typeof vault === "function" ? vault : () => vault;
  const opening = async (event: E, context: C): Promise<R> => {
    const v = vaultNow();
    if (v === undefined) return handler(event, context);
    const records = await Promise.all(
      event.Records.map(async (r) => (holdsSealedPrefix(r.body) ? { ...r, body: await openText(v, r.body) } : r)),
    );
    return handler({ ...event, Records: records }, context);
  };
  // The opening and the handler are one invocation: the keys read to open the records are remembered for the handler.
  return keyInvocationHandler(opening, { handOn: true });
}

/**
 * Installs the sealing on an EventBridge client: every event's detail put on the bus (PutEvents) holds the personal
 * fields sealed (a reviewer's note in ReviewDecided), so the bus's journal (`events.jsonl`) never holds them in clear.
 */
export function sealEventsClient(client: EventBridgeClient, vault: PersonalDataVault): EventBridgeClient {
  client.middlewareStack.add(
    (next) => async (args) => {
      const input = { ...(args.input as Json) };
      if (Array.isArray(input.Entries))
        input.Entries = await Promise.all(
          input.Entries.map(async (e: unknown) =>
            isObject(e) && typeof e.Detail === "string" ? { ...e, Detail: await sealBody(e.Detail, vault) } : e,
          ),
        );
      return next({ ...args, input });
    },
    { step: "initialize", name: "personalDataSealing", priority: "high" },
  );
  return client;
}
