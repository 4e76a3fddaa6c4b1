import { describe, expect, test } from 'vitest';
import { chartSummary, lastDays, messagesPerDaySvg } from '../../../packages/site-forms/src/lib/admin/chart.ts';

describe('the last days', () => {
  test('are 30 days up to today, oldest first, with 0 for days without messages', () => {
    const days = lastDays(
      [
        { day: '2026-11-21', count: 4 },
        { day: '2026-10-24', count: 1 },
        { day: '2026-10-23', count: 9 },
      ],
      new Date('2026-11-21T23:59:59Z'),
    );
    expect(days).toHaveLength(30);
    expect(days[0]).toEqual({ day: '2026-10-23', count: 9 });
    expect(days[1]).toEqual({ day: '2026-10-24', count: 1 });
    expect(days[2]).toEqual({ day: '2026-10-25', count: 0 });
    expect(days[29]).toEqual({ day: '2026-11-21', count: 4 });
  });

  test('a count from 31 days ago is left out', () => {
    const days = lastDays([{ day: '2026-10-22', count: 5 }], new Date('2026-11-21T00:00:00Z'));
    expect(days.reduce((n, d) => n + d.count, 0)).toBe(0);
  });

  test('cross the end of a month and of a year', () => {
    expect(lastDays([], new Date('2027-01-01T10:00:00Z'), 3).map((d) => d.day)).toEqual(['2026-12-30', '2026-12-31', '2027-01-01']);
  });
});

describe('the summary', () => {
  test.each([
    [
      [
        { day: '2026-11-01', count: 0 },
        { day: '2026-11-02', count: 0 },
      ],
      'No messages from 2026-11-01 to 2026-11-02.',
    ],
    [
      [
        { day: '2026-11-01', count: 1 },
        { day: '2026-11-02', count: 0 },
      ],
      '1 message from 2026-11-01 to 2026-11-02; the most on 2026-11-01 (1).',
    ],
    [
      [
        { day: '2026-11-01', count: 3 },
        { day: '2026-11-02', count: 7 },
        { day: '2026-11-03', count: 7 },
      ],
      '17 messages from 2026-11-01 to 2026-11-03; the most on 2026-11-02 (7).',
    ],
    [[], 'No days to show.'],
  ])('of %j reads %j', (days, text) => {
    expect(chartSummary(days)).toBe(text);
  });
});

describe('the SVG', () => {
  const days = [
    { day: '2026-11-01', count: 0 },
    { day: '2026-11-02', count: 10 },
    { day: '2026-11-03', count: 5 },
    { day: '2026-11-04', count: 1 },
  ];
  const svg = messagesPerDaySvg(days);

  test('is an image named by its title and described by its summary', () => {
    expect(svg).toMatch(/^<svg class="chart" viewBox="0 0 300 80" role="img" aria-labelledby="messages-per-day-title messages-per-day-desc" /);
    expect(svg).toContain('<title id="messages-per-day-title">Messages per day, last 4 days</title>');
    expect(svg).toContain('<desc id="messages-per-day-desc">16 messages from 2026-11-01 to 2026-11-04; the most on 2026-11-02 (10).</desc>');
    expect(svg.endsWith('</svg>')).toBe(true);
  });

  test('has one bar per day, the busiest full height, each titled with its day and count', () => {
    expect(svg.match(/<rect /g)).toHaveLength(4);
    expect(svg).toContain('<rect class="chart-bar" x="1" y="80" width="73" height="0"><title>2026-11-01: 0</title></rect>');
    expect(svg).toContain('<rect class="chart-bar" x="76" y="0" width="73" height="80"><title>2026-11-02: 10</title></rect>');
    expect(svg).toContain('<rect class="chart-bar" x="151" y="40" width="73" height="40"><title>2026-11-03: 5</title></rect>');
    expect(svg).toContain('<rect class="chart-bar" x="226" y="72" width="73" height="8"><title>2026-11-04: 1</title></rect>');
  });

  test('a single message among hundreds still shows as a sliver', () => {
    const few = messagesPerDaySvg([
      { day: '2026-11-01', count: 1000 },
      { day: '2026-11-02', count: 1 },
    ]);
    expect(few).toContain('height="1"><title>2026-11-02: 1</title>');
  });

  test('a month without messages draws only the baseline', () => {
    const empty = messagesPerDaySvg(lastDays([], new Date('2026-11-21T00:00:00Z')));
    expect(empty.match(/height="0"/g)).toHaveLength(30);
    expect(empty).toContain('<line class="chart-axis" x1="0" y1="80" x2="300" y2="80"/>');
    expect(empty).toContain('No messages from 2026-10-23 to 2026-11-21.');
  });

  test('takes another id when a page shows two charts', () => {
    expect(messagesPerDaySvg(days, 'other')).toContain('aria-labelledby="other-title other-desc"');
  });
});
