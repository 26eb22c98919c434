import { API_VERSIONS } from "../../../../../src/targets/azure/emulator/arm/typeRules.ts";

/** One subscription and resource group the emulator's unit tests build their ARM resources in, and the API versions they use. */
export const SUB = "00000000-0000-4000-8000-000000000001";
export const RG = `/subscriptions/${SUB}/resourceGroups/rg1`;
export const NET = `${RG}/providers/Microsoft.Network`;
export const COMPUTE = `${RG}/providers/Microsoft.Compute`;
export const N = API_VERSIONS.network;
export const C = API_VERSIONS.compute;
