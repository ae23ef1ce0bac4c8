/**
 * Headless Chromium (playwright-core, Debian's /usr/bin/chromium) with an injected EIP-1193 wallet whose requests
 * the test answers: eth_sendTransaction is signed with the dev key of the account in use (a local account: the page
 * never sees a key) and sent over the node's HTTP RPC; everything else is forwarded to the node. `wallet.use(i)`
 * switches the account (as a user switching accounts in the wallet). Two knobs play a user's wallet going wrong:
 * `wallet.chainId` makes it claim another chain until the page asks `wallet_switchEthereumChain`, and
 * `wallet.rejectNext` makes it refuse the next signature as a user would (EIP-1193 code 4001). `wallet.hold(match)`
 * keeps the node's answers to the requests `match` picks until the test releases them (a slow RPC, made
 * deterministic: the test switches account or job while the page's read is in flight), and `switchAccount(i)` plays
 * a user picking another account in the wallet (it emits EIP-1193 `accountsChanged` to the page's listeners).
 * The one copy of the injected wallet: test/dapp/*.test.ts all open their page here.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { createWalletClient, http, type Hex } from "viem";
import { hardhat } from "viem/chains";
import { devAccount } from "../../verifier/src/chain/index.ts";

export const CHROMIUM = "/usr/bin/chromium";

type RpcAnswer = { result?: unknown; error?: { code: number; message: string; data?: unknown } };

/** Answers held back until `release()`: `held` counts the requests now waiting (the page's reads in flight). */
export type Gate = { readonly held: number; release(): void; /** resolves once `n` requests wait */ waitHeld(n?: number): Promise<void> };
type OpenGate = { match: (method: string, params: unknown[]) => boolean; waiting: (() => void)[]; open: boolean };

export type TestWallet = {
  account: number;
  /** Every transaction hash the wallet sent, in order. */
  sent: Hex[];
  use(i: number): void;
  /** The chain id the wallet claims (undefined: the node's); cleared by `wallet_switchEthereumChain`. */
  chainId: number | undefined;
  /** Refuse the next eth_sendTransaction with 4001 "User rejected the request." (then reset). */
  rejectNext: boolean;
  /** Hold the node's answers to the forwarded requests `match` picks (until release). */
  hold(match: (method: string, params: unknown[]) => boolean): Gate;
  /** Release every gate still closed (a test's afterEach: a failed test must not leave the page's reads held). */
  releaseAll(): void;
};
export type WalletPage = {
  browser: Browser;
  page: Page;
  wallet: TestWallet;
  /** The user picks account `i` in the wallet: it answers as `i` from now on and emits `accountsChanged` to the page. */
  switchAccount(i: number): Promise<void>;
  shot(name: string): Promise<string>;
  close(): Promise<void>;
};

export const chromiumMissing = () => !existsSync(CHROMIUM);

export async function openWalletPage(rpcUrl: string, o: { account: number; artifacts: string }): Promise<WalletPage> {
  const gates: OpenGate[] = [];
  const open = (g: OpenGate) => {
    g.open = true;
    if (gates.includes(g)) gates.splice(gates.indexOf(g), 1);
    for (const go of g.waiting.splice(0)) go();
  };
  const wallet: TestWallet = {
    account: o.account,
    sent: [],
    use: (i) => void (wallet.account = i),
    chainId: undefined,
    rejectNext: false,
    hold(match) {
      const g: OpenGate = { match, waiting: [], open: false };
      gates.push(g);
      return {
        get held() {
          return g.waiting.length;
        },
        release: () => open(g),
        async waitHeld(n = 1) {
          for (let t = 0; g.waiting.length < n; t++) {
            if (t > 3000) throw new Error(`wallet.hold: ${g.waiting.length} of ${n} requests held after 30 s: the page never sent the read`);
            await new Promise((r) => setTimeout(r, 10));
          }
        },
      };
    },
    releaseAll: () => [...gates].forEach(open),
  };
  const forward = async (method: string, params: unknown[]): Promise<RpcAnswer> => {
    for (const g of gates) {
      if (!g.open && g.match(method, params)) await new Promise<void>((go) => g.waiting.push(go));
    }
    const res = await fetch(rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
    return (await res.json()) as RpcAnswer;
  };
  const answer = async (method: string, params: unknown[]): Promise<RpcAnswer> => {
    const account = devAccount(wallet.account);
    if (method === "eth_requestAccounts" || method === "eth_accounts") return { result: [account.address] };
    if (method === "eth_chainId" && wallet.chainId !== undefined) return { result: `0x${wallet.chainId.toString(16)}` };
    if (method === "wallet_switchEthereumChain") {
      wallet.chainId = undefined;
      return { result: null };
    }
    if (method !== "eth_sendTransaction") return forward(method, params);
    if (wallet.rejectNext) {
      wallet.rejectNext = false;
      return { error: { code: 4001, message: "User rejected the request." } };
    }
    const tx = params[0] as Record<string, Hex | undefined>;
    const big = (v: Hex | undefined) => (v === undefined ? undefined : BigInt(v));
    try {
      const signer = createWalletClient({ account, chain: hardhat, transport: http(rpcUrl) });
      const hash = await signer.sendTransaction({
        to: tx.to as Hex,
        data: tx.data ?? "0x",
        ...(tx.value ? { value: big(tx.value)! } : {}),
        ...(tx.gas ? { gas: big(tx.gas)! } : {}),
        ...(tx.nonce ? { nonce: Number(tx.nonce) } : {}),
        ...(tx.maxFeePerGas ? { maxFeePerGas: big(tx.maxFeePerGas)!, maxPriorityFeePerGas: big(tx.maxPriorityFeePerGas) ?? 0n } : {}),
      });
      wallet.sent.push(hash);
      return { result: hash };
    } catch (err) {
      return { error: { code: -32603, message: (err as Error).message } };
    }
  };
  mkdirSync(o.artifacts, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-component-update", "--disable-sync"],
  });
  const page = await browser.newPage({ viewport: { width: 1100, height: 1400 } });
  page.on("pageerror", (e) => console.log(`    page error: ${e.message}`));
  await page.exposeFunction("__pouwWallet", answer);
  await page.addInitScript(() => {
    const w = window as unknown as { __pouwWallet: (m: string, p: unknown[]) => Promise<RpcAnswer>; ethereum: unknown };
    const listeners: Record<string, ((...a: unknown[]) => void)[]> = {};
    (w as unknown as { __pouwEmit: (event: string, arg: unknown) => void }).__pouwEmit = (event, arg) => {
      for (const fn of listeners[event] ?? []) fn(arg);
    };
    w.ethereum = {
      async request({ method, params }: { method: string; params?: unknown[] }) {
        const r = await w.__pouwWallet(method, params ?? []);
        if (r.error) throw Object.assign(new Error(r.error.message), { code: r.error.code, ...(r.error.data === undefined ? {} : { data: r.error.data }) });
        return r.result;
      },
      on(event: string, fn: (...a: unknown[]) => void) {
        (listeners[event] ??= []).push(fn);
      },
      removeListener(event: string, fn: (...a: unknown[]) => void) {
        listeners[event] = (listeners[event] ?? []).filter((f) => f !== fn);
      },
    };
  });
  const shot = async (name: string) => {
    const path = join(o.artifacts, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    return path;
  };
  const switchAccount = async (i: number) => {
    wallet.use(i);
    const address = devAccount(i).address;
    await page.evaluate((a) => (window as unknown as { __pouwEmit: (event: string, arg: unknown) => void }).__pouwEmit("accountsChanged", [a]), address);
  };
  return { browser, page, wallet, switchAccount, shot, close: () => browser.close() };
}
