// The command registry (cli/registry.ts): each row says what its module registers, `claims --help` reads the same
// from the rows alone as with every module loaded, and `--version`/`--help` import no command's module.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { Command, Help } from "commander";
import { describe, expect, it } from "vitest";
import { COMMANDS, invokedCommand, registerCommands } from "./registry.ts";
import { staleReason } from "../scripts/build-cli.mjs";

const run = promisify(execFile);
const root = join(new URL("..", import.meta.url).pathname);

const programOf = () => new Command().name("claims").exitOverride();

describe("the command registry", () => {
  it("has a row for every command the modules register, with the module's own help line and description", async () => {
    const full = programOf();
    await registerCommands(full, [], true);
    const help = new Help();
    const registered = full.commands.map((c) => ({
      name: c.name(),
      term: help.subcommandTerm(c),
      description: c.description(),
    }));
    expect(registered).toEqual(COMMANDS.map(({ name, term, description }) => ({ name, term, description })));
  });

  it("prints the same `claims --help` from the rows alone as with every module loaded", async () => {
    const stubbed = programOf();
    await registerCommands(stubbed, []);
    const full = programOf();
    await registerCommands(full, [], true);
    expect(stubbed.helpInformation()).toContain("reconcile [options]");
    expect(stubbed.helpInformation()).toEqual(full.helpInformation());
  });

  it("loads in full only the command that runs, and stubs the others", async () => {
    const program = programOf();
    await registerCommands(program, ["list", "--json"]);
    const options = (name: string) => program.commands.find((c) => c.name() === name)?.options.length;
    expect(options("list")).toBeGreaterThan(0);
    expect(options("batch")).toBe(0);
  });

  it.each([
    [["batch", "--json"], "batch"],
    [["--json", "list"], "list"],
    [["help", "serve"], "serve"],
    [["review", "approve", "clm_1"], "review"],
    [["lst"], undefined],
    [["--version"], undefined],
    [[], undefined],
  ])("finds the command of `claims %j`", (args, name) => {
    expect(invokedCommand(args)?.name).toBe(name);
  });
});

describe("the compiled CLI", () => {
  // A resolve hook that writes down every module the process loads (Node runs it in a thread of its own).
  function hooks(dir: string): string {
    const log = join(dir, "loaded.txt");
    writeFileSync(
      join(dir, "hooks.mjs"),
      `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, r.url + "\\n");
  return r;
}`,
    );
    writeFileSync(
      join(dir, "register.mjs"),
      `import { register } from "node:module"; register(${JSON.stringify(pathToFileURL(join(dir, "hooks.mjs")).href)});`,
    );
    return log;
  }

  it.each([["--version"], ["--help"], ["lst"]])(
    "`claims %s` imports no command's module, zod, nor the AWS SDK",
    async (arg) => {
      const dir = mkdtempSync(join(tmpdir(), "claims-registry-"));
      try {
        const log = hooks(dir);
        await run(
          process.execPath,
          ["--import", pathToFileURL(join(dir, "register.mjs")).href, join(root, "bin/claims.mjs"), arg],
          {
            cwd: root,
          },
        ).catch((e: { code?: number }) => {
          if (e.code !== 2) throw e; // a typo is a usage error
        });
        const loaded = readFileSync(log, "utf8").split("\n");
        expect(loaded.some((u) => u.endsWith("/dist/cli/main.js"))).toBe(true);
        expect(
          loaded.filter((u) => /\/cli\/(command-|list|review|backtest|reconcile)|\/zod\/|@aws-sdk|\.ts$/.test(u)),
        ).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it.each([
    ["batch", "command-batch"],
    ["serve", "command-serve"],
    ["report", "command-report"],
    ["replay", "command-report"],
    ["erase", "command-customer-data"],
    ["export", "command-customer-data"],
  ])(
    "`claims %s --help` loads its registration, not its run, the local stack, the pipeline nor the AWS SDK",
    async (command, registration) => {
      const dir = mkdtempSync(join(tmpdir(), "claims-registry-"));
      try {
        const log = hooks(dir);
        const shown = await run(
          process.execPath,
          ["--import", pathToFileURL(join(dir, "register.mjs")).href, join(root, "bin/claims.mjs"), command, "--help"],
          { cwd: root },
        );
        expect(shown.stdout).toContain(`Usage: claims ${command} [options]`);
        const loaded = readFileSync(log, "utf8").split("\n");
        expect(loaded.some((u) => u.endsWith(`/dist/cli/${registration}.js`))).toBe(true);
        expect(
          loaded.filter((u) => /-run\.js$|\/dist\/(local|pipeline|adapters|report)\/|\/zod\/|@aws-sdk|\.ts$/.test(u)),
        ).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe("the build's freshness (scripts/build-cli.mjs)", () => {
  function tree(): string {
    const dir = mkdtempSync(join(tmpdir(), "claims-build-"));
    mkdirSync(join(dir, "dist"));
    mkdirSync(join(dir, "cli"));
    writeFileSync(join(dir, "cli/a.ts"), "export {};\n");
    utimesSync(join(dir, "cli/a.ts"), 1_000, 1_000);
    writeFileSync(join(dir, "dist/.build.json"), JSON.stringify({ builtFromMs: 1_000_000, inputs: ["cli/a.ts"] }));
    return dir;
  }

  it("is current when no source changed since the build", () => {
    const dir = tree();
    expect(staleReason(dir)).toBeUndefined();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is stale when a source changed, went away, or there is no build", () => {
    const dir = tree();
    utimesSync(join(dir, "cli/a.ts"), 2_000, 2_000);
    expect(staleReason(dir)).toBe("cli/a.ts changed since the last build");
    rmSync(join(dir, "cli/a.ts"));
    expect(staleReason(dir)).toBe("cli/a.ts is gone since the last build");
    rmSync(join(dir, "dist"), { recursive: true });
    expect(staleReason(dir)).toBe("there is no build in dist/");
    rmSync(dir, { recursive: true, force: true });
  });
});
