// `npm test`'s static checks — the formatter, the linter and the type checker — run side by side: each is one
// single-threaded process, so run one after another they leave the second core idle for a minute (docs/testing.md).
// Each check's output is printed whole when it ends (never interleaved); the exit code is the first failure's.
// `node scripts/static-checks.mjs -- <command…>` runs the command (vitest, in `npm test`) beside the checks, its output
// live: the tests no longer wait for the checks, whose ~70 CPU-seconds fill the cores the tests leave idle (their start
// and their last long files). The command's exit code wins; then the first failing check's.
import { Buffer } from "node:buffer";
import { spawn } from "node:child_process";
import process from "node:process";

const CHECKS = [
  ["format", ["biome", "format", "."]],
  ["lint", ["eslint", "."]],
  ["typecheck", ["tsc", "--noEmit"]],
];

/** Runs `npx <args>`, collecting its output (or passing it through, `live`); resolves to its exit code and output. */
function run(name, args, live = false) {
  return new Promise((resolve) => {
    const child = spawn("npx", ["--no-install", ...args], {
      stdio: ["ignore", live ? "inherit" : "pipe", live ? "inherit" : "pipe"],
    });
    const out = [];
    child.stdout?.on("data", (d) => out.push(d));
    child.stderr?.on("data", (d) => out.push(d));
    child.on("error", (error) => resolve({ name, code: 1, output: `could not start ${args[0]}: ${error.message}\n` }));
    child.on("close", (code, signal) =>
      resolve({ name, code: code ?? (signal ? 1 : 0), output: Buffer.concat(out).toString() }),
    );
  });
}

const dashes = process.argv.indexOf("--");
const command = dashes === -1 ? [] : process.argv.slice(dashes + 1);
const alongside = command.length > 0 ? run(command[0], command, true) : undefined;
const results = await Promise.all(CHECKS.map(([name, args]) => run(name, args)));
const commandResult = await alongside;
let failed = commandResult?.code ?? 0;
if (commandResult && commandResult.code !== 0 && commandResult.output) process.stderr.write(commandResult.output);
for (const { name, code, output } of results) {
  if (code === 0) continue;
  failed ||= code;
  process.stderr.write(`\n${name} failed (exit ${code}):\n${output}`);
}
process.exit(failed);
