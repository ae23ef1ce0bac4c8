/**
 * chain/call.ts: each write action's call description encodes to the calldata its Solidity signature defines (fixed
 * selectors and ABI words, written out here), and the send action sends that same description. The bot's transitional
 * calldata helpers (chain/calldata.ts) give the same bytes.
 */
import { expect } from "chai";
import { concatHex, numberToHex, padHex, toFunctionSelector, type Address, type Hex } from "viem";
import {
  approveData,
  approveTokenCall,
  claimCreditData,
  claimStakeCreditCall,
  commitChallengeCall,
  commitChallengeData,
  encodeCall,
  reopenJobCall,
  reportTimeoutCall,
  resolveDisputeCall,
  resolveDisputeData,
  tenureData,
} from "../../verifier/src/chain/index.ts";

const game: Address = "0x1111111111111111111111111111111111111111";
const market: Address = "0x2222222222222222222222222222222222222222";
const token: Address = "0x3333333333333333333333333333333333333333";
const vault: Address = "0x4444444444444444444444444444444444444444";
const spender: Address = "0x5555555555555555555555555555555555555555";
const word = (n: bigint) => numberToHex(n, { size: 32 });
const commitment: Hex = `0x${"ab".repeat(32)}`;

describe("chain: call descriptions", () => {
  it("encode to the selector and ABI words of the Solidity signature, sent to the action's contract", () => {
    expect(encodeCall(resolveDisputeCall({ disputeGame: game, disputeId: 7n }))).to.deep.equal({ to: game, data: concatHex([toFunctionSelector("resolve(uint256)"), word(7n)]) });
    expect(encodeCall(reportTimeoutCall({ jobMarket: market, jobId: 2n }))).to.deep.equal({ to: market, data: concatHex([toFunctionSelector("reportTimeout(uint256)"), word(2n)]) });
    expect(encodeCall(reopenJobCall({ jobMarket: market, jobId: 2n })).data).to.equal(concatHex([toFunctionSelector("reopenJob(uint256)"), word(2n)]));
    expect(encodeCall(approveTokenCall({ token, spender, amount: 10n ** 18n }))).to.deep.equal({
      to: token,
      data: concatHex([toFunctionSelector("approve(address,uint256)"), padHex(spender, { size: 32 }), word(10n ** 18n)]),
    });
    expect(encodeCall(claimStakeCreditCall({ stakeVault: vault }))).to.deep.equal({ to: vault, data: toFunctionSelector("claim()") });
    expect(encodeCall(commitChallengeCall({ disputeGame: game, jobId: 1n, segment: 3, commitment })).data).to.equal(
      concatHex([toFunctionSelector("commitChallenge(uint256,uint256,bytes32)"), word(1n), word(3n), commitment]),
    );
  });

  it("the transitional calldata helpers give the same bytes as the descriptions", () => {
    expect(resolveDisputeData(7n)).to.equal(encodeCall(resolveDisputeCall({ disputeGame: game, disputeId: 7n })).data);
    expect(tenureData("reportTimeout", 2n)).to.equal(concatHex([toFunctionSelector("reportTimeout(uint256)"), word(2n)]));
    expect(tenureData("reopenJob", 2n)).to.equal(concatHex([toFunctionSelector("reopenJob(uint256)"), word(2n)]));
    expect(approveData(spender, 5n)).to.equal(concatHex([toFunctionSelector("approve(address,uint256)"), padHex(spender, { size: 32 }), word(5n)]));
    expect(claimCreditData()).to.equal(toFunctionSelector("claim()"));
    expect(commitChallengeData(1n, 3, commitment)).to.equal(concatHex([toFunctionSelector("commitChallenge(uint256,uint256,bytes32)"), word(1n), word(3n), commitment]));
  });
});
