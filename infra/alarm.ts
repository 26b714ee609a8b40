// The alarms' plumbing (infra/monitoring.ts holds the alarms themselves): the `Alarms` SNS topic every alarm notifies,
// its subscriber from CLAIMS_ALARM_ENDPOINT, and the one way an alarm is made.
import type { crewEventsQueue } from "./queues.ts";
import { settings } from "./settings.ts";

/** The topic every alarm notifies, in ALARM and back to OK. */
export const alarmTopic = new sst.aws.SnsTopic("Alarms");

/** Its subscriber, when CLAIMS_ALARM_ENDPOINT is set (required in production). An email subscriber must confirm the first message. */
export const alarmSubscription = settings.alarms.notify
  ? new aws.sns.TopicSubscription("AlarmsSubscription", {
      topic: alarmTopic.arn,
      protocol: settings.alarms.notify.protocol,
      endpoint: settings.alarms.notify.endpoint,
    })
  : undefined;

/** A queue as infra/queues.ts makes it. */
export type Queue = typeof crewEventsQueue;
/** A queue's name (the SQS metrics' QueueName dimension): the last part of its ARN. */
export const queueName = (queue: Queue) => queue.arn.apply((arn: string) => arn.split(":").pop() ?? arn);

/** One alarm: ≥ `threshold` of `statistic` over `periods` consecutive periods, notifying the topic; no data is not a breach. */
export function alarm(
  id: string,
  args: {
    description: string;
    namespace: string;
    metricName: string;
    dimensions: Record<string, string | ReturnType<typeof queueName>>;
    statistic: "Sum" | "Maximum";
    periodSeconds: number;
    periods: number;
    threshold: number;
  },
) {
  // Fixed names: a replaced alarm is deleted before its replacement is created.
  return new aws.cloudwatch.MetricAlarm(
    id,
    {
      name: `${$app.name}-${$app.stage}-${id}`,
      alarmDescription: args.description,
      namespace: args.namespace,
      metricName: args.metricName,
      dimensions: args.dimensions,
      statistic: args.statistic,
      period: args.periodSeconds,
      evaluationPeriods: args.periods,
      threshold: args.threshold,
      comparisonOperator: "GreaterThanOrEqualToThreshold",
      treatMissingData: "notBreaching",
      alarmActions: [alarmTopic.arn],
      okActions: [alarmTopic.arn],
    },
    { deleteBeforeReplace: true },
  );
}
