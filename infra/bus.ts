// The EventBridge bus `claims` (SPEC §7.3) and its three rules. The patterns come verbatim from
// infra/facts.ts, the module the local bus uses too. Each rule delivers to an SQS queue that a
// downstream system reads, and each target has a dead-letter queue for events EventBridge cannot deliver.
import { DOWNSTREAM_MAX_RECEIVES, RULE_PATTERNS, type RuleName } from "./facts.ts";
import { deadLetterQueue } from "./queues.ts";
import { settings } from "./settings.ts";

/** The bus the kernel publishes ClaimVerdict, ClaimNeedsReview and RefundExecuted to. */
export const bus = new sst.aws.Bus("Bus", {
  transform: { bus: { name: settings.busName } },
});

/** ARN pattern of every rule on this bus (`…:rule/<bus>/<rule>`), the only senders allowed into the target DLQs. */
const rulesOnBus = bus.arn.apply((arn: string) => `${arn.replace(":event-bus/", ":rule/")}/*`);

/** A downstream queue fed by one rule; its DLQ takes both its consumers' failures and undeliverable events. */
function deliverRule(rule: RuleName, name: string) {
  const dlq = deadLetterQueue(`${name}Dlq`);
  const queue = new sst.aws.Queue(`${name}Queue`, {
    // Read by systems outside this app: 5 minutes fits any consumer whose timeout is at most 50 s.
    visibilityTimeout: "5 minutes",
    dlq: { queue: dlq.arn, retry: DOWNSTREAM_MAX_RECEIVES },
  });

  // EventBridge needs the DLQ's permission to drop events there; only rules of this bus get it.
  new aws.sqs.QueuePolicy(`${name}DlqPolicy`, {
    queueUrl: dlq.url,
    policy: $jsonStringify({
      Version: "2012-10-17",
      Statement: [
        {
          Sid: "BusRulesDeadLetters",
          Effect: "Allow",
          Principal: { Service: "events.amazonaws.com" },
          Action: "sqs:SendMessage",
          Resource: dlq.arn,
          Condition: { ArnLike: { "aws:SourceArn": rulesOnBus } },
        },
      ],
    }),
  });

  // SST's `pattern` argument cannot express `$or`, so the rule's pattern is set as EventBridge JSON,
  // straight from the shared module. EventBridge retries delivery for 24 h (185 attempts) before the DLQ.
  bus.subscribeQueue(`${rule.charAt(0).toUpperCase()}${rule.slice(1)}`, queue, {
    transform: {
      rule: { eventPattern: JSON.stringify(RULE_PATTERNS[rule]) },
      target: { deadLetterConfig: { arn: dlq.arn } },
    },
  });

  return { queue, dlq };
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
