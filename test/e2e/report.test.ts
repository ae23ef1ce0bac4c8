/**
 * Opens a report rendered by renderReport (the demo's report.html) in headless Chromium (playwright-core,
 * Debian's /usr/bin/chromium, offline) and checks that every chart drew something: each canvas has
 * non-background pixels.
 */
import { expect } from "chai";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { renderReport, type DemoReport } from "../../verifier/src/report/index.ts";

const CHROMIUM = "/usr/bin/chromium";

function sampleReport(): DemoReport {
  const curve = (offset: number) => Array.from({ length: 24 }, (_, i) => ({ step: i + 1, loss: 2.3 * Math.exp(-i / 12) + offset }));
  const row = (provider: string, strategy: string, detected: number | null, slashed: string, paid: string) => ({
    provider, address: "0x0000000000000000000000000000000000000001", strategy, jobId: "1", detectedAtStep: detected, badSegments: detected ? 2 : 0, auditedSegments: 3,
    stakeLocked: "10", stakeSlashed: slashed, paid, gas: "250000", providerMs: 1000, auditorMs: 800, providerFlops: 1e9, auditorFlops: 8e8, auditOverProvider: 0.8, outcome: detected ? "slashed" : "paid",
  });
  return {
    title: "report test",
    generatedAt: new Date(0).toISOString(),
    chainId: 31337,
    manifest: { path: "examples/demo-mnist.json", hash: "0x00", steps: 24, stepsPerSegment: 6, auditRate: 0.75, model: "mnist-mlp" },
    disputeGame: true,
    wallSeconds: 1,
    rows: [row("P1 honest", "honest", null, "0", "1"), row("P2 skip", "skip:0.3", 4, "10", "0")],
    losses: [
      { provider: "P1 honest", committed: curve(0), recomputed: curve(0).filter((_, i) => i % 2 === 0) },
      { provider: "P2 skip", committed: curve(0.1), recomputed: curve(0.05).slice(0, 6) },
    ],
    checkCosts: [{ check: "training", runs: 8, msPerSegment: 120, flopsPerSegment: 1e8 }, { check: "recompute", runs: 6, msPerSegment: 100, flopsPerSegment: 1e8 }],
    notes: ["<script>alert('escaped')</script>"],
  };
}

describe("report.html renders its charts (headless Chromium)", function () {
  this.timeout(120_000);

  it("draws every canvas offline", async function () {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
    const dir = mkdtempSync(join(tmpdir(), "pouw-report-"));
    const path = join(dir, "report.html");
    writeFileSync(path, renderReport(sampleReport()));
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-component-update", "--disable-sync"],
    });
    try {
      const page = await browser.newPage();
      const requests: string[] = [];
      page.on("request", (r) => requests.push(r.url()));
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(pathToFileURL(path).href);
      await page.waitForFunction(() => typeof (globalThis as { Chart?: unknown }).Chart === "function");
      const painted = await page.evaluate(() =>
        Array.from(document.querySelectorAll("canvas")).map((c) => {
          const ctx = (c as HTMLCanvasElement).getContext("2d")!;
          const { data } = ctx.getImageData(0, 0, c.width, c.height);
          let n = 0;
          for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
          return { id: c.id, width: c.width, painted: n };
        }),
      );
      expect(errors).to.deep.equal([]);
      expect(painted.map((p) => p.id)).to.deep.equal(["loss-0", "loss-1", "flows", "costs"]);
      for (const p of painted) expect(p.painted, p.id).to.be.greaterThan(500);
      // nothing but the file itself was loaded (chart.js is inline), and the note was escaped, not run
      expect(requests.filter((u) => !u.startsWith("file:"))).to.deep.equal([]);
      expect(await page.textContent("body")).to.contain("<script>alert('escaped')</script>");
    } finally {
      await browser.close();
    }
  });
});
