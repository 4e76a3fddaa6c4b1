/** How many messages arrived on one day (UTC), `day` as `YYYY-MM-DD`. */
export type DayCount = { day: string; count: number };

/** How many days the overview's chart covers, today included. */
export const CHART_DAYS = 30;

/**
 * The last `days` days up to `today` (UTC), oldest first, each with its count from
 * `counts` or 0: the store answers only the days that had messages.
 */
export function lastDays(counts: readonly DayCount[], today: Date, days = CHART_DAYS): DayCount[] {
  const byDay = new Map(counts.map((c) => [c.day, c.count]));
  const end = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  return Array.from({ length: days }, (_, i) => {
    const day = new Date(end - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10);
    return { day, count: byDay.get(day) ?? 0 };
  });
}

/** One sentence that says what the chart shows, for its `<desc>` and for people who cannot see it. */
export function chartSummary(days: readonly DayCount[]): string {
  if (days.length === 0) return 'No days to show.';
  const total = days.reduce((sum, d) => sum + d.count, 0);
  const span = `from ${days[0]!.day} to ${days[days.length - 1]!.day}`;
  if (total === 0) return `No messages ${span}.`;
  const busiest = days.reduce((best, d) => (d.count > best.count ? d : best));
  return `${total} ${total === 1 ? 'message' : 'messages'} ${span}; the most on ${busiest.day} (${busiest.count}).`;
}

const WIDTH = 300;
const HEIGHT = 80;
const GAP = 2;

/**
 * The messages-per-day chart as an SVG element: one bar per day, scaled to the busiest,
 * with a title and a description that screen readers announce.
 * Hint: it has no colours of its own; the stylesheet fills `.chart-bar`, so it follows the colour scheme.
 */
export function messagesPerDaySvg(days: readonly DayCount[], id = 'messages-per-day'): string {
  const max = Math.max(1, ...days.map((d) => d.count));
  const slot = WIDTH / Math.max(1, days.length);
  const bars = days
    .map((d, i) => {
      // A day with messages shows at least a sliver, so one message is not mistaken for none.
      const height = d.count === 0 ? 0 : Math.max(1, Math.round((d.count / max) * HEIGHT * 10) / 10);
      return `<rect class="chart-bar" x="${round(i * slot + GAP / 2)}" y="${round(HEIGHT - height)}" width="${round(slot - GAP)}" height="${height}"><title>${d.day}: ${d.count}</title></rect>`;
    })
    .join('');
  return (
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title ${id}-desc" preserveAspectRatio="none" focusable="false">` +
    `<title id="${id}-title">Messages per day, last ${days.length} days</title>` +
    `<desc id="${id}-desc">${chartSummary(days)}</desc>` +
    `<line class="chart-axis" x1="0" y1="${HEIGHT}" x2="${WIDTH}" y2="${HEIGHT}"/>` +
    bars +
    '</svg>'
  );
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
