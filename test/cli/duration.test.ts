/** `--every`: a duration is read one way, each unit at most once, largest first; anything else is a usage error. */
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/errors.js';
import { formatDuration, parseDuration } from '../../src/cli/sources.js';
import { expectCleanFailure, tempDataDir } from './support.js';

describe('parseDuration: one number per unit, the units largest first', () => {
  it('still reads one part, or the parts formatDuration writes', () => {
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('1500ms')).toBe(1500);
    expect(parseDuration('1m30s')).toBe(90_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1m1s500ms')).toBe(61_500);
    for (const ms of [1000, 1500, 59_000, 90_000, 3_723_000, 24 * 3600_000])
      expect(parseDuration(formatDuration(ms))).toBe(ms);
  });

  it('refuses a unit given twice instead of adding the parts up', () => {
    expect(() => parseDuration('1m1m')).toThrow(
      /--every must be a duration .*each at most once, largest first.*got "1m1m"/,
    );
    expect(() => parseDuration('30s30s')).toThrow(/got "30s30s"/);
  });

  it('refuses units out of order', () => {
    expect(() => parseDuration('30s1m')).toThrow(/got "30s1m"/);
    expect(() => parseDuration('500ms1s')).toThrow(/got "500ms1s"/);
  });
});

describe('fns sources add --every 1m1m: a usage error (exit 2), nothing stored', () => {
  const data = tempDataDir('fns-duration-');
  afterAll(() => data.remove());

  it('refuses the duration and stores no source', async () => {
    expectCleanFailure(
      await data.fns('sources', 'add', 'wire', 'https://example.com/feed.xml', '--every', '1m1m'),
      EXIT.usage,
      '--every must be a duration',
    );
    expect(JSON.parse((await data.fns('sources', 'list', '--json')).stdout)).toEqual({ sources: [] });
  }, 60_000);
});
