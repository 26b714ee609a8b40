// The SST link names (`Resource.<Name>`) of the app's resources and the IAM actions a function may use on each.
// The secrets of payment providers and order sources are named by their declarations (app/payment-providers/,
// app/order-sources/): each exists, and is linked, only when its provider or source is the configured one.
import type { ProviderSecretLink } from "./payment-provider.ts";
import type { OrderSourceSecretLink } from "./order-source.ts";

/** The SST link names (`Resource.<Name>`) of the app's resources. */
export const LINKS = {
  table: "Table",
  bus: "Bus",
  llmApiKey: "LlmApiKey",
  apiToken: "ApiToken",
  reviewerToken: "ReviewerToken",
  /** The stage's KMS key that wraps each claim's data key of personal data (infra/keys.ts, docs/customer-data.md). */
  personalDataKey: "PersonalDataKey",
  queues: {
    crewEvents: "CrewEventsQueue",
    agentSteps: "AgentStepsQueue",
    proposals: "ProposalsQueue",
    extraction: "ExtractionQueue",
    timers: "TimersQueue",
  },
} as const;

/** A work queue by its role. */
export type QueueRole = keyof typeof LINKS.queues;

/** A link name. */
export type LinkName =
  | typeof LINKS.table
  | typeof LINKS.bus
  | typeof LINKS.llmApiKey
  | typeof LINKS.apiToken
  | typeof LINKS.reviewerToken
  | typeof LINKS.personalDataKey
  | OrderSourceSecretLink
  | ProviderSecretLink
  | (typeof LINKS.queues)[QueueRole];

/**
 * The IAM actions a function may use on a linked resource: never a wildcard. A secret needs none (its value
 * travels in the function's encrypted package). `Table` covers the table and its index `gsi1`, where only
 * `Query` is ever granted.
 */
export const ACTIONS = {
  /** Reads of the table (and Query on gsi1). */
  tableRead: ["dynamodb:GetItem", "dynamodb:Query"],
  /** What the adapters write with: conditional puts and updates, the idempotency key's release, session chunks. */
  tableWrite: [
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
  ],
  /**
   * The internet-facing intake API: it stores claims and their idempotency keys and reads them back (conditional
   * puts, gets, queries); it never updates, batch-writes or deletes beyond an idempotency key it releases
   * (SCOPED_GRANTS below).
   */
  intakeWrite: ["dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem"],
  /** SendMessage covers SendMessageBatch. Receiving is the event-source mapping's, granted with the subscription. */
  queueSend: ["sqs:SendMessage"],
  /** DescribeEventBus: the publisher checks once per container that the bus exists (a PutEvents to a missing bus succeeds). */
  busPublish: ["events:PutEvents", "events:DescribeEventBus"],
  secret: [],
  /**
   * The personal-data vault on AWS (adapters/aws/kms-keys.ts): the day's branch key made under the stage's KMS key
   * (GenerateDataKey) and unwrapped (Decrypt) to wrap and open the claims' data keys — and the data keys KMS wrapped per
   * claim before, unwrapped — only with the encryption context's `purpose` PERSONAL_DATA_KMS_PURPOSE (infra/links.ts).
   */
  personalData: ["kms:GenerateDataKey", "kms:Decrypt"],
  /** Every function: writing its own log group (infra/lambda.ts), never creating one. */
  ownLogs: ["logs:CreateLogStream", "logs:PutLogEvents"],
} as const;

/** The `purpose` of every data key's KMS encryption context (adapters/aws/kms-keys.ts, tested equal): grants require it. */
export const PERSONAL_DATA_KMS_PURPOSE = "claims-personal-data";

/** An IAM action of the app. */
export type IamAction = (typeof ACTIONS)[keyof typeof ACTIONS][number];

/** The partition-key prefix of an idempotency key's item (adapters/aws/table.ts `keys.idempotency`, tested equal). */
export const IDEMPOTENCY_PK_PREFIX = "IDEM#";

/**
 * An action granted only on items whose partition key matches `leadingKeys` (IAM `dynamodb:LeadingKeys`, with
 * `ForAllValues:StringLike`): the intake API may delete an idempotency key it took (releasing it when an unrelated
 * claim holds the id), and no other item of the table.
 */
export interface ScopedGrant {
  readonly link: typeof LINKS.table;
  readonly actions: readonly IamAction[];
  readonly leadingKeys: readonly string[];
}
