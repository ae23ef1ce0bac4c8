/**
 * The demo report: one self-contained HTML file (chart.js's UMD bundle inlined, so it opens offline)
 * with loss curves (committed by the provider vs recomputed by auditors), stake and payment flows per
 * provider, and per-check costs.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export type ProviderRow = {
  provider: string;
  address: string;
  strategy: string;
  jobId: string;
  /** First bad step any auditor found, or null. */
  detectedAtStep: number | null;
  /** Segments found bad / segments audited (all auditors). */
  badSegments: number;
  auditedSegments: number;
  stakeLocked: string;
  stakeSlashed: string;
  paid: string;
  gas: string;
  providerMs: number;
  auditorMs: number;
  providerFlops: number;
  auditorFlops: number;
  auditOverProvider: number;
  outcome: string;
};

export type DemoReport = {
  title: string;
  generatedAt: string;
  chainId: number;
  manifest: { path: string; hash: string; steps: number; stepsPerSegment: number; auditRate: number; model: string };
  disputeGame: boolean;
  wallSeconds: number;
  rows: ProviderRow[];
  /** Per provider: committed per-step losses and auditors' recomputed per-step losses. */
  losses: { provider: string; committed: { step: number; loss: number }[]; recomputed: { step: number; loss: number }[] }[];
  /** Per check kind: number of runs, total ms and ms per segment; plus training ms per segment. */
  checkCosts: { check: string; runs: number; msPerSegment: number; flopsPerSegment: number }[];
  notes: string[];
};

export function chartJsBundle(): string {
  const require = createRequire(import.meta.url);
  // NOTE: chart.js's exports map hides dist/chart.umd.min.js; it sits beside the CommonJS entry.
  return readFileSync(join(dirname(require.resolve("chart.js")), "chart.umd.min.js"), "utf8");
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

export function renderReport(r: DemoReport): string {
  // </script> inside the JSON would end the script element: escape '<'.
  const data = JSON.stringify(r).replace(/</g, "\\u003c");
  const rows = r.rows
    .map(
      (x) =>
        `<tr><td>${esc(x.provider)}</td><td><code>${esc(x.strategy)}</code></td><td>${x.detectedAtStep ?? "-"}</td><td>${x.badSegments}/${x.auditedSegments}</td>` +
        `<td>${esc(x.stakeSlashed)}</td><td>${esc(x.paid)}</td><td>${esc(x.gas)}</td><td>${x.auditOverProvider.toFixed(2)}</td><td>${esc(x.outcome)}</td></tr>`,
    )
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(r.title)}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2rem;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}
.charts{display:grid;grid-template-columns:1fr 1fr;gap:1.5rem}.chart{height:320px;position:relative}
code{background:#f3f3f3;padding:0 .2rem}.note{color:#555}
</style></head><body>
<h1>${esc(r.title)}</h1>
<p>Chain ${r.chainId}, manifest <code>${esc(r.manifest.path)}</code> (${esc(r.manifest.model)}, ${r.manifest.steps} steps in segments of ${r.manifest.stepsPerSegment}, audit rate ${r.manifest.auditRate}),
generated ${esc(r.generatedAt)} in ${r.wallSeconds.toFixed(1)} s. DisputeGame deployed: ${r.disputeGame ? "yes" : "no"}.</p>
<table><thead><tr><th>provider</th><th>strategy</th><th>detected at step</th><th>bad / audited segments</th><th>stake slashed</th><th>paid</th><th>gas</th><th>auditor / provider compute</th><th>outcome</th></tr></thead>
<tbody>
${rows}
</tbody></table>
${r.notes.map((n) => `<p class="note">${esc(n)}</p>`).join("\n")}
<div class="charts">
${r.losses.map((_, i) => `<div class="chart"><canvas id="loss-${i}"></canvas></div>`).join("\n")}
<div class="chart"><canvas id="flows"></canvas></div>
<div class="chart"><canvas id="costs"></canvas></div>
</div>
<script>${chartJsBundle()}</script>
<script>
const report = ${data};
Chart.defaults.animation = false;
report.losses.forEach((l, i) => {
  new Chart(document.getElementById("loss-" + i), {
    type: "line",
    data: { datasets: [
      { label: "committed (provider)", data: l.committed.map(p => ({ x: p.step, y: p.loss })), borderColor: "#1f77b4", pointRadius: 0 },
      { label: "recomputed (auditors)", data: l.recomputed.map(p => ({ x: p.step, y: p.loss })), borderColor: "#d62728", showLine: false, pointRadius: 3 },
    ] },
    options: { maintainAspectRatio: false, parsing: false, plugins: { title: { display: true, text: "loss: " + l.provider } }, scales: { x: { type: "linear", title: { display: true, text: "step" } }, y: { title: { display: true, text: "training loss" } } } },
  });
});
const tok = s => Number(s);
new Chart(document.getElementById("flows"), {
  type: "bar",
  data: { labels: report.rows.map(r => r.provider), datasets: [
    { label: "stake locked", data: report.rows.map(r => tok(r.stakeLocked)), backgroundColor: "#9ecae1" },
    { label: "stake slashed", data: report.rows.map(r => tok(r.stakeSlashed)), backgroundColor: "#d62728" },
    { label: "paid", data: report.rows.map(r => tok(r.paid)), backgroundColor: "#2ca02c" },
  ] },
  options: { maintainAspectRatio: false, plugins: { title: { display: true, text: "stake and payment flows (tokens)" } } },
});
new Chart(document.getElementById("costs"), {
  type: "bar",
  data: { labels: report.checkCosts.map(c => c.check), datasets: [
    { label: "ms per segment", data: report.checkCosts.map(c => c.msPerSegment), backgroundColor: "#ff7f0e" },
  ] },
  options: { maintainAspectRatio: false, plugins: { title: { display: true, text: "cost per segment: training vs each check" } } },
});
</script>
</body></html>
`;
}
