/** A Vega-Lite specification drawn to SVG in Node (no browser, no canvas): vega-lite compiles it, vega renders it headless. */
import { parse, View } from "vega";
import { compile, type TopLevelSpec } from "vega-lite";

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new View(parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
