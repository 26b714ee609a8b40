// SessionRepository on DynamoDB: snapshot, outbox and version in ONE head item (`CLAIM#<id>`/`SESSION`)
// saved with `attribute_not_exists(pk)` (version 1) or `version = :expected`. Snapshot and outbox are
// one JSON body stored in its cheapest form (compact.ts: plain, gzip or brotli); a body still too large
// moves the snapshot to chunk items written before the head, whose content hash the reader verifies.
// Clearing the outbox does not rewrite the head: a tiny sibling (`SESSION!DONE`) records the highest
// version whose outbox was performed, and a head whose version it has reached loads with an empty
// outbox. No transactions: the head's conditional put is the single commit point. With a retention
// horizon (`retention.sessionsMs`) head, marker and chunks carry `expires_at` (refreshed by every write);
// an expired head reads as absent and may be replaced by a new version 1. Each head carries its `life`
// (set at version 1), and a marker counts only for the life it was written in: a marker left from an
// expired session never hides the outbox of a new one, whatever order TTL deletes them in.
import { randomUUID } from "node:crypto";
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { gunzip as gunzipCb, gzip as gzipCb } from "node:zlib";
import { BatchWriteCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { Effect } from "../../pipeline/effects.ts";
import { VersionConflictError } from "../../core/errors.ts";
import type { SessionRepository, StoredSession } from "../../pipeline/ports.ts";
import { itemBytes, packText, unpackText } from "./compact.ts";
import type { PackedText } from "./compact.ts";
import { dynamoCall, queryAll } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import {
  InvalidArgumentError,
  isConditionalCheckFailed,
  ItemTooLargeError,
  SessionCorruptError,
  StoredItemError,
} from "./errors.ts";
import { epochSeconds, isExpired, keys } from "./table.ts";

const gzip = promisify(gzipCb);
const gunzip = promisify(gunzipCb);

/** Size limits of the session layout (DynamoDB items stop at 400 KB; the margin covers keys and names). */
const SESSION_LIMITS = {
  /** A body (snapshot + outbox JSON) larger than this is always compressed; a smaller one when that saves a write unit. */
  compressOverBytes: 1024,
  /** A head item larger than this moves its snapshot to chunk items. */
  headMaxBytes: 350_000,
  /** Bytes of compressed snapshot per chunk item. */
  chunkBytes: 300_000,
} as const;

type ChunkRef = { version: number; prefix: string; count: number };

/**
 * The head. Written now: `body_kind: "packed"` with `body`/`body_z1` (`body_gz`/`body_br` before) = JSON `{ snapshot, outbox }`,
 * or `"chunks"` with the chunk refs and `outbox`/`outbox_z1` (`_gz`/`_br` before). Still read (written before):
 * `"json"`/`"gzip"` with `snapshot`/`snapshot_gz` and `outbox`/`outbox_gz`.
 */
type HeadItem = Record<string, unknown> & {
  version?: unknown;
  life?: unknown;
  body_kind?: unknown;
  chunk_prefix?: string;
  chunk_count?: number;
  chunk_hash?: string;
  chunk_bytes?: number;
};

/** How a saved session was laid out (for tests and diagnostics). */
type SessionLayout = { body: "json" | "dict" | "chunks"; chunks: number; headBytes: number };

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

const parseJson = (what: string, text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new StoredItemError(`${what} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
};

/** A SessionRepository on the single table; also returns the layout of the last save per claim (for tests). */
export function createDynamoSessionRepository(
  ctx: DynamoContext,
): SessionRepository & { lastLayout(claimId: string): SessionLayout | undefined } {
  const { client, tableName } = ctx;
  // Per claim, as last loaded or saved here: the chunks the head refers to (superseded, hence deleted,
  // by the next save) and the highest version known to have been stored (versions are stored in order
  // from 1, so every version up to it existed; clearOutbox needs that). The orchestrator loads, saves
  // and clears in one invocation, so both are almost always known.
  const chunkRefs = new Map<string, ChunkRef | undefined>();
  const storedVersions = new Map<string, number>();
  // The life of the head as last loaded or saved here (see the file comment); "" for heads written without one.
  const lives = new Map<string, string>();
  const expiry = (): Record<string, number> =>
    ctx.retention?.sessionsMs === undefined
      ? {}
      : { expires_at: epochSeconds(ctx.clock.now() + ctx.retention.sessionsMs) };
  const lifeOf = (item: HeadItem | undefined): string => (typeof item?.life === "string" ? item.life : "");
  const layouts = new Map<string, SessionLayout>();
  const bounded = <V>(map: Map<string, V>, claimId: string, value: V) => {
    map.delete(claimId);
    map.set(claimId, value);
    if (map.size > 500) map.delete(map.keys().next().value!);
  };
  const remember = (claimId: string, ref: ChunkRef | undefined, version?: number) => {
    bounded(chunkRefs, claimId, ref);
    if (version !== undefined && version > (storedVersions.get(claimId) ?? 0))
      bounded(storedVersions, claimId, version);
  };

  const chunkKeys = (claimId: string, ref: ChunkRef) =>
    Array.from({ length: ref.count }, (_, i) => keys.sessionChunk(claimId, ref.prefix, i));

  const batchWrite = async (what: string, requests: Record<string, unknown>[]) => {
    for (let i = 0; i < requests.length; i += 25) {
      let pending = requests.slice(i, i + 25);
      for (let attempt = 1; pending.length > 0; attempt++) {
        if (attempt > 8)
          throw new StoredItemError(`${what}: ${pending.length} writes still unprocessed after 8 attempts`);
        const out = await dynamoCall(what, () =>
          client.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending as never } })),
        );
        pending = (out.UnprocessedItems?.[tableName] ?? []) as Record<string, unknown>[];
        if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt));
      }
    }
  };

  const deleteChunks = async (claimId: string, ref: ChunkRef) => {
    await batchWrite(
      `delete session chunks of ${claimId}`,
      chunkKeys(claimId, ref).map((Key) => ({ DeleteRequest: { Key } })),
    );
  };

  const readHead = async (claimId: string): Promise<HeadItem | undefined> => {
    const out = await dynamoCall(`GetItem session ${claimId}`, () =>
      client.send(new GetCommand({ TableName: tableName, Key: keys.session(claimId), ConsistentRead: true })),
    );
    return out.Item as HeadItem | undefined;
  };

  /** The head and the done marker in one request (their sort keys are adjacent; chunks sort after both). */
  const readHeadAndDone = async (claimId: string): Promise<{ head: HeadItem | undefined; done: number }> => {
    const head = keys.session(claimId);
    const marker = keys.sessionDone(claimId);
    const items = await queryAll(ctx, `Query session ${claimId}`, {
      KeyConditionExpression: "pk = :pk AND sk BETWEEN :head AND :done",
      ExpressionAttributeValues: { ":pk": head.pk, ":head": head.sk, ":done": marker.sk },
      ConsistentRead: true,
    });
    const now = ctx.clock.now();
    const found = items.find((i) => i.sk === head.sk) as HeadItem | undefined;
    const current = found && !isExpired(found, now) ? found : undefined;
    const done = items.find((i) => i.sk === marker.sk);
    // A marker counts for the life it was written in only (an expired marker still does: it is written after its head).
    const doneVersion = current && done && lifeOf(done) === lifeOf(current) ? done.done_version : undefined;
    return { head: current, done: typeof doneVersion === "number" ? doneVersion : 0 };
  };

  const readChunks = async (claimId: string, head: HeadItem & { version: number }): Promise<Uint8Array | "CHANGED"> => {
    const items = await queryAll(ctx, `Query session chunks of ${claimId}`, {
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.session(claimId).pk, ":prefix": head.chunk_prefix },
      ConsistentRead: true,
    });
    const parts = items.map((i) => i.data).filter((d): d is Uint8Array => d instanceof Uint8Array);
    const data = Buffer.concat(parts);
    if (parts.length === head.chunk_count && data.byteLength === head.chunk_bytes && sha256(data) === head.chunk_hash)
      return data;
    // A writer may have committed the next version and removed these chunks meanwhile.
    const now = await readHead(claimId);
    if (now && now.version !== head.version) return "CHANGED";
    throw new SessionCorruptError(
      `session ${claimId} v${head.version}: ${parts.length}/${String(head.chunk_count)} chunks, ${data.byteLength}/${String(head.chunk_bytes)} bytes, content hash ${parts.length ? sha256(data).slice(0, 12) : "-"} ≠ ${String(head.chunk_hash).slice(0, 12)}`,
    );
  };

  /** Snapshot and outbox of a head that is not chunked, in any layout written so far. */
  const readBody = async (claimId: string, head: HeadItem): Promise<{ snapshot: unknown; outbox: unknown }> => {
    const what = `session ${claimId} v${String(head.version)}`;
    try {
      if (head.body_kind === "packed") {
        const text = await unpackText(head, "body");
        if (text === undefined) throw new StoredItemError(`${what} has no body`);
        const body = parseJson(`the body of ${what}`, text) as { snapshot?: unknown; outbox?: unknown } | null;
        return { snapshot: body?.snapshot, outbox: body?.outbox };
      }
      const outboxText = await unpackText(head, "outbox");
      if (outboxText === undefined) throw new StoredItemError(`the outbox is missing from the stored ${what}`);
      const snapshotText = await unpackText(head, "snapshot");
      return {
        snapshot: snapshotText === undefined ? undefined : parseJson(`the snapshot of ${what}`, snapshotText),
        outbox: parseJson(`the outbox of ${what}`, outboxText),
      };
    } catch (error) {
      if (error instanceof StoredItemError) throw error;
      throw new StoredItemError(`${what} cannot be decompressed: ${(error as Error).message}`, { cause: error });
    }
  };

  return {
    async loadSession(claimId) {
      for (let attempt = 0; attempt < 5; attempt++) {
        const { head, done } = await readHeadAndDone(claimId);
        if (!head) {
          remember(claimId, undefined);
          lives.delete(claimId);
          return undefined;
        }
        bounded(lives, claimId, lifeOf(head));
        const version = head.version;
        if (typeof version !== "number") throw new StoredItemError(`stored session ${claimId} has no version`);
        let snapshot: unknown;
        let outbox: unknown;
        let ref: ChunkRef | undefined;
        if (head.body_kind === "chunks") {
          const data = await readChunks(claimId, { ...head, version });
          if (data === "CHANGED") continue;
          snapshot = parseJson(`the snapshot of session ${claimId} v${version}`, (await gunzip(data)).toString("utf8"));
          const outboxText = await unpackText(head, "outbox");
          if (outboxText === undefined)
            throw new StoredItemError(`the outbox is missing from the stored session ${claimId} v${version}`);
          outbox = parseJson(`the outbox of session ${claimId} v${version}`, outboxText);
          ref = { version, prefix: head.chunk_prefix!, count: head.chunk_count! };
        } else {
          ({ snapshot, outbox } = await readBody(claimId, head));
        }
        if (!Array.isArray(outbox))
          throw new StoredItemError(`the outbox of session ${claimId} v${version} is not a list`);
        remember(claimId, ref, version);
        // The outbox of this version was performed (clearOutbox): nothing is pending.
        return {
          claimId,
          version,
          snapshot,
          outbox: done >= version ? [] : (outbox as Effect[]),
        } satisfies StoredSession;
      }
      throw new SessionCorruptError(`session ${claimId} kept changing while it was read (5 attempts)`);
    },

    async saveSession(session) {
      const { claimId, version } = session;
      if (typeof claimId !== "string" || claimId === "")
        throw new InvalidArgumentError("saveSession: claimId must be a non-empty string");
      if (!Number.isSafeInteger(version) || version < 1)
        throw new InvalidArgumentError(
          `saveSession ${claimId}: version must be a positive integer, got ${String(version)}`,
        );
      if (!Array.isArray(session.outbox))
        throw new InvalidArgumentError(`saveSession ${claimId}: outbox must be an array`);

      let life = version === 1 ? `${ctx.clock.now().toString(36)}-${randomUUID().slice(0, 8)}` : lives.get(claimId);
      if (life === undefined) life = lifeOf(await readHead(claimId));
      const base: Record<string, unknown> = {
        ...keys.session(claimId),
        entity: "session",
        version,
        ...(life ? { life } : {}),
        ...expiry(),
      };
      const packedHead = { ...base, body_kind: "packed" };
      const body = await packText(
        "body",
        JSON.stringify({ snapshot: session.snapshot, outbox: session.outbox }),
        itemBytes(packedHead),
        { compressOverBytes: SESSION_LIMITS.compressOverBytes },
      );
      let head: Record<string, unknown>;
      let chunks: ChunkRef | undefined;
      let codec: SessionLayout["body"];
      if (itemBytes(packedHead) + body.bytes <= SESSION_LIMITS.headMaxBytes) {
        head = { ...packedHead, [body.attribute]: body.value };
        codec = body.codec;
      } else {
        // Too large for one item: the snapshot goes to chunk items first, then the head that commits them.
        const snapshotText = JSON.stringify(session.snapshot) as string | undefined;
        if (snapshotText === undefined)
          throw new ItemTooLargeError(
            `session ${claimId} v${version}: the outbox alone is ${body.bytes} bytes compressed, over ${SESSION_LIMITS.headMaxBytes}`,
          );
        const data = new Uint8Array(await gzip(snapshotText));
        const hash = sha256(data);
        const prefix = keys.sessionChunkPrefix(version, hash);
        const count = Math.ceil(data.byteLength / SESSION_LIMITS.chunkBytes);
        const chunked = {
          ...base,
          body_kind: "chunks",
          chunk_prefix: prefix,
          chunk_count: count,
          chunk_hash: hash,
          chunk_bytes: data.byteLength,
        };
        const outbox: PackedText = await packText("outbox", JSON.stringify(session.outbox), itemBytes(chunked), {
          compressOverBytes: SESSION_LIMITS.compressOverBytes,
        });
        if (itemBytes(chunked) + outbox.bytes > SESSION_LIMITS.headMaxBytes) {
          throw new ItemTooLargeError(
            `session ${claimId} v${version}: the outbox alone is ${outbox.bytes} bytes compressed, over ${SESSION_LIMITS.headMaxBytes}`,
          );
        }
        chunks = { version, prefix, count };
        await batchWrite(
          `write session chunks of ${claimId}`,
          Array.from({ length: count }, (_, i) => ({
            PutRequest: {
              Item: {
                ...keys.sessionChunk(claimId, prefix, i),
                entity: "session-chunk",
                ...expiry(),
                data: data.subarray(i * SESSION_LIMITS.chunkBytes, (i + 1) * SESSION_LIMITS.chunkBytes),
              },
            },
          })),
        );
        head = { ...chunked, [outbox.attribute]: outbox.value };
        codec = "chunks";
      }

      try {
        await dynamoCall(`PutItem session ${claimId} v${version}`, () =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: head,
              ...(version === 1
                ? {
                    ConditionExpression: "attribute_not_exists(pk) OR expires_at <= :now",
                    ExpressionAttributeValues: { ":now": epochSeconds(ctx.clock.now()) },
                  }
                : {
                    ConditionExpression: "version = :expected",
                    ExpressionAttributeValues: { ":expected": version - 1 },
                  }),
            }),
          ),
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
      if (version === 1) storedVersions.delete(claimId); // a new life: versions start again
      remember(claimId, chunks, version);
      bounded(lives, claimId, life);
      layouts.set(claimId, { body: codec, chunks: chunks?.count ?? 0, headBytes: itemBytes(head) });
    },

    async clearOutbox(claimId, version) {
      // Only a version that is the stored head is cleared ("not of another"). Known from this
      // repository's own load or save, or read; a newer head keeps its own outbox.
      let stored = storedVersions.get(claimId);
      let life = lives.get(claimId);
      if (stored === undefined || stored < version || life === undefined) {
        const head = await readHead(claimId);
        if (typeof head?.version !== "number" || isExpired(head, ctx.clock.now())) return;
        stored = head.version;
        life = lifeOf(head);
        bounded(storedVersions, claimId, stored);
        bounded(lives, claimId, life);
      }
      if (stored !== version) return;
      try {
        await dynamoCall(`PutItem session ${claimId} outbox done`, () =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: {
                ...keys.sessionDone(claimId),
                entity: "session-done",
                done_version: version,
                ...(life ? { life } : {}),
                ...expiry(),
              },
              // Monotonic within a life: a late clear of an older version never hides a newer version's outbox.
              ConditionExpression:
                "attribute_not_exists(pk) OR done_version < :v OR life <> :life OR (attribute_not_exists(life) AND :life <> :none)",
              ExpressionAttributeValues: { ":v": version, ":life": life ?? "", ":none": "" },
            }),
          ),
        );
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },

    lastLayout: (claimId) => layouts.get(claimId),
  };
}
