/**
 * `map` for synchronous work over many items (small file reads): `sliceSize` items at a time,
 * yielding to the event loop between slices, so the work is quick and nothing waits long.
 */
export async function mapInSlices<Item, Result>(
  items: readonly Item[],
  sliceSize: number,
  map: (item: Item) => Result,
): Promise<Result[]> {
  const results: Result[] = [];
  for (let start = 0; start < items.length; start += sliceSize) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    for (let index = start; index < Math.min(start + sliceSize, items.length); index++)
      results.push(map(items[index]!));
  }
  return results;
}
