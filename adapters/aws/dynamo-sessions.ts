// SessionRepository on DynamoDB: snapshot, outbox and version in ONE head item (`CLAIM#<id>`/`SESSION`)
// saved with `attribute_not_exists(pk)` (version 1) or `version = :expected`. Large snapshots are
// gzipped; still too large, they go to chunk items written before the head, whose content hash the
// reader verifies. No transactions: the head's conditional put is the single commit point.
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { gunzip as gunzipCb, gzip as gzipCb } from "node:zlib";
import { BatchWriteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Effect } from "../../core/claims/pipeline/effects.ts";
import { VersionConflictError } from "../../core/ports/claims.ts";
import type { SessionRepository, StoredSession } from "../../core/ports/claims.ts";
import { dynamoCall, queryAll } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { InvalidArgumentError, isConditionalCheckFailed, ItemTooLargeError, SessionCorruptError, StoredItemError } from "./errors.ts";
import { keys } from "./table.ts";

const gzip = promisify(gzipCb);
const gunzip = promisify(gunzipCb);

/** Size limits of the session layout (DynamoDB items stop at 400 KB; the margin covers keys and names). */
export const SESSION_LIMITS = {
  /** JSON larger than this is gzipped. */
  compressOverBytes: 64 * 1024,
  /** A head item larger than this moves its snapshot to chunk items. */
  headMaxBytes: 350_000,
  /** Bytes of compressed snapshot per chunk item. */
  chunkBytes: 300_000,
} as const;

type Encoded = { kind: "json"; text: string; bytes: number } | { kind: "gzip"; data: Uint8Array; bytes: number };

type ChunkRef = { version: number; prefix: string; count: number };

type HeadItem = {
  version: number;
  body_kind: "json" | "gzip" | "chunks";
  snapshot?: string;
  snapshot_gz?: Uint8Array;
  chunk_prefix?: string;
  chunk_count?: number;
  chunk_hash?: string;
  chunk_bytes?: number;
  outbox?: string;
  outbox_gz?: Uint8Array;
};

/** How a saved session was laid out (for tests and diagnostics). */
export type SessionLayout = { body: "json" | "gzip" | "chunks"; chunks: number; headBytes: number };

async function encode(text: string): Promise<Encoded> {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= SESSION_LIMITS.compressOverBytes) return { kind: "json", text, bytes };
  const data = new Uint8Array(await gzip(text));
  return { kind: "gzip", data, bytes: data.byteLength };
}

async function decode(what: string, text: unknown, gz: unknown): Promise<unknown> {
  if (gz instanceof Uint8Array) return JSON.parse((await gunzip(gz)).toString("utf8"));
  if (typeof text === "string") return JSON.parse(text);
  throw new StoredItemError(`${what} is missing from the stored session`);
}

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

/** A SessionRepository on the single table; also returns the layout of the last save per claim (for tests). */
export function createDynamoSessionRepository(ctx: DynamoContext): SessionRepository & { lastLayout(claimId: string): SessionLayout | undefined } {
  const { client, tableName } = ctx;
  // The chunks a head refers to, per claim, as last loaded or saved here: after the next save they are
  // superseded and deleted. (The orchestrator loads and saves in one invocation, so this is almost always known.)
  const chunkRefs = new Map<string, ChunkRef | undefined>();
  const layouts = new Map<string, SessionLayout>();
  const remember = (claimId: string, ref: ChunkRef | undefined) => {
    chunkRefs.delete(claimId);
    chunkRefs.set(claimId, ref);
    if (chunkRefs.size > 500) chunkRefs.delete(chunkRefs.keys().next().value!);
  };

  const chunkKeys = (claimId: string, ref: ChunkRef) => Array.from({ length: ref.count }, (_, i) => keys.sessionChunk(claimId, ref.prefix, i));

  const batchWrite = async (what: string, requests: Record<string, unknown>[]) => {
    for (let i = 0; i < requests.length; i += 25) {
      let pending = requests.slice(i, i + 25);
      for (let attempt = 1; pending.length > 0; attempt++) {
        if (attempt > 8) throw new StoredItemError(`${what}: ${pending.length} writes still unprocessed after 8 attempts`);
        const out = await dynamoCall(what, () => client.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending as never } })));
        pending = (out.UnprocessedItems?.[tableName] ?? []) as Record<string, unknown>[];
        if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt));
      }
    }
  };

  const deleteChunks = async (claimId: string, ref: ChunkRef) => {
    await batchWrite(`delete session chunks of ${claimId}`, chunkKeys(claimId, ref).map((Key) => ({ DeleteRequest: { Key } })));
  };

  const readHead = async (claimId: string): Promise<HeadItem | undefined> => {
    const out = await dynamoCall(`GetItem session ${claimId}`, () => client.send(new GetCommand({ TableName: tableName, Key: keys.session(claimId), ConsistentRead: true })));
    return out.Item as HeadItem | undefined;
  };

  const readChunks = async (claimId: string, head: HeadItem): Promise<Uint8Array | "CHANGED"> => {
    const items = await queryAll(ctx, `Query session chunks of ${claimId}`, {
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.session(claimId).pk, ":prefix": head.chunk_prefix },
      ConsistentRead: true,
    });
    const parts = items.map((i) => i.data).filter((d): d is Uint8Array => d instanceof Uint8Array);
    const data = Buffer.concat(parts);
    if (parts.length === head.chunk_count && data.byteLength === head.chunk_bytes && sha256(data) === head.chunk_hash) return data;
    // A writer may have committed the next version and removed these chunks meanwhile.
    const now = await readHead(claimId);
    if (now && now.version !== head.version) return "CHANGED";
    throw new SessionCorruptError(
      `session ${claimId} v${head.version}: ${parts.length}/${String(head.chunk_count)} chunks, ${data.byteLength}/${String(head.chunk_bytes)} bytes, content hash ${parts.length ? sha256(data).slice(0, 12) : "-"} ≠ ${String(head.chunk_hash).slice(0, 12)}`,
    );
  };

  return {
    async loadSession(claimId) {
      for (let attempt = 0; attempt < 5; attempt++) {
        const head = await readHead(claimId);
        if (!head) {
          remember(claimId, undefined);
          return undefined;
        }
        if (typeof head.version !== "number") throw new StoredItemError(`stored session ${claimId} has no version`);
        const outbox = (await decode(`outbox of ${claimId}`, head.outbox, head.outbox_gz)) as Effect[];
        let snapshot: unknown;
        if (head.body_kind === "chunks") {
          const data = await readChunks(claimId, head);
          if (data === "CHANGED") continue;
          snapshot = JSON.parse((await gunzip(data)).toString("utf8"));
          remember(claimId, { version: head.version, prefix: head.chunk_prefix!, count: head.chunk_count! });
        } else {
          snapshot = head.snapshot === undefined && head.snapshot_gz === undefined ? undefined : await decode(`snapshot of ${claimId}`, head.snapshot, head.snapshot_gz);
          remember(claimId, undefined);
        }
        return { claimId, version: head.version, snapshot, outbox } satisfies StoredSession;
      }
      throw new SessionCorruptError(`session ${claimId} kept changing while it was read (5 attempts)`);
    },

    async saveSession(session) {
      const { claimId, version } = session;
      if (typeof claimId !== "string" || claimId === "") throw new InvalidArgumentError("saveSession: claimId must be a non-empty string");
      if (!Number.isSafeInteger(version) || version < 1) throw new InvalidArgumentError(`saveSession ${claimId}: version must be a positive integer, got ${String(version)}`);
      if (!Array.isArray(session.outbox)) throw new InvalidArgumentError(`saveSession ${claimId}: outbox must be an array`);

      const outbox = await encode(JSON.stringify(session.outbox));
      const snapshotText = JSON.stringify(session.snapshot);
      const snapshot = snapshotText === undefined ? undefined : await encode(snapshotText);
      const overhead = 200 + claimId.length * 2;
      const head: Record<string, unknown> = { ...keys.session(claimId), entity: "session", claim_id: claimId, version };
      if (outbox.kind === "json") head.outbox = outbox.text;
      else head.outbox_gz = outbox.data;
      if (overhead + outbox.bytes > SESSION_LIMITS.headMaxBytes) {
        throw new ItemTooLargeError(`session ${claimId} v${version}: the outbox alone is ${outbox.bytes} bytes compressed, over ${SESSION_LIMITS.headMaxBytes}`);
      }

      let chunks: ChunkRef | undefined;
      if (snapshot === undefined) head.body_kind = "json";
      else if (overhead + outbox.bytes + snapshot.bytes <= SESSION_LIMITS.headMaxBytes) {
        head.body_kind = snapshot.kind;
        if (snapshot.kind === "json") head.snapshot = snapshot.text;
        else head.snapshot_gz = snapshot.data;
      } else {
        // Too large for one item: chunk items first, then the head that commits them.
        const data = snapshot.kind === "gzip" ? snapshot.data : new Uint8Array(await gzip(snapshot.text));
        const hash = sha256(data);
        const prefix = keys.sessionChunkPrefix(version, hash);
        const count = Math.ceil(data.byteLength / SESSION_LIMITS.chunkBytes);
        chunks = { version, prefix, count };
        await batchWrite(
          `write session chunks of ${claimId}`,
          Array.from({ length: count }, (_, i) => ({
            PutRequest: {
              Item: { ...keys.sessionChunk(claimId, prefix, i), entity: "session-chunk", data: data.subarray(i * SESSION_LIMITS.chunkBytes, (i + 1) * SESSION_LIMITS.chunkBytes) },
            },
          })),
        );
        Object.assign(head, { body_kind: "chunks", chunk_prefix: prefix, chunk_count: count, chunk_hash: hash, chunk_bytes: data.byteLength });
      }

      try {
        await dynamoCall(`PutItem session ${claimId} v${version}`, () =>
          client.send(new PutCommand({
            TableName: tableName,
            Item: head,
            ...(version === 1
              ? { ConditionExpression: "attribute_not_exists(pk)" }
              : { ConditionExpression: "version = :expected", ExpressionAttributeValues: { ":expected": version - 1 } }),
          })),
        );
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        if (chunks) {
          // Our chunks are garbage unless the winner wrote byte-identical content under the same keys.
          const winner = await readHead(claimId).catch(() => undefined);
          if (winner?.chunk_prefix !== chunks.prefix) await deleteChunks(claimId, chunks).catch(() => undefined);
        }
        chunkRefs.delete(claimId);
        throw new VersionConflictError("session", claimId, version - 1, { cause: error });
      }
      const superseded = chunkRefs.get(claimId);
      if (superseded && superseded.version === version - 1 && superseded.prefix !== chunks?.prefix) {
        await deleteChunks(claimId, superseded).catch(() => undefined);
      }
      remember(claimId, chunks);
      layouts.set(claimId, { body: head.body_kind as SessionLayout["body"], chunks: chunks?.count ?? 0, headBytes: overhead + outbox.bytes + (chunks ? 0 : (snapshot?.bytes ?? 0)) });
    },

    async clearOutbox(claimId, version) {
      try {
        await dynamoCall(`UpdateItem session ${claimId} outbox`, () =>
          client.send(new UpdateCommand({
            TableName: tableName,
            Key: keys.session(claimId),
            UpdateExpression: "SET outbox = :empty REMOVE outbox_gz",
            ConditionExpression: "version = :v",
            ExpressionAttributeValues: { ":empty": "[]", ":v": version },
          })),
        );
      } catch (error) {
        // A newer version (or none) is stored: its own outbox is not ours to clear.
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },

    lastLayout: (claimId) => layouts.get(claimId),
  };
}
