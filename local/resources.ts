// Local resources for the embedded stack: SQS queues with their dead-letter queues, and the
// `SST_RESOURCE_<Name>` variables through which unchanged handlers (`import { Resource } from "sst"`)
// see the local names and URLs.
import { CreateQueueCommand, GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { QueueCreationError, QueueDefinitionError, SstResourceError } from "./errors.ts";

/** One queue to create; a dead-letter queue `<name>-dlq` with a RedrivePolicy comes with it unless `dlq: false`. */
export type LocalQueueDef = {
  /** Logical name, without `.fifo` (it is added for FIFO queues). */
  readonly name: string;
  readonly fifo?: boolean;
  /** Default 30 s, as on AWS. */
  readonly visibilityTimeoutS?: number;
  /** Receives before a message moves to the DLQ (default 3). */
  readonly maxReceiveCount?: number;
  readonly dlq?: boolean;
  readonly delaySeconds?: number;
  /** FIFO only; default false, so producers must pass MessageDeduplicationId explicitly. */
  readonly contentBasedDeduplication?: boolean;
};

/** A created queue. */
type LocalQueueRef = { readonly name: string; readonly url: string; readonly arn: string };

/** A created queue and its dead-letter queue. */
export type LocalQueue = LocalQueueRef & { readonly fifo: boolean; readonly dlq: LocalQueueRef | undefined };

const NAME = /^[A-Za-z0-9_-]{1,75}$/;
const DLQ_RETENTION_S = 14 * 24 * 3600;

/** Creates the queues (DLQ first, then the queue with its RedrivePolicy); returns them by logical name. */
export async function createLocalQueues(
  sqs: SQSClient,
  defs: readonly LocalQueueDef[],
  options: { readonly prefix?: string } = {},
): Promise<Record<string, LocalQueue>> {
  const prefix = options.prefix ?? "";
  const seen = new Set<string>();
  for (const def of defs) {
    checkDef(def, prefix);
    if (seen.has(def.name)) throw new QueueDefinitionError(`queue "${def.name}" is defined twice`);
    seen.add(def.name);
  }
  const out: Record<string, LocalQueue> = {};
  for (const def of defs) {
    const fifo = def.fifo ?? false;
    const base = `${prefix}${def.name}`;
    const fifoAttrs: Record<string, string> = fifo
      ? { FifoQueue: "true", ContentBasedDeduplication: String(def.contentBasedDeduplication ?? false) }
      : {};
    let dlq: LocalQueueRef | undefined;
    if (def.dlq ?? true) {
      dlq = await createQueue(sqs, queueName(`${base}-dlq`, fifo), {
        ...fifoAttrs,
        MessageRetentionPeriod: String(DLQ_RETENTION_S),
      });
    }
    const attributes: Record<string, string> = {
      ...fifoAttrs,
      VisibilityTimeout: String(def.visibilityTimeoutS ?? 30),
      DelaySeconds: String(def.delaySeconds ?? 0),
    };
    if (dlq)
      attributes.RedrivePolicy = JSON.stringify({
        deadLetterTargetArn: dlq.arn,
        maxReceiveCount: def.maxReceiveCount ?? 3,
      });
    const queue = await createQueue(sqs, queueName(base, fifo), attributes);
    out[def.name] = { ...queue, fifo, dlq };
  }
  return out;
}

function queueName(base: string, fifo: boolean): string {
  return fifo ? `${base}.fifo` : base;
}

function checkDef(def: LocalQueueDef, prefix: string): void {
  const full = `${prefix}${def.name}`;
  if (!NAME.test(full)) {
    throw new QueueDefinitionError(
      `queue name "${full}" must be 1–75 letters, digits, "-" or "_" (no ".fifo"; set fifo: true)`,
    );
  }
  const int = (field: string, value: number | undefined, min: number, max: number) => {
    if (value !== undefined && (!Number.isInteger(value) || value < min || value > max)) {
      throw new QueueDefinitionError(
        `queue "${def.name}": ${field} must be an integer from ${min} to ${max}, got ${value}`,
      );
    }
  };
  int("visibilityTimeoutS", def.visibilityTimeoutS, 0, 43_200);
  int("maxReceiveCount", def.maxReceiveCount, 1, 1_000);
  int("delaySeconds", def.delaySeconds, 0, 900);
  if (def.contentBasedDeduplication !== undefined && !def.fifo) {
    throw new QueueDefinitionError(`queue "${def.name}": contentBasedDeduplication applies to FIFO queues only`);
  }
  if (def.maxReceiveCount !== undefined && def.dlq === false) {
    throw new QueueDefinitionError(`queue "${def.name}": maxReceiveCount needs a dead-letter queue (dlq is false)`);
  }
}

async function createQueue(sqs: SQSClient, name: string, attributes: Record<string, string>): Promise<LocalQueueRef> {
  try {
    const created = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    const url = created.QueueUrl;
    if (!url) throw new Error("CreateQueue returned no QueueUrl");
    const described = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] }));
    const arn = described.Attributes?.QueueArn;
    if (!arn) throw new Error("GetQueueAttributes returned no QueueArn");
    return { name, url, arn };
  } catch (error) {
    throw new QueueCreationError(
      `cannot create queue ${name}: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  }
}

/** The SST link properties a handler reads as `Resource.<Name>` (e.g. `{ url }` for a queue, `{ name }` for a table). */
type SstResourceMap = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

type SstGlobals = {
  __SST_RESOURCE_RAW__?: Record<string, unknown>;
  __SST_RESOURCE_ENVIRONMENT__?: Record<string, string>;
};

const RESOURCE_NAME = /^[A-Za-z][A-Za-z0-9]*$/;

/**
 * Sets `SST_RESOURCE_<Name>` (JSON) for each entry, plus `SST_RESOURCE_App` when missing, so that
 * `Resource.<Name>` from the `sst` package resolves to local values. sst 4.17.1 reads these
 * variables once, on the first property access of `Resource`; when that already happened in this
 * process, its cache (`globalThis.__SST_RESOURCE_RAW__`) is updated too.
 */
export function setSstResourceEnv(map: SstResourceMap, env: NodeJS.ProcessEnv = process.env): void {
  const values: Record<string, unknown> = { ...map };
  if (values.App === undefined && env.SST_RESOURCE_App === undefined)
    values.App = { name: "claims-crew", stage: "local" };
  for (const [name, value] of Object.entries(values)) {
    if (!RESOURCE_NAME.test(name))
      throw new SstResourceError(`SST resource name "${name}" must be alphanumeric and start with a letter`);
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new SstResourceError(`SST resource "${name}" must be an object of link properties`);
    }
  }
  const globals = globalThis as SstGlobals;
  for (const [name, value] of Object.entries(values)) {
    const json = JSON.stringify(value);
    env[`SST_RESOURCE_${name}`] = json;
    if (env === process.env) {
      if (globals.__SST_RESOURCE_RAW__) globals.__SST_RESOURCE_RAW__[name] = JSON.parse(json) as unknown;
      if (globals.__SST_RESOURCE_ENVIRONMENT__) globals.__SST_RESOURCE_ENVIRONMENT__[`SST_RESOURCE_${name}`] = json;
    }
  }
}
