// SessionRepository on DynamoDB. Each orchestrator step is ONE item: session version n (snapshot and the
// outbox still to perform) together with the audit events of that step (`splitSessionOutbox`), stored in the
// claim's audit partition as `DFID#<dfid>`/`AUDIT#~SESSION#<n>` and put with `attribute_not_exists(pk)`
// after checking that version n-1 is the latest (known from this repository's load or save, else read).
// Two writers of version n: one put wins, the other gets `VersionConflictError`; no transactions, the
// step item's conditional put is the single commit point of the snapshot, the outbox and the step's audit.
// The audit log reads the events out of these items (dynamo-audit.ts). The body is one JSON text
// `{ snapshot, outbox, audit? }` in its cheapest form (compact.ts); a body too large moves the snapshot to
// chunk items written before the step item (`CLAIM#<id>`/`SESSION#CHUNK#…`), whose content hash the reader
// verifies. Clearing the outbox does not rewrite the step: a tiny sibling (`AUDIT#~SESSION$DONE`, sorting
// after the steps: one Query reads it with the latest) records the highest version whose outbox was performed.
// The outbox rule (the in-memory store's too, checked by the contract tests): only the latest step's outbox
// loads, and it is pending unless the marker has reached its version; a step never marked is superseded by the
// next step's put, and a marker of an older version never hides a newer outbox. The marker is written only
// where nothing that comes later proves the outbox performed (pipeline/decide/outbox.ts): not on the normal path,
// where the orchestrator sends a step's one agent step last, flagged as its witness, and the answer to it proves
// the step (then the answer's step supersedes it), and the last step's proposal is proven by the claim's verdict.
// A step after a repair, a tick or a hold, and one whose outbox has no such witness (a review, a publish) is
// marked as before. Unproven and unmarked is pending: the redelivery of the message that made the step performs it
// again (fail-closed); a tick leaves a witness step in flight alone until its deadline. So a claim's normal path
// writes no marker at all, and its session costs one write per step.
// Retention: step items hold audit events, so they are kept as long as the audit (`retention.auditMs`, and
// at least `retention.sessionsMs`; without an audit horizon they are kept); every step of a session is
// kept for the same time after its write, so the latest step expires last, and an expired latest step reads
// as absent and may be replaced by a new version 1 (a new `life`: a marker counts only for its own life).
// Sessions written before (one head `CLAIM#<id>`/`SESSION` rewritten per version, its marker `SESSION!DONE`,
// their outbox still holding the audit effects) still load and clear; the next save of such a session
// writes step item n+1, after which the step items are read. A load told the claim has no such head
// (`legacyLayout: false`: its start was stamped by this release) does not look for one when no step is found.
import { randomUUID } from "node:crypto";
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { gunzip as gunzipCb, gzip as gzipCb } from "node:zlib";
import { BatchWriteCommand, GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { parseAuditEvent } from "../../core/integrity/audit.ts";
import { VersionConflictError } from "../../core/errors.ts";
import { splitSessionOutbox } from "../../pipeline/ports.ts";
import type { SessionRepository, StoredSession } from "../../pipeline/ports.ts";
import { itemBytes, packText, unpackText } from "./compact.ts";
import { openText, sealText, tableVault } from "../vault/sealed-table.ts";
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
import { epochSeconds, isExpired, keys, nextAppendStamp, SESSION_STEP_DONE_SK, SESSION_STEP_PREFIX } from "./table.ts";

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
 * The latest stored version: a step item (written now: `body_kind: "packed"` with `body`/`body_z1` = JSON
 * `{ snapshot, outbox, audit? }`, or `"chunks"` with the chunk refs and `body` = JSON `{ outbox, audit? }`), or a
 * head written before (`"packed"` with `body` = `{ snapshot, outbox }`, `"chunks"` with `outbox`/`outbox_z1`,
 * `_gz`/`_br`, or `"json"`/`"gzip"` with `snapshot`/`snapshot_gz` and `outbox`/`outbox_gz`).
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

/** Where a claim's latest version is stored: step items (now) or the head written before. */
type Layout = "steps" | "head";

/** What this repository last loaded or saved of a claim (the orchestrator loads, saves and clears in one invocation). */
type Known = { version: number; layout: Layout; life: string; chunks: ChunkRef | undefined };

/** A SessionRepository on the single table; also returns the layout of the last save per claim (for tests). */
export function createDynamoSessionRepository(
  ctx: DynamoContext,
): SessionRepository & { lastLayout(claimId: string): SessionLayout | undefined } {
  const { client, tableName } = ctx;
  // A sealing client: the session's texts are sealed under the claim's key before they are compressed.
  const vault = tableVault(client);
  const known = new Map<string, Known>();
  const layouts = new Map<string, SessionLayout>();
  const remember = (claimId: string, value: Known) => {
    known.delete(claimId);
    known.set(claimId, value);
    if (known.size > 500) known.delete(known.keys().next().value!);
  };
  // Heads written before: kept for the sessions' horizon after their last write.
  const headExpiry = (): Record<string, number> =>
    ctx.retention?.sessionsMs === undefined
      ? {}
      : { expires_at: epochSeconds(ctx.clock.now() + ctx.retention.sessionsMs) };
  // Step items hold audit events: kept as long as the audit, and at least as long as sessions.
  const stepExpiry = (): Record<string, number> =>
    ctx.retention?.auditMs === undefined
      ? {}
      : {
          expires_at: epochSeconds(ctx.clock.now() + Math.max(ctx.retention.auditMs, ctx.retention.sessionsMs ?? 0)),
        };
  const lifeOf = (item: HeadItem | undefined): string => (typeof item?.life === "string" ? item.life : "");

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

  const getItem = async (what: string, Key: Record<string, string>): Promise<HeadItem | undefined> => {
    const out = await dynamoCall(what, () =>
      client.send(new GetCommand({ TableName: tableName, Key, ConsistentRead: true })),
    );
    return out.Item as HeadItem | undefined;
  };

  /** The latest live step item and its marker's version: one request (Limit 2, newest first: marker, then the latest step). */
  const readLatestStep = async (claimId: string): Promise<{ head: HeadItem | undefined; done: number }> => {
    const { pk } = keys.sessionStep(claimId, 1);
    const range = {
      KeyConditionExpression: "pk = :pk AND sk BETWEEN :first AND :done",
      ExpressionAttributeValues: { ":pk": pk, ":first": SESSION_STEP_PREFIX, ":done": SESSION_STEP_DONE_SK },
      ConsistentRead: true,
    };
    const page = await dynamoCall(`Query session steps of ${claimId}`, () =>
      client.send(new QueryCommand({ TableName: tableName, ...range, ScanIndexForward: false, Limit: 2 })),
    );
    let items = (page.Items ?? []) as HeadItem[];
    const now = ctx.clock.now();
    let head = items.find((i) => i.entity === "session");
    if (head && isExpired(head, now)) {
      // The latest step of an earlier life has expired (so has all of that life): a new life may live below it.
      items = (await queryAll(ctx, `Query session steps of ${claimId}`, range)) as HeadItem[];
      head = items
        .filter((i) => i.entity === "session" && !isExpired(i, now))
        .sort((a, b) => Number(b.version) - Number(a.version))[0];
    }
    const marker = items.find((i) => i.entity === "session-done");
    // A marker counts for the life it was written in only (an expired marker still does: it is written after its step).
    const doneVersion = head && marker && lifeOf(marker) === lifeOf(head) ? marker.done_version : undefined;
    return { head, done: typeof doneVersion === "number" ? doneVersion : 0 };
  };

  /** A head written before and its marker in one request (their sort keys are adjacent; chunks sort after both). */
  const readOldHead = async (claimId: string): Promise<{ head: HeadItem | undefined; done: number }> => {
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
    const doneVersion = current && done && lifeOf(done) === lifeOf(current) ? done.done_version : undefined;
    return { head: current, done: typeof doneVersion === "number" ? doneVersion : 0 };
  };

  /** The latest version wherever it is stored: step items first, then a head written before. */
  const readLatest = async (
    claimId: string,
    legacyLayout = true,
  ): Promise<{ head: HeadItem & { version: number }; done: number; layout: Layout } | undefined> => {
    const step = await readLatestStep(claimId);
    if (!step.head && !legacyLayout) return undefined;
    const found = step.head
      ? { ...step, layout: "steps" as const }
      : { ...(await readOldHead(claimId)), layout: "head" as const };
    if (!found.head) return undefined;
    const version = found.head.version;
    if (typeof version !== "number") throw new StoredItemError(`stored session ${claimId} has no version`);
    return { head: { ...found.head, version }, done: found.done, layout: found.layout };
  };

  const readChunks = async (
    claimId: string,
    head: HeadItem & { version: number },
    layout: Layout,
  ): Promise<Uint8Array | "CHANGED"> => {
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
    const now = await readLatest(claimId);
    if (now && (now.head.version !== head.version || now.layout !== layout)) return "CHANGED";
    throw new SessionCorruptError(
      `session ${claimId} v${head.version}: ${parts.length}/${String(head.chunk_count)} chunks, ${data.byteLength}/${String(head.chunk_bytes)} bytes, content hash ${parts.length ? sha256(data).slice(0, 12) : "-"} ≠ ${String(head.chunk_hash).slice(0, 12)}`,
    );
  };

  /** Snapshot (unless chunked) and outbox of a stored version, in any layout written so far. */
  const readBody = async (claimId: string, head: HeadItem): Promise<{ snapshot: unknown; outbox: unknown }> => {
    const what = `session ${claimId} v${String(head.version)}`;
    try {
      const packed = await unpackText(head, "body");
      const bodyText = packed === undefined ? undefined : await openText(vault, packed);
      if (bodyText !== undefined) {
        const body = parseJson(`the body of ${what}`, bodyText) as { snapshot?: unknown; outbox?: unknown } | null;
        return { snapshot: body?.snapshot, outbox: body?.outbox };
      }
      if (head.body_kind === "packed") throw new StoredItemError(`${what} has no body`);
      const outboxPacked = await unpackText(head, "outbox");
      const outboxText = outboxPacked === undefined ? undefined : await openText(vault, outboxPacked);
      if (outboxText === undefined) throw new StoredItemError(`the outbox is missing from the stored ${what}`);
      const snapshotPacked = head.body_kind === "chunks" ? undefined : await unpackText(head, "snapshot");
      const snapshotText = snapshotPacked === undefined ? undefined : await openText(vault, snapshotPacked);
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
    async loadSession(claimId, options) {
      for (let attempt = 0; attempt < 5; attempt++) {
        // A claim started by this release (`legacyLayout: false`) has no head of an older release: one Query.
        const latest = await readLatest(claimId, options?.legacyLayout !== false);
        if (!latest) {
          remember(claimId, { version: 0, layout: "steps", life: "", chunks: undefined });
          return undefined;
        }
        const { head, done, layout } = latest;
        const version = head.version;
        const body = await readBody(claimId, head);
        const outbox = body.outbox;
        let snapshot = body.snapshot;
        let chunks: ChunkRef | undefined;
        if (head.body_kind === "chunks") {
          const data = await readChunks(claimId, head, layout);
          if (data === "CHANGED") continue;
          const text = await openText(vault, (await gunzip(data)).toString("utf8"));
          snapshot = parseJson(`the snapshot of session ${claimId} v${version}`, text);
          chunks = { version, prefix: head.chunk_prefix!, count: head.chunk_count! };
        }
        if (!Array.isArray(outbox))
          throw new StoredItemError(`the outbox of session ${claimId} v${version} is not a list`);
        remember(claimId, { version, layout, life: lifeOf(head), chunks });
        // The outbox of this version was performed (clearOutbox): nothing is pending.
        return {
          claimId,
          version,
          snapshot,
          outbox: done >= version ? [] : (outbox as StoredSession["outbox"]),
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
      const split = splitSessionOutbox(claimId, session.outbox);
      const audit = split.audit.map((e) => parseAuditEvent(e));

      // Version n-1 must be the latest: known from this repository's own load or save, else read.
      let previous = known.get(claimId);
      if (previous?.version !== version - 1) {
        const latest = await readLatest(claimId);
        previous = latest
          ? { version: latest.head.version, layout: latest.layout, life: lifeOf(latest.head), chunks: undefined }
          : { version: 0, layout: "steps", life: "", chunks: undefined };
        remember(claimId, previous);
        if (previous.version !== version - 1) throw new VersionConflictError("session", claimId, version - 1);
      }
      const life = version === 1 ? `${ctx.clock.now().toString(36)}-${randomUUID().slice(0, 8)}` : previous.life;
      const base: Record<string, unknown> = {
        ...keys.sessionStep(claimId, version),
        entity: "session",
        version,
        ...(life ? { life } : {}),
        seq: nextAppendStamp(),
        ...stepExpiry(),
      };
      const extra = audit.length > 0 ? { audit } : {};
      const packedHead = { ...base, body_kind: "packed" };
      const body = await packText(
        "body",
        await sealText(vault, JSON.stringify({ snapshot: session.snapshot, outbox: split.rest, ...extra }), claimId),
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
        // Too large for one item: the snapshot goes to chunk items first, then the step item that commits them.
        const plainSnapshot = JSON.stringify(session.snapshot) as string | undefined;
        const snapshotText = plainSnapshot === undefined ? undefined : await sealText(vault, plainSnapshot, claimId);
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
        const rest: PackedText = await packText(
          "body",
          await sealText(vault, JSON.stringify({ outbox: split.rest, ...extra }), claimId),
          itemBytes(chunked),
          { compressOverBytes: SESSION_LIMITS.compressOverBytes },
        );
        if (itemBytes(chunked) + rest.bytes > SESSION_LIMITS.headMaxBytes) {
          throw new ItemTooLargeError(
            `session ${claimId} v${version}: the outbox alone is ${rest.bytes} bytes compressed, over ${SESSION_LIMITS.headMaxBytes}`,
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
                ...stepExpiry(),
                data: data.subarray(i * SESSION_LIMITS.chunkBytes, (i + 1) * SESSION_LIMITS.chunkBytes),
              },
            },
          })),
        );
        head = { ...chunked, [rest.attribute]: rest.value };
        codec = "chunks";
      }

      try {
        await dynamoCall(`PutItem session ${claimId} v${version}`, () =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: head,
              // Version n absent (or left by a life that has expired): nobody else committed this step.
              ConditionExpression: "attribute_not_exists(pk) OR expires_at <= :now",
              ExpressionAttributeValues: { ":now": epochSeconds(ctx.clock.now()) },
            }),
          ),
        );
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        if (chunks) {
          // Our chunks are garbage unless the winner wrote byte-identical content under the same keys.
          const winner = await getItem(
            `GetItem session ${claimId} v${version}`,
            keys.sessionStep(claimId, version),
          ).catch(() => undefined);
          if (winner?.chunk_prefix !== chunks.prefix) await deleteChunks(claimId, chunks).catch(() => undefined);
        }
        known.delete(claimId);
        throw new VersionConflictError("session", claimId, version - 1, { cause: error });
      }
      const superseded = previous.chunks;
      if (superseded && superseded.version === version - 1 && superseded.prefix !== chunks?.prefix) {
        await deleteChunks(claimId, superseded).catch(() => undefined);
      }
      remember(claimId, { version, layout: "steps", life, chunks });
      layouts.delete(claimId);
      layouts.set(claimId, { body: codec, chunks: chunks?.count ?? 0, headBytes: itemBytes(head) });
      // Bounded like `known`: a process that stays up (claims serve) saves sessions of ever new claims.
      if (layouts.size > 500) layouts.delete(layouts.keys().next().value!);
    },

    async clearOutbox(claimId, version) {
      // Only a version that is the latest stored is cleared ("not of another"). Known from this
      // repository's own load or save, or read; a newer version keeps its own outbox.
      let current = known.get(claimId);
      if (current === undefined || current.version < version) {
        const latest = await readLatest(claimId);
        if (!latest) return;
        current = { version: latest.head.version, layout: latest.layout, life: lifeOf(latest.head), chunks: undefined };
        remember(claimId, current);
      }
      if (current.version !== version) return;
      const { life } = current;
      const marker =
        current.layout === "steps"
          ? { ...keys.sessionStepDone(claimId), ...stepExpiry() }
          : { ...keys.sessionDone(claimId), ...headExpiry() };
      try {
        await dynamoCall(`PutItem session ${claimId} outbox done`, () =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: { ...marker, entity: "session-done", done_version: version, ...(life ? { life } : {}) },
              // Monotonic within a life: a late clear of an older version never hides a newer version's outbox.
              ConditionExpression:
                "attribute_not_exists(pk) OR done_version < :v OR life <> :life OR (attribute_not_exists(life) AND :life <> :none)",
              ExpressionAttributeValues: { ":v": version, ":life": life, ":none": "" },
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
