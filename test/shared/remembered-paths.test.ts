import { expect, it } from 'vitest';
import { rememberedByPath } from '../../src/shared/routing.ts';

function counted() {
  const asked: string[] = [];
  const find = rememberedByPath((path: string) => {
    asked.push(path);
    return path.length;
  });
  return { find, asked };
}

it('answers a path again from memory, and asks again for one whose answer threw', () => {
  const { find, asked } = counted();
  expect([find('/v2/deployments'), find('/v2/deployments')]).toEqual([15, 15]);
  expect(asked).toEqual(['/v2/deployments']);
  const throwing = rememberedByPath((path: string) => {
    asked.push(path);
    throw new Error(`no route: ${path}`);
  });
  expect(() => throwing('/bad')).toThrow('no route');
  expect(() => throwing('/bad')).toThrow('no route');
  expect(asked.filter((path) => path === '/bad')).toHaveLength(2);
});

it('holds at most 256 paths, and at most 64 Ki characters of them: long paths empty it sooner', () => {
  const { find, asked } = counted();
  for (let i = 0; i < 256; i++) find(`/v2/deployments/${i}`);
  find('/v2/deployments/0');
  expect(asked).toHaveLength(256);
  find('/one-more');
  find('/v2/deployments/0');
  expect(asked.slice(-2)).toEqual(['/one-more', '/v2/deployments/0']);

  const long = (letter: string) => `/${letter.repeat(16 * 1024 - 100)}`;
  const before = asked.length;
  for (const letter of 'abcd') find(long(letter));
  find(long('a'));
  expect(asked.length - before, 'four 16 KiB paths fill it').toBe(4);
  find(long('e'));
  find(long('a'));
  expect(asked.slice(-2)).toEqual([long('e'), long('a')]);
});
