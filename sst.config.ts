// SST app for the claims crew on AWS. One file per concern under infra/, each exporting what
// the others link. `npm run check:infra` type-checks this against SST's real component types (offline);
// infra/wiring.test.ts evaluates it with recording stand-ins and checks the wiring. See infra/README.md.

export default $config({
  app(input) {
    const production = input?.stage === "production";
    return {
      name: "claims-crew",
      home: "aws",
      // production refuses `sst remove` and, when removed on purpose, keeps only its DynamoDB table (SST's
      // "retain" keeps tables and buckets; queues, bus, pool and everything else go): `claims teardown` does it
      // in order (infra/README.md#teardown). Every other stage is disposable.
      removal: production ? "retain" : "remove",
      // Lifted only by `claims teardown --stage production` after the operator confirmed, for its `sst remove`.
      protect: production && process.env.CLAIMS_TEARDOWN_STAGE !== input?.stage,
    };
  },
  async run() {
    // First, before anything is declared: what the account can give (reserved concurrency), or a clear stop.
    const { checkAccount } = await import("./infra/account.ts");
    await checkAccount();
    await import("./infra/secrets.ts");
    const { table } = await import("./infra/storage.ts");
    const { personalDataKeyAliasName } = await import("./infra/keys.ts");
    const { policy } = await import("./infra/policy.ts");
    await import("./infra/queues.ts");
    const { bus, ruleQueues } = await import("./infra/bus.ts");
    await import("./infra/functions.ts");
    const { webhook } = await import("./infra/payments.ts");
    const { reviewerPool } = await import("./infra/reviewers.ts");
    const { api } = await import("./infra/api.ts");
    await import("./infra/schedules.ts");
    const { alarmTopic, dashboardUrl } = await import("./infra/monitoring.ts");

    // Every output and what it is for: infra/README.md#outputs.
    return {
      api: api.url,
      table: table.name,
      // The KMS key of personal data: `claims export --table <table> --kms-key <personalDataKey>` (docs/customer-data.md).
      personalDataKey: personalDataKeyAliasName,
      bus: bus.name,
      verdictsQueue: ruleQueues.verdicts.queue.url,
      reviewQueue: ruleQueues.escalations.queue.url,
      refundsQueue: ruleQueues.refunds.queue.url,
      // With a PAYMENT_PROVIDER that has a webhook: give it `<api><path>` (Stripe: stripeWebhook, infra/README.md#payments).
      ...(webhook ? { [webhook.output]: $interpolate`${api.url}${webhook.path}` } : {}),
      // The reviewers' Cognito user pool and app client (infra/README.md#reviewers-on-aws); none with your own IdP.
      ...(reviewerPool ? { reviewerUserPool: reviewerPool.pool.id, reviewerClient: reviewerPool.client.id } : {}),
      alarmTopic: alarmTopic.arn,
      dashboard: dashboardUrl,
      policy: `${policy.source} (sha256 ${policy.source_sha256.slice(0, 12)})`,
    };
  },
});
