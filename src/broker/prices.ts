// What a metered response cost in USD, from the provider's list prices per
// million tokens, so daily_usd and task_usd hold for every agent, not only
// the one CLI that reports a cost. The figures are the providers' published
// list prices (Anthropic's and OpenAI's pricing pages) for the model families
// below; cache writes are Anthropic's 5-minute rate. A model that matches no
// family costs nothing known (undefined): only the token caps and the
// ledger's figures count for it, and the ledger shows its cost as unknown.
// The registry has no price override yet: a changed list price needs a
// change here. Pure.
import type { PriceOf } from './budget.js';
import type { UsageRecord } from './types.js';

/** USD per million tokens. */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
}

const anthropic = (input: number, output: number): ModelPrice => ({
  input,
  output,
  cacheRead: input / 10,
  cacheWrite: input * 1.25,
});
const openai = (input: number, output: number, cacheRead: number): ModelPrice => ({
  input,
  output,
  cacheRead,
  cacheWrite: 0,
});

/** First match wins, so a narrower prefix comes before the family it belongs to. */
export const PRICE_TABLE: readonly (readonly [prefix: string, price: ModelPrice])[] = [
  ['claude-opus-4-5', anthropic(5, 25)],
  ['claude-opus-4', anthropic(15, 75)],
  ['claude-sonnet-4', anthropic(3, 15)],
  ['claude-3-7-sonnet', anthropic(3, 15)],
  ['claude-haiku-4', anthropic(1, 5)],
  ['claude-3-5-haiku', anthropic(0.8, 4)],
  ['gpt-5.1-codex-mini', openai(0.25, 2, 0.025)],
  ['gpt-5-codex-mini', openai(0.25, 2, 0.025)],
  ['gpt-5-nano', openai(0.05, 0.4, 0.005)],
  ['gpt-5-mini', openai(0.25, 2, 0.025)],
  ['gpt-5', openai(1.25, 10, 0.125)],
  ['gpt-4.1-mini', openai(0.4, 1.6, 0.1)],
  ['gpt-4.1', openai(2, 8, 0.5)],
  ['o4-mini', openai(1.1, 4.4, 0.275)],
];

/** The price of a model by its name as the provider answered it, or undefined. */
export function modelPrice(model: string | null): ModelPrice | undefined {
  if (model === null) return undefined;
  const name = model.toLowerCase();
  return PRICE_TABLE.find(([prefix]) => name.startsWith(prefix))?.[1];
}

/** USD of one response: undefined when its model is unpriced or it said nothing of its tokens. */
export const priceOf: PriceOf = (record: UsageRecord) => {
  const price = modelPrice(record.model);
  if (!price || record.usage === 'none') return undefined;
  const part = (tokens: number | null, perMillion: number) => ((tokens ?? 0) * perMillion) / 1e6;
  return (
    part(record.inputTokens, price.input) +
    part(record.outputTokens, price.output) +
    part(record.cacheReadTokens, price.cacheRead) +
    part(record.cacheWriteTokens, price.cacheWrite)
  );
};
