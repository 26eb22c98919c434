#!/usr/bin/env node
// Entry point: checks Node, lets users' own experiment files `import … from "latlab"` wherever
// they live, loads TypeScript through tsx, then hands over to the CLI.
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

// A user's file outside any project that depends on latlab: "latlab" resolves to this copy.
const entry = new URL("../src/index.ts", import.meta.url).href;
nodeModule.registerHooks({
  resolve(specifier, context, next) {
    if (specifier !== "latlab") return next(specifier, context);
    try {
      return next(specifier, context);
    } catch {
      return { url: entry, shortCircuit: true, format: "module" };
    }
  },
});
const { register } = await import("tsx/esm/api");
register();
// The URL itself: a path round trip would encode a checkout's "%20" (a space) twice.
const { main } = await import(new URL("../src/cli/main.ts", import.meta.url).href);
process.exitCode = await main(process.argv.slice(2));
