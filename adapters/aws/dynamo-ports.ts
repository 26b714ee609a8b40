// The DynamoDB ports of the pipeline over one table and one injected DocumentClient.
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { AuditLog, ContextStore, RefundLedger } from "../../pipeline/ports.ts";
import type {
  ClaimRepository,
  Clock,
  ReviewRepository,
  SessionRepository,
  SettlementRepository,
  VerdictRepository,
} from "../../pipeline/ports.ts";
import { createDynamoAuditLog } from "./dynamo-audit.ts";
import { createDynamoClaimRepository } from "./dynamo-claims.ts";
import type { DynamoContext, Retention } from "./dynamo-context.ts";
import { createDynamoRefundLedger } from "./dynamo-ledger.ts";
import { createDynamoContextStore } from "./dynamo-orders.ts";
import { createDynamoReviewRepository } from "./dynamo-reviews.ts";
import { createDynamoSettlementRepository } from "./dynamo-settlements.ts";
import { createDynamoSessionRepository } from "./dynamo-sessions.ts";
import { createDynamoVerdictRepository } from "./dynamo-verdicts.ts";
import { InvalidArgumentError } from "./errors.ts";

/** What the DynamoDB ports need. */
type DynamoPortsOptions = {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Wall clock for TTLs (idempotency keys) and expiry filtering; default `Date.now`. */
  readonly clock?: Clock;
  /** `Limit` per Query page (default none: 1 MB pages). */
  readonly pageSize?: number;
  /** How long an Idempotency-Key is remembered (default 24 h). */
  readonly idempotencyTtlMs?: number;
  /** How long sessions (after their last save) and audit items (after their append) are kept; default: both kept. */
  readonly retention?: Retention;
};

/** The ports backed by the single table. */
export type DynamoPorts = {
  readonly claims: ClaimRepository;
  readonly sessions: SessionRepository;
  readonly verdicts: VerdictRepository;
  readonly audit: AuditLog;
  readonly ledger: RefundLedger;
  readonly orders: ContextStore;
  readonly reviews: ReviewRepository;
  readonly settlements: SettlementRepository;
};

/** Builds every DynamoDB port on `tableName` through the injected DocumentClient. */
export function createDynamoPorts(options: DynamoPortsOptions): DynamoPorts {
  if (!options.client)
    throw new InvalidArgumentError("createDynamoPorts: client (a DynamoDBDocumentClient) is required");
  if (typeof options.tableName !== "string" || options.tableName.length < 3) {
    throw new InvalidArgumentError(
      `createDynamoPorts: tableName must be a DynamoDB table name (3–255 characters), got ${JSON.stringify(options.tableName)}`,
    );
  }
  for (const [name, ms] of Object.entries(options.retention ?? {})) {
    if (ms !== undefined && (!Number.isFinite(ms) || ms <= 0))
      throw new InvalidArgumentError(
        `createDynamoPorts: retention.${name} must be a positive number of milliseconds, got ${String(ms)}`,
      );
  }
  if (options.pageSize !== undefined && (!Number.isInteger(options.pageSize) || options.pageSize < 1)) {
    throw new InvalidArgumentError(
      `createDynamoPorts: pageSize must be a positive integer, got ${String(options.pageSize)}`,
    );
  }
  const ctx: DynamoContext = {
    client: options.client,
    tableName: options.tableName,
    clock: options.clock ?? { now: () => Date.now() },
    pageSize: options.pageSize,
    ...(options.retention ? { retention: options.retention } : {}),
  };
  return {
    claims: createDynamoClaimRepository(
      ctx,
      options.idempotencyTtlMs === undefined ? {} : { idempotencyTtlMs: options.idempotencyTtlMs },
    ),
    sessions: createDynamoSessionRepository(ctx),
    verdicts: createDynamoVerdictRepository(ctx),
    audit: createDynamoAuditLog(ctx),
    ledger: createDynamoRefundLedger(ctx),
    orders: createDynamoContextStore(ctx),
    reviews: createDynamoReviewRepository(ctx),
    settlements: createDynamoSettlementRepository(ctx),
  };
}
