import type { Cell } from "../../../src/plan/types.ts";

/** One cell from client to server of deployment d0, private path, for a fake tool: runner tests change what they need. */
export function fakeCell(tool: string, overrides: Partial<Cell> = {}): Cell {
  return {
    id: `v=1/${tool}/client->server`,
    deployment: "d0",
    variant: "v=1",
    replica: 0,
    repetition: 0,
    measure: 0,
    tool,
    params: {},
    from: "client",
    to: "server",
    path: "private",
    pathKind: "same-zone",
    crossesPeering: false,
    estimatedSeconds: 1,
    ...overrides,
  };
}
