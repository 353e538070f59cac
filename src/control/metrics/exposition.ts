// The families in the Prometheus text format, through prom-client: a fresh
// Registry per scrape (never the library's global one), so nothing carries
// over from one scrape to the next but what the records say.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Family } from './families.js';

export interface Exposition {
  readonly contentType: string;
  readonly body: string;
}

function register(registry: Registry, family: Family): void {
  const common = { name: family.name, help: family.help, labelNames: [...family.labelNames], registers: [registry] };
  switch (family.type) {
    case 'counter': {
      const counter = new Counter(common);
      for (const sample of family.samples) counter.inc(sample.labels, sample.value);
      return;
    }
    case 'gauge': {
      const gauge = new Gauge(common);
      for (const sample of family.samples) gauge.set(sample.labels, sample.value);
      return;
    }
    case 'histogram': {
      const histogram = new Histogram({ ...common, buckets: [...(family.buckets ?? [])] });
      for (const labels of family.zero ?? []) histogram.zero(labels);
      for (const sample of family.samples) histogram.observe(sample.labels, sample.value);
      return;
    }
  }
}

/** The text a scrape gets. */
export async function exposition(families: readonly Family[]): Promise<Exposition> {
  const registry = new Registry();
  for (const family of families) register(registry, family);
  return { contentType: registry.contentType, body: await registry.metrics() };
}
