import { describe, expect, it } from "vitest";
import { resolveSubscription } from "../../../../../src/targets/azure/lifecycle/subscription.ts";

const A = "11111111-1111-4111-8111-111111111111";
const B = "22222222-2222-4222-8222-222222222222";
const noCli = () => undefined;

describe("the run's one subscription", () => {
  it("ARM_SUBSCRIPTION_ID (what azure-native reads) first, then AZURE_SUBSCRIPTION_ID, then the Azure CLI's default", () => {
    expect(resolveSubscription({ ARM_SUBSCRIPTION_ID: A }, () => B)).toEqual({ id: A, source: "ARM_SUBSCRIPTION_ID" });
    expect(resolveSubscription({ AZURE_SUBSCRIPTION_ID: A }, () => B)).toEqual({ id: A, source: "AZURE_SUBSCRIPTION_ID" });
    expect(resolveSubscription({}, () => B)).toEqual({ id: B, source: "the Azure CLI's default (az account show)" });
  });

  it("refuses two variables naming different subscriptions: the check and the deploy could disagree", () => {
    expect(() => resolveSubscription({ ARM_SUBSCRIPTION_ID: A, AZURE_SUBSCRIPTION_ID: B }, noCli)).toThrow(/name different subscriptions/);
    expect(resolveSubscription({ ARM_SUBSCRIPTION_ID: A, AZURE_SUBSCRIPTION_ID: A.toUpperCase() }, noCli).id).toBe(A);
  });

  it("refuses none, and what is not a subscription id, saying what to set", () => {
    expect(() => resolveSubscription({}, noCli)).toThrow(/no Azure subscription: set ARM_SUBSCRIPTION_ID/);
    expect(() => resolveSubscription({ ARM_SUBSCRIPTION_ID: "my-sub" }, noCli)).toThrow(/"my-sub" \(from ARM_SUBSCRIPTION_ID\) is not a subscription id/);
  });
});
