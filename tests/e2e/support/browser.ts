import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page, type Response } from 'playwright-core';
import { CHROMIUM_PATH } from '../../support/services.ts';

/**
 * The Chromium to drive: Debian's package by default, another one through CHROMIUM_PATH.
 * Hint: Playwright's own browser download cannot work on these machines, so the tests
 * use `playwright-core` with a system browser.
 */
export { CHROMIUM_PATH };

/**
 * The flags that make Chromium start headless and quietly on CI machines and containers:
 * no sandbox (it needs privileges containers lack), no GPU, and none of the background
 * traffic (QUIC, updates, sync) that would reach out to the internet.
 */
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
] as const;

/** Where the screenshots go: `test-results/`, which git ignores. */
export const RESULTS_DIR = fileURLToPath(new URL('../../../test-results/', import.meta.url));

/**
 * Launches headless Chromium with CHROMIUM_FLAGS; Playwright gives it a fresh temporary
 * profile every time, so no state leaks from one run to the next.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_FLAGS] });
}

/** A fresh context and page: a visitor with an empty cache, with or without JavaScript. */
export async function openPage(browser: Browser, options: BrowserContextOptions = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  // A test that waits longer than this has found a bug, not a slow machine.
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  return { context, page };
}

/**
 * Does `act`, which makes the browser load a new document (a form it posts itself), and
 * answers that document's HTTP status once it has loaded; redirects are followed.
 */
export async function loadsPage(page: Page, act: () => Promise<unknown>): Promise<number> {
  const isDocument = (response: Response) =>
    response.request().isNavigationRequest() && response.frame() === page.mainFrame() && (response.status() < 300 || response.status() >= 400);
  const answered = page.waitForResponse(isDocument);
  const loaded = page.waitForEvent('load');
  await act();
  const [response] = await Promise.all([answered, loaded]);
  return response.status();
}

/** The widths every state is photographed at: a small phone and a laptop. */
export const SCREENSHOT_WIDTHS = [375, 1280] as const;

/**
 * Saves a full-page screenshot at each of SCREENSHOT_WIDTHS as `test-results/<name>-<width>.png`,
 * then gives the page its size back.
 */
export async function screenshotAtWidths(page: Page, name: string): Promise<string[]> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const original = page.viewportSize();
  const paths: string[] = [];
  for (const width of SCREENSHOT_WIDTHS) {
    await page.setViewportSize({ width, height: 800 });
    const path = `${RESULTS_DIR}${name}-${width}.png`;
    await page.screenshot({ path, fullPage: true, animations: 'disabled', caret: 'hide' });
    paths.push(path);
  }
  if (original) await page.setViewportSize(original);
  return paths;
}
