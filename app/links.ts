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
  /** SendMessage covers SendMessageBatch. Receiving is the event-source mapping's, granted with the subscription. */
  queueSend: ["sqs:SendMessage"],
  /** DescribeEventBus: the publisher checks once per container that the bus exists (a PutEvents to a missing bus succeeds). */
  busPublish: ["events:PutEvents", "events:DescribeEventBus"],
  secret: [],
  /** Every function: writing its own log group (infra/lambda.ts), never creating one. */
  ownLogs: ["logs:CreateLogStream", "logs:PutLogEvents"],
} as const;

/** An IAM action of the app. */
export type IamAction = (typeof ACTIONS)[keyof typeof ACTIONS][number];
