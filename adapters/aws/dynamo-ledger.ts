// RefundLedger on DynamoDB: one item per order and ledger scope (`ORDER#<id>` / `LEDGER` for real refunds,
// `LEDGER#SIM#<simulation>` for a simulation's) holding `refunded_cents`, a `claims` map, `automatic_cents`,
// and the string sets `approved`, `pending_reviews` and `released`. A reservation is ONE conditional UpdateItem — the
// rule of `reserveRefund` (core/kernel/ledger.ts) as a condition:
//   automatic: ADD refunded_cents :c, automatic_cents :c SET claims.#cid = :c
//              IF claim absent AND not released AND refunded_cents <= order − c AND automatic_cents <= limit − c
//                 AND no other claim's review is pending on the order
//   approved:  ADD refunded_cents :c, approved {cid} SET claims.#cid = :c DELETE pending_reviews {cid}
//              IF claim absent AND not released AND refunded_cents <= order − c
// A release (a failed refund CLOSEd unpaid) removes the claim's reservation and adds the claim to `released` in
// the same write, so the claim never reserves on the order again.
// A person's decision that binds the order (a DENY, an APPROVE of less than proposed) is an element of the string
// set `decisions` (`["<claim>","DENY"]`, `["<claim>","APPROVE",<approved cents>,<proposed cents>]`), added by the same write that
// deletes the claim's pending-review mark; an automatic reservation requires that set to be absent.
// A customer's window is its own item (adapters/aws/dynamo-customer-windows.ts); an order's lines' counts join the
// order's write (adapters/aws/dynamo-ledger-lines.ts). The kernel reserves the customer's window first, then the
// order's ledger, and releases the window's reservation if the order's loses.
// A nested SET needs the `claims` map to exist, so the first write on an order creates the empty shape
// (an update with if_not_exists, safe on an existing item) and tries again — unless this process read the
// entry as absent just before (the kernel reads it to decide): then the first reservation is one put of
// the whole entry, conditional on absence (nothing to check on an absent entry beyond the amounts the
// pure rule already checked), and only a lost race falls back to the update.
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { LedgerInvariantError } from "../../core/integrity/errors.ts";
import {
  assertLedgerEntry,
  emptyLedgerEntry,
  refundReleased,
  reservedForClaim,
  reserveRefund,
} from "../../core/kernel/ledger.ts";
import type { LedgerEntry, LineReserve, PersonDecision, ReserveResult } from "../../core/kernel/ledger.ts";
import type { RefundLedger, ReserveRequest } from "../../pipeline/ports.ts";
import { createDynamoCustomerWindows, MAX_PROGRESS_ATTEMPTS } from "./dynamo-customer-windows.ts";
import { dynamoCall } from "./dynamo-context.ts";
import { withKnownLines, withLines } from "./dynamo-ledger-lines.ts";
import type { LinesWrite, UpdateInput } from "./dynamo-ledger-lines.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { errorName, isConditionalCheckFailed, StoredItemError } from "./errors.ts";
import { keys } from "./table.ts";

/** Conditional writes that lose a race against a changing entry (a review closing, another refund) are tried this often. */
const MAX_ATTEMPTS = 5;

/** A person's decision as an element of the `decisions` string set: a JSON array, the same text for the same decision. */
function encodeDecision(d: PersonDecision): string {
  return JSON.stringify(
    d.decision === "DENY"
      ? [d.claim_id, "DENY"]
      : d.decision === "CLOSE"
        ? [d.claim_id, "CLOSE", d.paid_out_of_band]
        : [d.claim_id, "APPROVE", d.approved_cents, d.proposed_cents],
  );
}

/** The element of the `decisions` set back as a decision. */
function decodeDecision(value: string): PersonDecision {
  let parts: unknown;
  try {
    parts = JSON.parse(value);
  } catch {
    parts = undefined;
  }
  const [claimId, decision, approved, proposed] = Array.isArray(parts) ? parts : [];
  if (typeof claimId === "string" && decision === "DENY" && parts instanceof Array && parts.length === 2)
    return { claim_id: claimId, decision: "DENY" };
  if (typeof claimId === "string" && decision === "CLOSE" && typeof approved === "boolean")
    return { claim_id: claimId, decision: "CLOSE", paid_out_of_band: approved };
  if (
    typeof claimId === "string" &&
    decision === "APPROVE" &&
    typeof approved === "number" &&
    typeof proposed === "number"
  )
    return { claim_id: claimId, decision: "APPROVE", approved_cents: approved, proposed_cents: proposed };
  throw new StoredItemError(`stored ledger decision ${JSON.stringify(value)} is malformed`);
}

const sortedSet = (value: unknown): string[] | undefined =>
  value instanceof Set ? [...(value as Set<string>)].sort() : undefined;

function toEntry(orderId: string, item: Record<string, unknown>): LedgerEntry {
  const approved = sortedSet(item.approved);
  const pending = sortedSet(item.pending_reviews);
  const released = sortedSet(item.released);
  const decisions = sortedSet(item.decisions)
    ?.map(decodeDecision)
    .sort((a, b) => (a.claim_id < b.claim_id ? -1 : 1));
  const automatic = Number(item.automatic_cents ?? 0);
  const lineCents = Object.entries((item.line_cents ?? {}) as Record<string, unknown>).filter(([, m]) => m !== 0);
  const claimLines = Object.entries((item.claim_lines ?? {}) as Record<string, unknown>);
  const shipping = Number(item.shipping_cents ?? 0);
  const entry = {
    order_id: orderId,
    refunded_cents: item.refunded_cents ?? 0,
    claims: item.claims ?? {},
    ...(automatic ? { automatic_cents: automatic } : {}),
    ...(approved?.length ? { approved } : {}),
    ...(pending?.length ? { pending_reviews: pending } : {}),
    ...(decisions?.length ? { decisions } : {}),
    ...(released?.length ? { released } : {}),
    ...(lineCents.length ? { line_cents: Object.fromEntries(lineCents) } : {}),
    ...(shipping ? { shipping_cents: shipping } : {}),
    ...(claimLines.length ? { claim_lines: Object.fromEntries(claimLines) } : {}),
  } as LedgerEntry;
  try {
    assertLedgerEntry(entry);
  } catch (error) {
    throw new StoredItemError(`stored ledger entry of order ${orderId} is invalid: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return entry;
}

/** True for the ValidationException DynamoDB answers when `claims.#cid` is set on an item without `claims`. */
function isMissingDocumentPath(error: unknown): boolean {
  return errorName(error) === "ValidationException" && /document path/i.test((error as Error).message);
}

/** A RefundLedger on the single table. */
export function createDynamoRefundLedger(ctx: DynamoContext): RefundLedger {
  const { client, tableName } = ctx;
  const keyOf = (orderId: string, scope: string | undefined) => keys.ledger(orderId, scope);
  // Entries this process last read as absent (no item at all), bounded; a put-if-absent settles it either way.
  const absent = new Set<string>();
  const absentKey = (orderId: string, scope: string | undefined) => JSON.stringify([orderId, scope ?? null]);

  const read = async (orderId: string, scope: string | undefined): Promise<LedgerEntry | undefined> => {
    const out = await dynamoCall(`GetItem ledger ${orderId}`, () =>
      client.send(new GetCommand({ TableName: tableName, Key: keyOf(orderId, scope), ConsistentRead: true })),
    );
    const k = absentKey(orderId, scope);
    absent.delete(k);
    if (!out.Item) {
      absent.add(k);
      if (absent.size > 500) absent.delete(absent.values().next().value!);
    }
    return out.Item ? toEntry(orderId, out.Item) : undefined;
  };

  /** The first reservation on an entry read as absent: the whole entry in one put, if it is still absent. Answers undefined when it is not. */
  const putFirst = async (r: ReserveRequest, first: LedgerEntry): Promise<LedgerEntry | undefined> => {
    absent.delete(absentKey(r.orderId, r.scope));
    const item = {
      ...keyOf(r.orderId, r.scope),
      entity: "ledger",
      order_id: r.orderId,
      refunded_cents: r.cents,
      claims: { [r.claimId]: r.cents },
      ...(r.mode.kind === "automatic" ? { automatic_cents: r.cents } : { approved: new Set([r.claimId]) }),
      // An order with lines: its counts as the pure rule made them on the empty entry.
      ...(r.lines
        ? {
            line_cents: first.line_cents ?? {},
            claim_lines: first.claim_lines ?? {},
            ...(first.shipping_cents ? { shipping_cents: first.shipping_cents } : {}),
          }
        : {}),
    };
    try {
      await dynamoCall(`PutItem ledger ${r.orderId} for ${r.claimId}`, () =>
        client.send(
          new PutCommand({ TableName: tableName, Item: item, ConditionExpression: "attribute_not_exists(pk)" }),
        ),
      );
      return toEntry(r.orderId, item);
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      return undefined;
    }
  };

  const update = (r: ReserveRequest, lines?: LinesWrite) => {
    const input = lines
      ? withLines(updateInput(r), lines)
      : r.lines
        ? withKnownLines(updateInput(r), r.lines, r.cents)
        : updateInput(r);
    return dynamoCall(`UpdateItem ledger ${r.orderId} for ${r.claimId}`, () =>
      client.send(
        new UpdateCommand({ TableName: tableName, Key: keyOf(r.orderId, r.scope), ...input, ReturnValues: "ALL_NEW" }),
      ),
    );
  };

  /**
   * A reservation whose line is not known (it counts on every line as much as it could have taken from each): read,
   * decided by the pure rule, written only if every line's count (and the shipping's) is still the one read; a lost
   * race (another claim's progress on the order) reads again. The first reservation on an absent entry is one put.
   */
  const reserveWithLines = async (r: ReserveRequest, bounds: LineReserve): Promise<ReserveResult> => {
    let shaped = false;
    for (let attempt = 0; attempt < MAX_PROGRESS_ATTEMPTS; attempt++) {
      const read0 = await read(r.orderId, r.scope);
      const entry = read0 ?? emptyLedgerEntry(r.orderId);
      const result = reserveRefund(entry, r.claimId, r.cents, r.orderCents, r.mode, bounds);
      if (!result.ok) return result;
      if (!read0) {
        if (await putWhole(r, result.entry)) return result;
        continue;
      }
      const lineIds = [...new Set([...Object.keys(bounds.paid), ...Object.keys(entry.line_cents ?? {})])];
      try {
        const out = await update(r, { lineIds, before: entry, after: result.entry });
        return { ok: true, entry: toEntry(r.orderId, out.Attributes as Record<string, unknown>) };
      } catch (error) {
        if (isConditionalCheckFailed(error)) continue;
        const cause = (error as { cause?: unknown }).cause;
        if (shaped || !isMissingDocumentPath(cause)) throw error;
        await ensureShape(r.orderId, r.scope, true);
        shaped = true;
      }
    }
    throw new LedgerInvariantError(
      `ledger ${r.orderId}: the reservation for ${r.claimId} kept losing races (${MAX_PROGRESS_ATTEMPTS} attempts); the message is retried`,
    );
  };

  /** The whole entry of a first reservation on an order with lines, if the item is still absent. */
  const putWhole = async (r: ReserveRequest, entry: LedgerEntry): Promise<boolean> => {
    const item = {
      ...keyOf(r.orderId, r.scope),
      entity: "ledger",
      order_id: r.orderId,
      refunded_cents: entry.refunded_cents,
      claims: entry.claims,
      ...(entry.automatic_cents ? { automatic_cents: entry.automatic_cents } : {}),
      ...(entry.approved?.length ? { approved: new Set(entry.approved) } : {}),
      line_cents: entry.line_cents ?? {},
      claim_lines: entry.claim_lines ?? {},
      ...(entry.shipping_cents ? { shipping_cents: entry.shipping_cents } : {}),
    };
    try {
      await dynamoCall(`PutItem ledger ${r.orderId} for ${r.claimId}`, () =>
        client.send(
          new PutCommand({ TableName: tableName, Item: item, ConditionExpression: "attribute_not_exists(pk)" }),
        ),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      return false;
    }
  };

  const updateInput = (r: ReserveRequest) => {
    const names = { "#cid": r.claimId };
    const base = { ":c": r.cents, ":max": r.orderCents - r.cents, ":cidv": r.claimId };
    const once =
      "attribute_not_exists(claims.#cid) AND (attribute_not_exists(released) OR NOT contains(released, :cidv))";
    const input =
      r.mode.kind === "automatic"
        ? {
            UpdateExpression: "ADD refunded_cents :c, automatic_cents :c SET claims.#cid = :c",
            ConditionExpression:
              `${once} AND (attribute_not_exists(refunded_cents) OR refunded_cents <= :max)` +
              " AND (attribute_not_exists(automatic_cents) OR automatic_cents <= :amax)" +
              " AND (attribute_not_exists(pending_reviews) OR (size(pending_reviews) = :one AND contains(pending_reviews, :cidv)))" +
              " AND attribute_not_exists(decisions)",
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ...base, ":amax": r.mode.limitCents - r.cents, ":one": 1 },
          }
        : {
            UpdateExpression: "ADD refunded_cents :c, approved :cids SET claims.#cid = :c DELETE pending_reviews :cids",
            ConditionExpression:
              `${once} AND (attribute_not_exists(refunded_cents) OR refunded_cents <= :max)` +
              // Decided on the order's approvals as read (an emptied string set is removed by DynamoDB).
              (r.mode.approvedCount === undefined
                ? ""
                : r.mode.approvedCount === 0
                  ? " AND attribute_not_exists(approved)"
                  : " AND size(approved) = :n"),
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: {
              ...base,
              ":cids": new Set([r.claimId]),
              ...(r.mode.approvedCount ? { ":n": r.mode.approvedCount } : {}),
            },
          };
    return input as UpdateInput;
  };

  /** Gives an order's item the empty shape (claims map, zero totals) without touching what it already holds. */
  const ensureShape = (orderId: string, scope: string | undefined, lines = false) =>
    dynamoCall(`UpdateItem ledger ${orderId} (shape)`, () =>
      client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keyOf(orderId, scope),
          UpdateExpression:
            "SET entity = :e, order_id = :o, claims = if_not_exists(claims, :empty), refunded_cents = if_not_exists(refunded_cents, :zero)" +
            (lines
              ? ", line_cents = if_not_exists(line_cents, :empty), claim_lines = if_not_exists(claim_lines, :empty)"
              : ""),
          ExpressionAttributeValues: { ":e": "ledger", ":o": orderId, ":empty": {}, ":zero": 0 },
        }),
      ),
    );

  return {
    ...createDynamoCustomerWindows(ctx),
    async get(orderId, scope) {
      const entry = await read(orderId, scope);
      // An entry created for a write that never landed (crash) holds nothing: same as no entry.
      return entry &&
        (Object.keys(entry.claims).length > 0 ||
          (entry.pending_reviews ?? []).length > 0 ||
          (entry.decisions ?? []).length > 0 ||
          (entry.released ?? []).length > 0)
        ? entry
        : undefined;
    },

    async reserve(request) {
      const { orderId, claimId, cents, orderCents, mode, scope } = request;
      if (typeof orderId !== "string" || orderId === "")
        throw new LedgerInvariantError("reserve: orderId must be a non-empty string");
      // The pure rule validates the arguments exactly like the in-memory ledger (throws LedgerInvariantError).
      // (An approval's approved count is the item's to check: an empty entry holds none.)
      const precheck = reserveRefund(
        emptyLedgerEntry(orderId),
        claimId,
        cents,
        orderCents,
        mode.kind === "approved" ? { kind: "approved" } : mode,
        request.lines,
      );
      // More than the whole order (or the limit): no write can succeed, and on an absent item the condition would not see it.
      if (!precheck.ok) {
        // Refused as the entry stands, in the pure rule's order of checks (as the in-memory ledger answers).
        const entry = (await read(orderId, scope)) ?? emptyLedgerEntry(orderId);
        const refused = reserveRefund(entry, claimId, cents, orderCents, mode, request.lines);
        // Shipping with the last line is refused on an empty entry and may fit the entry as it stands: written below.
        if (!refused.ok) return refused;
      }
      if (request.lines !== undefined && request.lines.claimed === undefined)
        return reserveWithLines(request, request.lines);
      // An approval decided on approvals the order held cannot be its first write.
      if (precheck.ok && absent.has(absentKey(orderId, scope)) && !(mode.kind === "approved" && mode.approvedCount)) {
        const entry = await putFirst(request, precheck.entry);
        if (entry) return { ok: true, entry };
      }
      let shaped = false;
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        try {
          const out = await update(request);
          return { ok: true, entry: toEntry(orderId, out.Attributes as Record<string, unknown>) };
        } catch (error) {
          if (isConditionalCheckFailed(error)) {
            // The refusal for the entry as it stands now; if the entry changed so that the rule allows it, try again.
            const entry = (await read(orderId, scope)) ?? emptyLedgerEntry(orderId);
            const result: ReserveResult = reserveRefund(entry, claimId, cents, orderCents, mode, request.lines);
            if (!result.ok) return result;
            continue;
          }
          const cause = (error as { cause?: unknown }).cause;
          if (shaped || !isMissingDocumentPath(cause)) throw error;
          await ensureShape(orderId, scope, request.lines !== undefined);
          shaped = true;
        }
      }
      throw new LedgerInvariantError(
        `ledger ${orderId}: the reservation for ${claimId} kept losing races (${MAX_ATTEMPTS} attempts); the message is retried`,
      );
    },

    async markReviewPending(orderId, claimId, scope) {
      try {
        await dynamoCall(`UpdateItem ledger ${orderId} (review pending ${claimId})`, () =>
          client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: keyOf(orderId, scope),
              UpdateExpression:
                "SET entity = :e, order_id = :o, claims = if_not_exists(claims, :empty), refunded_cents = if_not_exists(refunded_cents, :zero) ADD pending_reviews :cids",
              // A claim that holds a refund has no review left to wait for.
              ConditionExpression: "attribute_not_exists(claims.#cid)",
              ExpressionAttributeNames: { "#cid": claimId },
              ExpressionAttributeValues: {
                ":e": "ledger",
                ":o": orderId,
                ":empty": {},
                ":zero": 0,
                ":cids": new Set([claimId]),
              },
            }),
          ),
        );
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },

    async clearReviewPending(orderId, claimId, scope, decision) {
      if (decision !== undefined) {
        if (decision.claim_id !== claimId)
          throw new LedgerInvariantError(`clearReviewPending: decision of ${decision.claim_id} for claim ${claimId}`);
        // One write: the mark goes and the decision binds the order (adding an element already there changes nothing).
        await dynamoCall(`UpdateItem ledger ${orderId} (review decided ${claimId})`, () =>
          client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: keyOf(orderId, scope),
              UpdateExpression:
                "SET entity = :e, order_id = :o, claims = if_not_exists(claims, :empty), refunded_cents = if_not_exists(refunded_cents, :zero) ADD decisions :d DELETE pending_reviews :cids",
              ExpressionAttributeValues: {
                ":e": "ledger",
                ":o": orderId,
                ":empty": {},
                ":zero": 0,
                ":d": new Set([encodeDecision(decision)]),
                ":cids": new Set([claimId]),
              },
            }),
          ),
        );
        return;
      }
      try {
        await dynamoCall(`UpdateItem ledger ${orderId} (review closed ${claimId})`, () =>
          client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: keyOf(orderId, scope),
              UpdateExpression: "DELETE pending_reviews :cids",
              ConditionExpression: "attribute_exists(pk)",
              ExpressionAttributeValues: { ":cids": new Set([claimId]) },
            }),
          ),
        );
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },

    async releaseRefund(orderId, claimId, scope) {
      // One conditional write on the amount read: a lost race (the entry changed) reads again. The claim is recorded
      // as released in the same write (also when it holds nothing), so it never reserves on the order again.
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const entry = await read(orderId, scope);
        const cents = entry ? reservedForClaim(entry, claimId) : undefined;
        if (cents === undefined && refundReleased(entry, claimId)) return;
        const approved = (entry?.approved ?? []).includes(claimId);
        const held =
          entry?.claim_lines && Object.hasOwn(entry.claim_lines, claimId) ? entry.claim_lines[claimId] : undefined;
        const heldLines = Object.entries(held?.lines ?? {});
        // The claim's counts on the order's lines and shipping go with it (written with its reservation).
        const lineSets = heldLines.map((_held, i) => `line_cents.#l${i} = line_cents.#l${i} - :l${i}`);
        if (held?.shipping) lineSets.push("shipping_cents = shipping_cents - :ls");
        const lineSet = held ? ` REMOVE claim_lines.#cid${lineSets.length ? ` SET ${lineSets.join(", ")}` : ""}` : "";
        const lineNames = Object.fromEntries(heldLines.map(([lineId], i) => [`#l${i}`, lineId]));
        const lineValues = {
          ...Object.fromEntries(heldLines.map(([, minor], i) => [`:l${i}`, minor])),
          ...(held?.shipping ? { ":ls": held.shipping } : {}),
        };
        try {
          await dynamoCall(`UpdateItem ledger ${orderId} (refund released ${claimId})`, () =>
            client.send(
              new UpdateCommand({
                TableName: tableName,
                Key: keyOf(orderId, scope),
                ...(cents === undefined
                  ? {
                      UpdateExpression: "SET entity = :e, order_id = :o ADD released :cids",
                      ConditionExpression: "attribute_not_exists(claims.#cid)",
                      ExpressionAttributeValues: { ":e": "ledger", ":o": orderId, ":cids": new Set([claimId]) },
                    }
                  : {
                      UpdateExpression: (approved
                        ? "REMOVE claims.#cid ADD refunded_cents :neg, released :cids DELETE approved :cids"
                        : "REMOVE claims.#cid ADD refunded_cents :neg, automatic_cents :neg, released :cids"
                      ).replace(
                        "REMOVE claims.#cid",
                        lineSet ? `REMOVE claims.#cid,${lineSet.slice(7)}` : "REMOVE claims.#cid",
                      ),
                      ConditionExpression: "claims.#cid = :c",
                      ExpressionAttributeValues: {
                        ":c": cents,
                        ":neg": -cents,
                        ":cids": new Set([claimId]),
                        ...lineValues,
                      },
                    }),
                ExpressionAttributeNames: { "#cid": claimId, ...(cents === undefined ? {} : lineNames) },
              }),
            ),
          );
          return;
        } catch (error) {
          if (!isConditionalCheckFailed(error)) throw error;
        }
      }
      throw new LedgerInvariantError(
        `ledger ${orderId}: releasing ${claimId} kept losing races (${MAX_ATTEMPTS} attempts); it is retried`,
      );
    },
  };
}
