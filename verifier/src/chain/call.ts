/**
 * A contract call described as data: the address, the ABI, the function and its typed arguments. Each write action
 * exports one (`resolveDisputeCall(p)` beside `resolveDispute(clients, p)`); the action sends it through
 * `sendContractTx`, and a sender that records its intent before signing (the challenger bot's outbox) encodes the same
 * description with `encodeCall` and stores `{ to, data }`. Nothing outside chain/ encodes a market call.
 *
 * @example
 *   const { to, data } = encodeCall(resolveDisputeCall({ disputeGame, disputeId }));
 */
import { encodeFunctionData, type Abi, type Address, type ContractFunctionArgs, type ContractFunctionName, type Hex } from "viem";

export type ContractCall<abi extends Abi = Abi, fn extends ContractFunctionName<abi, "nonpayable" | "payable"> = ContractFunctionName<abi, "nonpayable" | "payable">> = {
  address: Address;
  abi: abi;
  functionName: fn;
  args: ContractFunctionArgs<abi, "nonpayable" | "payable", fn>;
};

/** A call's transaction fields: the contract to send to and the ABI-encoded calldata. */
export type EncodedCall = { to: Address; data: Hex };

export function encodeCall<const abi extends Abi, fn extends ContractFunctionName<abi, "nonpayable" | "payable">>(call: ContractCall<abi, fn>): EncodedCall {
  return { to: call.address, data: encodeFunctionData({ abi: call.abi, functionName: call.functionName, args: call.args } as never) };
}

/** An action's parameters without the send options: what its call description needs. */
export type CallParameters<P> = Omit<P, "onSigned" | "nonce">;
