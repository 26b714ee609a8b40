// A customer's window of automatic refunds on DynamoDB (`CUSTOMER#<id>` / `WINDOW`): one item holding its
// reservations and a version, read, decided by the pure rule (core/kernel/customer-window.ts) and put only if the
// version is still the one read; a lost race reads again. Part of the refund ledger (adapters/aws/dynamo-ledger.ts).
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { LedgerInvariantError } from "../../core/integrity/errors.ts";
import {
  assertCustomerWindow,
  customerLimitsCents,
  emptyCustomerWindow,
  releaseFromWindow,
  reserveOnWindow,
} from "../../core/kernel/customer-window.ts";
import type { CustomerWindow } from "../../core/kernel/customer-window.ts";
import type { RefundLedger } from "../../pipeline/ports.ts";
import { dynamoCall } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { isConditionalCheckFailed, StoredItemError } from "./errors.ts";
import { keys } from "./table.ts";

/**
 * A write that loses a race only to another claim's reservation or release (each one progress) — a customer's window,
 * an order's lines read then written — is tried this often.
 */
export const MAX_PROGRESS_ATTEMPTS = 25;

/** The customer windows of the refund ledger on the single table. */
export function createDynamoCustomerWindows(
  ctx: DynamoContext,
): Pick<RefundLedger, "getCustomerWindow" | "reserveCustomer" | "releaseCustomer"> {
  const { client, tableName } = ctx;

  const readWindow = async (customerId: string, scope: string | undefined): Promise<CustomerWindow | undefined> => {
    const out = await dynamoCall(`GetItem customer window ${customerId}`, () =>
      client.send(
        new GetCommand({ TableName: tableName, Key: keys.customerWindow(customerId, scope), ConsistentRead: true }),
      ),
    );
    if (!out.Item) return undefined;
    const window = {
      customer_id: customerId,
      reservations: out.Item.reservations ?? [],
      version: Number(out.Item.version ?? 0),
      ...(out.Item.approvals !== undefined ? { approvals: Number(out.Item.approvals) } : {}),
    } as CustomerWindow;
    try {
      assertCustomerWindow(window);
    } catch (error) {
      throw new StoredItemError(`stored window of customer ${customerId} is invalid: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return window;
  };

  /** Puts the window if its stored version is still `readVersion` (0: no item yet); false when another write got there first. */
  const writeWindow = async (window: CustomerWindow, readVersion: number, scope: string | undefined) => {
    try {
      await dynamoCall(`PutItem customer window ${window.customer_id}`, () =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...keys.customerWindow(window.customer_id, scope), entity: "customer_window", ...window },
            ...(readVersion === 0
              ? { ConditionExpression: "attribute_not_exists(pk)" }
              : { ConditionExpression: "version = :v", ExpressionAttributeValues: { ":v": readVersion } }),
          }),
        ),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      return false;
    }
  };

  return {
    getCustomerWindow: (customerId, scope) => readWindow(customerId, scope),

    async reserveCustomer({ customerId, reservation, limits, scope, approvals }) {
      const cents = customerLimitsCents(limits, reservation.currency);
      let conflicts = 0;
      for (let attempt = 0; attempt < MAX_PROGRESS_ATTEMPTS; attempt++) {
        const window = (await readWindow(customerId, scope)) ?? emptyCustomerWindow(customerId);
        // An approval's count is checked on every read: a lost race to another approval is APPROVALS_CHANGED.
        const result = reserveOnWindow(window, reservation, cents, approvals);
        if (!result.ok || result.repeat) return { ...result, conflicts };
        if (await writeWindow(result.window, window.version, scope)) return { ...result, conflicts };
        conflicts++;
      }
      throw new LedgerInvariantError(
        `customer ${customerId}: the reservation for ${reservation.claim_id} kept losing races (${MAX_PROGRESS_ATTEMPTS} attempts); the message is retried`,
      );
    },

    async releaseCustomer(customerId, claimId, scope) {
      for (let attempt = 0; attempt < MAX_PROGRESS_ATTEMPTS; attempt++) {
        const window = await readWindow(customerId, scope);
        const released = window ? releaseFromWindow(window, claimId) : undefined;
        if (!window || !released) return;
        if (await writeWindow(released, window.version, scope)) return;
      }
      throw new LedgerInvariantError(
        `customer ${customerId}: releasing ${claimId} kept losing races (${MAX_PROGRESS_ATTEMPTS} attempts); it is retried`,
      );
    },
  };
}
