// Stored text in its cheapest form. DynamoDB bills a write per started KB of the whole item (a put or
// an update: the larger of the old and the new item), so a JSON text is stored plain, gzipped or
// brotli-compressed — whichever makes the item the fewest write units; among equals, plain while it
// is small (readable in the console), else the smallest. Brotli (quality 11, ~2 ms for 3 KB) is only
// tried when gzip leaves the item just above a KB boundary that brotli's ~20 % better ratio can cross.
// Readers accept all three forms under `<name>`, `<name>_gz`, `<name>_br`.
import { promisify } from "node:util";
import { brotliCompress as brotliCompressCb, brotliCompressSync, brotliDecompress as brotliDecompressCb, brotliDecompressSync, constants, gunzip as gunzipCb, gunzipSync, gzip as gzipCb, gzipSync } from "node:zlib";
import type { BrotliOptions } from "node:zlib";

// Small inputs (the usual case) are (de)compressed synchronously: a few µs of work do not pay for the
// thread pool's round trip; large ones go to the thread pool so the event loop keeps turning.
const SYNC_UP_TO_BYTES = 64 * 1024;
const gzipAsync = promisify(gzipCb);
const gunzipAsync = promisify(gunzipCb);
const brotliCompressAsync = promisify(brotliCompressCb);
const brotliDecompressAsync = promisify(brotliDecompressCb);
const gzip = async (text: string) => (text.length <= SYNC_UP_TO_BYTES ? gzipSync(text) : gzipAsync(text));
const gunzip = async (data: Uint8Array) => (data.byteLength <= SYNC_UP_TO_BYTES / 8 ? gunzipSync(data) : gunzipAsync(data));
const brotliCompress = async (text: string, options: BrotliOptions) => (text.length <= SYNC_UP_TO_BYTES ? brotliCompressSync(text, options) : brotliCompressAsync(text, options));
const brotliDecompress = async (data: Uint8Array) => (data.byteLength <= SYNC_UP_TO_BYTES / 8 ? brotliDecompressSync(data) : brotliDecompressAsync(data));

/** Bytes of one write unit. */
export const WRITE_UNIT_BYTES = 1024;

/** How `packText` chooses. */
export const PACK_DEFAULTS = {
  /** Texts up to this size stay plain unless compressing saves a write unit; larger ones are always compressed (storage). */
  compressOverBytes: 1024,
  /** Texts shorter than this are never compressed (gzip's header alone is 18 bytes). */
  minCompressBytes: 128,
  /** Brotli is tried only on texts up to this size (its best quality is slow on large input). */
  brotliUpToBytes: 32 * 1024,
  /** Brotli's expected size as a share of gzip's, to decide whether trying it can cross a KB boundary. */
  brotliRatio: 0.85,
} as const;

/** One text attribute as it will be stored. */
export type PackedText = {
  /** `<name>`, `<name>_gz` or `<name>_br`. */
  readonly attribute: string;
  readonly value: string | Uint8Array;
  readonly codec: "json" | "gzip" | "br";
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
    const digits = String(value).replace(/^-/, "").replace(/e.*$/i, "").replace(".", "").replace(/^0+/, "").replace(/0+$/, "");
    return Math.ceil(Math.max(1, digits.length) / 2) + 1;
  }
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...(value as Set<unknown>)].reduce<number>((n, v) => n + valueBytes(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce<number>((n, v) => n + (v === undefined ? 0 : 1 + valueBytes(v)), 0);
  if (typeof value === "object") {
    let n = 3;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (v !== undefined) n += 1 + utf8(k) + valueBytes(v);
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

type Options = { readonly compressOverBytes?: number; readonly minCompressBytes?: number; readonly brotliUpToBytes?: number };

/**
 * The cheapest stored form of `text` as attribute `name` of an item whose other attributes take
 * `restBytes` (see the file comment for the rule).
 */
export async function packText(name: string, text: string, restBytes: number, options: Options = {}): Promise<PackedText> {
  const o = { ...PACK_DEFAULTS, ...options };
  const plain: PackedText = { attribute: name, value: text, codec: "json", bytes: utf8(name) + utf8(text) };
  const plainBytes = utf8(text);
  if (plainBytes < o.minCompressBytes) return plain;
  const units = (p: PackedText) => writeUnits(restBytes + p.bytes);
  const gz = new Uint8Array(await gzip(text));
  let best: PackedText = { attribute: `${name}_gz`, value: gz, codec: "gzip", bytes: utf8(name) + 3 + gz.byteLength };
  const gzUnits = units(best);
  const reachable = (gzUnits - 1) * WRITE_UNIT_BYTES;
  if (gzUnits > 1 && plainBytes <= o.brotliUpToBytes && restBytes + utf8(name) + 3 + PACK_DEFAULTS.brotliRatio * gz.byteLength <= reachable) {
    const br = new Uint8Array(
      await brotliCompress(text, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: plainBytes },
      }),
    );
    const candidate: PackedText = { attribute: `${name}_br`, value: br, codec: "br", bytes: utf8(name) + 3 + br.byteLength };
    if (units(candidate) < gzUnits) best = candidate;
  }
  if (units(plain) < units(best)) return plain;
  if (units(plain) === units(best) && (plainBytes <= o.compressOverBytes || best.bytes >= plain.bytes)) return plain;
  return best;
}

/** The attribute names `packText` may have used for `name` (to REMOVE the others in an update). */
export function packedNames(name: string): readonly [string, string, string] {
  return [name, `${name}_gz`, `${name}_br`];
}

/** The text stored under `name` in any of its forms, or undefined when the item has none. */
export async function unpackText(item: Readonly<Record<string, unknown>>, name: string): Promise<string | undefined> {
  const br = item[`${name}_br`];
  if (br instanceof Uint8Array) return (await brotliDecompress(br)).toString("utf8");
  const gz = item[`${name}_gz`];
  if (gz instanceof Uint8Array) return (await gunzip(gz)).toString("utf8");
  const text = item[name];
  return typeof text === "string" ? text : undefined;
}
