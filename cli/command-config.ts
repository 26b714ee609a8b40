// `claims config check` and `claims load-orders` (docs/cli.md): the configuration files, read as batch and serve read them.
import { AgentRefusedError } from "../functions/composition/errors.ts";
import { readFileSync } from "node:fs";

import { parseConfig } from "../core/claim/config.ts";
import { systemClock } from "../core/crew/index.ts";
import { checkFile, checkJson, formatCheck } from "./config-check.ts";
import type { CheckKind } from "./config-check.ts";
import { CliError } from "./errors.ts";
import { mustExist, parseKind, parseNow } from "./options.ts";
import type { Command } from "commander";

export function registerConfigCommands(program: Command): void {
  const configCommand = program.command("config").description("configuration and scenario files");
  configCommand
    .command("check")
    .description(
      "read a configuration or scenario file as batch and serve do, and say what was understood (exit 2 with the errors when it is invalid)",
    )
    .argument("<file>", "a config.yaml or scenarios.yaml (ours or DIR sample 35's)")
    .option("--kind <kind>", "config or scenarios (default: told from the content)", parseKind)
    .option("--now <iso>", "the instant relative purchase dates (-3d) resolve against (default: now)", parseNow)
    .option("--json", "print what was understood as JSON")
    .action((file: string, o: { kind?: CheckKind; now?: number; json?: boolean }) => {
      const path = mustExist(file, "file");
      const checked = checkFile(readFileSync(path, "utf8"), file, o.now ?? systemClock().now(), o.kind);
      process.stdout.write(o.json ? `${JSON.stringify(checkJson(checked), null, 2)}\n` : formatCheck(checked));
      if (checked.kind === "config" && !checked.handshake.ok) {
        throw new AgentRefusedError(
          `agent ${checked.config.agent.agentId} v${checked.config.agent.version} was refused by the registry: ${checked.handshake.message}`,
        );
      }
    });

  program
    .command("load-orders")
    .description(
      "write the orders of a file you name into a deployed table (the kernel's context store); uses your AWS credentials",
    )
    .requiredOption("--table <name>", "the DynamoDB table (the `table` output of sst deploy)")
    // No default: the bundled scenarios/config.yaml holds the demo's orders, which must never land in a real table by accident.
    .requiredOption(
      "--config <path>",
      "the file whose context_store.orders to load (config format; for the demo's orders: scenarios/config.yaml)",
    )
    .option("--region <region>", "AWS region (default: your AWS configuration)")
    .option("--endpoint <url>", "a DynamoDB endpoint (e.g. a local emulator)")
    .action(async (o: { table: string; config: string; region?: string; endpoint?: string }) => {
      const configPath = mustExist(o.config, "config file");
      const config = parseConfig(readFileSync(configPath, "utf8"), o.config, systemClock().now());
      const { DynamoDBDocumentClient } = await import("@aws-sdk/lib-dynamodb");
      const { seedOrders } = await import("../adapters/aws/index.ts");
      const { tableClient } = await import("./table-client.ts");
      const client = tableClient(o);
      try {
        await seedOrders(DynamoDBDocumentClient.from(client), o.table, config.orders);
      } catch (e) {
        const name = (e as { name?: string }).name ?? "";
        const cause = (e as { cause?: { name?: string } }).cause?.name ?? "";
        if ([name, cause].includes("ResourceNotFoundException"))
          throw new CliError(
            `table ${o.table} not found${o.endpoint ? ` at ${o.endpoint}` : ""}: use the Table name printed by sst deploy, and the right --region`,
          );
        if ([name, cause].includes("CredentialsProviderError"))
          throw new CliError(
            "no AWS credentials found: configure them (aws configure, AWS_PROFILE) or pass --endpoint for a local table",
          );
        throw new CliError(`could not load the orders into ${o.table}: ${(e as Error).message}`);
      } finally {
        client.destroy();
      }
      process.stdout.write(
        `Loaded ${config.orders.length} orders from ${o.config} into ${o.table} (relative purchase dates resolved against now).\n`,
      );
    });
}
