// Builds the `SQSEvent` and `Context` Lambda hands to an SQS-triggered function, from
// ReceiveMessage output. Pure: ids and time come in as arguments.
import type { Message, MessageAttributeValue } from "@aws-sdk/client-sqs";
import type { Context, SQSMessageAttributes, SQSRecord, SQSRecordAttributes } from "aws-lambda";

/** Where the records come from (the event source mapping's queue). */
type EventSource = { readonly queueArn: string; readonly region: string };

/** Converts one received SQS message into the record Lambda delivers. */
export function toSqsRecord(message: Message, source: EventSource): SQSRecord {
  const attrs = message.Attributes ?? {};
  const attributes: SQSRecordAttributes = {
    ApproximateReceiveCount: attrs.ApproximateReceiveCount ?? "1",
    SentTimestamp: attrs.SentTimestamp ?? "0",
    SenderId: attrs.SenderId ?? "",
    ApproximateFirstReceiveTimestamp: attrs.ApproximateFirstReceiveTimestamp ?? attrs.SentTimestamp ?? "0",
  };
  for (const key of [
    "AWSTraceHeader",
    "SequenceNumber",
    "MessageGroupId",
    "MessageDeduplicationId",
    "DeadLetterQueueSourceArn",
  ] as const) {
    const value = attrs[key];
    if (value !== undefined) attributes[key] = value;
  }
  const record: SQSRecord = {
    messageId: message.MessageId ?? "",
    receiptHandle: message.ReceiptHandle ?? "",
    body: message.Body ?? "",
    attributes,
    messageAttributes: toMessageAttributes(message.MessageAttributes),
    md5OfBody: message.MD5OfBody ?? "",
    eventSource: "aws:sqs",
    eventSourceARN: source.queueArn,
    awsRegion: source.region,
  };
  if (message.MD5OfMessageAttributes !== undefined) record.md5OfMessageAttributes = message.MD5OfMessageAttributes;
  return record;
}

function toMessageAttributes(input: Record<string, MessageAttributeValue> | undefined): SQSMessageAttributes {
  const out: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(input ?? {})) {
    const attribute: SQSMessageAttributes[string] = {
      stringListValues: value.StringListValues ?? [],
      binaryListValues: (value.BinaryListValues ?? []).map((b) => toBase64(b) ?? ""),
      dataType: value.DataType ?? "String",
    };
    if (value.StringValue !== undefined) attribute.stringValue = value.StringValue;
    const binary = toBase64(value.BinaryValue);
    if (binary !== undefined) attribute.binaryValue = binary;
    out[name] = attribute;
  }
  return out;
}

/**
 * Lambda gives binary attributes as base64. The SDK yields a Uint8Array; fauxqs 1.9.2 answers with
 * a JSON object of byte indexes ({"0":1,"1":2}), which is decoded here too.
 */
function toBase64(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (typeof value === "object") {
    const bytes = Object.entries(value as Record<string, unknown>)
      .filter(([k, v]) => /^\d+$/.test(k) && typeof v === "number")
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([, v]) => v as number);
    return Buffer.from(bytes).toString("base64");
  }
  return undefined;
}

/** Options of `lambdaContext`. */
type ContextOptions = {
  readonly functionName: string;
  readonly region: string;
  readonly account: string;
  readonly requestId: string;
  /** Epoch ms at which the invocation times out. */
  readonly deadlineMs: number;
  readonly nowMs: () => number;
};

/** A Lambda `Context` for one local invocation. */
export function lambdaContext(o: ContextOptions): Context {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: o.functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:${o.region}:${o.account}:function:${o.functionName}`,
    memoryLimitInMB: "1024",
    awsRequestId: o.requestId,
    logGroupName: `/aws/lambda/${o.functionName}`,
    logStreamName: `local/[$LATEST]${o.requestId.replace(/-/g, "")}`,
    getRemainingTimeInMillis: () => Math.max(0, o.deadlineMs - o.nowMs()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The account id in a queue ARN (`arn:aws:sqs:region:account:name`). */
export function accountOfArn(arn: string): string {
  return arn.split(":")[4] ?? "000000000000";
}
