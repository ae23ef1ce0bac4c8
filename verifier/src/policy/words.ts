/**
 * A quote in a buyer's words: token amounts to 4 significant digits (the exact wei stay in `--json`) and each cheat
 * class of the detection matrix as what the cheater does. Pure; `pouw quote` and `pouw buyer create` print with it.
 */

/**
 * `wei` (18 decimals) as tokens to 4 significant digits, without an exponent down to 1e-6 and with every digit of
 * the integer part above 9999 (rounded to a whole token): 1752911923192006656 -> "1.753", 10^18 -> "1", 0 -> "0".
 */
export function approxTokens(wei: bigint | string): string {
  const w = typeof wei === "string" ? BigInt(wei) : wei;
  if (w === 0n) return "0";
  const neg = w < 0n;
  const abs = neg ? -w : w;
  const whole = abs / 10n ** 18n;
  let text: string;
  if (whole >= 10_000n) {
    // round half up to a whole token: more than 4 significant digits, never an exponent
    text = (whole + ((abs % 10n ** 18n) * 2n >= 10n ** 18n ? 1n : 0n)).toString();
  } else {
    const x = Number(abs) / 1e18;
    text = Number(x.toPrecision(4)).toString();
  }
  return neg ? `-${text}` : text;
}

const CHEATS: [RegExp, (m: RegExpExecArray) => string][] = [
  [/^skip:([0-9.]+)$/, (m) => `skipping ${Math.round(Number(m[1]) * 100)}% of the steps`],
  [/^skip-powers$/, () => "skipping the steps at powers of two"],
  [/^quarter-batch$/, () => "training on a quarter of each batch"],
  [/^stale:([0-9]+)$/, (m) => `reusing each gradient for ${m[1]} steps`],
  [/^fp16$/, () => "computing in half precision"],
  [/^copy$/, () => "copying another job's committed states"],
  [/^full-copy$/, () => "copying another job's whole run"],
  [/^plant:([0-9]+)$/, (m) => `planting chosen weights at step ${m[1]}`],
  [/^plant-bounded$/, () => "planting weights inside the update-size bounds"],
  [/^plant-spread:([0-9]+)$/, (m) => `planting weights spread over ${m[1]} steps`],
  [/^near-zero$/, () => "committing near-zero updates"],
  [/^state-poison$/, () => "poisoning the optimizer state"],
  [/^nan-plant$/, () => "planting NaNs"],
  [/^steer$/, () => "steering the weights toward a chosen model"],
];

/** A cheat class of the detection matrix as what the cheater does ("skip:0.25" -> "skipping 25% of the steps"). */
export function cheatInWords(name: string): string {
  for (const [re, say] of CHEATS) {
    const m = re.exec(name);
    if (m) return say(m);
  }
  return `the cheat "${name}"`;
}

/** Why the stake is what it is, in one clause: the cheat it is sized against, or the challenger's reward. */
export function stakeReasonInWords(bindingStake: string): string {
  if (bindingStake === "challenger") return "enough to pay an honest challenger's costs and reward (every measured cheat needs less)";
  if (bindingStake === "none") return "no measured cheat needs a stake";
  return `enough that ${cheatInWords(bindingStake)} (${bindingStake}, the measured cheat that needs the largest stake) loses more than it saves`;
}
