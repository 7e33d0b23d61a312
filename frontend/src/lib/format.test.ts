import { describe, expect, it } from 'vitest';

import { byteUnit, formatBytes, formatNumber, formatPercent, formatRate } from './format';

describe('small figures stay visible', () => {
  it('keeps two significant digits below 1 and two decimals above', () => {
    expect(formatNumber(0.0036)).toBe('0.0036');
    expect(formatNumber(0.0244)).toBe('0.024');
    expect(formatNumber(12.345)).toBe('12.35');
    expect(formatNumber(0)).toBe('0');
    expect(formatPercent(0.00406)).toBe('0.0041 %');
    expect(formatPercent(40)).toBe('40 %');
  });

  it('gives a rate the unit that suits it', () => {
    expect(formatRate(12.5e6)).toBe('12.5 MB/s');
    expect(formatRate(3642.9)).toBe('3.64 KB/s');
    expect(formatRate(0)).toBe('0 B/s');
  });

  it('carries a rounded byte count into the next unit or width', () => {
    expect(formatBytes(999.8e9)).toBe('1.00 TB');
    expect(formatBytes(999.4e9)).toBe('999 GB');
    expect(formatBytes(99.96e6)).toBe('100 MB');
    expect(formatBytes(9.996e3)).toBe('10.0 KB');
    expect(formatBytes(-999.8e9)).toBe('−1.00 TB');
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(2500e15)).toBe('2500 PB');
  });

  it('picks the decimal unit of a byte count', () => {
    expect(byteUnit(40.6e6)).toEqual({ name: 'MB', size: 1e6 });
    expect(byteUnit(999)).toEqual({ name: 'B', size: 1 });
    expect(byteUnit(2e15)).toEqual({ name: 'PB', size: 1e15 });
  });
});
