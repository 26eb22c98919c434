#!/usr/bin/env node
// Entry point: checks Node, lets users' own experiment files `import … from "latlab"` wherever
// they live, loads TypeScript through tsx, then hands over to the CLI (src/ in a checkout,
// dist/ in the published package).
//
// Only what every Node since 18 can link is imported statically: a named import of something a
// Node version lacks is a SyntaxError before any line here runs, and the message below would
// never be seen. registerHooks (Node 22.15 / 23.5) is feature-tested on the namespace instead.
import * as nodeModule from "node:module";

const major = Number(process.versions.node.split(".")[0]);
if (major < 22 || typeof nodeModule.registerHooks !== "function") {
  console.error(`latlab needs Node.js >= 22.15; this is v${process.versions.node}. Install it (for example: npm install -g node@24) and try again.`);
  process.exit(1);
}

// A checkout runs its TypeScript source, so nothing needs building there; the published package
// ships no src/ and runs the JavaScript `npm run build` put in dist/. A checkout with a dist/
// still runs src/: a dist/ built yesterday must not answer for today's code.
const { existsSync } = process.getBuiltinModule("node:fs");
const code = existsSync(new URL("../src/cli/main.ts", import.meta.url))
  ? { entry: "../src/index.ts", main: "../src/cli/main.ts" }
  : { entry: "../dist/index.js", main: "../dist/cli/main.js" };

// "latlab" in a user's experiment resolves to this copy where it should, and TypeScript loads
// through tsx (experimentHooks.js: the probing thread of src/cli/experiments/loadProbe.ts registers the same).
const { registerExperimentHooks } = await import("./experimentHooks.js");
await registerExperimentHooks(new URL(code.entry, import.meta.url).href, new URL("../", import.meta.url).href);
// The URL itself: a path round trip would encode a checkout's "%20" (a space) twice.
const { main } = await import(new URL(code.main, import.meta.url).href);
process.exitCode = await main(process.argv.slice(2));
