import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { main } from "@pulumi/pulumi/provider/index.js";
import { armToSdk, armTypeForToken, sdkToArm } from "../spec/armSpec.ts";
import { ArmClient } from "./armClient.ts";
import { EmulatorProvider } from "./emulatorProvider.ts";

/**
 * The entry of the `pulumi-resource-azure-native` plugin (../bin): the Pulumi engine starts it,
 * reads the gRPC port it prints, and sends it the azure-native resources of a stack. It reports
 * the installed @pulumi/azure-native SDK's version, so the engine takes it for that provider.
 */
const socket = process.env.LATLAB_AZURE_EMULATOR;
if (!socket) {
  process.stderr.write(
    "pulumi-resource-azure-native (latlab's Azure emulator): LATLAB_AZURE_EMULATOR is not set. This plugin plays Azure only for a running emulator: " +
      "use `latlab run <experiment> --target azure --rehearse`, or remove latlab's emulator folder from PATH to use the real azure-native provider.\n",
  );
  process.exit(1);
}
const require = createRequire(import.meta.url);
const sdk = JSON.parse(readFileSync(require.resolve("@pulumi/azure-native/package.json"), "utf8")) as { version: string };

const provider = new EmulatorProvider(
  new ArmClient(socket),
  {
    typeOf: (token) => armTypeForToken(token),
    toArm: (token, inputs) => sdkToArm(token, inputs),
    toSdk: (token, body) => armToSdk(token, body),
  },
  sdk.version,
);
// The engine starts plugins in their own process group, so a runner killed with its group (kill -9,
// OOM) leaves this process behind, serving no one. It goes when the engine that started it does.
const engine = process.ppid;
setInterval(() => {
  if (process.ppid !== engine) process.exit(0);
}, 1000).unref();
await main(provider, process.argv.slice(2));
