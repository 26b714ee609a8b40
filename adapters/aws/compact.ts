// Stored text in its cheapest form. DynamoDB bills a write per started KB of the whole item (a put or
// an update: the larger of the old and the new item), so a JSON text is stored plain or deflated with a
// preset dictionary of typical stored JSON (compact-dictionary-v2.ts: 3-4 times smaller than gzip on
// the small items this app writes, where gzip has no history to refer to) — whichever makes the item
// the fewest write units; among equals, plain while it is small (readable in the console), else the
// smallest. Readers accept every form written so far: `<name>`, `<name>_z2` (dictionary v2, written now),
// `<name>_z2c` (v2 followed by a text stored beside it), `<name>_z1`/`<name>_z1c` (dictionary v1, before),
// `<name>_gz` and `<name>_br` (gzip and brotli, before).
import { promisify } from "node:util";
import {
  brotliDecompress as brotliDecompressCb,
  brotliDecompressSync,
  deflateRaw as deflateRawCb,
  deflateRawSync,
  gunzip as gunzipCb,
  gunzipSync,
  inflateRaw as inflateRawCb,
  inflateRawSync,
} from "node:zlib";
import type { ZlibOptions } from "node:zlib";
import { COMPACT_DICTIONARY_V1 } from "./compact-dictionary-v1.ts";
import { COMPACT_DICTIONARY_V2 } from "./compact-dictionary-v2.ts";

// Small inputs (the usual case) are (de)compressed synchronously: a few µs of work do not pay for the
// thread pool's round trip; large ones go to the thread pool so the event loop keeps turning.
const SYNC_UP_TO_BYTES = 64 * 1024;
const gunzipAsync = promisify(gunzipCb);
const brotliDecompressAsync = promisify(brotliDecompressCb);
const deflateRawAsync = promisify(deflateRawCb) as (data: string, options: ZlibOptions) => Promise<Buffer>;
const inflateRawAsync = promisify(inflateRawCb) as (data: Uint8Array, options: ZlibOptions) => Promise<Buffer>;
const gunzip = async (data: Uint8Array) =>
  data.byteLength <= SYNC_UP_TO_BYTES / 8 ? gunzipSync(data) : gunzipAsync(data);
const brotliDecompress = async (data: Uint8Array) =>
  data.byteLength <= SYNC_UP_TO_BYTES / 8 ? brotliDecompressSync(data) : brotliDecompressAsync(data);

/**
 * The preset dictionaries by version: a stored `_z<version>` value needs its dictionary forever. v2 (issue 37) is
 * built the same way as v1 from today's stored texts (the compact crew, the contract's currencies, outcomes and
 * returns, `policy_version`): a settled verdict's body 677 → 352 bytes, which keeps the verdict under one write unit.
 */
export const COMPACT_DICTIONARIES: Readonly<Record<string, Buffer>> = {
  z1: Buffer.from(COMPACT_DICTIONARY_V1, "utf8"),
  z2: Buffer.from(COMPACT_DICTIONARY_V2, "utf8"),
};
const DICTIONARIES = COMPACT_DICTIONARIES;
/** The dictionary new items are written with. */
const CURRENT_DICTIONARY = "z2";
/**
 * The dictionary of a value: the version's, followed by the item's own `context` text when given
 * (`_z2c`: e.g. a verdict body refers to the verdict record stored beside it in plain text).
 */
const dictionaryOf = (version: string, context: string | undefined): Buffer => {
  const base = DICTIONARIES[version];
  if (!base) throw new Error(`no compression dictionary ${version}`);
  return context === undefined ? base : Buffer.concat([base, Buffer.from(context, "utf8")]);
};
const deflateWithDictionary = async (text: string, dictionary: Buffer) =>
  text.length <= SYNC_UP_TO_BYTES
    ? deflateRawSync(text, { dictionary, level: 9, memLevel: 9 })
    : deflateRawAsync(text, { dictionary, level: 9, memLevel: 9 });
const inflateWithDictionary = async (data: Uint8Array, dictionary: Buffer) =>
  data.byteLength <= SYNC_UP_TO_BYTES / 8
    ? inflateRawSync(data, { dictionary })
    : inflateRawAsync(data, { dictionary });

/** Bytes of one write unit. */
const WRITE_UNIT_BYTES = 1024;

/** How `packText` chooses. */
const PACK_DEFAULTS = {
  /** Texts up to this size stay plain unless compressing saves a write unit; larger ones are always compressed (storage). */
  compressOverBytes: 1024,
  /** Texts shorter than this are never compressed. */
  minCompressBytes: 64,
} as const;

/** One text attribute as it will be stored. */
export type PackedText = {
  /** `<name>`, `<name>_z2` or `<name>_z2c`. */
  readonly attribute: string;
  readonly value: string | Uint8Array;
  readonly codec: "json" | "dict";
  /** DynamoDB size of the attribute (name + value). */
  readonly bytes: number;
};

const utf8 = (s: string) => Buffer.byteLength(s, "utf8");

/** Write units of an item of `bytes` (at least 1). */
export function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / WRITE_UNIT_BYTES));
}

/** DynamoDB's size of one attribute value as the DocumentClient takes it (strings UTF-8, numbers ~1 byte per 2 digits + 1). */
export function valueBytes(value: unknown): number {
  if (value === null || typeof value === "boolean") return 1;
  if (typeof value === "string") return utf8(value);
  if (typeof value === "number" || typeof value === "bigint") {
    const digits = String(value)
      .replace(/^-/, "")
      .replace(/e.*$/i, "")
      .replace(".", "")
      .replace(/^0+/, "")
      .replace(/0+$/, "");
    return Math.ceil(Math.max(1, digits.length) / 2) + 1;
  }
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...(value as Set<unknown>)].reduce<number>((n, v) => n + valueBytes(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce<number>((n, v) => n + (v === undefined ? 0 : 1 + valueBytes(v)), 0);
  if (typeof value === "object") {
    let n = 3;
    for (const [k, v] of Object.entries(value as Record<string, unknown>))
      if (v !== undefined) n += 1 + utf8(k) + valueBytes(v);
    return n;
  }
  return 0;
}

/** DynamoDB's size of an item: attribute names plus values (undefined attributes dropped). */
export function itemBytes(item: Readonly<Record<string, unknown>>): number {
  let n = 0;
  for (const [k, v] of Object.entries(item)) if (v !== undefined) n += utf8(k) + valueBytes(v);
  return n;
}

type Options = {
  readonly compressOverBytes?: number;
  readonly minCompressBytes?: number;
  /** Text the reader will have beside the value (another attribute of the item, written with it): compressed against it too. */
  readonly context?: string;
};

/**
 * The cheapest stored form of `text` as attribute `name` of an item whose other attributes take
 * `restBytes` (see the file comment for the rule).
 */
export async function packText(
  name: string,
  text: string,
  restBytes: number,
  options: Options = {},
): Promise<PackedText> {
  const o = { ...PACK_DEFAULTS, ...options };
  const plain: PackedText = { attribute: name, value: text, codec: "json", bytes: utf8(name) + utf8(text) };
  const plainBytes = utf8(text);
  if (plainBytes < o.minCompressBytes) return plain;
  const units = (p: PackedText) => writeUnits(restBytes + p.bytes);
  const attribute = `${name}_${CURRENT_DICTIONARY}${o.context === undefined ? "" : "c"}`;
  const z = new Uint8Array(await deflateWithDictionary(text, dictionaryOf(CURRENT_DICTIONARY, o.context)));
  const packed: PackedText = { attribute, value: z, codec: "dict", bytes: utf8(attribute) + z.byteLength };
  if (units(plain) < units(packed)) return plain;
  if (units(plain) === units(packed) && (plainBytes <= o.compressOverBytes || packed.bytes >= plain.bytes))
    return plain;
  return packed;
}

/** The attribute names `packText` may have used for `name`, now or before (to REMOVE the others in an update). */
export function packedNames(name: string): readonly string[] {
  return [
    name,
    ...Object.keys(DICTIONARIES).flatMap((v) => [`${name}_${v}`, `${name}_${v}c`]),
    `${name}_gz`,
    `${name}_br`,
  ];
}

/** The text stored under `name` in any of its forms, or undefined when the item has none; `context` as given to `packText`. */
export async function unpackText(
  item: Readonly<Record<string, unknown>>,
  name: string,
  context?: string,
): Promise<string | undefined> {
  for (const version of Object.keys(DICTIONARIES)) {
    const z = item[`${name}_${version}`];
    if (z instanceof Uint8Array)
      return (await inflateWithDictionary(z, dictionaryOf(version, undefined))).toString("utf8");
    const zc = item[`${name}_${version}c`];
    if (zc instanceof Uint8Array) {
      if (context === undefined) throw new Error(`${name}_${version}c needs the text it was compressed against`);
      return (await inflateWithDictionary(zc, dictionaryOf(version, context))).toString("utf8");
    }
  }
  const br = item[`${name}_br`];
  if (br instanceof Uint8Array) return (await brotliDecompress(br)).toString("utf8");
  const gz = item[`${name}_gz`];
  if (gz instanceof Uint8Array) return (await gunzip(gz)).toString("utf8");
  const text = item[name];
  return typeof text === "string" ? text : undefined;
}
