// The refund ledger's writes on an order with lines (issue 32; docs/orders.md#refunds-per-line): the order's
// conditional UpdateItem (adapters/aws/dynamo-ledger.ts) with each line's count, and the shipping's, added to its
// SETs and its condition — blind for a claim whose lines are known, conditional on the counts read otherwise.
import type { LedgerEntry, LineReserve } from "../../core/kernel/ledger.ts";

/** An order with lines' part of a reservation's write: its lines' counts as read and as they become. */
export type LinesWrite = { lineIds: readonly string[]; before: LedgerEntry; after: LedgerEntry };

/**
 * The reservation's update with the claim's counts on the order's lines: each line's count (and the shipping's) set
 * to what the pure rule gave, on the condition that every line's count is still the one read.
 */
export type UpdateInput = {
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
};

export function withLines(input: UpdateInput, { lineIds, before, after }: LinesWrite) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const conditions: string[] = [];
  lineIds.forEach((lineId, i) => {
    names[`#l${i}`] = lineId;
    const was = before.line_cents?.[lineId] ?? 0;
    const now = after.line_cents?.[lineId] ?? 0;
    conditions.push(
      was === 0
        ? `(attribute_not_exists(line_cents.#l${i}) OR line_cents.#l${i} = :lz)`
        : `line_cents.#l${i} = :lo${i}`,
    );
    if (was !== 0) values[`:lo${i}`] = was;
    if (now !== was) {
      sets.push(`line_cents.#l${i} = :ln${i}`);
      values[`:ln${i}`] = now;
    }
  });
  const shippingWas = before.shipping_cents ?? 0;
  const shippingNow = after.shipping_cents ?? 0;
  conditions.push(
    shippingWas === 0 ? "(attribute_not_exists(shipping_cents) OR shipping_cents = :lz)" : "shipping_cents = :so",
  );
  if (shippingWas !== 0) values[":so"] = shippingWas;
  if (shippingNow !== shippingWas) {
    sets.push("shipping_cents = :sn");
    values[":sn"] = shippingNow;
  }
  const claimId = input.ExpressionAttributeNames["#cid"]!;
  const held = after.claim_lines?.[claimId];
  if (held) {
    sets.push("claim_lines.#cid = :cl");
    values[":cl"] = held;
  }
  return joined(input, sets, conditions, names, values);
}

/**
 * The reservation's update for a claim whose lines are known, as one blind conditional write like the order's own:
 * each claimed line's count grows by what the claim takes from it IF it is at most the line's paid amount minus
 * that; a shipping part grows the shipping's count IF it stays within the refundable shipping AND every line's count
 * is exactly its paid amount once this claim's lines are added (the last line).
 */
export function withKnownLines(input: UpdateInput, bounds: LineReserve, cents: number) {
  const claimed = Object.entries(bounds.claimed ?? {});
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const conditions: string[] = [];
  claimed.forEach(([lineId, take], i) => {
    names[`#l${i}`] = lineId;
    sets.push(`line_cents.#l${i} = if_not_exists(line_cents.#l${i}, :lz) + :lv${i}`);
    conditions.push(`(attribute_not_exists(line_cents.#l${i}) OR line_cents.#l${i} <= :lm${i})`);
    values[`:lv${i}`] = take;
    values[`:lm${i}`] = bounds.paid[lineId]! - take;
  });
  const shipping = cents - claimed.reduce((n, [, take]) => n + take, 0);
  if (shipping > 0) {
    sets.push("shipping_cents = if_not_exists(shipping_cents, :lz) + :ls");
    conditions.push("(attribute_not_exists(shipping_cents) OR shipping_cents <= :lsm)");
    values[":ls"] = shipping;
    values[":lsm"] = bounds.shipping - shipping;
    Object.entries(bounds.paid).forEach(([lineId, paid], j) => {
      names[`#m${j}`] = lineId;
      const need = paid - (bounds.claimed?.[lineId] ?? 0);
      conditions.push(
        need === 0
          ? `(attribute_not_exists(line_cents.#m${j}) OR line_cents.#m${j} = :lz)`
          : `line_cents.#m${j} = :mn${j}`,
      );
      if (need !== 0) values[`:mn${j}`] = need;
    });
  }
  sets.push("claim_lines.#cid = :cl");
  values[":cl"] = { lines: Object.fromEntries(claimed), ...(shipping > 0 ? { shipping } : {}) };
  return joined(input, sets, conditions, names, values);
}

/** The order's update with the lines' SETs and conditions added (`:lz`, zero, only when an expression uses it). */
function joined(
  input: UpdateInput,
  sets: readonly string[],
  conditions: readonly string[],
  names: Record<string, string>,
  values: Record<string, unknown>,
) {
  const UpdateExpression = input.UpdateExpression.replace(
    "SET claims.#cid = :c",
    `SET claims.#cid = :c${sets.map((x) => `, ${x}`).join("")}`,
  );
  const ConditionExpression = `${input.ConditionExpression} AND ${conditions.join(" AND ")}`;
  const zero = `${UpdateExpression} ${ConditionExpression}`.includes(":lz") ? { ":lz": 0 } : {};
  return {
    UpdateExpression,
    ConditionExpression,
    ExpressionAttributeNames: { ...input.ExpressionAttributeNames, ...names },
    ExpressionAttributeValues: { ...input.ExpressionAttributeValues, ...values, ...zero },
  };
}
