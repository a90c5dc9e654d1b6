/**
 * Headless Chromium through playwright-core with the system browser (Debian's /usr/bin/chromium;
 * playwright's own browser download is not used). The flags keep it off the network.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function chromiumPath(): string {
  const candidates = [
    process.env.INFERSWEEP_CHROMIUM,
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
  ].filter((x): x is string => !!x);
  const found = candidates.find((p) => existsSync(p));
  if (!found)
    throw new Error(
      `no Chromium found (looked at ${candidates.join(', ')}); install Debian's chromium (apt-get install chromium) or set INFERSWEEP_CHROMIUM`,
    );
  return found;
}

/**
 * A browser with a fresh profile: playwright's launch gives every browser a new temporary
 * --user-data-dir and removes it on close.
 */
export async function launchChromium(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_FLAGS, headless: true });
  return { browser, close: () => browser.close().catch(() => undefined) };
}

/** Render an SVG string to a PNG file (2× device scale for sharp text). */
export async function svgToPng(svg: string, file: string): Promise<void> {
  const { browser, close } = await launchChromium();
  try {
    const page = await browser.newPage({ deviceScaleFactor: 2 });
    await page.setContent(`<!doctype html><html><body style="margin:0;background:#fff">${svg}</body></html>`);
    await page.locator('svg').first().screenshot({ path: file });
  } finally {
    await close();
  }
}
