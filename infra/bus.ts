// The EventBridge bus `claims` and its three rules. The patterns come verbatim from app/manifest.ts, the
// module the local bus uses too. Each rule delivers to an SQS queue that a downstream system reads, and each
// target has a dead-letter queue for events EventBridge cannot deliver.
//
// The rules, targets and queue policies are declared here rather than by SST's `bus.subscribeQueue`: that
// attaches a policy letting the events, sns and s3 services send to the queue with no condition, so another
// account's rule or S3 notification could write a forged RefundExecuted into the refunds queue. Here each
// queue, and its DLQ, accepts SendMessage from exactly one principal: its own rule (aws:SourceArn).
import {
  DOWNSTREAM_MAX_RECEIVES,
  RETENTION_SECONDS,
  RULE_PATTERNS,
  stageRuleName,
  type RuleName,
} from "../app/manifest.ts";
import { deadLetterQueue } from "./queues.ts";
import { settings } from "./settings.ts";

/** The bus the kernel publishes ClaimVerdict, ClaimNeedsReview and RefundExecuted to. Its name is fixed: replaced delete-first. */
export const bus = new sst.aws.Bus("Bus", {
  transform: {
    bus: (args: { name?: unknown }, opts: { deleteBeforeReplace?: boolean }) => {
      args.name = settings.busName;
      opts.deleteBeforeReplace = true;
      return undefined;
    },
  },
});

/** EventBridge keeps retrying a delivery for 24 hours (185 attempts, its maximum) before the target's DLQ. */
const DELIVERY_RETRY = { maximumEventAgeInSeconds: 24 * 3600, maximumRetryAttempts: 185 };

type QueueComponent = ReturnType<typeof deadLetterQueue>;

/** The only statement of a queue's policy: the events service may send to it on behalf of `ruleArn` only. */
function onlyFromRule(name: string, queue: QueueComponent, ruleArn: unknown) {
  return new aws.sqs.QueuePolicy(name, {
    queueUrl: queue.url,
    policy: $jsonStringify({
      Version: "2012-10-17",
      Statement: [
        {
          Sid: "OnlyItsBusRule",
          Effect: "Allow",
          Principal: { Service: "events.amazonaws.com" },
          Action: "sqs:SendMessage",
          Resource: queue.arn,
          Condition: { ArnEquals: { "aws:SourceArn": ruleArn } },
        },
      ],
    }),
  });
}

/** A queue fed by one rule (a downstream system's, or the refund executor's); its DLQ takes both its consumers' failures and undeliverable events. */
export function deliverRule(
  rule: string,
  name: string,
  pattern: unknown = RULE_PATTERNS[rule as RuleName],
  visibilityTimeout: `${number} minutes` | `${number} seconds` = "5 minutes",
) {
  const dlq = deadLetterQueue(`${name}Dlq`);
  const queue = new sst.aws.Queue(`${name}Queue`, {
    // Read by systems outside this app: 5 minutes fits any consumer whose timeout is at most 50 s.
    visibilityTimeout,
    dlq: { queue: dlq.arn, retry: DOWNSTREAM_MAX_RECEIVES },
    // A consumer down for a week must not lose a RefundExecuted: 14 days, as the DLQ.
    transform: { queue: { messageRetentionSeconds: RETENTION_SECONDS } },
  });

  const ruleName = `${rule.charAt(0).toUpperCase()}${rule.slice(1)}`;
  // The pattern is EventBridge JSON straight from the shared module (it uses `$or`).
  const eventRule = new aws.cloudwatch.EventRule(
    `${ruleName}Rule`,
    {
      // A fixed name (claims-crew-<stage>-<rule>): `claims teardown` tells the app's rules from consumers' rules by it.
      name: stageRuleName($app.stage, rule),
      eventBusName: bus.name,
      eventPattern: JSON.stringify(pattern),
    },
    { deleteBeforeReplace: true },
  );
  const policies = [
    onlyFromRule(`${name}QueuePolicy`, queue, eventRule.arn),
    onlyFromRule(`${name}DlqPolicy`, dlq, eventRule.arn),
  ];
  // After the policies: a target that delivered before its queue accepted it would send its first events to the DLQ.
  const target = new aws.cloudwatch.EventTarget(
    `${ruleName}Target`,
    {
      rule: eventRule.name,
      eventBusName: bus.name,
      arn: queue.arn,
      deadLetterConfig: { arn: dlq.arn },
      retryPolicy: DELIVERY_RETRY,
    },
    { dependsOn: policies },
  );

  return { queue, dlq, rule: eventRule, target };
}

/** Rule name → the queue a downstream system reads (each with its DLQ); exactly the rules of RULE_PATTERNS. */
export const ruleQueues = {
  /** Every verdict: analytics and any other downstream consumer. */
  verdicts: deliverRule("verdicts", "Verdicts"),
  /** ESCALATE verdicts and claims that need review: the human review queue. */
  escalations: deliverRule("escalations", "Review"),
  /** Executed refunds: the refund executor. */
  refunds: deliverRule("refunds", "Refunds"),
} satisfies Record<RuleName, ReturnType<typeof deliverRule>>;
