/**
 * Debian's Chromium for the browser tests (through playwright-core), headless, offline-minded flags;
 * CHROMIUM_PATH points elsewhere. Screenshots go to artifacts/screenshots/ (git-ignored).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { repoRoot } from './specs.js';

export const screenshotDir = join(repoRoot, 'artifacts', 'screenshots');

/** Launches Chromium (and makes the screenshot directory); throws saying how to install it when absent. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(executablePath))
    throw new Error(
      `Chromium not found at ${executablePath}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`,
    );
  mkdirSync(screenshotDir, { recursive: true });
  return chromium.launch({
    executablePath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}
