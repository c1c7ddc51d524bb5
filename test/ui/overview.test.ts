/** The overview's requests-per-minute chart as app.request() sees it: minutes of the wall clock, not the emulator's. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';

let lp: InProcessLocalplane;

beforeAll(async () => {
  lp = await createLocalplane({ log: () => {} });
});

afterAll(async () => {
  await lp?.stop();
});

interface Chart {
  x: number[];
  series: { label: string; values: number[] }[];
}

const chartOf = (fragment: string) =>
  JSON.parse(/data-chart="([^"]*)"/.exec(fragment)![1]!.replace(/&quot;/g, '"')) as Chart;

describe("the overview's requests per minute", () => {
  it('counts every request in the last minutes of the wall clock, however far the emulator clock moved', async () => {
    const { workspaces } = (await (await lp.request('/_localplane/fixtures')).json()) as {
      workspaces: { api_key: string }[];
    };
    const headers = { 'x-api-key': workspaces[0]!.api_key };
    for (let n = 0; n < 3; n++) await lp.request('/v2/deployments', { headers });
    const advanced = await lp.request('/_localplane/clock/advance', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seconds: 2 * 3600 }),
    });
    expect(advanced.status).toBe(200);
    await lp.request('/v2/deployments', { headers });
    await lp.request('/v2/deployments/not-a-uuid', { headers });

    const fragment = await (await lp.request('/ui/activity')).text();
    const chart = chartOf(fragment);
    const counted = (label: string) =>
      chart.series.find((series) => series.label === label)!.values.reduce((sum, value) => sum + value, 0);
    expect([counted('2xx'), counted('4xx')]).toEqual([4, 1]);
    // The minutes end at the wall clock's, not at the emulator's two hours on.
    expect(Math.abs(chart.x.at(-1)! - Date.now() / 1000)).toBeLessThan(120);
    expect(fragment).toContain('minutes of the wall clock');
  });
});
