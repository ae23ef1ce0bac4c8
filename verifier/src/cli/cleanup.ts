/**
 * What a command started and must stop when it ends (an IPFS node: its libp2p listener would keep the process
 * alive and an in-process caller's tests would leak it). `main` (pouw.ts) runs them, last registered first.
 * NOTE: imports nothing, so pouw.ts stays light.
 */
const closers: (() => Promise<void>)[] = [];

export function onCommandEnd(close: () => Promise<void>): void {
  closers.push(close);
}

/** Runs and forgets every registered closer; a failing one does not stop the others. */
export async function closeCommandResources(): Promise<void> {
  while (closers.length > 0) {
    const close = closers.pop()!;
    await close().catch((err: unknown) => process.stderr.write(`pouw: while stopping: ${err instanceof Error ? err.message : String(err)}\n`));
  }
}
