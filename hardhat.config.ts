import { createRequire } from "node:module";
import { defineConfig } from "hardhat/config";
import hardhatViem from "@nomicfoundation/hardhat-viem";
import hardhatViemAssertions from "@nomicfoundation/hardhat-viem-assertions";
import hardhatMocha from "@nomicfoundation/hardhat-mocha";
import hardhatNetworkHelpers from "@nomicfoundation/hardhat-network-helpers";
import hardhatIgnitionViem from "@nomicfoundation/hardhat-ignition-viem";
import hardhatKeystore from "@nomicfoundation/hardhat-keystore";

// NOTE: no network access on build machines, so solc comes from the npm `solc` package (soljson)
// instead of Hardhat's downloader. The version must match the package pinned in package.json.
const require = createRequire(import.meta.url);
const soljson = require.resolve("solc/soljson.js");

// Fuzz depth: modest for `npm test`, deep for `npm run test:deep` (POUW_FUZZ_DEEP=1).
const deep = process.env.POUW_FUZZ_DEEP === "1";

export default defineConfig({
  plugins: [
    hardhatViem,
    hardhatViemAssertions,
    hardhatMocha,
    hardhatNetworkHelpers,
    hardhatIgnitionViem,
    hardhatKeystore,
  ],
  solidity: {
    profiles: {
      default: {
        version: "0.8.28",
        path: soljson,
        settings: { optimizer: { enabled: true, runs: 200 }, viaIR: false },
      },
    },
  },
  paths: {
    tests: { mocha: "test", solidity: "contracts" },
  },
  test: {
    solidity: {
      fuzz: { runs: deep ? 10_000 : 64 },
      invariant: { runs: deep ? 10_000 : 32, depth: deep ? 32 : 16 },
    },
    mocha: { timeout: 600_000 },
  },
  networks: {
    localhost: { type: "http", chainType: "l1", url: "http://127.0.0.1:8545" },
  },
});
