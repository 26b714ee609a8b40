// `npm test`'s static checks — the formatter, the linter and the type checker — run side by side: each is one
// single-threaded process, so run one after another they leave the second core idle for a minute (docs/testing.md).
// Each check's output is printed whole when it ends (never interleaved); the exit code is the first failure's.
import { Buffer } from "node:buffer";
import { spawn } from "node:child_process";
import process from "node:process";

const CHECKS = [
  ["format", ["biome", "format", "."]],
  ["lint", ["eslint", "."]],
  ["typecheck", ["tsc", "--noEmit"]],
];

/** Runs `npx <args>`, collecting its output; resolves to its exit code and output. */
function run(name, args) {
  return new Promise((resolve) => {
    const child = spawn("npx", ["--no-install", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    const out = [];
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", (d) => out.push(d));
    child.on("error", (error) => resolve({ name, code: 1, output: `could not start ${args[0]}: ${error.message}\n` }));
    child.on("close", (code, signal) =>
      resolve({ name, code: code ?? (signal ? 1 : 0), output: Buffer.concat(out).toString() }),
    );
  });
}

const results = await Promise.all(CHECKS.map(([name, args]) => run(name, args)));
let failed = 0;
for (const { name, code, output } of results) {
  if (code === 0) continue;
  failed ||= code;
  process.stderr.write(`\n${name} failed (exit ${code}):\n${output}`);
}
process.exit(failed);
