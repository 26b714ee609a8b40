// `npm run bench -- cost`: the cost section from bench/out/aws-requests.json (bench/cost.ts). The file is
// written by bench/pipeline.bench.ts, which `npm run bench` runs after this one (alphabetical order): the
// section names the run the file came from, and counts on the local stack itself when the file is missing.
export { run } from "./cost.ts";
