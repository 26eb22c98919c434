import { ArmError } from "../../../../../src/targets/azure/emulator/arm/armError.ts";
import type { Cloud } from "../../../../../src/targets/azure/emulator/arm/cloud.ts";

/** PUT and wait for its operation. */
export async function put(cloud: Cloud, id: string, api: string, body: unknown) {
  const r = cloud.put(id, api, body);
  await cloud.idle();
  return { ...r, op: cloud.operation(r.operation) };
}

/** The ArmError `fn` throws; fails the test when it throws nothing or something else. */
export function armError(fn: () => unknown): ArmError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ArmError) return e;
    throw e;
  }
  throw new Error("expected an ArmError");
}
