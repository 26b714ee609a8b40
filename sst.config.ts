// SST app for the claims crew on AWS (SPEC §2). One file per concern under infra/, each exporting what
// the others link. `npm run check:infra` type-checks this against SST's real component types (offline);
// infra/wiring.test.ts evaluates it with recording stand-ins and checks the wiring. See infra/README.md.

export default $config({
  app(input) {
    const production = input?.stage === "production";
    return {
      name: "claims-crew",
      home: "aws",
      // production keeps its data (table, queues, bus) when removed and refuses `sst remove`;
      // every other stage is disposable.
      removal: production ? "retain" : "remove",
      protect: production,
    };
  },
  async run() {
    await import("./infra/secrets.ts");
    await import("./infra/storage.ts");
    await import("./infra/queues.ts");
    const { bus, ruleQueues } = await import("./infra/bus.ts");
    await import("./infra/functions.ts");
    const { api } = await import("./infra/api.ts");
    await import("./infra/schedules.ts");

    return {
      api: api.url,
      bus: bus.name,
      verdictsQueue: ruleQueues.verdicts.queue.url,
      reviewQueue: ruleQueues.escalations.queue.url,
      refundsQueue: ruleQueues.refunds.queue.url,
    };
  },
});
