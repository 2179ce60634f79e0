/**
 * The real browser for the web view's tests and screenshots: Debian's chromium (/usr/bin/chromium,
 * which .ci/run installs when missing) driven by playwright-core (its own browser downloads cannot
 * work here), headless with a fresh profile (playwright makes a new --user-data-dir per launch and
 * removes it at close), and the sign-in `holdfast open` does (a one-time ticket). Invariant: whoever
 * launches it closes it.
 */
import { type Browser, type BrowserContext, chromium } from 'playwright-core'
import { loadConfig } from '../../proxy/store/config'
import { ensureTokenFile, homeToken } from '../../proxy/store/token'
import { makeTicket } from '../../proxy/view/auth'

/** The proxy a page is opened on: its URL and its home (the harness's, or a bench's `holdfast serve`). */
export interface Served {
  url: string
  home: string
}

export const CHROMIUM = process.env.HOLDFAST_CHROMIUM ?? '/usr/bin/chromium'

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export interface TestBrowser {
  browser: Browser
  /** A fresh context (its own cookies). */
  context(): Promise<BrowserContext>
  close(): Promise<void>
}

export async function launchBrowser(): Promise<TestBrowser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 })
  return {
    browser,
    context: () => browser.newContext({ viewport: { width: 1280, height: 900 } }),
    close: () => browser.close(),
  }
}

/** The secret the proxy's view signs with (the configured token, else the home's token file). */
export const viewSecretOf = (p: Pick<Served, 'home'>): string =>
  homeToken(p.home, loadConfig(p.home)) ?? ensureTokenFile(p.home)

/** The link `holdfast open --print` prints for `path` (`/ui/…`). */
export const signInUrl = (p: Served, path: string): string =>
  `${p.url}${path}?ticket=${makeTicket(viewSecretOf(p))}`
