// Work over many items with a fixed number in flight: a fleet of thousands of
// repos must not start thousands of git processes at once (EMFILE, and the
// machine thrashes long before that). Results keep the items' order.

/** fn over every item, at most `limit` at a time; resolves when all are done, in the items' order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}
