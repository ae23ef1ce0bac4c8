/**
 * The in-process clients (providerClients over an EIP-1193 provider: the demo's, the tests' and the dApp's wallet)
 * surface a revert after one request. viem's default transport retry re-sent every revert three times with
 * 150/300/600 ms sleeps (it wraps Hardhat's in-process revert, code 3, as UnknownRpcError, code -1, which it retries),
 * which was 1.05 s per revert and nearly all of test/contracts/Governance's 52 s.
 */
import { expect } from "chai";
import { network } from "hardhat";
import { parseAbi } from "viem";
import { ContractRevertError, deployMarket, devAccount, providerClients, sendContractTx } from "../../verifier/src/chain/index.ts";

describe("chain: providerClients", () => {
  it("sends a reverting estimate to the provider once, and decodes the revert by name", async () => {
    const conn = await network.create();
    const counts = new Map<string, number>();
    const counted = {
      request: (args: { method: string; params?: unknown[] }) => {
        counts.set(args.method, (counts.get(args.method) ?? 0) + 1);
        return conn.provider.request(args as never);
      },
    };
    const c = providerClients(counted, 31337, { account: devAccount(0), pollingIntervalMs: 20 });
    const { stakeVault } = await deployMarket(c, { unbondingDelaySeconds: 60n, minBond: 1n, exitDelaySeconds: 60n, registries: false });
    // StakeVault's wiring ended at deployment (deployMarket wires it), so a second wire reverts FixedRolesNotWirer
    const abi = parseAbi(["function wire(address a, address b)"]);
    counts.clear();
    let err: unknown;
    try {
      await sendContractTx(c, { address: stakeVault, abi, functionName: "wire", args: [c.account.address, c.account.address] });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ContractRevertError);
    expect((err as ContractRevertError).errorName).to.equal("FixedRolesNotWirer");
    expect(counts.get("eth_estimateGas"), JSON.stringify([...counts])).to.equal(1);
    expect(counts.has("eth_sendRawTransaction")).to.equal(false);
  });
});
