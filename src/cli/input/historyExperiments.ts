import { closestName } from "../../dsl/suggest.ts";
import { readHistory } from "../../history/historyStore.ts";

/** The experiments a history holds runs of, with how many runs each, by name. */
export async function experimentsIn(file: string): Promise<Map<string, number>> {
  return readHistory(file, async (c) => {
    const rows = (await c.runAndReadAll("SELECT experiment, count(*) AS runs FROM runs GROUP BY experiment ORDER BY experiment")).getRowObjectsJS();
    return new Map(rows.map((r) => [String(r.experiment), Number(r.runs)]));
  });
}

/**
 * `latlab history NAME` found no run of NAME: refused, naming what the history does hold, when it
 * holds runs of other experiments ("no runs recorded" would read as an empty history, and a typo
 * would go unseen). Returns quietly for a history with no runs at all: that is what it says.
 */
export async function refuseExperimentNotInHistory(experiment: string, file: string): Promise<void> {
  const held = await experimentsIn(file);
  if (!held.size) return;
  const names = [...held.keys()];
  const match = closestName(experiment, names);
  const list = [...held].map(([name, runs]) => `${name} (${runs} run${runs === 1 ? "" : "s"})`).join(", ");
  throw new Error(`no runs of experiment "${experiment}" in ${file}, which holds runs of: ${list}${match ? ` — did you mean "${match}"?` : ""}`);
}
